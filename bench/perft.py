"""The kernel's perft against a plain C perft, compiled and run in the same benchmark.

    .venv/bin/python bench/perft.py [--depths 4 5] [--repeat 5] [--cc cc] [--threats-depth 4]

bench/perft.c is a plain C perft of 4x4x4 (a cell array, each side's stone count on each line
updated on make/unmake, a win seen as a count reaching 4), compiled here with ``cc -O2``.
engine.kernel.perft counts the same sequences with the kernel's own push and pop (the line
counts alone, as the C's: the searches keep the open-line histogram they evaluate with
themselves, a ply at a time); ``-DHISTOGRAM`` builds the C with that histogram in make/unmake,
as the kernel's push and pop kept it until session 16. The last row is the same perft over
engine.threats.push and pop, the master's, the threat search's, the proof's and the solver's,
which also keep the histogram and ``cellk`` (per cell, the lines through it by stones) that
those searches read at every node; it runs only up to ``--threats-depth`` (at depth 5 it
takes minutes a repeat). Each repeat runs the C and the kernel back to back
(the machine is shared, so the ratio is taken inside a repeat); the figures are medians, and
the counts must be equal: a perft that disagrees stops the benchmark. Both sides time CPU
seconds (``CLOCK_PROCESS_CPUTIME_ID``, ``time.process_time``), not the wall clock, so that
other work on the machine does not count as either's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba import njit

from engine import Board
from engine.kernel import tables_for
from engine.threats import Position, pop, push

SOURCE = Path(__file__).resolve().parent / "perft.c"
EXPECTED = {1: 64, 2: 4_032, 3: 249_984, 4: 15_249_024, 5: 914_941_440}


def compile_c(cc: str, out: Path, *flags: str) -> Path:
    subprocess.run([cc, "-O2", *flags, "-o", str(out), str(SOURCE)], check=True)
    return out


def run_c(binary: Path, depth: int) -> tuple[int, float]:
    """One C perft: its count and the CPU seconds of the search alone (no process start-up)."""
    done = subprocess.run([str(binary), str(depth), "1"], capture_output=True, text=True,
                          check=True)
    _depth, count, seconds = done.stdout.split()
    return int(count), float(seconds)


@njit(cache=True)
def threats_perft(cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n, side,  # type: ignore[no-untyped-def]
                  depth):
    """engine.kernel.perft's loop over engine.threats.push and pop."""
    size = cells.shape[0]
    next_cell = np.zeros(depth + 1, dtype=np.int64)
    played = np.zeros(depth + 1, dtype=np.int64)
    total = 0
    k = 0
    to_move = side
    last = depth - 1
    while k >= 0:
        if k == last:
            for cell in range(size):
                if cells[cell] == 0:
                    push(cell, to_move, cells, counts, hist, cellk, line_cells, cell_lines,
                         cell_degree, n)
                    pop(cell, to_move, cells, counts, hist, cellk, line_cells, cell_lines,
                        cell_degree, n)
                    total += 1
            cell = size
        else:
            cell = next_cell[k]
            while cell < size and cells[cell] != 0:
                cell += 1
        if cell == size:
            k -= 1
            if k >= 0:
                to_move = 1 - to_move
                pop(played[k], to_move, cells, counts, hist, cellk, line_cells, cell_lines,
                    cell_degree, n)
            continue
        next_cell[k] = cell + 1
        if push(cell, to_move, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree,
                n):
            total += 1
            pop(cell, to_move, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree,
                n)
        else:
            played[k] = cell
            k += 1
            next_cell[k] = 0
            to_move = 1 - to_move
    return total


def run_threats(depth: int) -> tuple[int, float]:
    pos = Position.from_board(Board("4x4x4"))
    t = tables_for(Board("4x4x4").geometry)
    started = time.process_time()
    count = threats_perft(pos.cells, pos.counts, pos.hist, pos.cellk, t.line_cells,
                          t.cell_lines, t.cell_degree, t.n, pos.side, depth)
    return int(count), time.process_time() - started


def run_kernel(depth: int) -> tuple[int, float]:
    from engine.kernel import count_sequences

    started = time.process_time()
    count = count_sequences(Board("4x4x4"), depth)
    return count, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 5])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cc", default="cc", help="the C compiler (given -O2)")
    parser.add_argument("--threats-depth", type=int, default=4,
                        help="the deepest perft of the threats.push row")
    args = parser.parse_args()

    from engine.kernel import warm_up

    warm_up()
    run_threats(2)
    version = subprocess.run([args.cc, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    print(f"perft of 4x4x4 from the empty board: numba kernel against `{args.cc} -O2` "
          f"({version}), median of {args.repeat} repeats; the machine is shared")
    with tempfile.TemporaryDirectory(prefix="qubic-perft-") as tmp:
        plain = compile_c(args.cc, Path(tmp) / "plain")
        histogram = compile_c(args.cc, Path(tmp) / "histogram", "-DHISTOGRAM")
        runners: dict[str, Callable[[int], tuple[int, float]]] = {
            "C, plain": lambda depth: run_c(plain, depth),
            "C, with the histogram": lambda depth: run_c(histogram, depth),
            "numba kernel": run_kernel,
            "numba, threats.push": run_threats,
        }
        for depth in args.depths:
            rows = {name: runner for name, runner in runners.items()
                    if name != "numba, threats.push" or depth <= args.threats_depth}
            rates: dict[str, list[float]] = {name: [] for name in rows}
            ratios: dict[str, list[float]] = {name: [] for name in rows}
            for _ in range(args.repeat):
                this: dict[str, float] = {}
                for name, runner in rows.items():
                    count, seconds = runner(depth)
                    if depth in EXPECTED and count != EXPECTED[depth]:
                        sys.exit(f"{name} counted {count:,} at depth {depth}, "
                                 f"expected {EXPECTED[depth]:,}")
                    this[name] = count / seconds
                    rates[name].append(count / seconds)
                for name in rows:
                    ratios[name].append(this[name] / this["C, plain"])
            print(f"\ndepth {depth}: {EXPECTED.get(depth, count):,} sequences (equal counts)")
            for name in rows:
                line = f"  {name:<24} {statistics.median(rates[name]) / 1e6:7.1f} M/s"
                if name != "C, plain":
                    line += f"   this / C, plain: {statistics.median(ratios[name]):.2f}x"
                print(line)


if __name__ == "__main__":
    main()
