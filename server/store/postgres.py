"""The store on PostgreSQL, for cluster mode: every node opens the same database through asyncpg.

``PostgresStore`` implements ``server.store.base.Store`` with the same schema as the SQLite store
(types widened to PostgreSQL's). Each write is one short transaction on a pooled connection;
PostgreSQL groups concurrent commits itself, so there is no writer queue here. What makes it
safe with several nodes writing at once:

- names are unique by ``name_key`` (a unique index), so two nodes registering "Alice" and
  "alice" at the same moment get one player and one ``name_taken``;
- a move, finish or abort first locks its game's row (``SELECT ... FOR UPDATE``), so writes to
  one game are serialised: the ply check, the fencing check (``check_fence``) and the end of a
  game see the latest committed state; a game finishes once and its ratings move once;
- finishing a game locks the two players' rows in id order, so two games ending at once with
  the same players cannot deadlock.

Migrations are a versioned list applied in one transaction under an advisory lock (two nodes
starting together migrate once) and recorded in ``qubic_schema``. Durability is PostgreSQL's
``synchronous_commit`` (on by default): a write returns after its commit is flushed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import asyncpg

from server.errors import StoreError
from server.game.ratings import rate_game
from server.game.records import (
    RESULT_SCORES,
    GameRecord,
    GameStatus,
    MoveRecord,
    PlayerRecord,
    Seat,
    TimeControl,
)
from server.store.base import (
    check_fence,
    check_take_back,
    game_from_row,
    hash_token,
    move_from_row,
    name_key,
    new_game,
    new_token,
    player_from_row,
)

T = TypeVar("T")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE players (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL CONSTRAINT players_name_key UNIQUE,
            token_hash BYTEA NOT NULL UNIQUE,
            created DOUBLE PRECISION NOT NULL,
            rating DOUBLE PRECISION NOT NULL,
            rd DOUBLE PRECISION NOT NULL,
            volatility DOUBLE PRECISION NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            rated_games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX players_by_rating ON players (rating DESC)",
        """CREATE TABLE games (
            id TEXT PRIMARY KEY,
            variant TEXT NOT NULL,
            clock_initial DOUBLE PRECISION,
            clock_increment DOUBLE PRECISION,
            rated BOOLEAN NOT NULL,
            x_player TEXT,
            x_computer INTEGER,
            o_player TEXT,
            o_computer INTEGER,
            status TEXT NOT NULL CHECK (status IN ('active', 'finished', 'aborted')),
            result TEXT,
            reason TEXT,
            winning_line TEXT,
            created DOUBLE PRECISION NOT NULL,
            ended DOUBLE PRECISION,
            x_rating DOUBLE PRECISION,
            o_rating DOUBLE PRECISION,
            x_rating_change DOUBLE PRECISION,
            o_rating_change DOUBLE PRECISION,
            fence BIGINT NOT NULL DEFAULT 0,
            CHECK ((x_player IS NULL) <> (x_computer IS NULL)),
            CHECK ((o_player IS NULL) <> (o_computer IS NULL)))""",
        "CREATE INDEX active_games ON games (created) WHERE status = 'active'",
        """CREATE TABLE moves (
            game_id TEXT NOT NULL REFERENCES games (id),
            ply INTEGER NOT NULL,
            cell INTEGER NOT NULL,
            clock_x DOUBLE PRECISION,
            clock_o DOUBLE PRECISION,
            at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (game_id, ply))""",
    ),
    ("ALTER TABLE games ADD COLUMN listed BOOLEAN NOT NULL DEFAULT FALSE",),
)
"""Schema changes in order: entry ``i`` brings the database to version ``i + 1``. Append new
versions; never edit one that has shipped."""

SCHEMA_VERSION = len(MIGRATIONS)
MIGRATION_LOCK = 0x7175626963  # the advisory lock nodes take to migrate one at a time ("qubic")


async def _no_session_state(conn: asyncpg.Connection) -> None:
    """The pool's reset of a connection given back: nothing. The store changes no session
    state (no ``SET``, ``LISTEN``, cursors or session locks: the migration's lock ends with
    its transaction), and asyncpg still rolls back a transaction left open; its default
    reset (``RESET ALL``, ``UNLISTEN *``, ...) was a round trip after every call, the most
    of a move's database time in a cluster node's profile."""


def redact(url: str) -> str:
    """The URL with its password hidden, fit for a message or a log."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


