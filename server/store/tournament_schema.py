"""The tournaments' tables, as one entry of ``server.store.schema.MIGRATIONS`` (the operations
on them are ``server.store.tournaments``): a tournament, its players (a player by id, or a
computer level the host entered) and its games (a Swiss's bye is a game with no ``o``), and
the tournament a game belongs to, on the game's own row."""

TOURNAMENTS_MIGRATION = (
    """CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('arena', 'swiss')),
        status TEXT NOT NULL CHECK (status IN ('created', 'started', 'finished')),
        starts_at {real} NOT NULL,
        ends_at {real},
        minutes INTEGER,
        rounds INTEGER,
        round INTEGER NOT NULL DEFAULT 0,
        clock_initial INTEGER NOT NULL,
        clock_increment INTEGER NOT NULL,
        variant TEXT NOT NULL,
        rated {boolean} NOT NULL,
        created {real} NOT NULL,
        created_by TEXT NOT NULL,
        finished {real},
        CHECK ((minutes IS NULL) <> (rounds IS NULL)))""",
    "CREATE INDEX tournaments_by_start ON tournaments (starts_at)",
    """CREATE TABLE tournament_players (
        id {row_id},
        tournament_id TEXT NOT NULL REFERENCES tournaments (id),
        player_id {big_integer} REFERENCES players (id),
        computer INTEGER,
        label TEXT NOT NULL,
        rating INTEGER NOT NULL,
        joined {real} NOT NULL,
        withdrawn {real},
        seen {real},
        always {boolean} NOT NULL DEFAULT {false},
        CHECK ((player_id IS NULL) <> (computer IS NULL)),
        UNIQUE (tournament_id, player_id))""",
    """CREATE TABLE tournament_games (
        id {row_id},
        tournament_id TEXT NOT NULL REFERENCES tournaments (id),
        game_id TEXT UNIQUE REFERENCES games (id),
        round INTEGER,
        x_entry {big_integer} NOT NULL REFERENCES tournament_players (id),
        o_entry {big_integer} REFERENCES tournament_players (id),
        result TEXT,
        plies INTEGER,
        started {real} NOT NULL,
        ended {real})""",
    "CREATE INDEX tournament_games_open ON tournament_games (tournament_id) WHERE ended IS NULL",
    "ALTER TABLE games ADD COLUMN tournament TEXT",
)

SWISS_SCHEDULE_MIGRATION = (
    # a Swiss round due at the latest this many seconds after the one before started
    "ALTER TABLE tournaments ADD COLUMN round_interval {real}",
    # or at these times (a JSON list of Unix seconds: rounds 2, 3, ...)
    "ALTER TABLE tournaments ADD COLUMN round_times TEXT",
)
