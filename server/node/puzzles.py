"""The puzzles' requests, over the websocket and the HTTP API alike: the next puzzle, the
puzzle of the day, a streak's puzzles, attempts and a player's history.

Stateless between requests: an attempt carries the player's moves so far, judged against
the stored solution (``server.game.puzzles.judge``); only a finished try is written (with
the player's and the puzzle's ratings, ``server.store.puzzles.record_attempt``). A fresh
database gets the shipped starting set (``engine/data/puzzles_4x4x4.json``) on the first
request, stamped as made at time 0 so it takes part in every day's puzzle.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from engine import format_moves, variant
from engine.puzzles.mate import load_puzzles
from server.errors import ServerError
from server.game.puzzles import (
    daily_index,
    day_start,
    judge,
    nearest,
    streak_index,
    utc_day,
)
from server.node.session import Session
from server.protocol import (
    ErrorCode,
    PuzzleAttempt,
    PuzzleDaily,
    PuzzleHistory,
    PuzzleHistoryList,
    PuzzleInfo,
    PuzzleNext,
    PuzzleRequest,
    PuzzleResult,
    PuzzleShown,
    PuzzleStreak,
    PuzzleTry,
)
from server.store import puzzles as ops
from server.store.base import Store
from server.store.puzzles import PuzzlePlayer, PuzzleStore, StoredPuzzle

__all__ = ["Puzzles", "info_of"]


def info_of(stored: StoredPuzzle) -> PuzzleInfo:
    """The protocol's view of a stored puzzle."""
    puzzle = stored.puzzle
    geometry = variant(puzzle.variant)
    return PuzzleInfo(
        id=stored.id, variant=puzzle.variant,  # type: ignore[arg-type]
        moves=list(puzzle.position), notation=format_moves(puzzle.position, geometry),
        to_move=puzzle.side,  # type: ignore[arg-type]
        kind=puzzle.kind,  # type: ignore[arg-type]
        length=puzzle.moves, horizon=puzzle.horizon, title=puzzle.title,
        rating=round(stored.rating.rating), plays=stored.plays, solves=stored.solves,
    )


