"""One ``Store`` for both SQL databases: the methods written once over two execution hooks.

``SQLStore`` implements ``server.store.base.Store`` by building an operation
(``server.store.operations``) for each call and handing it to ``_write`` or ``_read``, which
a subclass implements for its database: ``server.store.sqlite.SQLiteStore`` on its writer
thread with group commit and its reader thread, ``server.store.postgres.PostgresStore`` in a
transaction on a pooled asyncpg connection. As ``chess.engine`` puts UCI and XBoard on one
protocol base, the subclasses only execute; what is written and checked lives here once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TypeVar, Unpack

from server.errors import StoreError
from server.game.records import GameRecord, MoveRecord, PlayerRecord
from server.store import operations, reviews
from server.store.accounts import SQLAccounts
from server.store.base import (
    GameEnding,
    NewGame,
    PlayerGames,
    hash_token,
    new_game,
)
from server.store.ending import x_score
from server.store.lever_records import LeverStore
from server.store.query import Op, fetch_one, one

T = TypeVar("T")


class SQLStore(SQLAccounts, LeverStore):
    """``Store`` over SQL; a subclass names its ``dialect`` and runs operations (the hooks of
    ``SQLRunner``)."""

    write_failures = 0  # writes the database refused (disk full, read-only, gone): /metrics
    write_failing: str | None = None  # why the last write failed, until one succeeds again

    async def check(self, timeout: float = 2.0) -> str | None:
        """``Store.check``: a failing write (tried again here, so a store that can write
        again is ready without waiting for a player's write), or a database that does not
        answer a query."""
        if self.write_failing is not None:
            with contextlib.suppress(StoreError, TimeoutError):
                await asyncio.wait_for(self._write(operations.touch()), timeout)
        if self.write_failing is not None:
            return "the database cannot be written"
        try:
            await asyncio.wait_for(self._read(fetch_one(one("SELECT 1"))), timeout)
        except (StoreError, TimeoutError):
            return "the database does not answer"
        return None

    # Players.

    async def create_player(self, name: str, now: float) -> tuple[PlayerRecord, str]:
        """Register ``name``; returns the player and the plain token, which is never stored."""
        issued = await self.register(name, now)
        return issued.player, issued.token

    async def authenticate(self, token: str, name: str | None = None) -> PlayerRecord | None:
        """The player holding ``token`` (and called ``name``, if given), or None.

        The lookup is by the token's hash, so response time says nothing about the token.
        """
        return await self._read(operations.player_by_token(hash_token(token), name))

    async def get_player(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case, or None."""
        return await self._read(operations.player_by_name(name))

    async def get_players(self, names: Sequence[str]) -> dict[str, PlayerRecord | None]:
        """``get_player`` of each name, in one read."""
        return await self._read(operations.players_by_names(names))

    async def leaderboard(
        self, limit: int = 50, min_rated_games: int = 0, active_since: float | None = None
    ) -> list[PlayerRecord]:
        """The best ``limit`` players by rating with at least ``min_rated_games`` rated games
        (and, with ``active_since``, a rated game ended since then)."""
        return await self._read(operations.best_players(limit, min_rated_games, active_since))

    async def player_games(
        self, name: str, before: str | None = None, limit: int = 20,
        viewer: str | None = None,
    ) -> PlayerGames | None:
        """The player and a page of their games, newest first (``Store.player_games``)."""
        return await self._read(operations.player_games(name, before, limit, viewer),
                                snapshot=True)

    # Games.

    async def create_game(self, **terms: Unpack[NewGame]) -> GameRecord:
        """Start a game on these terms. A rated game needs two players. Under load the
        start shares the moves' commit (``along``: it goes with a group waiting for the
        window)."""
        game = new_game(**terms)
        await self._write(operations.insert_game(game), along=True)
        return game

    async def _game_write(self, game_id: str, op: Op[T], *, along: bool = False) -> T:
        """``_write`` of ``op``, a write on the game ``game_id`` that reads its moves from
        ``dialect.settled_moves`` (SQLite settles the game's journal rows first:
        ``SQLiteStore._game_write``)."""
        return await self._write(op, along=along)

    async def record_move(
        self, game_id: str, move: MoveRecord, *, fence: int | None = None
    ) -> None:
        """Append a move to an active game; returns once the move is committed."""
        await self._game_write(game_id, operations.append_move(
            self.dialect, game_id, move, fence, self.dialect.settled_moves))

    async def take_back(self, game_id: str, ply: int, *, fence: int | None = None) -> None:
        """Remove the moves after ``ply`` from an active game; returns once committed."""
        await self._game_write(game_id, operations.take_back(self.dialect, game_id, ply, fence))

    async def finish_game(
        self, game_id: str, *, fence: int | None = None, move: MoveRecord | None = None,
        **ending: Unpack[GameEnding],
    ) -> GameRecord:
        """End a game with a result, updating the players' records and ratings atomically;
        with ``move``, the move that ended it in the same transaction. Under load the end
        shares the moves' commit (``along``)."""
        x_score(ending["result"])  # a ValueError now for a result that is not one
        return await self._game_write(game_id, operations.finish_game(
            self.dialect, game_id, result=ending["result"], reason=ending["reason"],
            now=ending["now"], winning_line=ending.get("winning_line"), fence=fence,
            move=move, moves=self.dialect.settled_moves,
        ), along=True)  # fmt: skip

    async def abort_game(
        self, game_id: str, *, reason: str, now: float, fence: int | None = None
    ) -> GameRecord:
        """Call a game off with no result and no effect on anyone's record."""
        return await self._game_write(game_id, operations.abort_game(
            self.dialect, game_id, reason=reason, now=now, fence=fence,
            moves=self.dialect.settled_moves))

    async def claim(self, game_id: str, *, fence: int) -> GameRecord:
        """Raise the game's fencing token to ``fence`` under its row lock and return the game
        as it stands (see ``Store.claim``): a write of an older holder is refused from then."""
        return await self._write(operations.claim(self.dialect, game_id, fence))

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""
        return await self._read(operations.find_game(game_id))

    async def unfinished_games(self) -> list[GameRecord]:
        """Every active game with its moves, oldest first, to resume them after a restart."""
        return await self._read(operations.unfinished_games(), snapshot=True)

    # Reviews.

    async def get_review(self, game_id: str) -> tuple[str, float] | None:
        """A finished game's stored review (JSON) and when it was computed, or None."""
        return await self._read(reviews.find_review(game_id))

    async def save_review(self, game_id: str, review: str, computed: float) -> None:
        """Keep a game's review (JSON); a review already kept stays as it is."""
        await self._write(reviews.insert_review(game_id, review, computed))
