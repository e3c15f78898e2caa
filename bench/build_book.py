"""Grow the opening book with positions the proof-number solver proves for the side to move.

Two modes:

- ``games``: play master games (self-play and against the seed players), collect the
  positions the first player meets, and prove the ones the online threat search does not
  already win; every proved position gets its winning move in the book.
- ``tree``: walk the first player's strategy from a root position breadth-first: prove the
  first player's position, store the proving move, and queue every reply of the second
  player (one per symmetry class). Positions the solver cannot prove within the budget are
  listed as open; when none is left, the root is proved and the book is the strategy.

    .venv/bin/python bench/build_book.py games --games 20 --seconds 30
    .venv/bin/python bench/build_book.py tree --root "1a1 2b2 1d4 1b2 3b2 2c3 4d1" --seconds 60

The book is written to engine/data/book_<variant>.txt (merged with what is there).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Board, format_cell  # noqa: E402
from engine.book import Book, book_for, canonical_frame  # noqa: E402
from engine.players import Limit, make_player  # noqa: E402
from engine.players.master import root_moves  # noqa: E402
from engine.solver import Solver  # noqa: E402
from engine.threats import threat_win  # noqa: E402


def prove_into(book: Book, solver: Solver, board: Board, seconds: float) -> bool | None:
    """Prove ``board`` for the side to move and store its winning move; True if proved,
    False if disproved, None if the budget ran out."""
    proof = solver.prove(board, seconds=seconds)
    if proof.proved:
        move = solver.winning_move(board)
        if move is not None:
            book.add(board, move)
            return True
    return False if proof.disproved else None


def cmd_games(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    opponents = ["master", "bogenschutz", "rubinoff:eval=eval2,depth=4", "wood", "freeness"]
    seen: set[tuple[int, int]] = set()
    for game in range(args.games):
        spec_o = opponents[game % len(opponents)]
        players = (make_player("master", seed=game), make_player(spec_o, seed=game + 1))
        board = Board(args.variant)
        while board.outcome() is None:
            if board.turn == 0 and board.ply >= args.min_ply:
                key, _ = canonical_frame(board)
                if key not in seen and book.move(board) is None and threat_win(board) is None:
                    seen.add(key)
                    result = prove_into(book, solver, board, args.seconds)
                    print(f"game {game} ply {board.ply}: {result} ({len(book)} in book)",
                          flush=True)
            board.push(players[board.turn].decide(board, Limit(time=args.time)).move)
        book.save()


def cmd_tree(args: argparse.Namespace, book: Book, solver: Solver) -> None:
    root = Board.from_notation(args.variant, args.root)
    queue: deque[Board] = deque([root])
    seen: set[tuple[int, int]] = set()
    open_positions: list[str] = []
    started = time.perf_counter()
    while queue and time.perf_counter() - started < args.total:
        board = queue.popleft()
        key, _ = canonical_frame(board)
        if key in seen or threat_win(board) is not None:
            continue
        seen.add(key)
        move = book.move(board)
        if move is None:
            result = prove_into(book, solver, board, args.seconds)
            if not result:
                open_positions.append(board.notation())
                print(f"open ({result}): {board.notation()}", flush=True)
                continue
            move = book.move(board)
            assert move is not None
        board.push(move)
        if board.outcome() is None:
            for reply in root_moves(board, 0.0):
                child = board.copy()
                child.push(reply)
                if child.outcome() is None:
                    queue.append(child)
        print(f"{len(book)} in book, {len(queue)} queued, {len(open_positions)} open: "
              f"{board.notation()} ({format_cell(move, board.geometry)})", flush=True)
        book.save()
    print(f"done: {len(book)} in book, {len(queue)} still queued, {len(open_positions)} open")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="4x4x4")
    parser.add_argument("--seconds", type=float, default=30.0, help="solver budget a position")
    parser.add_argument("--tt-bits", type=int, default=22)
    sub = parser.add_subparsers(dest="mode", required=True)
    games = sub.add_parser("games")
    games.add_argument("--games", type=int, default=10)
    games.add_argument("--time", type=float, default=0.5, help="seconds a move in the games")
    games.add_argument("--min-ply", type=int, default=6)
    tree = sub.add_parser("tree")
    tree.add_argument("--root", default="")
    tree.add_argument("--total", type=float, default=3600.0, help="seconds in all")
    args = parser.parse_args()
    book = book_for(args.variant)
    solver = Solver(book.geometry, tt_bits=args.tt_bits, tss_budget=500)
    {"games": cmd_games, "tree": cmd_tree}[args.mode](args, book, solver)


if __name__ == "__main__":
    main()