class Puzzles:
    """Puzzle requests on one server's store."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self.clock = clock
        self._seeded = False
        self._seeding = asyncio.Lock()

    async def _db(self) -> PuzzleStore:
        db = PuzzleStore(self._store)
        if not self._seeded:
            async with self._seeding:
                if not self._seeded:
                    if not await db.read(ops.count_puzzles()):
                        await db.write(ops.insert_puzzles(load_puzzles(), now=0.0))
                    self._seeded = True
        return db

    async def _puzzle(self, db: PuzzleStore, puzzle_id: int) -> StoredPuzzle:
        stored = await db.read(ops.puzzle_by_id(puzzle_id))
        if stored is None:
            raise ServerError(f"no puzzle {puzzle_id}", ErrorCode.NO_SUCH_PUZZLE)
        return stored

    async def one(self, puzzle_id: int) -> PuzzleInfo:
        """A puzzle by its id."""
        return info_of(await self._puzzle(await self._db(), puzzle_id))

    async def next(self, name: str) -> PuzzleShown:
        """The unfinished puzzle nearest ``name``'s puzzle rating (once every puzzle is
        finished, the nearest of all)."""
        db = await self._db()
        player = await db.read(ops.puzzle_player(name))
        target = player.rating.rating
        chosen = nearest(await db.read(ops.nearest_unseen(name, target)), target)
        if chosen is None:
            chosen = nearest(await db.read(ops.nearest_unseen(None, target)), target)
        if chosen is None:
            raise ServerError("this server has no puzzles", ErrorCode.NO_PUZZLES)
        return PuzzleShown(puzzle=info_of(await self._puzzle(db, chosen)), mode="next",
                           rating=round(target))

    async def daily(self, name: str | None) -> PuzzleShown:
        """The puzzle of today (UTC): picked among the puzzles made before today began, so
        puzzles added during the day do not change it."""
        db = await self._db()
        day = utc_day(self.clock())
        began = day_start(day)
        count = await db.read(ops.count_before(began))
        chosen = await db.read(ops.nth_oldest(began, daily_index(day, count))) if count else None
        if chosen is None:
            raise ServerError("this server has no puzzles", ErrorCode.NO_PUZZLES)
        stored = await self._puzzle(db, chosen)
        rating = None
        if name is not None:
            rating = round((await db.read(ops.puzzle_player(name))).rating.rating)
        return PuzzleShown(puzzle=info_of(stored), mode="daily", rating=rating,
                           day=day.isoformat())

    async def streak(self, name: str, new: bool = True) -> PuzzleShown:
        """A streak's puzzle: the first of a new one, or the one for the streak going on."""
        db = await self._db()
        player = await (db.write(ops.start_streak(name)) if new
                        else db.read(ops.puzzle_player(name)))
        stored = await self._puzzle(db, await self._streak_puzzle(db, player))
        return PuzzleShown(puzzle=info_of(stored), mode="streak",
                           rating=round(player.rating.rating), streak=player.streak.count,
                           best_streak=player.streak.best)

    async def _streak_puzzle(self, db: PuzzleStore, player: PuzzlePlayer) -> int:
        streak = player.streak
        count = await db.read(ops.count_puzzles())
        chosen = (await db.read(ops.nth_easiest(streak_index(streak.count, count, streak.run)))
                  if count else None)
        if chosen is None:
            raise ServerError("this server has no puzzles", ErrorCode.NO_PUZZLES)
        return chosen

    async def attempt(self, name: str, puzzle_id: int, moves: list[int], mode: str
                      ) -> PuzzleResult:
        """Judge ``moves``; a finished try is recorded (and rated, if it is the first)."""
        db = await self._db()
        stored = await self._puzzle(db, puzzle_id)
        if mode == "streak":
            player = await db.read(ops.puzzle_player(name))
            if puzzle_id != await self._streak_puzzle(db, player):
                raise ServerError("this is not your streak's puzzle: ask puzzle_streak",
                                  ErrorCode.NOT_ALLOWED)
        try:
            judged = judge(stored.puzzle.solution, moves)
        except ValueError as error:
            raise ServerError(str(error), ErrorCode.BAD_MESSAGE) from None
        if not judged.finished:
            return PuzzleResult(puzzle=puzzle_id, verdict="right", reply=judged.reply)
        recorded = await db.write(ops.record_attempt(name, puzzle_id, mode,
                                                     judged.verdict == "solved", self.clock()))
        after = recorded.player
        return PuzzleResult(
            puzzle=puzzle_id, verdict=judged.verdict, solution=list(judged.solution),
            rated=recorded.rated, rating=round(after.rating.rating),
            rating_change=(round(after.rating.rating) - round(recorded.rating_before)
                           if recorded.rated else None),
            streak=after.streak.count if mode == "streak" else None,
            best_streak=after.streak.best if mode == "streak" else None,
        )

    async def history(self, name: str, limit: int = 20) -> PuzzleHistoryList:
        db = await self._db()
        player = await db.read(ops.puzzle_player(name))
        tries = await db.read(ops.history(name, limit))
        return PuzzleHistoryList(
            attempts=[PuzzleTry(puzzle=t.puzzle_id, title=t.title, mode=t.mode,  # type: ignore[arg-type]
                                solved=t.solved, rated=t.rated,
                                rating_before=round(t.rating_before),
                                rating_after=round(t.rating_after), at=t.at)
                      for t in tries],
            rating=round(player.rating.rating), best_streak=player.streak.best)

    async def handle(self, session: Session, message: PuzzleRequest) -> None:
        """Answer a websocket request of ``session`` (a player: it has said hello)."""
        name = session.name
        assert name is not None
        match message:
            case PuzzleNext():
                reply: PuzzleShown | PuzzleResult | PuzzleHistoryList = await self.next(name)
            case PuzzleDaily():
                reply = await self.daily(name)
            case PuzzleStreak():
                reply = await self.streak(name, message.new)
            case PuzzleAttempt():
                reply = await self.attempt(name, message.puzzle, message.moves, message.mode)
            case PuzzleHistory():
                reply = await self.history(name, message.limit)
        reply.ref = message.id
        session.send(reply)
