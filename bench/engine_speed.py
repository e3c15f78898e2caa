"""Speed of the search kernel: nodes/s compiled and as pure Python, compile and load times, perft.

    .venv/bin/python bench/engine_speed.py [--depth 5] [--python-depth 4] [--repeat 5]

- nodes/s of ``engine.kernels.negamax.search`` (alpha-beta, Bogenschutz's evaluator, root moves in
  cell order) on five positions from one game (bogenschutz vs rubinoff:depth=4, seed 1), at a fixed
  depth; the median of ``--repeat`` runs per position.
- the SAME kernel code run as pure Python in a subprocess with ``NUMBA_DISABLE_JIT=1`` at a
  smaller depth on the first positions, beside the compiled kernel at that depth measured in
  this process just before and just after it: the ratio of their nodes/s.
- cold compile: a subprocess with an empty ``NUMBA_CACHE_DIR`` calling ``warm_up()``; warm load:
  a second subprocess with the same cache dir. Medians over ``--compile-repeat`` fresh dirs.

The kernel's perft, against a plain C perft, is bench/perft.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POSITIONS = [  # plies 4, 8, 12, 16, 20 of bogenschutz vs rubinoff:depth=4, game seed 1
    "2b3 1a4 2c2 4a4",
    "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4",
    "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4 4d4 2a2 1a1 3c3",
    "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4 4d4 2a2 1a1 3c3 2c3 3b2 3b3 4b4",
    "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4 4d4 2a2 1a1 3c3 2c3 3b2 3b3 4b4 2a1 2d4 4a3 1d3",
]
TARGET = 5_000_000  # nodes/s on one core
ROOT = Path(__file__).resolve().parent.parent


def measure(depth: int, positions: list[int], repeat: int) -> list[dict[str, float]]:
    """Per position: nodes of one search and the median seconds it took."""
    from engine import Board
    from engine.kernels.negamax import search, warm_up
    from engine.players import make_player

    warm_up()
    weigher = make_player("bogenschutz")
    out = []
    for index in positions:
        board = Board.from_notation("4x4x4", POSITIONS[index])
        _, mine, theirs = weigher.weights(board)  # type: ignore[attr-defined]
        times, nodes = [], 0
        for _ in range(repeat):
            started = time.perf_counter()
            result = search(board, depth, w_mine=mine, w_theirs=theirs)
            times.append(time.perf_counter() - started)
            nodes = result.nodes
        out.append({"position": index, "ply": board.ply, "nodes": nodes,
                    "seconds": statistics.median(times)})
    return out


def rate(rows: list[dict[str, float]]) -> float:
    """Nodes per second over the rows: total nodes over total median seconds."""
    return sum(r["nodes"] for r in rows) / sum(r["seconds"] for r in rows)


def run_python(code: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return done.stdout


def compile_times(repeat: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Cold and warm ``warm_up()`` seconds and whole-process seconds, per fresh cache dir."""
    code = ("import time; t = time.perf_counter(); import engine.kernels.negamax as k; "
            "i = time.perf_counter() - t; w = k.warm_up(); print(i, w)")
    cold: list[float] = []
    warm: list[float] = []
    cold_process: list[float] = []
    warm_process: list[float] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="qubic-numba-") as cache:
            for into, into_process in ((cold, cold_process), (warm, warm_process)):
                started = time.perf_counter()
                _, seconds = run_python(code, {"NUMBA_CACHE_DIR": cache}).split()
                into_process.append(time.perf_counter() - started)
                into.append(float(seconds))
    return cold, warm, cold_process, warm_process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5, help="compiled search depth")
    parser.add_argument("--python-depth", type=int, default=4, help="depth for the ratio")
    parser.add_argument("--python-positions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compile-repeat", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:  # the pure-Python side, run with NUMBA_DISABLE_JIT=1
        print(json.dumps(measure(args.depth, list(range(args.python_positions)), args.repeat)))
        return

    import numba

    print(f"engine speed: numba {numba.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cpus (shared)")
    rows = measure(args.depth, list(range(len(POSITIONS))), args.repeat)
    print(f"\ncompiled kernel, alpha-beta depth {args.depth}, median of {args.repeat} runs:")
    for row in rows:
        print(f"  position {row['position']} (ply {row['ply']:>2}): {row['nodes']:>10,} nodes "
              f"{row['seconds'] * 1000:>9.1f} ms  {row['nodes'] / row['seconds']:>12,.0f} nodes/s")
    compiled = rate(rows)
    verdict = "met" if compiled >= TARGET else "NOT met"
    print(f"  all: {compiled:,.0f} nodes/s (target {TARGET:,}: {verdict})")

    small = list(range(args.python_positions))
    before = rate(measure(args.python_depth, small, args.repeat))
    worker = [sys.executable, str(Path(__file__).resolve()), "--worker", "--depth",
              str(args.python_depth), "--python-positions", str(args.python_positions),
              "--repeat", "1"]
    done = subprocess.run(worker, env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    python_rows = json.loads(done.stdout)
    after = rate(measure(args.python_depth, small, args.repeat))  # the machine is shared
    jit_small = (before + after) / 2
    pure = rate(python_rows)
    nodes = sum(r["nodes"] for r in python_rows)
    print(f"\nsame search, depth {args.python_depth}, positions 0-{args.python_positions - 1} "
          f"({nodes:,} nodes):")
    print(f"  compiled (mean of before/after):   {jit_small:>12,.0f} nodes/s "
          f"({before:,.0f} before, {after:,.0f} after)")
    print(f"  pure Python (NUMBA_DISABLE_JIT=1): {pure:>12,.0f} nodes/s")
    print(f"  ratio compiled / pure Python:      {jit_small / pure:>12,.0f} x")

    cold, warm, cold_p, warm_p = compile_times(args.compile_repeat)
    print(f"\ncompile, median of {args.compile_repeat} fresh cache dirs "
          f"(warm_up() / whole process incl. imports):")
    print(f"  cold (empty NUMBA_CACHE_DIR): {statistics.median(cold):6.2f} s / "
          f"{statistics.median(cold_p):6.2f} s")
    print(f"  warm (same cache dir again):  {statistics.median(warm):6.2f} s / "
          f"{statistics.median(warm_p):6.2f} s")


if __name__ == "__main__":
    main()
