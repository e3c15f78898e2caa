"""The kernel's perft against a plain C perft, compiled and run in the same benchmark.

    .venv/bin/python bench/perft.py [--depths 4 5] [--repeat 5] [--cc cc]

bench/perft.c is a plain C perft of 4x4x4 (a cell array, each side's stone count on each line
updated on make/unmake, a win seen as a count reaching 4), compiled here with ``cc -O2``.
engine.kernel.perft counts the same sequences with the kernel's own push and pop, which also
keep the open-line histogram its searches evaluate with; ``-DHISTOGRAM`` builds the C with
that histogram too, the like-for-like row. Each repeat runs the C and the kernel back to back
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


def run_kernel(depth: int) -> tuple[int, float]:
    from engine import Board
    from engine.kernel import count_sequences

    started = time.process_time()
    count = count_sequences(Board("4x4x4"), depth)
    return count, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 5])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cc", default="cc", help="the C compiler (given -O2)")
    args = parser.parse_args()

    from engine.kernel import warm_up

    warm_up()
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
        }
        for depth in args.depths:
            rates: dict[str, list[float]] = {name: [] for name in runners}
            ratios: dict[str, list[float]] = {name: [] for name in runners}
            for _ in range(args.repeat):
                this: dict[str, float] = {}
                for name, runner in runners.items():
                    count, seconds = runner(depth)
                    if depth in EXPECTED and count != EXPECTED[depth]:
                        sys.exit(f"{name} counted {count:,} at depth {depth}, "
                                 f"expected {EXPECTED[depth]:,}")
                    this[name] = count / seconds
                    rates[name].append(count / seconds)
                for name in runners:
                    ratios[name].append(this["numba kernel"] / this[name])
            print(f"\ndepth {depth}: {EXPECTED.get(depth, count):,} sequences (equal counts)")
            for name in runners:
                line = f"  {name:<24} {statistics.median(rates[name]) / 1e6:7.1f} M/s"
                if name != "numba kernel":
                    line += f"   kernel / this: {statistics.median(ratios[name]):.2f}x"
                print(line)


if __name__ == "__main__":
    main()
