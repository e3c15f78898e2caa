"""The tables of every store and their migrations, written once for SQLite and PostgreSQL.

``MIGRATIONS`` is the ordered list of schema changes: entry ``i`` brings a database to version
``i + 1``; append new versions, never edit one that has shipped. Statements name their column
types through the dialect (``{real}``, ``{boolean}``, ...); a step SQL cannot say is an
operation (``Op``, such as ``refold_separators``). The versions applied are rows of
``qubic_schema``; a SQLite file's older single-row ``schema_version`` is adopted in place
(``LEGACY_SQLITE_VERSIONS``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, cast

from server.errors import StoreError
from server.store.base import DELETED_NAME, name_key
from server.store.puzzle_schema import PUZZLES_BY_ID, PUZZLES_MIGRATION
from server.store.query import Dialect, Op, change, every, fetch_all, fetch_one, one
from server.store.tournament_schema import SWISS_SCHEDULE_MIGRATION, TOURNAMENTS_MIGRATION


def refold_names(moving: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> Op[None]:
    """Give every player the ``name_key`` their name folds to now (``name_key``).

    Names are never changed. When names that were different fold to one key, one player
    takes it: the one whose key it already is, or else the oldest; each of the others keeps
    the key it had, which cannot be anyone's new key (it is not a folded form), is still
    found by its exact name (every look-up by name tries that first), and plays on as before.
    Newcomers are refused all of these names, as any name that folds onto a player's key.

    ``moving`` names the tables whose rows point at a player by ``name_key`` (a foreign key,
    so the key cannot change under them), with their columns: a player's rows there are
    taken out, and put back under the new key (in their order; a table's ``id`` anew)."""
    rows = yield from fetch_all(
        every("SELECT id, name, name_key FROM players ORDER BY created, id")
    )
    taken = {row["name_key"] for row in rows if name_key(row["name"]) == row["name_key"]}
    moving = yield from _keyed_by_name(moving)
    for row in rows:
        key = name_key(row["name"])
        if key == row["name_key"] or key in taken:
            continue
        taken.add(key)
        kept = []
        for table, columns in moving:
            order = " ORDER BY id" if "id" in columns else ""
            found = yield from fetch_all(every(
                f"SELECT {', '.join(columns)} FROM {table} WHERE name_key = ?{order}",
                row["name_key"]))
            kept.append((table, columns, found))
            yield change(f"DELETE FROM {table} WHERE name_key = ?", row["name_key"])
        yield change("UPDATE players SET name_key = ? WHERE id = ?", key, row["id"])
        for table, columns, found in kept:
            put = [column for column in columns if column != "id"]
            for old in found:
                yield change(
                    f"INSERT INTO {table} ({', '.join(put)})"
                    f" VALUES ({', '.join('?' for _ in put)})",
                    *(key if column == "name_key" else old[column] for column in put))


def _keyed_by_name(tables: tuple[tuple[str, tuple[str, ...]], ...]
                   ) -> Op[tuple[tuple[str, tuple[str, ...]], ...]]:
    """Those of ``tables`` that have rows, and have them under ``name_key`` still (a later
    schema may point them at the player's id instead; whichever comes first, the rows move
    only while they are keyed by name)."""
    found = []
    for table, columns in tables:
        row = yield from fetch_one(one(f"SELECT * FROM {table} LIMIT 1"))
        # a sqlite3.Row's ``in`` looks at its values: its keys are asked for by name
        if row is not None and "name_key" in cast(Any, row).keys():  # noqa: SIM118
            found.append((table, columns))
    return tuple(found)


PUZZLE_ROWS = (
    ("puzzle_players", ("name_key", "rating", "rd", "volatility", "rated", "streak",
                        "best_streak", "streak_run")),
    ("puzzle_attempts", ("id", "name_key", "puzzle_id", "mode", "solved", "rated",
                         "rating_before", "rating_after", "at")),
)
"""The tables that point at a player by ``name_key`` when separators came to fold away."""


def refold_separators() -> Op[None]:
    """``refold_names`` once names fold their separators away (``alice_`` is ``alice``), with
    the players' puzzle rows moved to their new keys."""
    return (yield from refold_names(PUZZLE_ROWS))


CLOCK_SLACK = 60.0
"""Seconds a report may seem to predate its player by (two machines' clocks) when reports
written by name are attached to ids (``attach_reports``)."""


def detach_deleted_names() -> Op[None]:
    """Attach nobody to the games of players deleted before tombstones: they were renamed
    ``deleted-<id>``, a name anyone could then register; whoever did is not the deleted
    player, and gets none of them. (A rename used to rename a player's games too, so every
    other name in a game is its player's name today.)"""
    rows = yield from fetch_all(every("SELECT id, name FROM players"))
    for row in rows:
        if DELETED_NAME.fullmatch(row["name"]) is None:
            continue
        for column in ("x_player_id", "o_player_id"):
            yield change(f"UPDATE games SET {column} = NULL WHERE {column} = ?", row["id"])


def attach_reports() -> Op[None]:
    """Point each report at the ids of the players it names, as they were named when it was
    filed: a rename (each is in the audit log) left reports under the old name, which a
    newcomer could then take. A name is followed through the renames made after the report
    to the player who holds it now; a report whose player cannot be found so (deleted, or
    the name's holder registered after the report) stays attached to nobody."""
    renames = yield from fetch_all(every(
        "SELECT at, target, detail FROM audit WHERE action = 'rename' ORDER BY at, id"))
    players = {row["name"]: row for row in (yield from fetch_all(every(
        "SELECT id, name, created FROM players")))}
    for report in (yield from fetch_all(every(
            "SELECT id, at, reporter, reported FROM reports ORDER BY id"))):
        ids: list[int | None] = []
        for name in (report["reporter"], report["reported"]):
            for renamed in renames:
                if renamed["at"] >= report["at"] and renamed["target"] == name:
                    name = renamed["detail"]
            holder = players.get(name)
            ids.append(holder["id"] if holder is not None
                       and DELETED_NAME.fullmatch(name) is None
                       and holder["created"] <= report["at"] + CLOCK_SLACK else None)
        if ids != [None, None]:
            yield change("UPDATE reports SET reporter_id = ?, reported_id = ? WHERE id = ?",
                         *ids, report["id"])


@dataclass(frozen=True)
class OnlyIn:
    """Statements one database alone runs (the other has nothing to change)."""

    dialect: str  # ``Dialect.name``
    statements: tuple[str, ...]


Step = str | Callable[[], Op[None]] | OnlyIn
"""A statement (its types written through the dialect), an operation to run, or statements
of one database's only."""

BOTS_MIGRATION: tuple[Step, ...] = (
    # the bot role: a flag on the player's row, so that every read of a player
    # says whether it is a bot (the roles table's CHECK names the others)
    "ALTER TABLE players ADD COLUMN bot {boolean} NOT NULL DEFAULT {false}",
)

MOVE_JOURNAL_MIGRATION: tuple[Step, ...] = (
    # a move in play is appended to move_journal and settled into move_rows (the old
    # table, keyed by game and ply) later; the view moves reads both. PostgreSQL keeps its
    # moves table (its group of moves is one statement over arrays).
    OnlyIn("sqlite", (
        "ALTER TABLE moves RENAME TO move_rows",
        """CREATE TABLE move_journal (
            seq INTEGER PRIMARY KEY,
            game_id TEXT NOT NULL,
            ply INTEGER NOT NULL,
            cell INTEGER NOT NULL,
            clock_x REAL,
            clock_o REAL,
            at REAL NOT NULL)""",
        """CREATE VIEW moves AS
            SELECT game_id, ply, cell, clock_x, clock_o, at FROM move_rows
            UNION ALL
            SELECT game_id, ply, cell, clock_x, clock_o, at FROM move_journal""",
    )),
)

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
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
    (  # a player's history and profile: look-ups by exact name, games by player,
       # when the last rated game ended (the leaderboard drops the inactive), look-alike names
        "CREATE INDEX players_by_name ON players (name)",
        "CREATE INDEX games_by_x_player ON games (x_player, created)",
        "CREATE INDEX games_by_o_player ON games (o_player, created)",
        "ALTER TABLE players ADD COLUMN last_rated {real}",
        """UPDATE players SET last_rated = (SELECT MAX(games.ended) FROM games
            WHERE games.status = 'finished' AND games.rated
            AND (games.x_player = players.name OR games.o_player = players.name))""",
        refold_names,
    ),
    (  # a finished game's review (server.node.reviews), computed once and kept
        """CREATE TABLE reviews (
            game_id TEXT PRIMARY KEY REFERENCES games (id),
            review TEXT NOT NULL,
            computed {real} NOT NULL)""",
    ),
    (  # accounts: a token per device, passwords, recovery codes. players.token_hash is no
       # longer read (each player's token moves to a device row here); SQLite cannot drop a
       # UNIQUE column, so it stays, and new players get random bytes in it.
        """CREATE TABLE devices (
            id {row_id},
            player_id {big_integer} NOT NULL REFERENCES players (id),
            token_hash {blob} NOT NULL UNIQUE,
            label TEXT,
            created {real} NOT NULL,
            last_seen {real},
            address TEXT,
            revoked {real})""",
        "CREATE INDEX devices_of_player ON devices (player_id)",
        "INSERT INTO devices (player_id, token_hash, created) SELECT id, token_hash, created"
        " FROM players ORDER BY id",
        "ALTER TABLE players ADD COLUMN password TEXT",
        """CREATE TABLE recovery_codes (
            player_id {big_integer} NOT NULL REFERENCES players (id),
            code_hash {blob} NOT NULL,
            used {real},
            PRIMARY KEY (player_id, code_hash))""",
    ),
    (  # the host's levers: roles, bans and mutes, the audit log, reports, control
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
    PUZZLES_MIGRATION,  # server/store/puzzle_schema.py: puzzles, puzzle_players, puzzle_attempts
    (  # names fold their separators away: "alice_" and "a-l-i-c-e" are "alice"
        refold_separators,
    ),
    (  # a player is an id, a name is a label: games, reports and puzzle records
       # point at players.id; a deleted player's row stays as a tombstone (``deleted``)
        "ALTER TABLE players ADD COLUMN deleted {real}",
        "ALTER TABLE games ADD COLUMN x_player_id {big_integer}",
        "ALTER TABLE games ADD COLUMN o_player_id {big_integer}",
        "UPDATE games SET x_player_id = (SELECT id FROM players WHERE name = games.x_player)",
        "UPDATE games SET o_player_id = (SELECT id FROM players WHERE name = games.o_player)",
        "DROP INDEX games_by_x_player",
        "DROP INDEX games_by_o_player",
        "CREATE INDEX games_by_x_player_id ON games (x_player_id, created)",
        "CREATE INDEX games_by_o_player_id ON games (o_player_id, created)",
        detach_deleted_names,
        "ALTER TABLE reports ADD COLUMN reporter_id {big_integer}",
        "ALTER TABLE reports ADD COLUMN reported_id {big_integer}",
        attach_reports,
        *PUZZLES_BY_ID,
    ),
    BOTS_MIGRATION,
    TOURNAMENTS_MIGRATION,  # server/store/tournament_schema.py: tournaments, their players, games
    SWISS_SCHEDULE_MIGRATION,  # the same: a Swiss round's set time
    MOVE_JOURNAL_MIGRATION,  # SQLite's move journal (server/store/journal.py)
)
"""Schema changes in order: entry ``i`` brings the database to version ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
VERSION_TABLE = "qubic_schema"
LEGACY_TABLE = "schema_version"  # SQLite's before the schema was shared: one row, one number

LEGACY_SQLITE_VERSIONS = {1: 1, 2: 1, 3: 2}
"""A SQLite file's old ``schema_version`` -> its version here. Old version 1 lacks the
``fence`` column that version 1 here has; ``LEGACY_FENCE`` adds it on adoption."""
LEGACY_FENCE = "ALTER TABLE games ADD COLUMN fence INTEGER NOT NULL DEFAULT 0"


def statements(dialect: Dialect, version: int) -> list[str | Callable[[], Op[None]]]:
    """The steps that bring a database from ``version - 1`` to ``version``: statements in
    this database's types, and operations."""
    types = asdict(dialect)
    steps: list[str | Callable[[], Op[None]]] = []
    for step in MIGRATIONS[version - 1]:
        if isinstance(step, OnlyIn):
            if step.dialect == dialect.name:
                steps += [statement.format(**types) for statement in step.statements]
        elif isinstance(step, str):
            steps.append(step.format(**types))
        else:
            steps.append(step)
    return steps


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
        for step in statements(dialect, version):
            if isinstance(step, str):
                yield change(step)
            else:
                yield from step()
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
