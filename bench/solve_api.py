"""``GET /api/solve`` latency, on the proof's tree and off it (issue 26).

    .venv/bin/python bench/solve_api.py [--on 200] [--off 60] [--seed 1]

A ``qubic serve`` process (the harness's, ``--solve-rate`` raised so the bench is not
limited) is asked about distinct positions one at a time, each once (the cache never answers):

- *on the tree*: positions the proof covers: perfect X (the master, which plays the proof's
  moves) against an O playing at random, sampled at every ply;
- *off the tree*: positions from games where both sides play at random for 4 to 12 plies,
  most of which the proof does not cover, so the solver searches up to its 1 s budget.

It prints p50/p95/p99 of the HTTP round trip for each, and how many answers were known (not
``unknown``). The first question starts the solver's worker process; it is asked once before
the measure.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from harness.positions import random_positions
from harness.server import ServerProcess
from harness.stats import ms

from engine import Board, format_cell
from engine.players import Limit, make_player


def on_tree(count: int, rng: random.Random) -> list[list[int]]:
    """Distinct positions the proof covers: perfect X against a random O."""
    master = make_player("master")
    seen: set[tuple[int, ...]] = set()
    positions: list[list[int]] = []
    while len(positions) < count:
        board = Board("4x4x4")
        while board.outcome() is None and len(positions) < count:
            if board.turn == 0:
                board.push(master.decide(board, Limit(time=0.2)).move)
            else:
                board.push(rng.choice(board.legal_moves))
            key = tuple(board.moves)
            if key not in seen and board.outcome() is None:
                seen.add(key)
                positions.append(list(board.moves))
    return positions


def off_tree(count: int, rng: random.Random) -> list[list[int]]:
    """Positions of 4 to 12 random moves, most of which the proof does not cover."""
    return [list(moves) for moves in random_positions(count, rng, 4, 12)]


def ask(base: str, cells: list[int], board: Board) -> tuple[float, dict]:
    moves = " ".join(format_cell(c, board.geometry) for c in cells)
    url = f"{base}/api/solve?" + urllib.parse.urlencode({"variant": "4x4x4", "moves": moves})
    began = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        body = json.loads(response.read())
    return time.perf_counter() - began, body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--on", type=int, default=200, help="positions on the proof's tree")
    parser.add_argument("--off", type=int, default=60, help="positions off it")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    board = Board("4x4x4")
    sets = {"on the tree": on_tree(args.on, rng), "off the tree": off_tree(args.off, rng)}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "q.db", "--solve-rate", "100000").start()
        try:
            ask(server.http_url, [], board)  # starts the worker and loads the proof
            for name, positions in sets.items():
                times, known, by = [], 0, {"book": 0, "search": 0}
                for cells in positions:
                    seconds, body = ask(server.http_url, cells, board)
                    times.append(seconds)
                    known += body["verdict"] != "unknown"
                    if body["proved_by"] in by:
                        by[body["proved_by"]] += 1
                print(f"{name:13} {len(positions):4} positions  {ms(times)}  known "
                      f"{known}/{len(positions)} (book {by['book']}, search {by['search']})",
                      flush=True)
        finally:
            server.close()


if __name__ == "__main__":
    main()
