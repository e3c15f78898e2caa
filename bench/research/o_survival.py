"""How long the master survives as O against a first player that plays perfectly once it
has proved its win (issue 17, "survival against perfect X").

Nothing here plays X perfectly from the first move: no proof of X's win from ply 2 is known
to our solver (see docs/benchmarks.md). So "perfect X" is defined operationally:

- X opens 1a1 (the corner/centre class), O's reply is each of its 12 classes in turn;
- from then on, before each X move the df-pn solver (its table kept for the whole game)
  tries to prove X's win from the position within ``--prove`` seconds; from the first
  position it proves, every X move is a move the solver proves winning (so X never leaves
  a proved win: perfect from there on, though not necessarily the shortest win);
- until then X plays the master's move at ``--x-time`` seconds (the master as X has won every
  game measured at a quiet 1 s a move).

O is ``--o-spec`` at ``--o-time`` (the master at 1 s a move). Reported per reply: the plies
the game lasted (X's winning move included), the ply at which X's win was first proved, and
who won; then the median plies over the games X won. A game X did not win is listed (X's
moves before the proof are not perfect) and left out of the median.

    .venv/bin/python bench/research/o_survival.py --jobs 2 --prove 5 --x-time 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine import Board, format_cell  # noqa: E402
from engine.kernels.solver import Solver  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.players.master import root_moves  # noqa: E402
from engine.warm import warm_up  # noqa: E402


def survive(start: str, args: argparse.Namespace, seed: int) -> dict:
    """One game from ``start`` (X to move, after O's reply), X as in the module's doc."""
    board = Board.from_notation("4x4x4", start)
    solver = Solver(board.geometry, tt_bits=args.tt_bits)
    x = make_player(args.x_spec, seed)
    o = make_player(args.o_spec, seed + 1)
    proved_at: int | None = None
    lost_proof = 0  # X moves after the first proof that the solver did not prove again
    while board.outcome() is None:
        if board.turn == 1:
            board.push(o.decide(board, Limit(time=args.o_time)).move)
            continue
        cell = None
        if board.ply >= args.from_ply:
            proof = solver.prove(board, attacker=0, seconds=args.prove)
            if not proof.proved and proved_at is not None:  # not expected: the table
                proof = solver.prove(board, attacker=0, seconds=4 * args.prove)  # kept it
            if proof.proved:
                cell = solver.winning_move(board)
                if proved_at is None:
                    proved_at = board.ply + 1  # the ply of X's first proved move
        if cell is None:
            lost_proof += proved_at is not None
            cell = x.decide(board, Limit(time=args.x_time)).move
        board.push(cell)
    outcome = board.outcome()
    assert outcome is not None
    return {"start": start, "plies": board.ply, "proved_at": proved_at,
            "winner": "XO"[outcome.winner] if outcome.winner is not None else "draw",
            "lost_proof": lost_proof,
            "moves": board.notation()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", default="1a1", help="X's first move")
    parser.add_argument("--x-spec", default="master")
    parser.add_argument("--x-time", type=float, default=1.0)
    parser.add_argument("--o-spec", default="master")
    parser.add_argument("--o-time", type=float, default=1.0)
    parser.add_argument("--prove", type=float, default=5.0, help="df-pn seconds an X move")
    parser.add_argument("--from-ply", type=int, default=4, help="first X move proved at")
    parser.add_argument("--tt-bits", type=int, default=22)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warm_up()
    board = Board.from_notation("4x4x4", args.first)
    starts = []
    for cell in root_moves(board, 0.0):
        starts.append(f"{args.first} {format_cell(cell, board.geometry)}")
    print(f"`.venv/bin/python bench/research/o_survival.py {' '.join(sys.argv[1:])}` "
          f"(load average {os.getloadavg()[0]:.2f} before)\n")
    print("| O's reply | winner | plies | X's win first proved at ply | X moves after it "
          "not proved again | game |\n|---|---|---|---|---|---|", flush=True)
    games = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(survive, start, args, args.seed + 2 * i)
                   for i, start in enumerate(starts)]
        for future in as_completed(futures):  # each row as its game ends
            game = future.result()
            games.append(game)
            print(f"| {game['start'].split()[-1]} | {game['winner']} | {game['plies']} "
                  f"| {game['proved_at'] or '-'} | {game['lost_proof']} | {game['moves']} |",
                  flush=True)
    won = [g["plies"] for g in games if g["winner"] == "X"]
    proved = [g["proved_at"] for g in games if g["proved_at"]]
    print(f"\nX won {len(won)} of {len(games)}; median plies over those "
          f"{statistics.median(won) if won else '-'}; median ply of the first proof "
          f"{statistics.median(proved) if proved else '-'}; load average after "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
