"""The store on PostgreSQL, for cluster mode: every node opens the same database through asyncpg.

``PostgresStore`` runs the shared operations (``server.store.operations``) on the shared schema,
each write one short transaction on a pooled connection; only ``record_move`` is its own: moves
are gathered by group commit's window (``server.store.grouping``, the same options as SQLite's)
and each group is written by one statement over arrays, one transaction on one pooled
connection, every move acknowledged after its commit. Names
are unique by ``name_key``, a game's writes lock its row, a game's end locks its players' rows in
id order, and migrations run once under an advisory lock: docs/cluster.md says what each of these
makes safe with several nodes writing at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import asyncpg

from server.errors import StoreError
from server.game.records import GameStatus, MoveRecord
from server.store.base import check_fence
from server.store.grouping import COMMIT_INTERVAL, COMMIT_MAX, CommitWindow
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


@dataclass(frozen=True, slots=True)
class _Move:
    """A move waiting in the group gathered for its commit."""

    game_id: str
    move: MoveRecord
    fence: int | None
    future: asyncio.Future[None]


class PostgresStore(CommitWindow[_Move], SQLStore):
    """``server.store.base.Store`` on PostgreSQL: ``await PostgresStore.open(url)``."""

    dialect = POSTGRES

    def __init__(self, url: str, pool: asyncpg.Pool, commit_interval: float = COMMIT_INTERVAL,
                 commit_max: int = COMMIT_MAX) -> None:
        self.url = url
        self._where = redact(url)
        self._pool = pool
        self._closed = False
        self._in_flight = 0  # calls and groups started, not yet done; close() waits for them
        self._idle = asyncio.Event()
        self._idle.set()
        self._init_window(asyncio.get_running_loop(), commit_interval, commit_max)
        self._groups: set[asyncio.Task[None]] = set()  # groups being written

    @classmethod
    async def open(
        cls, url: str, *, min_size: int = 2, max_size: int = 10, timeout: float = 10.0,
        commit_interval: float = COMMIT_INTERVAL, commit_max: int = COMMIT_MAX,
    ) -> PostgresStore:
        """Connect to the database at ``url`` (``postgresql://user@host/db``), migrating it.

        Raises ``StoreError`` saying why if the server cannot be reached, refuses the login,
        has no such database, or holds a database of another program or a newer qubic.
        ``commit_interval`` and ``commit_max``: group commit's window and size, as SQLite's
        (``server.store.grouping``).
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
        return cls(url, pool, commit_interval, commit_max)

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _run(
        self,
        work: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        isolation: Literal["read_committed", "repeatable_read"] | None = "read_committed",
        accepted: bool = False,
    ) -> T:
        """Run ``work`` in one transaction on a pooled connection; database errors become
        ``StoreError`` (``StoreError`` raised by ``work`` itself passes as it is). Without
        ``isolation`` the work runs outside a transaction block: for one statement, which is
        a transaction of its own (no ``BEGIN`` and ``COMMIT`` round trips). ``accepted``:
        the work was asked for before ``close()`` (a group of moves), and runs even after."""
        if self._closed and not accepted:
            raise StoreError("the store is closed")
        self._began()
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
            self._ended()

    def _began(self) -> None:
        self._in_flight += 1
        self._idle.clear()

    def _ended(self) -> None:
        self._in_flight -= 1
        if not self._in_flight:
            self._idle.set()

    async def flush(self) -> None:
        """Wait until every move gathered so far is committed: the group goes at once,
        without waiting out the window (any other write has committed when it returned)."""
        if self._closed:
            raise StoreError("the store is closed")
        self._hand_over()
        if self._groups:
            await asyncio.wait(list(self._groups))

    async def close(self) -> None:
        """Let every call already made finish (its write commits; the moves gathered go at
        once), then close every connection; later calls raise ``StoreError``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._hand_over()
        await self._idle.wait()
        await self._pool.close()

    async def _write(self, op: Op[T], *, along: bool = False) -> T:
        """Run ``op`` in a read-committed transaction of its own (``along`` or not: only the
        moves are gathered into one statement here)."""
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

        The move joins the group gathered by the window (``server.store.grouping``); the
        group is written by one statement (``_RECORD_MOVES``), which locks the games' rows,
        checks each game is active, its fencing token and the ply, inserts the moves and
        takes the newer tokens; what it read says why a move was not written.
        """
        if self._closed:
            raise StoreError("the store is closed")
        future: asyncio.Future[None] = self._loop.create_future()
        self._gather(_Move(game_id, move, fence, future), window=True)
        await future

    def _send_group(self, group: list[_Move]) -> None:
        self._began()  # close() waits for the group
        task = self._loop.create_task(self._commit_group(group))
        self._groups.add(task)
        task.add_done_callback(self._groups.discard)

    async def _commit_group(self, group: list[_Move]) -> None:
        """Write ``group`` on one pooled connection and wake each of its moves' callers with
        its outcome."""
        try:
            try:
                began = time.perf_counter()
                outcomes = await self._run(lambda conn: _record_moves(conn, group),
                                           isolation=None, accepted=True)
                self._committed(time.perf_counter() - began)  # the pool's acquire included
            except StoreError as error:  # the database is gone or refused: every move fails
                outcomes = [StoreError(str(error), code=error.code) for _ in group]
            for waiting, outcome in zip(group, outcomes, strict=True):
                if waiting.future.done():  # the caller was cancelled; the write stands anyway
                    continue
                if outcome is None:
                    waiting.future.set_result(None)
                else:
                    waiting.future.set_exception(outcome)
        finally:
            self._ended()


async def _record_moves(conn: asyncpg.Connection, group: list[_Move]) -> list[StoreError | None]:
    """Write the moves of ``group``, each game's once in a statement (a game twice in a group
    writes its second move in a statement after the first's); each move's refusal or None.

    If the statement fails (another writer's move at a ply came first: the primary key), the
    moves are written one statement each, so that only the refused one is refused."""
    outcomes: list[StoreError | None] = [None] * len(group)
    rounds: list[list[int]] = []  # indices in group, each game at most once a round
    seen: dict[str, int] = {}  # a game's round
    for index, waiting in enumerate(group):
        number = seen.get(waiting.game_id, -1) + 1
        seen[waiting.game_id] = number
        if number == len(rounds):
            rounds.append([])
        rounds[number].append(index)
    for indices in rounds:
        moves = [group[i] for i in indices]
        try:
            rows = await conn.fetch(
                _RECORD_MOVES, [m.game_id for m in moves], [m.move.ply for m in moves],
                [m.move.cell for m in moves], [m.move.clock_x for m in moves],
                [m.move.clock_o for m in moves], [m.move.at for m in moves],
                [m.fence for m in moves],
            )  # fmt: skip
        except asyncpg.UniqueViolationError:
            for i in indices:
                outcomes[i] = await _record_move_alone(conn, group[i])
            continue
        for i, row in zip(indices, rows, strict=True):
            outcomes[i] = _refusal(group[i], row)
    return outcomes


async def _record_move_alone(conn: asyncpg.Connection, waiting: _Move) -> StoreError | None:
    """Write one move in a statement of its own (``_RECORD_MOVE``); its refusal or None."""
    move = waiting.move
    try:
        row = await conn.fetchrow(
            _RECORD_MOVE, waiting.game_id, move.ply, move.cell, move.clock_x, move.clock_o,
            move.at, waiting.fence,
        )  # fmt: skip
    except asyncpg.UniqueViolationError:  # another writer's move at this ply came first
        return StoreError(f"game {waiting.game_id} already has a move at ply {move.ply}",
                          code="stale_move")
    return _refusal(waiting, row)


def _refusal(waiting: _Move, row: asyncpg.Record | None) -> StoreError | None:
    """Why a move was not written, from what its statement read (None: it was)."""
    game_id = waiting.game_id
    if row is None or row["status"] is None:
        return StoreError(f"no game {game_id}", code="no_such_game")
    if row["written"]:
        return None
    try:
        check_fence(game_id, row["fence"], waiting.fence)
    except StoreError as error:
        return error
    if row["status"] != GameStatus.ACTIVE:
        return StoreError(f"game {game_id} is over", code="game_over")
    return StoreError(f"game {game_id} expects ply {row['last_ply'] + 1}, not "
                      f"{waiting.move.ply}", code="stale_move")


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


_RECORD_MOVES = """
WITH input AS (
    SELECT * FROM unnest($1::TEXT[], $2::INTEGER[], $3::INTEGER[], $4::DOUBLE PRECISION[],
                         $5::DOUBLE PRECISION[], $6::DOUBLE PRECISION[], $7::BIGINT[])
        WITH ORDINALITY AS m (game_id, ply, cell, clock_x, clock_o, at, fence, n)
), game AS (
    SELECT id, status, fence FROM games WHERE id = ANY ($1) ORDER BY id FOR UPDATE
), last AS (
    SELECT game_id, MAX(ply) AS ply FROM moves WHERE game_id = ANY ($1) GROUP BY game_id
), allowed AS (
    SELECT input.*, game.fence AS stored_fence
    FROM input JOIN game ON game.id = input.game_id LEFT JOIN last USING (game_id)
    WHERE game.status = 'active' AND (input.fence IS NULL OR input.fence >= game.fence)
      AND COALESCE(last.ply, 0) + 1 = input.ply
), fenced AS (
    UPDATE games SET fence = allowed.fence FROM allowed
    WHERE games.id = allowed.game_id AND allowed.fence > allowed.stored_fence
), written AS (
    INSERT INTO moves SELECT game_id, ply, cell, clock_x, clock_o, at FROM allowed
    RETURNING game_id
)
SELECT game.status, game.fence, COALESCE(last.ply, 0) AS last_ply,
       EXISTS (SELECT 1 FROM written WHERE written.game_id = input.game_id) AS written
FROM input LEFT JOIN game ON game.id = input.game_id LEFT JOIN last USING (game_id)
ORDER BY input.n
"""
"""``_RECORD_MOVE`` for a group of moves, at most one a game, in one statement: $1-$7 arrays
of the games, plies, cells, clocks, times and fencing tokens; a row a move in their order
(``status`` NULL: no such game)."""
