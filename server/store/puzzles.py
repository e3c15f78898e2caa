"""The puzzles' tables: the puzzles with their ratings, each player's puzzle rating and streak,
and every finished try (a player's puzzle history).

Written as sans-I/O operations (``server.store.query``) like the games', run by any
``SQLStore`` through :class:`PuzzleStore`; the tables are one entry of ``MIGRATIONS``
(``server.store.puzzle_schema``). A player's first finished try of a puzzle is rated in the same
transaction that records it (``server.game.puzzles.rate_attempt``), so two tries at once cannot
both be the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypeVar

from engine import Board
from engine.puzzles.mate import Puzzle, Step, canonical_key
from server.errors import StoreError
from server.game.puzzles import Streak, rate_attempt
from server.game.ratings import Rating
from server.store.base import Row, Store
from server.store.operations import player_row_by_name
from server.store.query import Op, change, every, fetch_all, fetch_one, one, run_count
from server.store.sql import SQLStore

T = TypeVar("T")



@dataclass(frozen=True)
class StoredPuzzle:
    """A puzzle as stored: the engine's puzzle, its id, rating and how often it was met."""

    id: int
    puzzle: Puzzle
    rating: Rating
    plays: int
    solves: int


@dataclass(frozen=True)
class PuzzlePlayer:
    """A player's puzzle record: rating, rated tries and streak."""

    rating: Rating
    rated: int = 0
    streak: Streak = Streak()


@dataclass(frozen=True)
class Attempt:
    """One finished try, as the history lists it."""

    puzzle_id: int
    title: str
    mode: str
    solved: bool
    rated: bool
    rating_before: float
    rating_after: float
    at: float


@dataclass(frozen=True)
class Recorded:
    """What recording a finished try changed."""

    player: PuzzlePlayer
    rated: bool
    rating_before: float


def _puzzle_of(row: Row) -> StoredPuzzle:
    puzzle = Puzzle(row["variant"], tuple(Board.from_notation(row["variant"],
                                                              row["position"]).moves),
                    row["kind"], row["moves"], Step.from_json(json.loads(row["solution"])),
                    row["horizon"], row["source"])
    return StoredPuzzle(row["id"], puzzle, Rating(row["rating"], row["rd"], row["volatility"]),
                        row["plays"], row["solves"])


def _player_of(row: Row | None) -> PuzzlePlayer:
    if row is None:
        return PuzzlePlayer(Rating())
    return PuzzlePlayer(Rating(row["rating"], row["rd"], row["volatility"]), row["rated"],
                        Streak(row["streak"], row["best_streak"], row["streak_run"]))


def key_of(name: str) -> Op[int]:
    """The id of the player called ``name`` (looked up as ``operations.player_by_name``
    does), which the puzzles' rows refer to: a rename keeps them, and a newcomer who takes
    a name that was someone's gets none of them."""
    row = yield from player_row_by_name(name)
    if row is None:
        raise StoreError(f"no player {name}", code="no_such_player")
    return int(row["id"])


def position_key(puzzle: Puzzle) -> str:
    x, o = canonical_key(Board(puzzle.variant, puzzle.position))
    return f"{puzzle.variant} {x:x} {o:x}"


def insert_puzzles(puzzles: Iterable[Puzzle], now: float) -> Op[int]:
    """Add the puzzles whose position (up to symmetry) is new; returns how many were."""
    added = 0
    for puzzle in puzzles:
        data = puzzle.to_json()
        added += yield from run_count(change(
            "INSERT INTO puzzles (variant, position, position_key, kind, moves, horizon,"
            " solution, source, rating, rd, volatility, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (position_key) DO NOTHING",
            puzzle.variant, data["position"], position_key(puzzle), puzzle.kind, puzzle.moves,
            puzzle.horizon, json.dumps(data["solution"]), puzzle.source, puzzle.rating,
            Rating().rd, Rating().volatility, now,
        ))  # fmt: skip
    return added


