"""Solve the small boards and write the table the engine ships (engine/data/small_boards.json).

    .venv/bin/python bench/small_boards.py [--seconds 60] [--write]

- 3x3: every position reachable from the empty board, by plain minimax (no search budget):
  the verdict for the side to move and the exact plies to the end with best play (the winner
  fastest, the loser slowest), one entry per position up to the board's symmetries.
- 4x4, 3x3x3, 5x5, 5x5x5: the empty board and each first move up to symmetry, by
  ``engine.truth.solve`` (threat search and df-pn) with ``--seconds`` each; what is not proved
  in that time is written ``unknown`` (and the engine does not use it). Keys are canonical
  positions, ``"<x hex> <o hex>"``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Board, format_cell  # noqa: E402
from engine.geometry import variant  # noqa: E402
from engine.truth import SMALL_BOARDS_PATH, solve  # noqa: E402

G3 = variant("3x3")


@cache
def exact(x: int, o: int) -> tuple[int, int]:
    """(result, plies) of a 3x3 position for the side to move (X if the counts are equal):
    result 1 win, 0 draw, -1 loss; plies to the end with best play."""
    side_bits, other = (x, o) if x.bit_count() == o.bit_count() else (o, x)
    if any(other & m == m for m in G3.line_masks):
        return -1, 0
    empty = G3.full_mask & ~(x | o)
    if not empty:
        return 0, 0
    best: tuple[int, int] | None = None
    for cell in range(9):
        if empty >> cell & 1:
            mine = side_bits | 1 << cell
            nx, no = (mine, other) if side_bits == x else (other, mine)
            result, plies = exact(*G3.canonical(nx, no))
            mine_result, mine_plies = -result, plies + 1
            if best is None or _better((mine_result, mine_plies), best):
                best = (mine_result, mine_plies)
    assert best is not None
    return best


def _better(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1] if a[0] > 0 else a[1] > b[1]


def table_3x3() -> dict[str, list[object]]:
    names = {1: "win", 0: "draw", -1: "loss"}
    out: dict[str, list[object]] = {}
    todo = [(0, 0)]
    while todo:
        x, o = todo.pop()
        key = f"{x:x} {o:x}"
        if key in out:
            continue
        result, plies = exact(x, o)
        out[key] = [names[result], plies]
        if result == -1 and plies == 0:
            continue
        empty = G3.full_mask & ~(x | o)
        for cell in range(9):
            if empty >> cell & 1:
                if x.bit_count() == o.bit_count():
                    todo.append(G3.canonical(x | 1 << cell, o))
                else:
                    todo.append(G3.canonical(x, o | 1 << cell))
    return out


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
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--boards", nargs="*", default=["4x4", "3x3x3", "5x5", "5x5x5"])
    args = parser.parse_args()
    table: dict[str, object] = {"3x3": {"positions": table_3x3()}}
    for name in args.boards:
        table[name] = openings(name, args.seconds)
        print(name, json.dumps(table[name]), flush=True)
    print("3x3 positions:", len(table["3x3"]["positions"]),  # type: ignore[index]
          "empty board:", table["3x3"]["positions"]["0 0"])  # type: ignore[index]
    if args.write:
        Path(SMALL_BOARDS_PATH()).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
