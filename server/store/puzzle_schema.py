"""The puzzles' tables, as one entry of ``server.store.schema.MIGRATIONS`` (the operations on
them are ``server.store.puzzles``): the puzzles with their Glicko-2 ratings, each player's puzzle
rating and streak, and every finished try. Since players are ids, the last two point at the
player's id (``PUZZLES_BY_ID``), no longer at their name's key."""

PUZZLES_MIGRATION = (
    """CREATE TABLE puzzles (
        id {row_id},
        variant TEXT NOT NULL,
        position TEXT NOT NULL,
        position_key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        moves INTEGER NOT NULL,
        horizon INTEGER NOT NULL,
        solution TEXT NOT NULL,
        source TEXT NOT NULL,
        rating {real} NOT NULL,
        rd {real} NOT NULL,
        volatility {real} NOT NULL,
        plays INTEGER NOT NULL DEFAULT 0,
        solves INTEGER NOT NULL DEFAULT 0,
        created {real} NOT NULL)""",
    "CREATE INDEX puzzles_by_rating ON puzzles (rating)",
    """CREATE TABLE puzzle_players (
        name_key TEXT PRIMARY KEY REFERENCES players (name_key),
        rating {real} NOT NULL,
        rd {real} NOT NULL,
        volatility {real} NOT NULL,
        rated INTEGER NOT NULL DEFAULT 0,
        streak INTEGER NOT NULL DEFAULT 0,
        best_streak INTEGER NOT NULL DEFAULT 0,
        streak_run INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE puzzle_attempts (
        id {row_id},
        name_key TEXT NOT NULL REFERENCES players (name_key),
        puzzle_id {big_integer} NOT NULL REFERENCES puzzles (id),
        mode TEXT NOT NULL,
        solved {boolean} NOT NULL,
        rated {boolean} NOT NULL,
        rating_before {real} NOT NULL,
        rating_after {real} NOT NULL,
        at {real} NOT NULL)""",
    "CREATE INDEX puzzle_attempts_by_player ON puzzle_attempts (name_key, at)",
)
"""The puzzles' entry of ``MIGRATIONS``."""

PUZZLES_BY_ID = (
    # A player's puzzle rating and tries point at players.id (not at name_key, which a rename
    # changes and a newcomer could take next): the two tables are made again under that key,
    # as SQLite cannot change a column's reference in place. Tries keep their order.
    """CREATE TABLE puzzle_players_by_id (
        player_id {big_integer} PRIMARY KEY REFERENCES players (id),
        rating {real} NOT NULL,
        rd {real} NOT NULL,
        volatility {real} NOT NULL,
        rated INTEGER NOT NULL DEFAULT 0,
        streak INTEGER NOT NULL DEFAULT 0,
        best_streak INTEGER NOT NULL DEFAULT 0,
        streak_run INTEGER NOT NULL DEFAULT 0)""",
    """INSERT INTO puzzle_players_by_id (player_id, rating, rd, volatility, rated, streak,
        best_streak, streak_run) SELECT players.id, p.rating, p.rd, p.volatility, p.rated,
        p.streak, p.best_streak, p.streak_run
        FROM puzzle_players p JOIN players ON players.name_key = p.name_key""",
    "DROP TABLE puzzle_players",
    "ALTER TABLE puzzle_players_by_id RENAME TO puzzle_players",
    """CREATE TABLE puzzle_attempts_by_id (
        id {row_id},
        player_id {big_integer} NOT NULL REFERENCES players (id),
        puzzle_id {big_integer} NOT NULL REFERENCES puzzles (id),
        mode TEXT NOT NULL,
        solved {boolean} NOT NULL,
        rated {boolean} NOT NULL,
        rating_before {real} NOT NULL,
        rating_after {real} NOT NULL,
        at {real} NOT NULL)""",
    """INSERT INTO puzzle_attempts_by_id (player_id, puzzle_id, mode, solved, rated,
        rating_before, rating_after, at) SELECT players.id, a.puzzle_id, a.mode, a.solved,
        a.rated, a.rating_before, a.rating_after, a.at
        FROM puzzle_attempts a JOIN players ON players.name_key = a.name_key ORDER BY a.id""",
    "DROP TABLE puzzle_attempts",
    "ALTER TABLE puzzle_attempts_by_id RENAME TO puzzle_attempts",
    "CREATE INDEX puzzle_attempts_by_player ON puzzle_attempts (player_id, at)",
)
"""The puzzles' part of the schema version that made players ids (``server.store.schema``)."""
