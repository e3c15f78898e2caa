"""The tables of every store and their migrations, written once for SQLite and PostgreSQL.

``MIGRATIONS`` is the ordered list of schema changes: entry ``i`` brings a database to version
``i + 1``. Append new versions; never edit one that has shipped. Each statement names its
column types through the dialect (``{real}``, ``{boolean}``, ...), so both databases get the
same tables in their own types. The versions applied are rows of ``qubic_schema``.

Databases written before the schema was shared keep opening: PostgreSQL always kept
``qubic_schema`` with these very versions, and a SQLite file's single-row ``schema_version``
(versions 1-3: the tables, then ``fence``, then ``listed``) is adopted in place, in the same
transaction as any migration that follows (``LEGACY_SQLITE_VERSIONS``).
"""

from __future__ import annotations

from dataclasses import asdict

from server.errors import StoreError
from server.store.query import Dialect, Op, change, every, fetch_all, fetch_one, one

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE players (
            id {row_id},
            name TEXT NOT NULL,
            name_key TEXT NOT NULL CONSTRAINT players_name_key UNIQUE,
            token_hash {blob} NOT NULL UNIQUE,
            created {real} NOT NULL,
            rating {real} NOT NULL,
            rd {real} NOT NULL,
            volatility {real} NOT NULL,
            games INTEGER NOT NULL DEFAULT 0,
            rated_games INTEGER NOT NULL DEFAULT 0,
            wins INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX players_by_rating ON players (rating DESC)",
        """CREATE TABLE games (
            id TEXT PRIMARY KEY,
            variant TEXT NOT NULL,
            clock_initial {real},
            clock_increment {real},
            rated {boolean} NOT NULL,
            x_player TEXT,
            x_computer INTEGER,
            o_player TEXT,
            o_computer INTEGER,
            status TEXT NOT NULL CHECK (status IN ('active', 'finished', 'aborted')),
            result TEXT,
            reason TEXT,
            winning_line TEXT,
            created {real} NOT NULL,
            ended {real},
            x_rating {real},
            o_rating {real},
            x_rating_change {real},
            o_rating_change {real},
            fence {big_integer} NOT NULL DEFAULT 0,
            CHECK ((x_player IS NULL) <> (x_computer IS NULL)),
            CHECK ((o_player IS NULL) <> (o_computer IS NULL)))""",
        "CREATE INDEX active_games ON games (created) WHERE status = 'active'",
        """CREATE TABLE moves (
            game_id TEXT NOT NULL REFERENCES games (id),
            ply INTEGER NOT NULL,
            cell INTEGER NOT NULL,
            clock_x {real},
            clock_o {real},
            at {real} NOT NULL,
            PRIMARY KEY (game_id, ply)){table_options}""",
    ),
    ("ALTER TABLE games ADD COLUMN listed {boolean} NOT NULL DEFAULT {false}",),
    (  # the host's levers (issue 27): roles, bans and mutes, the audit log, reports, control
        """CREATE TABLE roles (
            player_id {big_integer} NOT NULL REFERENCES players (id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('admin', 'moderator')),
            granted {real} NOT NULL,
            granted_by TEXT NOT NULL,
            PRIMARY KEY (player_id, role))""",
        """CREATE TABLE sanctions (
            id {row_id},
            kind TEXT NOT NULL CHECK (kind IN ('ban', 'mute')),
            player_id {big_integer} REFERENCES players (id) ON DELETE CASCADE,
            address TEXT,
            reason TEXT NOT NULL,
            created {real} NOT NULL,
            expires {real},
            by_name TEXT NOT NULL,
            lifted {real},
            CHECK ((player_id IS NULL) <> (address IS NULL)))""",
        "CREATE INDEX sanctions_by_player ON sanctions (player_id) WHERE lifted IS NULL",
        """CREATE TABLE audit (
            id {row_id},
            at {real} NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            reason TEXT,
            detail TEXT)""",
        """CREATE TABLE reports (
            id {row_id},
            at {real} NOT NULL,
            reporter TEXT NOT NULL,
            reported TEXT NOT NULL,
            game TEXT,
            reason TEXT NOT NULL,
            resolved {real},
            resolved_by TEXT)""",
        """CREATE TABLE control (
            id {row_id},
            at {real} NOT NULL,
            action TEXT NOT NULL)""",
    ),
)
"""Schema changes in order: entry ``i`` brings the database to version ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
VERSION_TABLE = "qubic_schema"
LEGACY_TABLE = "schema_version"  # SQLite's before the schema was shared: one row, one number

LEGACY_SQLITE_VERSIONS = {1: 1, 2: 1, 3: 2}
"""A SQLite file's old ``schema_version`` -> its version here. Old version 1 lacks the
``fence`` column that version 1 here has; ``LEGACY_FENCE`` adds it on adoption."""
LEGACY_FENCE = "ALTER TABLE games ADD COLUMN fence INTEGER NOT NULL DEFAULT 0"


def statements(dialect: Dialect, version: int) -> list[str]:
    """The statements that bring a database from ``version - 1`` to ``version``."""
    types = asdict(dialect)
    return [statement.format(**types) for statement in MIGRATIONS[version - 1]]


def migrate(dialect: Dialect, where: str) -> Op[int]:
    """Bring the schema to ``SCHEMA_VERSION``; returns the version found. Run it in one
    transaction (and, where several processes may start at once, under a lock).

    Raises ``StoreError`` if the database holds other tables of another program's, or a
    schema newer than this code knows.
    """
    rows = yield from fetch_all(every(dialect.list_tables))
    tables = {row["name"] for row in rows}
    if VERSION_TABLE in tables:
        latest = yield from fetch_one(one(
            f"SELECT COALESCE(MAX(version), 0) AS version FROM {VERSION_TABLE}"
        ))
        assert latest is not None
        found = int(latest["version"])
    elif LEGACY_TABLE in tables:
        found = yield from _adopt_legacy_version(dialect, where)
    elif tables:
        raise StoreError(f"cannot use the database {where}: it belongs to another program")
    else:
        yield from _create_version_table(dialect)
        found = 0
    if found > SCHEMA_VERSION:
        raise _newer(where, found)
    for version in range(found + 1, SCHEMA_VERSION + 1):
        for statement in statements(dialect, version):
            yield change(statement)
        yield change(f"INSERT INTO {VERSION_TABLE} (version) VALUES (?)", version)
    return found


def _create_version_table(dialect: Dialect) -> Op[None]:
    yield change(
        f"CREATE TABLE {VERSION_TABLE} (version INTEGER PRIMARY KEY,"
        f" applied {dialect.timestamp_now})"
    )


def _adopt_legacy_version(dialect: Dialect, where: str) -> Op[int]:
    """Replace a SQLite file's old ``schema_version`` by ``qubic_schema``; returns the
    version the file is at in today's numbering."""
    row = yield from fetch_one(one(f"SELECT version FROM {LEGACY_TABLE}"))
    legacy = 0 if row is None else int(row["version"])
    if legacy > max(LEGACY_SQLITE_VERSIONS):
        raise _newer(where, legacy)
    if legacy == 1:
        yield change(LEGACY_FENCE)
    found = LEGACY_SQLITE_VERSIONS.get(legacy, 0)
    yield from _create_version_table(dialect)
    for version in range(1, found + 1):
        yield change(f"INSERT INTO {VERSION_TABLE} (version) VALUES (?)", version)
    yield change(f"DROP TABLE {LEGACY_TABLE}")
    return found


def _newer(where: str, found: int) -> StoreError:
    return StoreError(
        f"cannot use the database {where}: it has schema version {found}, "
        f"written by a newer qubic (this one knows up to {SCHEMA_VERSION})"
    )
