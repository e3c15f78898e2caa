"""The store on one SQLite file: one writer thread with group commit, one reader thread.

The event loop never touches SQLite. Writes are gathered into groups, each handed to the writer
thread at once and run as one transaction (each write in its own savepoint, but a single
statement such as a move), committed, then every waiter woken with one call: a write is
acknowledged only after its commit. Group commit by window and size: a group of moves is handed
over at most every ``commit_interval`` (20 ms by default) or as soon as it holds
``commit_max`` writes; a move after a quiet spell, and any other write, goes at the end of the
loop's turn, but a game's start or end goes with a group waiting for the window. Reads run on
a second connection (WAL lets them proceed during a commit). What each read and write does is
``server.store.sql.SQLStore``'s; a move of a game in play goes to the move journal
(``server.store.journal``). Durability is ``synchronous`` (docs/operations.md,
``--synchronous``, ``--commit-interval``, ``--commit-max``; the figures in docs/benchmarks.md,
*Group commit*)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar, Unpack

import msgspec

from server.errors import StoreError
from server.game.records import GameRecord, MoveRecord
from server.store import operations
from server.store.base import NewGame, new_game
from server.store.grouping import COMMIT_INTERVAL, COMMIT_MAX, CommitWindow
from server.store.journal import MoveJournal
from server.store.pacing import LoopPacer, WriterProgress
from server.store.query import SQLITE, Op
from server.store.schema import VERSION_TABLE, migrate
from server.store.sql import SQLStore

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_GROUP = 1024  # writes per transaction at most, so one commit never grows without bound


def _open_error(path: str, exc: BaseException) -> StoreError:
    """A StoreError that says in words why the database file cannot be used."""
    if isinstance(exc, StoreError):
        return exc
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        why = "it is locked by another process (is another qubic server using it?)"
    elif name.startswith("SQLITE_READONLY"):
        why = "it is read-only; the server must be able to write the file and its directory"
    elif name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        why = "it is not a SQLite database, or it is corrupt"
    elif name.startswith("SQLITE_CANTOPEN"):
        why = "the file cannot be opened; check that its directory exists and is writable"
    else:
        why = str(exc)
    return StoreError(f"cannot use the database {path}: {why}")


def _connect(path: str, busy_timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    return conn


def _open_writer(path: str, synchronous: str, busy_timeout: float) -> sqlite3.Connection:
    """The writer connection, in WAL mode, with the schema migrated (``server.store.schema``)."""
    conn = None
    try:
        conn = _connect(path, busy_timeout)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(f"cannot use the database {path}: it cannot be put in WAL mode")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            run_op(conn, migrate(SQLITE, path))
            # Always write, even with nothing to migrate: SQLite refuses a read-only file only
            # at the first write, and we want that refusal now rather than at the first move.
            conn.execute(f"UPDATE {VERSION_TABLE} SET version = version")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return conn
    except (sqlite3.Error, StoreError) as exc:
        if conn is not None:
            conn.close()
        raise _open_error(path, exc) from None


def run_op(conn: sqlite3.Connection, op: Op[T]) -> T:
    """Run ``op``'s queries on ``conn`` in the calling thread; returns its result."""
    try:
        query = next(op)
        while True:
            cursor = conn.execute(query.sql, query.params)
            if query.want == "one":
                answer: Any = cursor.fetchone()
            elif query.want == "all":
                answer = cursor.fetchall()
            else:
                answer = cursor.rowcount
            query = op.send(answer)
    except StopIteration as stop:
        result: T = stop.value
        return result


class _Write(msgspec.Struct, frozen=True):  # (a struct: made once a move)
    run: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]
    atomic: bool = False  # makes at most one change, in one statement: needs no savepoint


