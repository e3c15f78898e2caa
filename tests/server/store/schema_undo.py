"""Taking a test database back to an older schema version, to test what an upgrade does to
the rows it finds: ``rewind(database, version)`` undoes every version after ``version``,
newest first, and forgets them in ``qubic_schema``.

``UNDO`` holds, for each version after the first two, the statements that undo it (one entry
a version: a migration appended to ``server.store.schema.MIGRATIONS`` needs its entry here,
and ``test_every_version_can_be_undone`` says so), its column types written as the schema
writes them (``{real}``, ...)."""

from __future__ import annotations

from dataclasses import asdict

from server.store.factory import is_postgres_url
from server.store.puzzle_schema import PUZZLES_MIGRATION
from server.store.query import POSTGRES, SQLITE
from server.store.schema import (
    BOTS_MIGRATION,
    MIGRATIONS,
    MOVE_JOURNAL_MIGRATION,
    OnlyIn,
    attach_reports,
    refold_separators,
)
from server.store.tournament_schema import SWISS_SCHEDULE_MIGRATION, TOURNAMENTS_MIGRATION
from tests.server.store.test_store import raw

SEPARATORS_VERSION = next(
    i + 1 for i, steps in enumerate(MIGRATIONS) if refold_separators in steps)
"""The schema version that refolds names' keys once separators fold away."""

IDS_VERSION = next(i + 1 for i, steps in enumerate(MIGRATIONS) if attach_reports in steps)
"""The schema version whose records point at players' ids, not their names."""

BOTS_VERSION = MIGRATIONS.index(BOTS_MIGRATION) + 1
"""The schema version that gives players the bot flag."""

TOURNAMENTS_VERSION = next(
    i + 1 for i, steps in enumerate(MIGRATIONS) if steps is TOURNAMENTS_MIGRATION)
"""The schema version that adds the tournaments' tables."""

SWISS_SCHEDULE_VERSION = MIGRATIONS.index(SWISS_SCHEDULE_MIGRATION) + 1
"""The schema version that gives a Swiss's rounds their set times."""

MOVE_JOURNAL_VERSION = MIGRATIONS.index(MOVE_JOURNAL_MIGRATION) + 1
"""The schema version of SQLite's move journal."""

UNDO: dict[int, tuple[str, ...] | OnlyIn] = {
    MOVE_JOURNAL_VERSION: OnlyIn("sqlite", (  # the journal's rows settled, the table back
        "INSERT INTO move_rows SELECT game_id, ply, cell, clock_x, clock_o, at"
        " FROM move_journal",
        "DROP VIEW moves", "DROP TABLE move_journal", "ALTER TABLE move_rows RENAME TO moves")),
    SWISS_SCHEDULE_VERSION: ("ALTER TABLE tournaments DROP COLUMN round_times",
                             "ALTER TABLE tournaments DROP COLUMN round_interval"),
    BOTS_VERSION: ("ALTER TABLE players DROP COLUMN bot",),
    TOURNAMENTS_VERSION: ("DROP TABLE tournament_games", "DROP TABLE tournament_players",
                          "DROP TABLE tournaments", "ALTER TABLE games DROP COLUMN tournament"),
    IDS_VERSION: (  # players by id: the puzzle tables by name_key again (emptied), no ids
        "DROP TABLE puzzle_attempts", "DROP TABLE puzzle_players",
        *PUZZLES_MIGRATION[2:],
        "DROP INDEX games_by_x_player_id", "DROP INDEX games_by_o_player_id",
        "CREATE INDEX games_by_x_player ON games (x_player, created)",
        "CREATE INDEX games_by_o_player ON games (o_player, created)",
        "ALTER TABLE games DROP COLUMN x_player_id", "ALTER TABLE games DROP COLUMN o_player_id",
        "ALTER TABLE reports DROP COLUMN reporter_id",
        "ALTER TABLE reports DROP COLUMN reported_id",
        "ALTER TABLE players DROP COLUMN deleted"),
    SEPARATORS_VERSION: (),  # names' keys refolded: the keys stay as they are
    7: ("DROP TABLE puzzle_attempts", "DROP TABLE puzzle_players", "DROP TABLE puzzles"),
    6: ("DROP TABLE control", "DROP TABLE reports", "DROP TABLE audit", "DROP TABLE sanctions",
        "DROP TABLE roles"),
    5: (  # accounts: each player's first token back where it lived before devices
        "UPDATE players SET token_hash = (SELECT token_hash FROM devices"
        " WHERE devices.player_id = players.id ORDER BY devices.id LIMIT 1)",
        "DROP TABLE recovery_codes", "DROP TABLE devices",
        "ALTER TABLE players DROP COLUMN password"),
    4: ("DROP TABLE reviews",),
    3: ("DROP INDEX players_by_name", "DROP INDEX games_by_x_player",
        "DROP INDEX games_by_o_player", "ALTER TABLE players DROP COLUMN last_rated"),
}


async def rewind(database: str, version: int) -> None:
    """Undo the schema's versions after ``version`` (their rows' data as far as UNDO says)."""
    dialect = POSTGRES if is_postgres_url(database) else SQLITE
    types = asdict(dialect)
    for undone in sorted(UNDO, reverse=True):
        if undone > version:
            steps = UNDO[undone]
            if isinstance(steps, OnlyIn):
                steps = steps.statements if steps.dialect == dialect.name else ()
            for statement in steps:
                await raw(database, statement.format(**types))
    await raw(database, f"DELETE FROM qubic_schema WHERE version > {version}")
