"""A game's review on the proof's tree (issue 29: under 2 s for a 30-move game).

    .venv/bin/python bench/review.py [--games 3] [--plies 30] [--seed 1] [--server]

The games: X plays the proof's strategy (``engine.solved.strategy.strategy_move``), O blocks X's
open three when there is one and otherwise plays at random (seeded); games of ``plies`` plies
(give or take one) are kept, the first ``--games`` of them in seed order, so each is a game
on the proof's tree of about that length. Each review runs in a fresh process, as in the
server's solver worker: the process first loads the proof and the compiled kernels (timed
apart, as "start"), then reviews the game once (``engine.solved.review.review_game``, what
``TruthPool.review`` runs), so no position of that game is in the solver's cache. A second
review of the same game in the same process shows what the cache saves. It prints one line per
game and the median.

With ``--server``, the same games are stored as finished games of a server started in this
process (SQLite in a temporary directory) and each review is asked of
``GET /api/games/{id}/review``: the round trip through the solver's worker process and the
store. The first request also starts that worker (timed apart, on a game of its own); a
second request for a game reads the kept review.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from engine import Board, format_moves
from engine.solved.strategy import strategy_move, win_cells


def proof_game(rng: random.Random) -> list[int]:
    """X by the proof; O blocks X's three when it can, else plays at random."""
    board = Board("4x4x4")
    while board.outcome() is None:
        if board.turn == 0:
            move = strategy_move(board)
            assert move is not None  # on the proof's tree the strategy always has a move
        else:
            x, o = board.stones
            threat = win_cells(x, o, board.geometry.line_masks)
            move = (threat.bit_length() - 1 if threat else rng.choice(board.legal_moves))
        board.push(move)
    return list(board.moves)


def games(count: int, plies: int, seed: int) -> list[tuple[int, list[int]]]:
    found = []
    for game_seed in range(seed, seed + 10_000):
        moves = proof_game(random.Random(game_seed))
        if abs(len(moves) - plies) <= 1:
            found.append((game_seed, moves))
            if len(found) == count:
                break
    return found


def review_in_fresh_process(moves: list[int]) -> tuple[float, float, float, dict[str, int]]:
    """In a new process: (start, first review, second review) seconds and the classes."""
    from engine.solved import proof
    from engine.solved.review import review_game
    from engine.solved.truth import solve

    started = time.perf_counter()
    proof.warm_up()
    solve(Board("4x4x4", [21, 42]), 0.0)  # the threat search compiled or loaded
    start = time.perf_counter() - started
    began = time.perf_counter()
    review = review_game("4x4x4", moves)
    first = time.perf_counter() - began
    began = time.perf_counter()
    review_game("4x4x4", moves)
    second = time.perf_counter() - began
    counts: dict[str, int] = {}
    for entry in review.moves:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    return start, first, second, counts


async def through_the_server(chosen: list[tuple[int, list[int]]]) -> list[float]:
    """Each game stored finished and its review asked over HTTP: seconds per first ask."""
    from server.game.records import MoveRecord, Seat
    from server.http.app import ServerConfig, start_server

    def get(url: str) -> tuple[int, dict[str, object]]:
        with urllib.request.urlopen(url, timeout=120) as answer:
            return answer.status, json.loads(answer.read())

    async def store(moves: list[int]) -> str:
        game = await running.store.create_game(variant="4x4x4", x=Seat("ann"), o=Seat("bob"),
                                               clock=None, rated=False, now=time.time())
        for ply, cell in enumerate(moves, 1):
            await running.store.record_move(game.id, MoveRecord(ply, cell, None, None, 0.0))
        await running.store.finish_game(game.id, result="1-0", reason="line", now=time.time())
        return game.id

    async def review(game_id: str) -> float:
        began = time.perf_counter()
        while True:
            status, _ = await asyncio.to_thread(
                get, f"{running.http_url}/api/games/{game_id}/review")
            if status == 200:
                return time.perf_counter() - began
            await asyncio.sleep(0.1)  # 202: being computed

    with tempfile.TemporaryDirectory() as tmp:
        running = await start_server(ServerConfig(port=0, db_path=str(Path(tmp) / "q.db"),
                                                  computer_workers=1))
        try:
            warm = await review(await store(proof_game(random.Random(0))))
            print(f"the worker's start and a first review: {warm:.2f} s")
            seconds = []
            for game_seed, moves in chosen:
                game_id = await store(moves)
                first = await review(game_id)
                again = await review(game_id)
                seconds.append(first)
                print(f"seed {game_seed}: {len(moves)} plies, GET review {first:.3f} s"
                      f" (kept: {again * 1000:.1f} ms)")
        finally:
            await running.stop()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--plies", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server", action="store_true",
                        help="ask a server's GET /api/games/{id}/review instead")
    args = parser.parse_args()
    chosen = games(args.games, args.plies, args.seed)
    if args.server:
        seconds = asyncio.run(through_the_server(chosen))
        print(f"median GET review of a {args.plies}-ply game on the proof's tree: "
              f"{statistics.median(seconds):.3f} s over {len(seconds)} games "
              f"(max {max(seconds):.3f} s)")
        return
    context = multiprocessing.get_context("spawn")
    firsts = []
    for game_seed, moves in chosen:
        with context.Pool(1) as pool:
            start, first, second, counts = pool.apply(review_in_fresh_process, (moves,))
        firsts.append(first)
        print(f"seed {game_seed}: {len(moves)} plies, start {start:.2f} s, review {first:.3f} s"
              f" (again {second:.3f} s), classes {counts}")
        print(f"    {format_moves(moves, Board('4x4x4').geometry)}")
    print(f"median review of a {args.plies}-ply game on the proof's tree: "
          f"{statistics.median(firsts):.3f} s over {len(firsts)} games "
          f"(max {max(firsts):.3f} s)")


if __name__ == "__main__":
    main()
