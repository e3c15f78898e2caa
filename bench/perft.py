"""The kernel's perft against a plain C perft, compiled and run in the same benchmark.

    .venv/bin/python bench/perft.py [--depths 4 5] [--repeat 5] [--cc cc] [--threats-depth 5]

bench/perft.c is a plain C perft of 4x4x4 (a cell array, each side's stone count on each line
updated on make/unmake, a win seen as a count reaching 4), compiled here with ``cc -O2``.
engine.kernels.perft counts the same sequences with the kernel's own push and pop (the line counts
alone, as the C's: the searches keep the open-line histogram they evaluate with themselves, a
ply at a time); ``-DHISTOGRAM`` builds the C with that histogram in make/unmake, as the
kernel's push and pop kept it until session 16, and ``-DCOUNTERS`` with what the last row's
push and pop keep. The last row is the same perft loop, compiled for
engine.kernels.threats.push and pop (the master's, the threat search's, the proof's and the
solver's), which keep a code a line and each side's counters of open lines by stones in one
word (docs/engine.md, "The master's search"); it runs up to ``--threats-depth``. Each repeat
runs the C and the kernel back to back (the machine is shared, so the ratio is taken inside a
repeat); the figures are medians, and
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

from engine import Board
from engine.kernels.perft import count_sequences

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


def run_perft(depth: int, *, threats: bool = False) -> tuple[int, float]:
    """One perft of 4x4x4 from the empty board: its count and its CPU seconds."""
    started = time.process_time()
    count = count_sequences(Board("4x4x4"), depth, threats=threats)
    return count, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 5])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cc", default="cc", help="the C compiler (given -O2)")
    parser.add_argument("--threats-depth", type=int, default=5,
                        help="the deepest perft of the threats.push row")
    args = parser.parse_args()

    run_perft(2)  # compile (or load) both versions of the perft before timing them
    run_perft(2, threats=True)
    version = subprocess.run([args.cc, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    print(f"perft of 4x4x4 from the empty board: numba kernel against `{args.cc} -O2` "
          f"({version}), median of {args.repeat} repeats; the machine is shared")
    with tempfile.TemporaryDirectory(prefix="qubic-perft-") as tmp:
        plain = compile_c(args.cc, Path(tmp) / "plain")
        histogram = compile_c(args.cc, Path(tmp) / "histogram", "-DHISTOGRAM")
        counters = compile_c(args.cc, Path(tmp) / "counters", "-DCOUNTERS")
        runners: dict[str, Callable[[int], tuple[int, float]]] = {
            "C, plain": lambda depth: run_c(plain, depth),
            "C, with the histogram": lambda depth: run_c(histogram, depth),
            "C, with the counters": lambda depth: run_c(counters, depth),
            "numba kernel": run_perft,
            "numba, threats.push": lambda depth: run_perft(depth, threats=True),
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