_STOP = object()
class SQLiteStore(CommitWindow[_Write], SQLStore):
    """``server.store.base.Store`` on one SQLite file: ``await SQLiteStore.open(path)``."""

    dialect = SQLITE

    def __init__(
        self,
        path: str,
        writer: sqlite3.Connection,
        reader: sqlite3.Connection,
        reader_thread: ThreadPoolExecutor,
        commit_interval: float = COMMIT_INTERVAL,
        commit_max: int = COMMIT_MAX,
        pacing: bool = True,
    ) -> None:
        self.path = path
        self._init_window(asyncio.get_running_loop(), commit_interval, commit_max)
        self._progress = WriterProgress()
        # Under load the loop waits for each group's commit and naps until the next window
        # ends (``server.store.pacing``); None: it wakes for every frame.
        self.pacer = LoopPacer(self._loop, self, self._progress) if pacing else None
        self._queue: queue.SimpleQueue[list[_Write] | object] = queue.SimpleQueue()
        self._writer_conn = writer
        self.journal = MoveJournal(writer)  # the writer thread's alone (server.store.journal)
        self._reader_conn = reader
        self._reader_thread = reader_thread
        self._closed = False
        self._writer = threading.Thread(target=self._write_loop, name="qubic-store-writer")
        self._writer.daemon = True
        self._writer.start()

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["NORMAL", "FULL"] = "FULL",
        busy_timeout: float = 5.0,
        commit_interval: float = COMMIT_INTERVAL,
        commit_max: int = COMMIT_MAX,
        pacing: bool = True,
    ) -> SQLiteStore:
        """Open (or create) the database at ``path``, migrating its schema.

        Raises ``StoreError`` saying why if the file cannot be opened or created, is locked by
        another writer for longer than ``busy_timeout`` seconds, is read-only, or is not a
        database. ``commit_interval``: the window, the least time in seconds between two
        groups handed to the writer (0: each turn of the loop's writes go at once);
        ``commit_max``: a group of this many writes goes at once, without waiting out the
        window. ``pacing``: under load the event loop keeps the window's time
        (``server.store.pacing``).
        """
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be NORMAL or FULL")
        name = os.fspath(path)
        loop = asyncio.get_running_loop()
        writer = await asyncio.to_thread(_open_writer, name, synchronous, busy_timeout)
        # what a crash left in the move journal, settled before anything is read or written
        await asyncio.to_thread(_settle_opened, name, writer)
        reader_thread = ThreadPoolExecutor(1, thread_name_prefix="qubic-store-reader")
        try:
            reader = await loop.run_in_executor(reader_thread, _open_reader, name, busy_timeout)
        except StoreError:
            writer.close()
            reader_thread.shutdown(wait=False)
            raise
        return cls(name, writer, reader, reader_thread, commit_interval, commit_max, pacing)

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # The writer thread.

    async def _write(self, op: Op[T], *, along: bool = False) -> T:
        """Queue ``op`` for the writer thread; returns its result once committed.
        ``along``: it goes with a group waiting for the window (``CommitWindow._gather``)."""
        return await self._submit(lambda conn: run_op(conn, op), along=along)

    async def _submit(self, run: Callable[[sqlite3.Connection], T], atomic: bool = False,
                      window: bool = False, along: bool = False) -> T:
        """Queue ``run`` for the writer thread; returns its result once committed.

        ``atomic``: ``run`` changes the database in one statement at most, so a failure
        leaves nothing to take back (SQLite undoes a failed statement) and it runs without
        a savepoint of its own. ``window``: it may wait out the window to share a commit
        (a move: the flood the window is for); ``along``: it goes with a group waiting for
        the window, if one does (a game's start or end); any other write sends the group
        gathered so far at the end of this turn of the loop, so a rare write (a new player, a
        lever) is not kept waiting. Cancelling the caller does not withdraw a queued write:
        it may still be committed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        future: asyncio.Future[T] = self._loop.create_future()
        self._gather(_Write(run, future, atomic), window=window, along=along)
        return await future

    def _send_group(self, group: list[_Write]) -> None:
        self._queue.put(group)  # one item: the writer thread is woken once for the group
        if self.pacer is not None:
            self.pacer.handed_over(len(group))

    def _write_loop(self) -> None:
        stopping = False
        while not stopping:
            group: list[_Write] = []
            groups = 0  # hand-overs taken into this transaction
            item = self._queue.get()
            # The window is kept on the loop's side (``_submit``): a group is committed as
            # soon as it comes, with every group that queued meanwhile (a slow commit).
            while True:
                if item is _STOP:
                    stopping = True
                else:
                    assert isinstance(item, list)
                    group.extend(item)
                    groups += 1
                if len(group) >= MAX_GROUP:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            for start in range(0, len(group), MAX_GROUP):
                part = group[start:start + MAX_GROUP]
                outcomes = self._commit_group(part)
                # A closed event loop raises RuntimeError: nobody is waiting any more.
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(_resolve, part, outcomes)
            self._progress.committed(groups)  # after the callbacks: a waiting loop finds them
            if stopping or self.journal.due(time.monotonic()):
                self._settle()
        self._writer_conn.close()

    def _settle(self) -> None:
        """Settle the whole move journal in a transaction of its own (server.store.journal);
        a failure leaves the rows in the journal, where the view ``moves`` still reads them,
        and is tried again after the same time."""
        try:
            self.journal.settle_all()
        except sqlite3.Error:
            log.exception("cannot settle the move journal of %s: its moves stay there",
                          self.path)
            self.journal.forget()
            self.journal.settled_at = time.monotonic()

    def _commit_group(self, group: list[_Write]) -> list[tuple[bool, Any]]:
        """Run every write of the group in one transaction; (ok, result or error) for each."""
        conn = self._writer_conn
        outcomes: list[tuple[bool, Any]] = []
        began = time.perf_counter()
        refused = False  # a write of the group failed for want of the database
        try:
            conn.execute("BEGIN IMMEDIATE")
            self.journal.begin()
            alone = len(group) == 1  # no savepoint: a failure takes the whole transaction back
            for write in group:
                saved = not alone and not write.atomic
                if saved:
                    conn.execute("SAVEPOINT write")
                try:
                    result = write.run(conn)
                except Exception as exc:
                    if alone:
                        conn.execute("ROLLBACK")
                    elif saved:
                        conn.execute("ROLLBACK TO write")
                    outcomes.append((False, _write_error(exc)))
                    if _unwritable(exc):
                        self._refused(exc)
                        refused = True
                else:
                    outcomes.append((True, result))
                if saved:
                    conn.execute("RELEASE write")
            if conn.in_transaction:
                conn.execute("COMMIT")
            if not refused:
                self.write_failing = None  # the database takes writes again
            self._committed(time.perf_counter() - began)  # BEGIN to COMMIT, the fsync included
            return outcomes
        except Exception as exc:  # the transaction itself failed: nothing of it was written
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            self.journal.forget()
            self._refused(exc)
            error = StoreError(f"cannot write to the database {self.path}: {exc}")
            return [(False, error)] * len(group)

    def _refused(self, exc: BaseException) -> None:
        """A write the database refused for want of it (full, read-only, I/O): counted, and
        the store is not ready until a write succeeds again."""
        self.write_failures += 1
        self.write_failing = str(exc)

    async def record_move(
        self, game_id: str, move: MoveRecord, *, fence: int | None = None
    ) -> None:
        """Append a move to an active game; returns once the move is committed.

        From the embedded server (no fencing token), one statement with no savepoint: the
        commonest write by far, appended to the move journal when the writer knows the game
        and the move is its next (``server.store.journal``), else checked in SQL
        (``operations.append_move``, which says why it refuses). It waits for the writer's
        future itself (no second coroutine entered and resumed a move).
        """
        if fence is not None:
            return await super().record_move(game_id, move, fence=fence)
        if self._closed:
            raise StoreError("the store is closed")
        future: asyncio.Future[None] = self._loop.create_future()
        self._gather(_Write(functools.partial(_insert_move, self.journal, game_id, move),
                            future, True), window=True)
        await future

    # A game's start, end, call-off and take-back: what the journal's check knows changes
    # with them, and the writer settles the game's journal rows first (``_game_write``).

    async def create_game(self, **terms: Unpack[NewGame]) -> GameRecord:
        """``SQLStore.create_game``; the writer then knows the game, and journals its moves."""
        game = new_game(**terms)
        journal = self.journal

        def create(conn: sqlite3.Connection) -> None:
            run_op(conn, operations.insert_game(game))
            journal.started(game.id)

        await self._submit(create, along=True)
        return game

    async def _game_write(self, game_id: str, op: Op[T], *, along: bool = False) -> T:
        """``SQLStore._game_write`` (a game's end, call-off, take-back, a fenced move), run
        once the writer has settled the game's journal rows."""
        journal = self.journal
        return await self._submit(
            lambda conn: journal.settled(game_id, lambda: run_op(conn, op)), along=along)

    async def flush(self) -> None:
        """Wait until every write asked for so far is committed: the group gathered so far
        goes at once, without waiting out the window."""
        if self._closed:
            raise StoreError("the store is closed")
        future: asyncio.Future[None] = self._loop.create_future()
        self._handing.append(_Write(lambda conn: None, future, atomic=True))
        self._hand_over()
        await future

    async def close(self) -> None:
        """Commit what is queued, stop both threads and close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.pacer is not None:
            self.pacer.stop()
        self._hand_over()  # what this turn asked for is committed before the stop
        self._queue.put(_STOP)
        await asyncio.to_thread(self._writer.join)
        await self._loop.run_in_executor(self._reader_thread, self._reader_conn.close)
        self._reader_thread.shutdown(wait=True)

    # The reader thread.

    async def _read(self, op: Op[T], *, snapshot: bool = False) -> T:
        """Run ``op`` on the reader thread, always on one snapshot (a read transaction)."""
        if self._closed:
            raise StoreError("the store is closed")
        return await self._loop.run_in_executor(self._reader_thread, self._run_read, op)

    def _run_read(self, op: Op[T]) -> T:
        conn = self._reader_conn
        try:
            conn.execute("BEGIN")  # one snapshot for all the queries of this read
            try:
                return run_op(conn, op)
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from exc


def _settle_opened(path: str, writer: sqlite3.Connection) -> None:
    """Settle the move journal on the writer's connection as the store opens."""
    try:
        MoveJournal(writer).settle_all()
    except sqlite3.Error as exc:
        writer.close()
        raise _open_error(path, exc) from None


def _insert_move(journal: MoveJournal, game_id: str, move: MoveRecord,
                 conn: sqlite3.Connection) -> None:
    """``SQLiteStore.record_move``'s write, on the writer thread: journaled when the writer
    knows the game and the move is its next; else checked in SQL (``append_move`` says why
    it refuses), and the game is known from then."""
    if not journal.append(game_id, move):
        run_op(conn, operations.append_move(SQLITE, game_id, move, None))
        journal.checked(game_id, move.ply)


def _open_reader(path: str, busy_timeout: float) -> sqlite3.Connection:
    try:
        conn = _connect(path, busy_timeout)
        conn.execute("PRAGMA query_only = ON")
        return conn
    except sqlite3.Error as exc:
        raise _open_error(path, exc) from None


def _resolve(group: list[_Write], outcomes: list[tuple[bool, Any]]) -> None:
    for write, (ok, value) in zip(group, outcomes, strict=True):
        if write.future.done():  # the caller was cancelled; the write stands anyway
            continue
        if ok:
            write.future.set_result(value)
        else:
            write.future.set_exception(value)


def _unwritable(exc: object) -> bool:
    """Whether ``exc`` says the database cannot be written (not that the write was wrong)."""
    return isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError)


def _write_error(exc: Exception) -> Exception:
    """What the caller of a refused write sees: a StoreError, or the bug as it was raised."""
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"the write conflicts with the database: {exc}", code="internal")
    if isinstance(exc, sqlite3.Error):
        return StoreError(f"cannot write to the database: {exc}")
    return exc
