"""``qubic puzzles``: make puzzles from games and check them (engine/puzzles/mate.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from qubic_cli.common import fail

NAME = "puzzles"
HELP = "make puzzles from games (the server's, self-play, the proof's) and check them"
DESCRIPTION = """\
  generate   harvest puzzles from finished games: "to play and win in N" (N = 2-5 of the
             winner's moves, the least there is) and "to play and survive", each solved by
             the exact search (every accepted move at every step, the most resisting
             replies); prints what it took and what the solver rejected, writes --out
  check      solve every puzzle of a file again (default: the shipped set) and list any
             whose solution differs
  add        put the puzzles of a file into a server's database (--db), skipping positions
             it has (up to symmetry); they join the puzzle of the day from the next UTC day

Sources (--source, repeatable): `proof` (the proof's X against the lobby's levels as O),
`self-play` (the lobby's levels against each other), `db` (the finished games of a server's
database, --db as for qubic serve).

examples:
  qubic puzzles generate --source proof --source self-play --games 20 --out puzzles.json
  qubic puzzles generate --source db --db qubic.db --games 500 --out mine.json
  qubic puzzles add mine.json --db qubic.db
  qubic puzzles check
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["generate", "check", "add"])
    parser.add_argument("file", nargs="?",
                        help="check: the puzzle file (default: shipped); add: the file to add")
    parser.add_argument("--source", action="append", choices=["proof", "self-play", "db"],
                        help="where the games come from (repeatable; default: proof)")
    parser.add_argument("--games", type=int, default=10, metavar="N",
                        help="games per source (default 10; db: the latest N)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the engine games")
    parser.add_argument("--db", default="qubic.db", metavar="DB",
                        help="the db source, and add's database: a SQLite file or a "
                             "postgresql:// URL")
    parser.add_argument("--budget", type=int, default=None, metavar="NODES",
                        help="exact-search nodes per puzzle before it is given up")
    parser.add_argument("--out", metavar="FILE", help="generate: write the puzzles here")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from engine.puzzles import mate as puzzles

    budget = args.budget or puzzles.NODE_BUDGET
    if args.action == "check":
        return _check(Path(args.file) if args.file else puzzles.shipped_path(), budget, args)
    if args.action == "add":
        if not args.file or not Path(args.file).exists():
            return fail(NAME, "add needs a puzzle file (qubic puzzles generate --out wrote it)")
        found = puzzles.load_puzzles(Path(args.file))
        added = asyncio.run(_add(args.db, found))
        report = {"file": args.file, "puzzles": len(found), "added": added}
        print(json.dumps(report) if args.json else _lines(report))
        return 0
    if args.games < 1:
        return fail(NAME, "--games must be at least 1")
    return _generate(args, budget)


def _generate(args: argparse.Namespace, budget: int) -> int:
    from engine.puzzles import mate as puzzles
    from engine.puzzles import sources as puzzle_sources

    harvest = puzzle_sources.Harvest()
    timings: dict[str, float] = {}
    for source in args.source or ["proof"]:
        began = time.perf_counter()
        if source == "proof":
            games: Any = puzzle_sources.proof_games(args.games, args.seed)
        elif source == "self-play":
            games = puzzle_sources.self_play_games(args.games, args.seed)
        else:
            games = [(moves, f"game {game_id}")
                     for game_id, moves in asyncio.run(_stored_games(args.db, args.games))]
        puzzle_sources.harvest_all(games, harvest, budget=budget)
        timings[source] = round(time.perf_counter() - began, 1)
    report = {**harvest.report(), "seconds_by_source": timings}
    if args.out:
        puzzles.save_puzzles(harvest.puzzles, Path(args.out))
        report["out"] = args.out
    print(json.dumps(report, indent=2) if args.json else _lines(report))
    return 0


def _lines(report: dict[str, Any]) -> str:
    return "\n".join(f"{key}: {value}" for key, value in report.items())


async def _stored_games(db: str, count: int) -> list[tuple[str, list[int]]]:
    """The latest ``count`` finished 4x4x4 games with a winner, oldest first."""
    from server.store.factory import open_store
    from server.store.puzzles import decided_games_of

    store = await open_store(db)
    try:
        return await decided_games_of(store, count)
    finally:
        await store.close()


async def _add(db: str, found: list[Any]) -> int:
    """Insert ``found`` into the database ``db``; returns how many were new."""
    from server.store.factory import open_store
    from server.store.puzzles import add_puzzles

    store = await open_store(db)
    try:
        return await add_puzzles(store, found, time.time())
    finally:
        await store.close()


def _check(path: Path, budget: int, args: argparse.Namespace) -> int:
    from engine.puzzles import mate as puzzles

    if not path.exists():
        return fail(NAME, f"no puzzle file {path}")
    began = time.perf_counter()
    found = puzzles.load_puzzles(path)
    wrong = {}
    for index, puzzle in enumerate(found):
        problems = puzzles.check_puzzle(puzzle, budget)
        if problems:
            wrong[index] = problems
    report = {"file": str(path), "puzzles": len(found), "wrong": wrong,
              "seconds": round(time.perf_counter() - began, 1)}
    print(json.dumps(report, indent=2) if args.json else _lines(report))
    return 1 if wrong else 0
