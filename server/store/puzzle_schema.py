"""The puzzles' tables, as one entry of ``server.store.schema.MIGRATIONS`` (the operations on
them are ``server.store.puzzles``): the puzzles with their Glicko-2 ratings, each player's puzzle
rating and streak, and every finished try."""

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