def count_puzzles() -> Op[int]:
    row = yield from fetch_one(one("SELECT COUNT(*) AS n FROM puzzles"))
    return 0 if row is None else int(row["n"])


def puzzle_by_id(puzzle_id: int) -> Op[StoredPuzzle | None]:
    row = yield from fetch_one(one("SELECT * FROM puzzles WHERE id = ?", puzzle_id))
    return None if row is None else _puzzle_of(row)


def ids_by_rating() -> Op[list[tuple[int, float]]]:
    """Every puzzle's ``(id, rating)``, easiest first."""
    rows = yield from fetch_all(every("SELECT id, rating FROM puzzles ORDER BY rating, id"))
    return [(int(row["id"]), float(row["rating"])) for row in rows]


def count_before(before: float) -> Op[int]:
    """How many puzzles were made before ``before``."""
    row = yield from fetch_one(one("SELECT COUNT(*) AS n FROM puzzles WHERE created < ?",
                                   before))
    return 0 if row is None else int(row["n"])


def nth_oldest(before: float, index: int) -> Op[int | None]:
    """The id of the ``index``-th puzzle (from 0) made before ``before``, in the order they
    were added."""
    row = yield from fetch_one(one(
        "SELECT id FROM puzzles WHERE created < ? ORDER BY id LIMIT 1 OFFSET ?", before, index))
    return None if row is None else int(row["id"])


def nth_easiest(index: int) -> Op[int | None]:
    """The id of the ``index``-th puzzle (from 0), easiest first."""
    row = yield from fetch_one(one(
        "SELECT id FROM puzzles ORDER BY rating, id LIMIT 1 OFFSET ?", index))
    return None if row is None else int(row["id"])


_UNSEEN = "id NOT IN (SELECT puzzle_id FROM puzzle_attempts WHERE player_id = ?)"


def nearest_unseen(name: str | None, target: float) -> Op[list[tuple[int, float]]]:
    """``(id, rating)`` of the puzzles just above and just below ``target`` that ``name``
    has not finished (None: any), at most two."""
    found = []
    keys = () if name is None else ((yield from key_of(name)),)
    where = "" if name is None else f" AND {_UNSEEN}"
    for compare, order in ((">=", "ASC"), ("<", "DESC")):
        row = yield from fetch_one(one(
            f"SELECT id, rating FROM puzzles WHERE rating {compare} ?{where}"
            f" ORDER BY rating {order}, id LIMIT 1", target, *keys))
        if row is not None:
            found.append((int(row["id"]), float(row["rating"])))
    return found


def puzzle_player(name: str) -> Op[PuzzlePlayer]:
    key = yield from key_of(name)
    row = yield from fetch_one(one("SELECT * FROM puzzle_players WHERE player_id = ?", key))
    return _player_of(row)


def _save_player(key: int, player: PuzzlePlayer) -> Op[None]:
    r, streak = player.rating, player.streak
    yield change(
        "INSERT INTO puzzle_players (player_id, rating, rd, volatility, rated, streak,"
        " best_streak, streak_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (player_id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,"
        " volatility = excluded.volatility, rated = excluded.rated, streak = excluded.streak,"
        " best_streak = excluded.best_streak, streak_run = excluded.streak_run",
        key, r.rating, r.rd, r.volatility, player.rated, streak.count, streak.best, streak.run,
    )  # fmt: skip


def start_streak(name: str) -> Op[PuzzlePlayer]:
    """A new streak for ``name``: the count back to 0, the next run's puzzles."""
    key = yield from key_of(name)
    player = yield from puzzle_player(name)
    player = replace(player, streak=player.streak.restarted())
    yield from _save_player(key, player)
    return player