async def migrate(conn: asyncpg.Connection, where: str) -> int:
    """Bring the schema to ``SCHEMA_VERSION`` in one transaction; returns the version found."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        tables = {
            row["tablename"]
            for row in await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        }
        if "qubic_schema" in tables:
            found = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM qubic_schema")
        elif tables:
            raise StoreError(f"cannot use the database {where}: it belongs to another program")
        else:
            await conn.execute(
                "CREATE TABLE qubic_schema (version INTEGER PRIMARY KEY,"
                " applied TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            found = 0
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"cannot use the database {where}: it has schema version {found}, "
                f"written by a newer qubic (this one knows up to {SCHEMA_VERSION})"
            )
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version - 1]:
                await conn.execute(statement)
            await conn.execute("INSERT INTO qubic_schema (version) VALUES ($1)", version)
        return int(found)


class PostgresStore:
    """``server.store.base.Store`` on PostgreSQL; make one with ``await PostgresStore.open(url)``."""

    def __init__(self, url: str, pool: asyncpg.Pool) -> None:
        self.url = url
        self._where = redact(url)
        self._pool = pool
        self._closed = False
        self._in_flight = 0  # calls started and not yet returned; close() waits for them
        self._idle = asyncio.Event()
        self._idle.set()

    @classmethod
    async def open(
        cls, url: str, *, min_size: int = 2, max_size: int = 10, timeout: float = 10.0
    ) -> PostgresStore:
        """Connect to the database at ``url`` (``postgresql://user@host/db``), migrating it.

        Raises ``StoreError`` saying why if the server cannot be reached, refuses the login,
        has no such database, or holds a database of another program or a newer qubic.
        """
        where = redact(url)
        try:
            pool = await asyncpg.create_pool(
                url, min_size=min_size, max_size=max_size, timeout=timeout,
                reset=_no_session_state,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
            raise StoreError(f"cannot use the database {where}: {exc}") from None
        try:
            async with pool.acquire() as conn:
                await migrate(conn, where)
        except BaseException as exc:
            await pool.close()
            if isinstance(exc, asyncpg.PostgresError | OSError):
                raise StoreError(f"cannot use the database {where}: {exc}") from None
            raise
        return cls(url, pool)

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _run(
        self,
        work: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        isolation: Literal["read_committed", "repeatable_read"] | None = "read_committed",
    ) -> T:
        """Run ``work`` in one transaction on a pooled connection; database errors become
        ``StoreError`` (``StoreError`` raised by ``work`` itself passes as it is). Without
        ``isolation`` the work runs outside a transaction block: for one statement, which is
        a transaction of its own (no ``BEGIN`` and ``COMMIT`` round trips)."""
        if self._closed:
            raise StoreError("the store is closed")
        self._in_flight += 1
        self._idle.clear()
        try:
            async with self._pool.acquire() as conn:
                if isolation is None:
                    return await work(conn)
                async with conn.transaction(isolation=isolation):
                    return await work(conn)
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise StoreError(
                f"the write conflicts with the database: {exc}", code="internal"
            ) from exc
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            raise StoreError(f"cannot use the database {self._where}: {exc}") from exc
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def flush(self) -> None:
        """Nothing to wait for: every write has committed by the time it returned."""
        if self._closed:
            raise StoreError("the store is closed")

    async def close(self) -> None:
        """Let every call already made finish (its write commits), then close every
        connection; later calls raise ``StoreError``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._idle.wait()
        await self._pool.close()

    # Players.

    async def create_player(self, name: str, now: float) -> tuple[PlayerRecord, str]:
        """Register ``name``; returns the player and the plain token, which is never stored."""
        token = new_token()
        player = PlayerRecord(name=name, created=now)

        async def insert(conn: asyncpg.Connection) -> None:
            inserted = await conn.fetchval(
                "INSERT INTO players (name, name_key, token_hash, created, rating, rd,"
                " volatility) VALUES ($1, $2, $3, $4, $5, $6, $7)"
                " ON CONFLICT ON CONSTRAINT players_name_key DO NOTHING RETURNING id",
                name, name_key(name), hash_token(token), now,
                player.rating, player.rd, player.volatility,
            )  # fmt: skip
            if inserted is None:
                raise StoreError(f"the name {name!r} is taken", code="name_taken")

        await self._run(insert)
        return player, token

    async def authenticate(self, token: str, name: str | None = None) -> PlayerRecord | None:
        """The player holding ``token`` (and called ``name``, if given), or None."""

        async def find(conn: asyncpg.Connection) -> PlayerRecord | None:
            row = await conn.fetchrow(
                "SELECT * FROM players WHERE token_hash = $1", hash_token(token)
            )
            if row is None or (name is not None and row["name_key"] != name_key(name)):
                return None
            return player_from_row(row)

        return await self._run(find)

    async def get_player(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case, or None."""

        async def find(conn: asyncpg.Connection) -> PlayerRecord | None:
            row = await _player_row(conn, name)
            return None if row is None else player_from_row(row)

        return await self._run(find)

    async def leaderboard(self, limit: int = 50, min_rated_games: int = 0) -> list[PlayerRecord]:
        """The best ``limit`` players by rating with at least ``min_rated_games`` rated games."""

        async def top(conn: asyncpg.Connection) -> list[PlayerRecord]:
            rows = await conn.fetch(
                "SELECT * FROM players WHERE rated_games >= $1"
                " ORDER BY rating DESC, name_key LIMIT $2",
                min_rated_games, limit,
            )  # fmt: skip
            return [player_from_row(row) for row in rows]

        return await self._run(top)

    # Games.

    async def create_game(
        self,
        *,
        variant: str,
        x: Seat,
        o: Seat,
        clock: TimeControl | None,
        rated: bool,
        now: float,
        game_id: str | None = None,
        listed: bool = False,
    ) -> GameRecord:
        """Start a game (with a fresh id unless one is given). A rated game needs two players.
        ``listed``: the lobby may show it (a public game, not a private room's)."""
        game = new_game(
            variant=variant, x=x, o=o, clock=clock, rated=rated, now=now, game_id=game_id,
            listed=listed,
        )

        async def insert(conn: asyncpg.Connection) -> None:
            if rated:
                for seat in (x, o):
                    if await _player_row(conn, str(seat.player)) is None:
                        raise StoreError(
                            f"{seat} is not a registered player and cannot play rated",
                            code="not_allowed",
                        )
            inserted = await conn.fetchval(
                "INSERT INTO games (id, variant, clock_initial, clock_increment, rated,"
                " x_player, x_computer, o_player, o_computer, status, created, listed)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'active', $10, $11)"
                " ON CONFLICT (id) DO NOTHING RETURNING id",
                game.id, variant, *(clock or (None, None)), rated,
                x.player, x.computer_level, o.player, o.computer_level, now, listed,
            )  # fmt: skip
            if inserted is None:
                raise StoreError(f"game {game.id} exists", code="internal")

        await self._run(insert)
        return game

    async def record_move(
        self, game_id: str, move: MoveRecord, *, fence: int | None = None
    ) -> None:
        """Append a move to an active game; returns once the move is committed.

        One statement, one round trip (a move is the commonest write by far): it locks the
        game's row, checks it is active, the fencing token and the ply, inserts the move and
        takes a newer token, all or nothing; what it read says why when nothing was written.
        """

        async def insert(conn: asyncpg.Connection) -> None:
            try:
                row = await conn.fetchrow(
                    _RECORD_MOVE, game_id, move.ply, move.cell, move.clock_x, move.clock_o,
                    move.at, fence,
                )  # fmt: skip
            except asyncpg.UniqueViolationError:  # another writer's move at this ply came first
                raise StoreError(
                    f"game {game_id} already has a move at ply {move.ply}", code="stale_move"
                ) from None
            if row is None:
                raise StoreError(f"no game {game_id}", code="no_such_game")
            if row["written"]:
                return
            check_fence(game_id, row["fence"], fence)
            if row["status"] != GameStatus.ACTIVE:
                raise StoreError(f"game {game_id} is over", code="game_over")
            raise StoreError(
                f"game {game_id} expects ply {row['last_ply'] + 1}, not {move.ply}",
                code="stale_move",
            )

        await self._run(insert, isolation=None)

    async def take_back(self, game_id: str, ply: int, *, fence: int | None = None) -> None:
        """Remove the moves after ``ply`` from an active game; returns once committed."""

        async def delete(conn: asyncpg.Connection) -> None:
            await _lock_active_game(conn, game_id, fence)
            stored = await conn.fetchval(
                "SELECT COUNT(*) FROM moves WHERE game_id = $1", game_id
            )
            check_take_back(game_id, stored, ply)
            await conn.execute("DELETE FROM moves WHERE game_id = $1 AND ply > $2", game_id, ply)

        await self._run(delete)

    async def finish_game(
        self,
        game_id: str,
        *,
        result: str,
        reason: str,
        now: float,
        winning_line: Sequence[int] | None = None,
        fence: int | None = None,
    ) -> GameRecord:
        """End a game with a result, updating the players' records and ratings atomically."""
        if result not in RESULT_SCORES:
            raise ValueError(f"{result!r} is not a result: write 1-0, 0-1 or 1/2-1/2")
        x_score = RESULT_SCORES[result]
        line = None if winning_line is None else " ".join(map(str, winning_line))

        async def finish(conn: asyncpg.Connection) -> GameRecord:
            game = game_from_row(await _lock_active_game(conn, game_id, fence), ())
            await conn.execute(
                "UPDATE games SET status = 'finished', result = $1, reason = $2,"
                " winning_line = $3, ended = $4 WHERE id = $5",
                result, reason, line, now, game_id,
            )  # fmt: skip
            names = [seat.player for seat in (game.x, game.o) if seat.player is not None]
            locked = {
                row["name_key"]: row
                for row in await conn.fetch(
                    "SELECT * FROM players WHERE name_key = ANY($1::text[])"
                    " ORDER BY id FOR UPDATE",
                    [name_key(name) for name in names],
                )
            }
            x_row, o_row = (
                None if seat.player is None else locked.get(name_key(seat.player))
                for seat in (game.x, game.o)
            )
            if game.rated and x_row is not None and o_row is not None:
                old_x, old_o = player_from_row(x_row).glicko, player_from_row(o_row).glicko
                new_x, new_o = rate_game(old_x, old_o, x_score)
                for row, new in ((x_row, new_x), (o_row, new_o)):
                    await conn.execute(
                        "UPDATE players SET rating = $1, rd = $2, volatility = $3,"
                        " rated_games = rated_games + 1 WHERE id = $4",
                        new.rating, new.rd, new.volatility, row["id"],
                    )  # fmt: skip
                await conn.execute(
                    "UPDATE games SET x_rating = $1, o_rating = $2, x_rating_change = $3,"
                    " o_rating_change = $4 WHERE id = $5",
                    old_x.rating, old_o.rating, new_x.rating - old_x.rating,
                    new_o.rating - old_o.rating, game_id,
                )  # fmt: skip
            for seat_row, score in ((x_row, x_score), (o_row, 1.0 - x_score)):
                if seat_row is not None:
                    column = {1.0: "wins", 0.0: "losses", 0.5: "draws"}[score]
                    await conn.execute(
                        f"UPDATE players SET games = games + 1, {column} = {column} + 1"
                        " WHERE id = $1",
                        seat_row["id"],
                    )
            return await _game(conn, game_id)

        return await self._run(finish)

    async def abort_game(
        self, game_id: str, *, reason: str, now: float, fence: int | None = None
    ) -> GameRecord:
        """Call a game off with no result and no effect on anyone's record."""

        async def abort(conn: asyncpg.Connection) -> GameRecord:
            await _lock_active_game(conn, game_id, fence)
            await conn.execute(
                "UPDATE games SET status = 'aborted', reason = $1, ended = $2 WHERE id = $3",
                reason, now, game_id,
            )  # fmt: skip
            return await _game(conn, game_id)

        return await self._run(abort)

    async def claim(self, game_id: str, *, fence: int) -> GameRecord:
        """Raise the game's fencing token to ``fence`` under its row lock and return the game
        as it stands (see ``Store.claim``): a write of the old holder waits for the lock and
        is then refused."""

        async def take(conn: asyncpg.Connection) -> GameRecord:
            await _lock_game(conn, game_id, fence)
            return await _game(conn, game_id)

        return await self._run(take)

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""

        async def find(conn: asyncpg.Connection) -> GameRecord | None:
            try:
                return await _game(conn, game_id)
            except StoreError:
                return None

        return await self._run(find)

    async def unfinished_games(self) -> list[GameRecord]:
        """Every active game with its moves, oldest first, to resume them after a restart."""

        async def find(conn: asyncpg.Connection) -> list[GameRecord]:
            moves: dict[str, list[MoveRecord]] = {}
            for row in await conn.fetch(
                "SELECT moves.* FROM moves JOIN games ON games.id = moves.game_id"
                " WHERE games.status = 'active' ORDER BY moves.game_id, moves.ply"
            ):
                moves.setdefault(row["game_id"], []).append(move_from_row(row))
            rows = await conn.fetch(
                "SELECT * FROM games WHERE status = 'active' ORDER BY created, id"
            )
            return [game_from_row(row, moves.get(row["id"], [])) for row in rows]

        # One snapshot for both queries, so a move committed in between cannot show up in
        # the moves without its game or the other way round.
        return await self._run(find, isolation="repeatable_read")


_RECORD_MOVE = """
WITH game AS (
    SELECT status, fence FROM games WHERE id = $1 FOR UPDATE
), last AS (
    SELECT COALESCE(MAX(ply), 0) AS ply FROM moves WHERE game_id = $1
), allowed AS (
    SELECT 1 FROM game, last
    WHERE game.status = 'active' AND ($7::BIGINT IS NULL OR $7 >= game.fence)
      AND last.ply + 1 = $2
), fenced AS (
    UPDATE games SET fence = $7 WHERE id = $1 AND $7 > (SELECT fence FROM game)
      AND EXISTS (SELECT 1 FROM allowed)
), written AS (
    INSERT INTO moves SELECT $1, $2, $3, $4, $5, $6 FROM allowed RETURNING 1
)
SELECT game.status, game.fence, last.ply AS last_ply, EXISTS (SELECT 1 FROM written) AS written
FROM game, last
"""
"""``record_move`` in one statement: $1 game, $2 ply, $3 cell, $4-$5 clocks, $6 time, $7 the
writer's fencing token (NULL from the one embedded server). A second move at the same ply
(two writers racing; the statement's snapshot predates the other's commit) fails on the
primary key."""


async def _player_row(conn: asyncpg.Connection, name: str) -> Any:
    return await conn.fetchrow("SELECT * FROM players WHERE name_key = $1", name_key(name))


async def _lock_game(conn: asyncpg.Connection, game_id: str, fence: int | None) -> Any:
    """The game's row, locked until the transaction ends, with the fencing token taken."""
    row = await conn.fetchrow("SELECT * FROM games WHERE id = $1 FOR UPDATE", game_id)
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    check_fence(game_id, row["fence"], fence)
    if fence is not None and fence > row["fence"]:
        await conn.execute("UPDATE games SET fence = $1 WHERE id = $2", fence, game_id)
    return row


async def _lock_active_game(conn: asyncpg.Connection, game_id: str, fence: int | None) -> Any:
    row = await _lock_game(conn, game_id, fence)
    if row["status"] != GameStatus.ACTIVE:
        raise StoreError(f"game {game_id} is already {row['status']}", code="game_over")
    return row


async def _game(conn: asyncpg.Connection, game_id: str) -> GameRecord:
    row = await conn.fetchrow("SELECT * FROM games WHERE id = $1", game_id)
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    moves = await conn.fetch("SELECT * FROM moves WHERE game_id = $1 ORDER BY ply", game_id)
    return game_from_row(row, [move_from_row(move) for move in moves])
