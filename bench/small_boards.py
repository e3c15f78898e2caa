"""Solve the small boards and write what the engine ships about them (engine/data/).

    .venv/bin/python bench/small_boards.py --tables [--depth 8] [--count-to 9] [--write]
    .venv/bin/python bench/small_boards.py --deeper 2000 [--seed 1]
    .venv/bin/python bench/small_boards.py --openings [--boards 5x5 5x5x5] [--seconds 20] [--write]

- ``--tables``: 3x3 and 4x4 completely and 3x3x3 to ``--depth`` stones, every position
  reachable from the empty board up to the board's symmetries, with the exact result and
  plies (``engine.solved.small_boards``): the counts by ply, the time, the peak memory and the size
  of each file; ``--write`` writes ``engine/data/small_<board>.xz``. ``--count-to`` counts
  3x3x3's positions by ply beyond the table (no results), as far as memory and time allow.
- ``--deeper N``: the exact search on N 3x3x3 positions below the shipped table (random games
  from the empty board, stopped at a random ply past the table's depth): the time and nodes
  of each answer, the worst and the median, with one warm transposition table as the engine
  keeps it, and the load time of each shipped table.
- ``--openings``: the empty board and each first move up to symmetry of the boards with no
  table (5x5, 5x5x5), by ``engine.solved.truth.solve`` (threat search and df-pn) with ``--seconds``
  each; what is not proved in that time is written ``unknown``. ``--write`` rewrites those
  boards' entries of ``engine/data/small_boards.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.stats import percentile  # noqa: E402

from engine import Board, format_cell  # noqa: E402
from engine.solved import small_boards as sb  # noqa: E402
from engine.solved.truth import SMALL_BOARDS_PATH, solve  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tables(depth: int, count_to: int, write: bool) -> None:
    for name in sb.TABLED:
        started = time.perf_counter()
        levels, complete = sb.build_levels(name, depth if name in sb.NO_DRAWS else 99)
        counted = time.perf_counter()
        values = sb.solve_levels(name, levels, complete)
        solved = time.perf_counter()
        blob = sb.encode(name, levels, values, complete)
        encoded = time.perf_counter()
        root = int(values[0][0])
        print(f"{name}: {sum(map(len, levels)):,} positions to ply {len(levels) - 1} "
              f"({'complete' if complete else 'the rest by exact search'}); by ply "
              f"{[len(level) for level in levels]}; empty board {sb.VERDICTS[root >> 6]} in "
              f"{root & sb.PLIES_MASK} plies; levels {counted - started:.1f} s, results "
              f"{solved - counted:.1f} s, xz {encoded - solved:.1f} s; file {len(blob):,} "
              f"bytes; peak memory {peak_mb():.0f} MB", flush=True)
        if write:
            sb.table_path(name).write_bytes(blob)
        if name in sb.NO_DRAWS and count_to > len(levels) - 1:
            keys = levels[-1]
            del levels, values
            for ply in range(depth + 1, count_to + 1):
                started = time.perf_counter()
                keys = sb.next_level(name, keys)
                print(f"{name}: ply {ply}: {len(keys):,} positions up to symmetry "
                      f"({time.perf_counter() - started:.1f} s, peak memory "
                      f"{peak_mb():.0f} MB)", flush=True)


def deeper(samples: int, seed: int) -> None:
    for name in sb.TABLED:
        started = time.perf_counter()
        sb.table(name)
        print(f"load {name}: {1000 * (time.perf_counter() - started):.0f} ms", flush=True)
    table = sb.table("3x3x3")
    assert table is not None
    rng = random.Random(seed)
    search = sb._exact_search("3x3x3")  # noqa: SLF001 (the engine's own, as it is there)
    search.value(0, 0)  # compiled or loaded from numba's cache before the clock runs
    games: list[Board] = []
    while len(games) < samples:  # random games stopped past the table
        board = Board("3x3x3")
        stop = rng.randrange(table.depth + 1, 20)
        while board.ply < stop and board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
        if board.outcome() is None and board.ply > table.depth:
            games.append(board)
    deepest = np.flatnonzero(np.bitwise_count(table.keys) == table.depth)
    children: list[Board] = []
    while len(children) < samples:  # a move from a random position of the deepest ply
        key = int(table.keys[deepest[rng.randrange(len(deepest))]])
        board = sb_board(key >> 27, key & (1 << 27) - 1)
        if board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
            if board.outcome() is None:
                children.append(board)
    for label, boards in (("random games", games), ("after the deepest ply", children)):
        for cold in (False, True):
            times, nodes = [], []
            for board in boards:
                if cold:
                    search.tt_keys[:] = 0
                before = int(search.stats[0])
                started = time.perf_counter()
                found = sb.result(board)
                times.append(time.perf_counter() - started)
                nodes.append(int(search.stats[0]) - before)
                assert found is not None and not found[2]
            worst = max(range(samples), key=lambda i: times[i])
            print(f"3x3x3 past ply {table.depth}, {label}, {samples} positions (seed {seed}), "
                  f"{'cold (table cleared before each)' if cold else 'warm'}: median "
                  f"{1e3 * percentile(times, 0.5):.3f} ms, worst {1e3 * times[worst]:.2f} ms "
                  f"({nodes[worst]:,} nodes, {boards[worst].notation()}), most nodes "
                  f"{max(nodes):,}", flush=True)


def sb_board(x: int, o: int) -> Board:
    """A board holding the stones of a reachable position, no line completed before the
    last move."""
    xs = [c for c in range(27) if x >> c & 1]
    os = [c for c in range(27) if o >> c & 1]
    moves = [c for pair in zip(xs, [*os, -1], strict=False) for c in pair if c >= 0]
    board = Board("3x3x3")
    for cell in moves:
        if board.outcome() is not None:
            break
        board.push(cell)
    return board


def openings(name: str, seconds: float) -> dict[str, object]:
    board = Board(name)
    started = time.perf_counter()
    root = solve(board, seconds, moves=False)
    g = board.geometry
    firsts: dict[str, object] = {}
    seen: set[tuple[int, int]] = set()
    for cell in board.legal_moves:
        key = g.canonical(1 << cell, 0)
        if key in seen:
            continue
        seen.add(key)
        board.push(cell)
        verdict = solve(board, seconds, moves=False)
        board.pop()
        firsts[f"{key[0]:x} {key[1]:x}"] = [verdict.verdict, verdict.plies, format_cell(cell, g)]
    return {"positions": {"0 0": [root.verdict, root.plies]}, "first_moves": firsts,
            "seconds_each": seconds, "took": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", action="store_true")
    parser.add_argument("--depth", type=int, default=8, help="3x3x3's table: stones")
    parser.add_argument("--count-to", type=int, default=0, help="3x3x3: count to this ply")
    parser.add_argument("--deeper", type=int, default=0, metavar="N")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--openings", action="store_true")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--boards", nargs="*", default=["5x5", "5x5x5"])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.tables:
        tables(args.depth, args.count_to, args.write)
    if args.deeper:
        deeper(args.deeper, args.seed)
    if args.openings:
        path = Path(SMALL_BOARDS_PATH())
        shipped = json.loads(path.read_text()) if path.exists() else {}
        for name in args.boards:
            shipped[name] = openings(name, args.seconds)
            print(name, json.dumps(shipped[name]), flush=True)
        if args.write:
            path.write_text(json.dumps(shipped, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
