"""The one SQL store: databases written by an older qubic open upgraded with nothing lost, the
same games rate the same on SQLite and PostgreSQL, and the end of a game as a pure function."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import asyncpg
import pytest

from server.errors import StoreError
from server.game.ratings import Rating, rate_game
from server.game.records import GameRecord, GameStatus, MoveRecord, PlayerRecord, Seat
from server.store.base import Store
from server.store.ending import end_game
from server.store.factory import is_postgres_url, open_store
from server.store.schema import SCHEMA_VERSION

# The schema as commit db95c3f wrote it, before it was shared: SQLite's versions 1-3 recorded
# in a one-row ``schema_version``, PostgreSQL's versions 1-2 as rows of ``qubic_schema``.
OLD_SQLITE_SCHEMA = {
    1: """
CREATE TABLE players (
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
    draws INTEGER NOT NULL DEFAULT 0);
CREATE INDEX players_by_rating ON players (rating DESC);
CREATE TABLE games (
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
    CHECK ((o_player IS NULL) <> (o_computer IS NULL)));
CREATE INDEX active_games ON games (created) WHERE status = 'active';
CREATE TABLE moves (
    game_id TEXT NOT NULL REFERENCES games (id),
    ply INTEGER NOT NULL,
    cell INTEGER NOT NULL,
    clock_x REAL,
    clock_o REAL,
    at REAL NOT NULL,
    PRIMARY KEY (game_id, ply)) WITHOUT ROWID;
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
""",
    2: """
ALTER TABLE games ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
UPDATE schema_version SET version = 2;
""",
    3: """
ALTER TABLE games ADD COLUMN listed INTEGER NOT NULL DEFAULT 0;
UPDATE schema_version SET version = 3;
""",
}
OLD_POSTGRES_SCHEMA = {
    1: """
