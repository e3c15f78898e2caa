"""``/api/solve``'s answer off the proof's tree: how many positions it answers within its
budget, and how long it takes (issue 42, item 3).

    .venv/bin/python bench/solve_offtree.py [--seeds 101 102] [--positions 40] [--budget 1.0]

The sample: random legal games of 4x4x4, each from a fixed seed (``random.Random(seed)``,
then one game after another), stopped after a number of plies drawn from 6 to 20; a position
is kept when its game is still on, the proof does not cover it (neither ``x_proved`` nor
``o_proved``: there the answer is instant and from the book) and it was not kept before.
``--positions`` positions per seed. Seeds 1-3 were the ones looked at while changing the
solver; 101-104 are held out: say which a figure was measured on.

Each position is answered by ``engine.solved.truth.solve(board, budget)`` (what ``GET /api/solve``
runs in its worker, ``server.http.solve.SOLVE_BUDGET`` = 1 s) from an empty verdict cache,
one at a time in this process, after the kernels are compiled and the proof loaded (the
HTTP round trip and the worker's IPC add a few ms: bench/solve_api.py measures those). A
position is *answered* when the verdict for the side to move is ``win`` or ``loss`` with its
plies; ``known`` counts also a verdict without plies, and draws. It prints each position,
then per seed and in all: answered, known, and the time's p50/p95/p99/max (harness.stats'
rule), and first the analysis example of docs/api.md (``1a1 1d4 4a4 3b3 1a4``).
"""

from __future__ import annotations

import argparse
import random
import time

from harness.stats import percentiles

from engine import Board, format_moves
from engine.solved.strategy import o_proved, x_proved

FEWEST, MOST = 6, 20
EXAMPLE = "1a1 1d4 4a4 3b3 1a4"
TUNED = (1, 2, 3)
HELD_OUT = (101, 102, 103, 104)


def sample(seed: int, count: int) -> list[list[int]]:
    """``count`` distinct positions off the proof's tree from random games of ``seed``."""
    rng = random.Random(seed)
    found: list[list[int]] = []
    seen: set[tuple[int, ...]] = set()
    while len(found) < count:
        board = Board("4x4x4")
        stop_at = rng.randint(FEWEST, MOST)
        while board.ply < stop_at and board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
        if board.outcome() is not None or tuple(board.moves) in seen:
            continue
        if x_proved(board) if board.turn == 0 else o_proved(board):
            continue
        seen.add(tuple(board.moves))
        found.append(list(board.moves))
    return found


def answer(moves: list[int], budget: float) -> tuple[str, int | None, float]:
    """The verdict, its plies and the seconds ``solve`` took, from an empty cache."""
    from engine.solved import truth

    truth._cache.clear()  # noqa: SLF001 - every position from scratch
    board = Board("4x4x4", moves)
    began = time.perf_counter()
    verdict = truth.solve(board, budget)
    return verdict.verdict, verdict.plies, time.perf_counter() - began


def summary(label: str, rows: list[tuple[str, int | None, float]]) -> str:
    answered = sum(v in ("win", "loss") and p is not None for v, p, _ in rows)
    known = sum(v != "unknown" for v, _, _ in rows)
    times = [s for _, _, s in rows]
    p50, p95, p99 = percentiles(times)
    return (f"{label}: {len(rows)} positions, answered {answered}/{len(rows)} "
            f"({100 * answered / max(len(rows), 1):.0f}%), known {known}; time p50 "
            f"{p50:.3f} s, p95 {p95:.3f} s, p99 {p99:.3f} s, max {max(times):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(HELD_OUT))
    parser.add_argument("--positions", type=int, default=40, help="per seed")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--quiet", action="store_true", help="no line per position")
    args = parser.parse_args()
    from engine.kernels import solver
    from engine.solved import probe

    solver.warm_up()  # compile (or load) what the server's worker warms up, and the proof
    probe.warm_up()
    answer(Board.from_notation("4x4x4", "1a1 1d4 4a4 3b3").moves, 0.3)
    example = Board.from_notation("4x4x4", EXAMPLE)
    verdict, plies, seconds = answer(example.moves, args.budget)
    print(f"example {EXAMPLE}: {verdict} {plies} in {seconds:.3f} s", flush=True)
    held = "held out" if set(args.seeds) <= set(HELD_OUT) else (
        "tuned on" if set(args.seeds) <= set(TUNED) else "mixed")
    every: list[tuple[str, int | None, float]] = []
    for seed in args.seeds:
        rows = []
        for index, moves in enumerate(sample(seed, args.positions)):
            row = answer(moves, args.budget)
            rows.append(row)
            if not args.quiet:
                text = format_moves(moves, example.geometry)
                print(f"{seed:4} {index + 1:3} ply {len(moves):2} {text:62} {row[0]:7} "
                      f"{row[1]!s:>4} {row[2]:.3f} s", flush=True)
        print(summary(f"seed {seed}", rows), flush=True)
        every += rows
    print(summary(f"all ({held}: seeds {' '.join(map(str, args.seeds))}), budget "
                  f"{args.budget} s", every), flush=True)


if __name__ == "__main__":
    main()