def record_attempt(name: str, puzzle_id: int, mode: str, solved: bool, now: float
                   ) -> Op[Recorded]:
    """Record a finished try: rated if it is ``name``'s first of this puzzle and not a
    streak's (the puzzle's rating moves too); a streak's counts up or ends."""
    key = yield from key_of(name)
    row = yield from fetch_one(one("SELECT * FROM puzzles WHERE id = ?", puzzle_id))
    if row is None:
        raise StoreError(f"no puzzle {puzzle_id}", code="no_such_puzzle")
    stored = _puzzle_of(row)
    player = yield from puzzle_player(name)
    tried = yield from fetch_one(one(
        "SELECT 1 AS tried FROM puzzle_attempts WHERE player_id = ? AND puzzle_id = ?",
        key, puzzle_id))
    rated = tried is None and mode != "streak"
    rating = player.rating
    if rated:
        rating, puzzle_rating = rate_attempt(player.rating, stored.rating, solved)
        yield change("UPDATE puzzles SET rating = ?, rd = ?, volatility = ? WHERE id = ?",
                     puzzle_rating.rating, puzzle_rating.rd, puzzle_rating.volatility,
                     puzzle_id)
    yield change("UPDATE puzzles SET plays = plays + 1, solves = solves + ? WHERE id = ?",
                 int(solved), puzzle_id)
    streak = player.streak.after(solved) if mode == "streak" else player.streak
    updated = PuzzlePlayer(rating, player.rated + int(rated), streak)
    yield from _save_player(key, updated)
    yield change(
        "INSERT INTO puzzle_attempts (player_id, puzzle_id, mode, solved, rated,"
        " rating_before, rating_after, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        key, puzzle_id, mode, solved, rated, player.rating.rating, rating.rating, now)
    return Recorded(updated, rated, player.rating.rating)


def history(name: str, limit: int) -> Op[list[Attempt]]:
    """``name``'s latest finished tries, newest first."""
    rows = yield from fetch_all(every(
        "SELECT a.*, p.kind, p.moves, p.position FROM puzzle_attempts a"
        " JOIN puzzles p ON p.id = a.puzzle_id WHERE a.player_id = ?"
        " ORDER BY a.at DESC, a.id DESC LIMIT ?", (yield from key_of(name)), limit))
    out = []
    for row in rows:
        side = "X" if len(row["position"].split()) % 2 == 0 else "O"
        title = (f"{side} to play and survive" if row["kind"] == "survive"
                 else f"{side} to play and win in {row['moves']}")
        out.append(Attempt(int(row["puzzle_id"]), title, row["mode"], bool(row["solved"]),
                           bool(row["rated"]), row["rating_before"], row["rating_after"],
                           row["at"]))
    return out


def decided_games(limit: int) -> Op[list[tuple[str, list[int]]]]:
    """The latest ``limit`` finished 4x4x4 games won on the board, oldest first."""
    rows = yield from fetch_all(every(
        "SELECT id FROM games WHERE status = 'finished' AND reason = 'line'"
        " AND variant = '4x4x4' ORDER BY ended DESC LIMIT ?", limit))
    games = []
    for row in reversed(rows):
        moves = yield from fetch_all(every(
            "SELECT cell FROM moves WHERE game_id = ? ORDER BY ply", row["id"]))
        games.append((row["id"], [int(m["cell"]) for m in moves]))
    return games


class PuzzleStore:
    """The puzzles' operations on a server's ``SQLStore``."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, SQLStore):
            raise StoreError("puzzles need a SQL store")
        self.store = store

    async def write(self, op: Op[T]) -> T:
        return await self.store._write(op)  # noqa: SLF001 (the store's one execution hook)

    async def read(self, op: Op[T]) -> T:
        return await self.store._read(op)  # noqa: SLF001


async def decided_games_of(store: Store, limit: int) -> list[tuple[str, list[int]]]:
    return await PuzzleStore(store).read(decided_games(limit))


async def add_puzzles(store: Store, puzzles: Iterable[Puzzle], now: float) -> int:
    """Add puzzles to ``store`` (those whose position is new); returns how many were. On an
    empty table the shipped starting set goes in first, as a server's first request would."""
    from engine.puzzles.mate import load_puzzles

    db = PuzzleStore(store)
    if not await db.read(count_puzzles()):
        await db.write(insert_puzzles(load_puzzles(), now=0.0))
    return await db.write(insert_puzzles(puzzles, now))