CREATE TABLE qubic_schema (version INTEGER PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE players (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL CONSTRAINT players_name_key UNIQUE,
    token_hash BYTEA NOT NULL UNIQUE,
    created DOUBLE PRECISION NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    rated_games INTEGER NOT NULL DEFAULT 0,
    wins INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0);
CREATE INDEX players_by_rating ON players (rating DESC);
CREATE TABLE games (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    clock_initial DOUBLE PRECISION,
    clock_increment DOUBLE PRECISION,
    rated BOOLEAN NOT NULL,
    x_player TEXT,
    x_computer INTEGER,
    o_player TEXT,
    o_computer INTEGER,
    status TEXT NOT NULL CHECK (status IN ('active', 'finished', 'aborted')),
    result TEXT,
    reason TEXT,
    winning_line TEXT,
    created DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION,
    x_rating DOUBLE PRECISION,
    o_rating DOUBLE PRECISION,
    x_rating_change DOUBLE PRECISION,
    o_rating_change DOUBLE PRECISION,
    fence BIGINT NOT NULL DEFAULT 0,
    CHECK ((x_player IS NULL) <> (x_computer IS NULL)),
    CHECK ((o_player IS NULL) <> (o_computer IS NULL)));
CREATE INDEX active_games ON games (created) WHERE status = 'active';
CREATE TABLE moves (
    game_id TEXT NOT NULL REFERENCES games (id),
    ply INTEGER NOT NULL,
    cell INTEGER NOT NULL,
    clock_x DOUBLE PRECISION,
    clock_o DOUBLE PRECISION,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (game_id, ply));
INSERT INTO qubic_schema (version) VALUES (1);
""",
    2: """
ALTER TABLE games ADD COLUMN listed BOOLEAN NOT NULL DEFAULT FALSE;
INSERT INTO qubic_schema (version) VALUES (2);
""",
}

TOKENS = {"Alice": "alice's token", "Bob": "bob's token"}
ALICE = PlayerRecord("Alice", 1.0, 1662.25, 290.5, 0.0599, 1, 1, 1, 0, 0)
BOB = PlayerRecord("Bob", 2.0, 1337.75, 290.5, 0.0601, 1, 1, 0, 1, 0)


def old_rows(*, sqlite: bool, fence: bool, listed: bool) -> str:
    """Two players, a finished rated game and an active one, as the old stores wrote them."""
    true = "1" if sqlite else "TRUE"

    def blob(token: str) -> str:
        digest = hashlib.sha256(token.encode()).hexdigest()
        return f"X'{digest}'" if sqlite else f"decode('{digest}', 'hex')"

    players = ", ".join(
        f"('{p.name}', '{p.name.lower()}', {blob(TOKENS[p.name])}, {p.created}, {p.rating},"
        f" {p.rd}, {p.volatility}, {p.games}, {p.rated_games}, {p.wins}, {p.losses}, {p.draws})"
        for p in (ALICE, BOB)
    )
    extra_columns = (", fence" if fence else "") + (", listed" if listed else "")
    extra_values = (", 4" if fence else "") + (f", {true}" if listed else "")
    return f"""
INSERT INTO players (name, name_key, token_hash, created, rating, rd, volatility, games,
    rated_games, wins, losses, draws) VALUES {players};
INSERT INTO games (id, variant, clock_initial, clock_increment, rated, x_player, o_player,
    status, result, reason, winning_line, created, ended, x_rating, o_rating, x_rating_change,
    o_rating_change) VALUES ('done', '4x4', NULL, NULL, {true}, 'Alice', 'Bob', 'finished',
    '1-0', 'line', '0 1 2 3', 10.0, 17.0, 1500.0, 1500.0, 162.25, -162.25);
INSERT INTO games (id, variant, clock_initial, clock_increment, rated, x_player, o_player,
    status, created{extra_columns}) VALUES ('playing', '4x4x4', 300.0, 5.0, {true}, 'Alice',
    'Bob', 'active', 20.0{extra_values});
INSERT INTO moves VALUES ('done', 1, 0, NULL, NULL, 11.0), ('done', 2, 4, NULL, NULL, 12.0),
    ('done', 3, 1, NULL, NULL, 13.0), ('done', 4, 5, NULL, NULL, 14.0),
    ('done', 5, 2, NULL, NULL, 15.0), ('done', 6, 6, NULL, NULL, 16.0),
    ('done', 7, 3, NULL, NULL, 17.0),
    ('playing', 1, 0, 299.0, 300.0, 21.0), ('playing', 2, 21, 299.0, 298.0, 22.0),
    ('playing', 3, 42, 297.0, 298.0, 23.0);
"""


async def query(database: str, sql: str) -> list[tuple[object, ...]]:
    """The rows of one query, read behind the store's back."""
    if not is_postgres_url(database):
        with contextlib.closing(sqlite3.connect(database)) as conn:
            return [tuple(row) for row in conn.execute(sql)]
    conn = await asyncpg.connect(database)
    try:
        return [tuple(row) for row in await conn.fetch(sql)]
    finally:
        await conn.close()


async def check_upgraded(database: str, *, fence: int, listed: bool) -> None:
    """The old database's players and games read back as written, and play on."""
    store = await open_store(database)
    try:
        # their last rated game's end, read from the games when the schema learnt it
        assert await store.authenticate(TOKENS["Alice"], name="alice") == dataclasses.replace(
            ALICE, last_rated=17.0)
        assert await store.get_player("BOB") == dataclasses.replace(BOB, last_rated=17.0)
        done = await store.get_game("done")
        assert done is not None and done.status == GameStatus.FINISHED
        assert (done.result, done.reason, done.winning_line) == ("1-0", "line", (0, 1, 2, 3))
        assert (done.x_rating, done.x_rating_change, done.o_rating_change) == (
            1500.0, 162.25, -162.25,
        )  # fmt: skip
        assert done.cells == [0, 4, 1, 5, 2, 6, 3] and done.rated and not done.listed
        (playing,) = await store.unfinished_games()
        assert (playing.id, playing.cells, playing.clock) == ("playing", [0, 21, 42], (300, 5))
        assert playing.moves[1] == MoveRecord(2, 21, 299.0, 298.0, 22.0)
        assert (playing.fence, playing.listed) == (fence, listed)
        await store.record_move("playing", MoveRecord(4, 5, 297.0, 290.0, 24.0), fence=fence + 1)
        ended = await store.finish_game(
            "playing", result="0-1", reason="resign", now=30.0, fence=fence + 1
        )
    finally:
        await store.close()
    new_alice, new_bob = rate_game(ALICE.glicko, BOB.glicko, 0.0)
    assert ended.x_rating_change == new_alice.rating - ALICE.rating
    assert ended.o_rating_change == new_bob.rating - BOB.rating
    assert ended.fence == fence + 1 and ended.cells == [0, 21, 42, 5]
    reopened = await open_store(database)
    try:
        alice = await reopened.get_player("alice")
        assert alice is not None and alice.glicko == new_alice
        assert (alice.games, alice.rated_games, alice.wins, alice.losses) == (2, 2, 1, 1)
        assert await reopened.get_game("playing") == ended
        assert await reopened.get_game("done") == done
    finally:
        await reopened.close()
    versions = await query(database, "SELECT version FROM qubic_schema ORDER BY version")
    assert versions == [(version,) for version in range(1, SCHEMA_VERSION + 1)]


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_a_sqlite_file_of_an_older_qubic_opens_upgraded_with_nothing_lost(
    tmp_path: Path, version: int
) -> None:
    database = str(tmp_path / "old.db")
    with contextlib.closing(sqlite3.connect(database)) as conn:
        for step in range(1, version + 1):
            conn.executescript(OLD_SQLITE_SCHEMA[step])
        conn.executescript(old_rows(sqlite=True, fence=version >= 2, listed=version >= 3))
    await check_upgraded(database, fence=4 if version >= 2 else 0, listed=version >= 3)
    tables = await query(database, "SELECT name FROM sqlite_master WHERE type = 'table'")
    assert ("schema_version",) not in tables


@pytest.mark.parametrize("version", [1, 2])
async def test_a_postgresql_database_of_an_older_qubic_opens_upgraded_with_nothing_lost(
    postgres_url: str, version: int
) -> None:
    conn = await asyncpg.connect(postgres_url)
    try:
        for step in range(1, version + 1):
            await conn.execute(OLD_POSTGRES_SCHEMA[step])
        await conn.execute(old_rows(sqlite=False, fence=True, listed=version >= 2))
    finally:
        await conn.close()
    await check_upgraded(postgres_url, fence=4, listed=version >= 2)


# The same games on both databases.

GAMES: list[tuple[str, str, bool, str | None]] = [  # X, O, rated, result (None: aborted)
    ("Ann", "Ben", True, "1-0"),
    ("Cid", "Dee", True, "1/2-1/2"),
    ("Ben", "Cid", True, "0-1"),
    ("Dee", "Ann", True, "1-0"),
    ("Ann", "Cid", False, "0-1"),
    ("Ann", "computer", False, "1-0"),
    ("Ben", "Dee", True, None),
    ("Cid", "Ann", True, "1/2-1/2"),
    ("Eve", "Dee", False, "0-1"),  # Eve is a guest: never registered
    ("Ben", "Ann", True, "1-0"),
    ("Dee", "Cid", True, "0-1"),
    ("Ann", "Ben", True, "1/2-1/2"),
]


def seat(name: str) -> Seat:
    return Seat.computer(3) if name == "computer" else Seat.human(name)


async def play_games(store: Store) -> tuple[list[PlayerRecord], list[GameRecord | None]]:
    """Play ``GAMES`` through ``store``; every player and every game afterwards."""
    for name in ("Ann", "Ben", "Cid", "Dee"):
        await store.create_player(name, now=0.0)
    for number, (x, o, rated, result) in enumerate(GAMES):
        game = await store.create_game(
            variant="4x4", x=seat(x), o=seat(o), clock=None, rated=rated, now=float(number),
            game_id=f"game{number}",
        )
        await store.record_move(game.id, MoveRecord(1, 0, None, None, number + 0.25))
        if result is None:
            await store.abort_game(game.id, reason="abandoned", now=number + 0.5)
        else:
            await store.finish_game(game.id, result=result, reason="resign", now=number + 0.5)
    players = await store.leaderboard(limit=100)
    games = [await store.get_game(f"game{number}") for number in range(len(GAMES))]
    return players, games


async def test_the_same_games_rate_the_same_on_sqlite_and_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    outcomes = []
    for database in (str(tmp_path / "qubic.db"), postgres_url):
        store = await open_store(database)
        try:
            outcomes.append(await play_games(store))
        finally:
            await store.close()
    (sqlite_players, sqlite_games), (postgres_players, postgres_games) = outcomes
    assert sqlite_players == postgres_players
    assert sqlite_games == postgres_games
    assert len({player.rating for player in sqlite_players}) == 4  # the games moved them apart
    assert [(p.name, p.games, p.wins, p.losses, p.draws) for p in sqlite_players if
            p.name == "Dee"] == [("Dee", 4, 2, 1, 1)]  # fmt: skip


# The end of a game, with no database.

FINISHING = GameRecord(
    "g", "4x4x4", None, True, Seat.human("Ann"), Seat.human("Ben"), GameStatus.ACTIVE, 1.0
)
ANN, BEN = PlayerRecord("Ann", 0.0), PlayerRecord("Ben", 0.0, rating=1600.0, rd=80.0)


def test_a_rated_game_rates_both_players_from_their_ratings_before_it() -> None:
    end = end_game(FINISHING, ANN, BEN, result="1-0", reason="line", now=9.0,
                   winning_line=[0, 1, 2, 3])  # fmt: skip
    new_ann, new_ben = rate_game(ANN.glicko, BEN.glicko, 1.0)
    assert end.game.status == GameStatus.FINISHED and end.game.winning_line == (0, 1, 2, 3)
    assert (end.game.result, end.game.reason, end.game.ended) == ("1-0", "line", 9.0)
    assert (end.game.x_rating, end.game.o_rating) == (1500.0, 1600.0)
    assert end.game.x_rating_change == new_ann.rating - 1500.0
    ann, ben = end.players
    assert ann.glicko == new_ann and ben.glicko == new_ben
    assert (ann.games, ann.rated_games, ann.wins, ben.games, ben.losses) == (1, 1, 1, 1, 1)


def test_an_unrated_game_or_a_guest_counts_without_moving_ratings() -> None:
    unrated = end_game(dataclasses.replace(FINISHING, rated=False), ANN, BEN,
                       result="1/2-1/2", reason="full", now=2.0)  # fmt: skip
    assert [p.glicko for p in unrated.players] == [Rating(), BEN.glicko]
    assert [p.draws for p in unrated.players] == [1, 1]
    assert unrated.game.x_rating_change is None
    with_guest = end_game(FINISHING, None, BEN, result="0-1", reason="time", now=2.0)
    (ben,) = with_guest.players
    assert (ben.glicko, ben.games, ben.rated_games, ben.wins) == (BEN.glicko, 1, 0, 1)
    with pytest.raises(ValueError, match="not a result"):
        end_game(FINISHING, ANN, BEN, result="2-0", reason="line", now=2.0)


def test_a_player_on_both_seats_is_counted_twice_and_keeps_os_rating() -> None:
    (ann,) = end_game(FINISHING, ANN, ANN, result="1-0", reason="line", now=2.0).players
    _, as_o = rate_game(ANN.glicko, ANN.glicko, 1.0)
    assert ann.glicko == as_o
    assert (ann.games, ann.rated_games, ann.wins, ann.losses) == (2, 2, 1, 1)


async def test_an_old_sqlite_file_numbered_past_the_last_old_version_is_refused(
    tmp_path: Path,
) -> None:
    """A ``schema_version`` past the last one written before the schema was shared is not
    ours to adopt."""
    database = str(tmp_path / "old.db")
    with contextlib.closing(sqlite3.connect(database)) as conn:
        for step in (1, 2, 3):
            conn.executescript(OLD_SQLITE_SCHEMA[step])
        conn.executescript("UPDATE schema_version SET version = 4;")
    with pytest.raises(StoreError, match="newer qubic"):
        await open_store(database)
    assert ("schema_version",) in await query(
        database, "SELECT name FROM sqlite_master WHERE type = 'table'"
    )
