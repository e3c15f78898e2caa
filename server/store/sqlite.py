"""The store on one SQLite file: one writer thread with group commit, one reader thread.

The event loop never touches SQLite. Writes go on a queue to a dedicated writer thread, which
drains everything queued, runs it as one transaction (each write in its own savepoint, so one
refused write does not sink the others), commits, and then resolves every waiter's future with
one ``loop.call_soon_threadsafe``. A thousand games each making a move per second thus cost a
handful of commits per second, not a thousand. Reads run on a second connection in a
single-thread executor; WAL lets them proceed while the writer commits.

Durability: ``journal_mode=WAL`` with ``synchronous=FULL`` by default, so a commit (and thus
an acknowledged move) has been fsynced and survives a power loss as well as the process being
killed. Group commit makes that one fsync per group, not per move: on our test machine 1,000
concurrent games sustain tens of thousands of moves/s either way. ``synchronous="NORMAL"`` skips
the fsync: in WAL mode a commit is then still in the operating system's hands before the call
returns, so it survives ``kill -9`` and crashes of the server, and only a power loss or kernel
panic can lose the last commits. Hosts on slow storage (an SD card) may prefer it.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

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
from server.metrics import LAG_BUCKETS
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

SCHEMA_VERSION = 3
MAX_GROUP = 1024  # writes per transaction at most, so one commit never grows without bound

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE players (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL UNIQUE,
            token_hash BLOB NOT NULL UNIQUE,
            created REAL NOT NULL,
            rating REAL NOT NULL,
            rd REAL NOT NULL,
            volatility REAL NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            rated_games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX players_by_rating ON players (rating DESC)",
        """CREATE TABLE games (
            id TEXT PRIMARY KEY,
            variant TEXT NOT NULL,
            clock_initial REAL,
            clock_increment REAL,
            rated INTEGER NOT NULL,
            x_player TEXT,
            x_computer INTEGER,
            o_player TEXT,
            o_computer INTEGER,
            status TEXT NOT NULL CHECK (status IN ('active', 'finished', 'aborted')),
            result TEXT,
            reason TEXT,
            winning_line TEXT,
            created REAL NOT NULL,
            ended REAL,
            x_rating REAL,
            o_rating REAL,
            x_rating_change REAL,
            o_rating_change REAL,
            CHECK ((x_player IS NULL) <> (x_computer IS NULL)),
            CHECK ((o_player IS NULL) <> (o_computer IS NULL)))""",
        "CREATE INDEX active_games ON games (created) WHERE status = 'active'",
        """CREATE TABLE moves (
            game_id TEXT NOT NULL REFERENCES games (id),
            ply INTEGER NOT NULL,
            cell INTEGER NOT NULL,
            clock_x REAL,
            clock_o REAL,
            at REAL NOT NULL,
            PRIMARY KEY (game_id, ply)) WITHOUT ROWID""",
    ),
    2: ("ALTER TABLE games ADD COLUMN fence INTEGER NOT NULL DEFAULT 0",),
    3: ("ALTER TABLE games ADD COLUMN listed INTEGER NOT NULL DEFAULT 0",),
}
"""Schema changes by the version they bring the file to; add the next version here, never edit
one that has shipped."""


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
    """The writer connection, in WAL mode, with the schema migrated to ``SCHEMA_VERSION``."""
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
            _migrate(conn, path)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return conn
    except (sqlite3.Error, StoreError) as exc:
        if conn is not None:
            conn.close()
        raise _open_error(path, exc) from None


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        version = conn.execute("SELECT version FROM schema_version").fetchone()[0]
    elif tables:
        raise StoreError(f"cannot use the database {path}: it belongs to another program")
    else:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (0)")
        version = 0
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"cannot use the database {path}: it has schema version {version}, "
            f"written by a newer qubic (this one knows up to {SCHEMA_VERSION})"
        )
    for step in range(version + 1, SCHEMA_VERSION + 1):
        for statement in _MIGRATIONS[step]:
            conn.execute(statement)
    # Always write, even with nothing to migrate: SQLite refuses a read-only file only at the
    # first write, and we want that refusal now rather than at the first move.
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))


@dataclass(frozen=True)
class _Write:
    run: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]


_STOP = object()


class SQLiteStore:
    """``server.store.base.Store`` on one SQLite file; make one with ``await SQLiteStore.open()``."""

    def __init__(
        self,
        path: str,
        writer: sqlite3.Connection,
        reader: sqlite3.Connection,
        reader_thread: ThreadPoolExecutor,
    ) -> None:
        self.path = path
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[_Write | object] = queue.SimpleQueue()
        self._writer_conn = writer
        self._reader_conn = reader
        self._reader_thread = reader_thread
        self._closed = False
        self.commits = 0  # transactions committed by the writer, for metrics
        # how long each group's transaction took (BEGIN to COMMIT, the fsync included), as
        # counts over metrics.LAG_BUCKETS and +Inf, and their sum: /metrics' store_commit_seconds
        self.commit_buckets = [0] * (len(LAG_BUCKETS) + 1)
        self.commit_seconds = 0.0
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
    ) -> SQLiteStore:
        """Open (or create) the database at ``path``, migrating its schema.

        Raises ``StoreError`` saying why if the file cannot be opened or created, is locked by
        another writer for longer than ``busy_timeout`` seconds, is read-only, or is not a
        database.
        """
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be NORMAL or FULL")
        name = os.fspath(path)
        loop = asyncio.get_running_loop()
        writer = await asyncio.to_thread(_open_writer, name, synchronous, busy_timeout)
        reader_thread = ThreadPoolExecutor(1, thread_name_prefix="qubic-store-reader")
        try:
            reader = await loop.run_in_executor(reader_thread, _open_reader, name, busy_timeout)
        except StoreError:
            writer.close()
            reader_thread.shutdown(wait=False)
            raise
        return cls(name, writer, reader, reader_thread)

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # The writer thread.

    async def _write(self, run: Callable[[sqlite3.Connection], T]) -> T:
        """Queue ``run`` for the writer thread; returns its result once committed.

        Cancelling the caller does not withdraw a queued write: it may still be committed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        future: asyncio.Future[T] = self._loop.create_future()
        self._queue.put(_Write(run, future))
        return await future

    def _write_loop(self) -> None:
        stopping = False
        while not stopping:
            group: list[_Write] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stopping = True
                else:
                    assert isinstance(item, _Write)
                    group.append(item)
                if len(group) >= MAX_GROUP:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if group:
                outcomes = self._commit_group(group)
                # A closed event loop raises RuntimeError: nobody is waiting any more.
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(_resolve, group, outcomes)
        self._writer_conn.close()

    def _commit_group(self, group: list[_Write]) -> list[tuple[bool, Any]]:
        """Run every write of the group in one transaction; (ok, result or error) for each."""
        conn = self._writer_conn
        outcomes: list[tuple[bool, Any]] = []
        began = time.perf_counter()
        try:
            conn.execute("BEGIN IMMEDIATE")
            for write in group:
                conn.execute("SAVEPOINT write")
                try:
                    result = write.run(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO write")
                    outcomes.append((False, _write_error(exc)))
                else:
                    outcomes.append((True, result))
                conn.execute("RELEASE write")
            conn.execute("COMMIT")
            took = time.perf_counter() - began
            self.commits += 1
            self.commit_buckets[bisect.bisect_left(LAG_BUCKETS, took)] += 1
            self.commit_seconds += took
            return outcomes
        except Exception as exc:  # the transaction itself failed: nothing of it was written
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            error = StoreError(f"cannot write to the database {self.path}: {exc}")
            return [(False, error)] * len(group)

    async def flush(self) -> None:
        """Wait until every write queued so far is committed."""
        await self._write(lambda conn: None)

    async def close(self) -> None:
        """Commit what is queued, stop both threads and close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        await asyncio.to_thread(self._writer.join)
        await self._loop.run_in_executor(self._reader_thread, self._reader_conn.close)
        self._reader_thread.shutdown(wait=True)

    # The reader thread.

    async def _read(self, run: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreError("the store is closed")
        return await self._loop.run_in_executor(self._reader_thread, self._run_read, run)

    def _run_read(self, run: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._reader_conn
        try:
            conn.execute("BEGIN")  # one snapshot for all the queries of this read
            try:
                return run(conn)
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from exc

    # Players.

    async def create_player(self, name: str, now: float) -> tuple[PlayerRecord, str]:
        """Register ``name``; returns the player and the plain token, which is never stored."""
        token = new_token()
        player = PlayerRecord(name=name, created=now)

        def insert(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(
                    "INSERT INTO players (name, name_key, token_hash, created, rating, rd,"
                    " volatility) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        name,
                        name_key(name),
                        hash_token(token),
                        now,
                        player.rating,
                        player.rd,
                        player.volatility,
                    ),
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"the name {name!r} is taken", code="name_taken") from None

        await self._write(insert)
        return player, token

    async def authenticate(self, token: str, name: str | None = None) -> PlayerRecord | None:
        """The player holding ``token`` (and called ``name``, if given), or None.

        The lookup is by the token's hash, so response time says nothing about the token.
        """

        def find(conn: sqlite3.Connection) -> PlayerRecord | None:
            row = conn.execute(
                "SELECT * FROM players WHERE token_hash = ?", (hash_token(token),)
            ).fetchone()
            if row is None or (name is not None and row["name_key"] != name_key(name)):
                return None
            return player_from_row(row)

        return await self._read(find)

    async def get_player(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case, or None."""

        def find(conn: sqlite3.Connection) -> PlayerRecord | None:
            row = _player_row(conn, name)
            return None if row is None else player_from_row(row)

        return await self._read(find)

    async def leaderboard(self, limit: int = 50, min_rated_games: int = 0) -> list[PlayerRecord]:
        """The best ``limit`` players by rating with at least ``min_rated_games`` rated games."""

        def top(conn: sqlite3.Connection) -> list[PlayerRecord]:
            rows = conn.execute(
                "SELECT * FROM players WHERE rated_games >= ?"
                " ORDER BY rating DESC, name_key LIMIT ?",
                (min_rated_games, limit),
            )
            return [player_from_row(row) for row in rows]

        return await self._read(top)

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

        def insert(conn: sqlite3.Connection) -> None:
            if rated:
                for seat in (x, o):
                    if _player_row(conn, str(seat.player)) is None:
                        raise StoreError(
                            f"{seat} is not a registered player and cannot play rated",
                            code="not_allowed",
                        )
            try:
                conn.execute(
                    "INSERT INTO games (id, variant, clock_initial, clock_increment, rated,"
                    " x_player, x_computer, o_player, o_computer, status, created, listed)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)",
                    (game.id, variant, *(clock or (None, None)), rated,
                     x.player, x.computer_level, o.player, o.computer_level, now, listed),
                )  # fmt: skip
            except sqlite3.IntegrityError:
                raise StoreError(f"game {game.id} exists", code="internal") from None

        await self._write(insert)
        return game

    async def record_move(
        self, game_id: str, move: MoveRecord, *, fence: int | None = None
    ) -> None:
        """Append a move to an active game; returns once the move is committed."""

        def insert(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT status, (SELECT MAX(ply) FROM moves WHERE game_id = ?1), fence"
                " FROM games WHERE id = ?1",
                (game_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"no game {game_id}", code="no_such_game")
            status, last_ply, stored_fence = row
            _take_fence(conn, game_id, stored_fence, fence)
            if status != GameStatus.ACTIVE:
                raise StoreError(f"game {game_id} is over", code="game_over")
            if move.ply != (last_ply or 0) + 1:
                raise StoreError(
                    f"game {game_id} expects ply {(last_ply or 0) + 1}, not {move.ply}",
                    code="stale_move",
                )
            conn.execute(
                "INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?)",
                (game_id, move.ply, move.cell, move.clock_x, move.clock_o, move.at),
            )

        await self._write(insert)

    async def take_back(self, game_id: str, ply: int, *, fence: int | None = None) -> None:
        """Remove the moves after ``ply`` from an active game; returns once committed."""

        def delete(conn: sqlite3.Connection) -> None:
            game = _active_game(conn, game_id, fence)
            check_take_back(game_id, len(game.moves), ply)
            conn.execute("DELETE FROM moves WHERE game_id = ? AND ply > ?", (game_id, ply))

        await self._write(delete)

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

        def finish(conn: sqlite3.Connection) -> GameRecord:
            game = _active_game(conn, game_id, fence)
            conn.execute(
                "UPDATE games SET status = 'finished', result = ?, reason = ?,"
                " winning_line = ?, ended = ? WHERE id = ?",
                (result, reason, line, now, game_id),
            )
            x_row = None if game.x.is_computer else _player_row(conn, str(game.x.player))
            o_row = None if game.o.is_computer else _player_row(conn, str(game.o.player))
            if game.rated and x_row is not None and o_row is not None:
                old_x, old_o = player_from_row(x_row).glicko, player_from_row(o_row).glicko
                new_x, new_o = rate_game(old_x, old_o, x_score)
                for row, new in ((x_row, new_x), (o_row, new_o)):
                    conn.execute(
                        "UPDATE players SET rating = ?, rd = ?, volatility = ?,"
                        " rated_games = rated_games + 1 WHERE id = ?",
                        (new.rating, new.rd, new.volatility, row["id"]),
                    )
                conn.execute(
                    "UPDATE games SET x_rating = ?, o_rating = ?, x_rating_change = ?,"
                    " o_rating_change = ? WHERE id = ?",
                    (
                        old_x.rating,
                        old_o.rating,
                        new_x.rating - old_x.rating,
                        new_o.rating - old_o.rating,
                        game_id,
                    ),
                )
            for seat_row, score in ((x_row, x_score), (o_row, 1.0 - x_score)):
                if seat_row is not None:
                    column = {1.0: "wins", 0.0: "losses", 0.5: "draws"}[score]
                    conn.execute(
                        f"UPDATE players SET games = games + 1, {column} = {column} + 1"
                        " WHERE id = ?",
                        (seat_row["id"],),
                    )
            return _game(conn, game_id)

        return await self._write(finish)

    async def abort_game(
        self, game_id: str, *, reason: str, now: float, fence: int | None = None
    ) -> GameRecord:
        """Call a game off with no result and no effect on anyone's record."""

        def abort(conn: sqlite3.Connection) -> GameRecord:
            _active_game(conn, game_id, fence)
            conn.execute(
                "UPDATE games SET status = 'aborted', reason = ?, ended = ? WHERE id = ?",
                (reason, now, game_id),
            )
            return _game(conn, game_id)

        return await self._write(abort)

    async def claim(self, game_id: str, *, fence: int) -> GameRecord:
        """Raise the game's fencing token to ``fence`` and return it (see ``Store.claim``)."""

        def take(conn: sqlite3.Connection) -> GameRecord:
            game = _game(conn, game_id)
            _take_fence(conn, game_id, game.fence, fence)
            return _game(conn, game_id)

        return await self._write(take)

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""

        def find(conn: sqlite3.Connection) -> GameRecord | None:
            try:
                return _game(conn, game_id)
            except StoreError:
                return None

        return await self._read(find)

    async def unfinished_games(self) -> list[GameRecord]:
        """Every active game with its moves, oldest first, to resume them after a restart."""

        def find(conn: sqlite3.Connection) -> list[GameRecord]:
            moves: dict[str, list[MoveRecord]] = {}
            for row in conn.execute(
                "SELECT moves.* FROM moves JOIN games ON games.id = moves.game_id"
                " WHERE games.status = 'active' ORDER BY moves.game_id, moves.ply"
            ):
                moves.setdefault(row["game_id"], []).append(move_from_row(row))
            rows = conn.execute("SELECT * FROM games WHERE status = 'active' ORDER BY created")
            return [game_from_row(row, moves.get(row["id"], [])) for row in rows]

        return await self._read(find)


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


def _write_error(exc: Exception) -> Exception:
    """What the caller of a refused write sees: a StoreError, or the bug as it was raised."""
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"the write conflicts with the database: {exc}", code="internal")
    if isinstance(exc, sqlite3.Error):
        return StoreError(f"cannot write to the database: {exc}")
    return exc


def _player_row(conn: sqlite3.Connection, name: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM players WHERE name_key = ?", (name_key(name),)).fetchone()


def _game(conn: sqlite3.Connection, game_id: str) -> GameRecord:
    row = conn.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    moves = conn.execute("SELECT * FROM moves WHERE game_id = ? ORDER BY ply", (game_id,))
    return game_from_row(row, [move_from_row(move) for move in moves])


def _take_fence(conn: sqlite3.Connection, game_id: str, stored: int, fence: int | None) -> None:
    """Refuse a stale fencing token; a newer one becomes the game's."""
    check_fence(game_id, stored, fence)
    if fence is not None and fence > stored:
        conn.execute("UPDATE games SET fence = ? WHERE id = ?", (fence, game_id))


def _active_game(conn: sqlite3.Connection, game_id: str, fence: int | None) -> GameRecord:
    game = _game(conn, game_id)
    _take_fence(conn, game_id, game.fence, fence)
    if game.status != GameStatus.ACTIVE:
        raise StoreError(f"game {game_id} is already {game.status}", code="game_over")
    return game
