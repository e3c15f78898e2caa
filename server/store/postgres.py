"""The store on PostgreSQL, for cluster mode: every node opens the same database through asyncpg.

``PostgresStore`` runs the shared operations (``server.store.operations``) on the shared schema,
each write one short transaction on a pooled connection; only ``record_move`` is its own. Names
are unique by ``name_key``, a game's writes lock its row, a game's end locks its players' rows in
id order, and migrations run once under an advisory lock: docs/cluster.md says what each of these
makes safe with several nodes writing at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import asyncpg

from server.errors import StoreError
from server.game.records import GameStatus, MoveRecord
from server.store.base import check_fence
from server.store.query import POSTGRES, Op
from server.store.schema import migrate as migrate_schema
from server.store.sql import SQLStore
from server.store.urls import redact

T = TypeVar("T")

MIGRATION_LOCK = 0x7175626963  # the advisory lock nodes take to migrate one at a time ("qubic")


async def _no_session_state(conn: asyncpg.Connection) -> None:
    """The pool's reset of a connection given back: nothing. The store changes no session
    state (no ``SET``, ``LISTEN``, cursors or session locks: the migration's lock ends with
    its transaction), and asyncpg still rolls back a transaction left open; its default
    reset (``RESET ALL``, ``UNLISTEN *``, ...) was a round trip after every call, the most
    of a move's database time in a cluster node's profile."""


async def run_op(conn: asyncpg.Connection, op: Op[T]) -> T:
    """Run ``op``'s queries on ``conn``; returns its result."""
    try:
        query = op.send(None)
        while True:
            sql = POSTGRES.sql(query.sql)
            if query.want == "one":
                answer: Any = await conn.fetchrow(sql, *query.params)
            elif query.want == "all":
                answer = await conn.fetch(sql, *query.params)
            else:
                status = await conn.execute(sql, *query.params)  # e.g. "INSERT 0 1"
                last = status.rsplit(" ", 1)[-1]
                answer = int(last) if last.isdigit() else 0
            query = op.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result


async def migrate(conn: asyncpg.Connection, where: str) -> int:
    """Bring the schema to ``SCHEMA_VERSION`` (``server.store.schema``) in one transaction,
    under an advisory lock so that nodes starting together migrate once; returns the version
    found."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        return await run_op(conn, migrate_schema(POSTGRES, where))


class PostgresStore(SQLStore):
    """``server.store.base.Store`` on PostgreSQL: ``await PostgresStore.open(url)``."""

    dialect = POSTGRES

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
        except (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError,
                OSError) as exc:
            # (InternalClientError: a pooled connection left mid-query by a cancelled caller,
            # as /health/ready's timed check can leave one while the database is away)
            self.write_failures += 1  # the database refused or is gone: /metrics counts it
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

    async def _write(self, op: Op[T]) -> T:
        """Run ``op`` in a read-committed transaction of its own."""
        return await self._run(lambda conn: run_op(conn, op))

    async def _read(self, op: Op[T], *, snapshot: bool = False) -> T:
        """Run ``op`` in a transaction: repeatable-read for a ``snapshot``."""
        isolation: Literal["read_committed", "repeatable_read"] = (
            "repeatable_read" if snapshot else "read_committed"
        )
        return await self._run(lambda conn: run_op(conn, op), isolation=isolation)

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
