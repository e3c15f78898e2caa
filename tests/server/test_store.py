"""The SQLite store: players and tokens, games and moves, restarts, group commit, bad files."""

import asyncio
import contextlib
import hashlib
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from conftest import read_only

from engine import Board, X
from server.errors import StoreError
from server.sqlite_store import SCHEMA_VERSION, SQLiteStore
from server.store import GameStatus, MoveRecord, Seat, Store, TimeControl

ALICE, BOB = Seat.human("Alice"), Seat.human("Bob")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "qubic.db"


@pytest.fixture
async def store(db: Path) -> AsyncIterator[SQLiteStore]:
    async with await SQLiteStore.open(db) as opened:
        yield opened


async def play(store: Store, game_id: str, cells: list[int], start: float = 0.0) -> None:
    for ply, cell in enumerate(cells, 1):
        await store.record_move(game_id, MoveRecord(ply, cell, 60.0 - ply, 60.0, start + ply))


# Players and tokens.


async def test_a_new_player_can_log_in_with_the_token_only_once_shown(store: SQLiteStore) -> None:
    player, token = await store.create_player("Alice", now=100.0)
    assert player.name == "Alice" and player.rating == 1500 and player.rd == 350
    assert await store.authenticate(token) == player
    assert await store.authenticate(token, name="alice") == player
    assert await store.authenticate(token, name="Bob") is None
    assert await store.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert await store.authenticate("") is None
    assert await store.get_player("ALICE") == player
    assert await store.get_player("Bob") is None


async def test_names_are_unique_regardless_of_case(store: SQLiteStore) -> None:
    await store.create_player("Alice", now=0.0)
    with pytest.raises(StoreError) as refused:
        await store.create_player("aLICE", now=1.0)
    assert refused.value.code == "name_taken"
    assert (await store.get_player("alice")).name == "Alice"  # type: ignore[union-attr]


async def test_the_token_is_stored_only_as_its_hash(store: SQLiteStore, db: Path) -> None:
    _, token = await store.create_player("Alice", now=0.0)
    await store.flush()
    files = [db, Path(f"{db}-wal")]
    assert not any(token.encode() in path.read_bytes() for path in files if path.exists())
    await store.close()
    assert token.encode() not in db.read_bytes()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT * FROM players").fetchone()
    assert hashlib.sha256(token.encode()).digest() in row
    assert not any(isinstance(value, str | bytes) and token in str(value) for value in row)


# Games and moves.


async def test_a_game_and_its_moves_round_trip(store: SQLiteStore) -> None:
    await store.create_player("Alice", now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=TimeControl(300, 5), rated=False, now=10.0
    )
    assert len(game.id) >= 12 and game.status == GameStatus.ACTIVE
    await play(store, game.id, [0, 21, 42], start=10.0)
    loaded = await store.get_game(game.id)
    assert loaded is not None
    assert (loaded.variant, loaded.clock, loaded.rated) == ("4x4x4", (300, 5), False)
    assert (loaded.x, loaded.o, loaded.created) == (ALICE, BOB, 10.0)
    assert loaded.cells == [0, 21, 42]
    assert loaded.moves[1] == MoveRecord(2, 21, 58.0, 60.0, 12.0)
    assert Board(loaded.variant, loaded.cells).moves == [0, 21, 42]
    assert await store.get_game("nope") is None


async def test_an_untimed_game_against_the_computer(store: SQLiteStore) -> None:
    game = await store.create_game(
        variant="3x3x3", x=Seat.computer(3), o=BOB, clock=None, rated=False, now=0.0
    )
    await store.record_move(game.id, MoveRecord(1, 13, None, None, 1.0))
    loaded = await store.get_game(game.id)
    assert loaded is not None and loaded.clock is None and loaded.x.computer_level == 3
    assert str(loaded.x) == "computer level 3" and loaded.moves[0].clock_x is None
    with pytest.raises(StoreError, match="cannot be rated"):
        await store.create_game(
            variant="3x3x3", x=Seat.computer(3), o=BOB, clock=None, rated=True, now=0.0
        )


async def test_moves_must_follow_each_other_in_an_active_game(store: SQLiteStore) -> None:
    game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0.0)
    await play(store, game.id, [0, 5])
    for bad in (MoveRecord(2, 9, None, None, 3.0), MoveRecord(4, 9, None, None, 3.0)):
        with pytest.raises(StoreError) as refused:
            await store.record_move(game.id, bad)
        assert refused.value.code == "stale_move"
    with pytest.raises(StoreError) as refused:
        await store.record_move("nope", MoveRecord(1, 0, None, None, 0.0))
    assert refused.value.code == "no_such_game"
    await store.abort_game(game.id, reason="abandoned", now=5.0)
    with pytest.raises(StoreError, match="is over") as refused:
        await store.record_move(game.id, MoveRecord(3, 9, None, None, 6.0))
    assert refused.value.code == "game_over"
    with pytest.raises(StoreError, match="already aborted"):
        await store.finish_game(game.id, result="1-0", reason="resign", now=7.0)
    assert (await store.get_game(game.id)).cells == [0, 5]  # type: ignore[union-attr]


async def test_unfinished_games_survive_a_restart(db: Path) -> None:
    async with await SQLiteStore.open(db) as store:
        kept = await store.create_game(
            variant="4x4x4",
            x=ALICE,
            o=Seat.computer(5),
            clock=TimeControl(60),
            rated=False,
            now=1.0,
        )
        done = await store.create_game(
            variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=2.0
        )
        await play(store, kept.id, [0, 1, 2, 3, 4])
        await play(store, done.id, [0, 4, 1, 5, 2, 6, 3])
        await store.finish_game(
            done.id, result="1-0", reason="line", now=9.0, winning_line=[0, 1, 2, 3]
        )
    async with await SQLiteStore.open(db) as store:
        unfinished = await store.unfinished_games()
        assert [game.id for game in unfinished] == [kept.id]
        assert unfinished[0].cells == [0, 1, 2, 3, 4] and unfinished[0].clock == (60, 0)
        finished = await store.get_game(done.id)
        assert finished is not None and finished.status == GameStatus.FINISHED
        assert finished.winning_line == (0, 1, 2, 3) and finished.ended == 9.0
        board = Board(finished.variant, finished.cells)
        outcome = board.outcome()
        assert outcome is not None and outcome.winner == X and outcome.result == finished.result


async def test_group_commit_of_two_thousand_concurrent_moves(store: SQLiteStore) -> None:
    games = [
        await store.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=float(i)
        )
        for i in range(200)
    ]
    commits_before = store.commits
    for ply in range(1, 11):  # each game's moves in order; the games' moves all at once
        await asyncio.gather(
            *(
                store.record_move(game.id, MoveRecord(ply, ply, None, None, float(ply)))
                for game in games
            )
        )
    assert store.commits - commits_before < 2000 // 2  # grouped, not one commit per move
    unfinished = await store.unfinished_games()
    assert len(unfinished) == 200
    assert all(game.cells == list(range(1, 11)) for game in unfinished)


async def test_close_commits_every_queued_write(db: Path) -> None:
    store = await SQLiteStore.open(db)
    games = [
        await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0)
        for _ in range(50)
    ]
    pending = [
        asyncio.create_task(store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0)))
        for game in games
    ]
    await asyncio.sleep(0)  # the tasks have queued their writes
    await store.close()
    await store.close()
    assert all(task.done() and task.exception() is None for task in pending)
    with pytest.raises(StoreError, match="closed"):
        await store.record_move(games[0].id, MoveRecord(2, 1, None, None, 2.0))
    with pytest.raises(StoreError, match="closed"):
        await store.get_game(games[0].id)
    async with await SQLiteStore.open(db) as reopened:
        assert all(len(game.moves) == 1 for game in await reopened.unfinished_games())


# The end of a game and ratings.


async def test_finishing_a_rated_game_updates_both_players(store: SQLiteStore) -> None:
    for name in ("Alice", "Bob", "Carol"):
        await store.create_player(name, now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=TimeControl(300, 2), rated=True, now=1.0
    )
    finished = await store.finish_game(game.id, result="1-0", reason="resign", now=50.0)
    assert finished.status == GameStatus.FINISHED and finished.result == "1-0"
    assert finished.x_rating == finished.o_rating == 1500
    assert finished.x_rating_change is not None and finished.x_rating_change > 100
    assert finished.o_rating_change == pytest.approx(-finished.x_rating_change)
    alice, bob = await store.get_player("alice"), await store.get_player("bob")
    assert alice is not None and bob is not None
    assert alice.rating == pytest.approx(1500 + finished.x_rating_change) and alice.rd < 350
    assert (alice.games, alice.rated_games, alice.wins, alice.losses) == (1, 1, 1, 0)
    assert (bob.games, bob.rated_games, bob.wins, bob.losses) == (1, 1, 0, 1)
    board = [player.name for player in await store.leaderboard()]
    assert board == ["Alice", "Carol", "Bob"]
    assert [p.name for p in await store.leaderboard(min_rated_games=1)] == ["Alice", "Bob"]
    assert [p.name for p in await store.leaderboard(limit=1)] == ["Alice"]


async def test_unrated_games_count_but_do_not_move_ratings(store: SQLiteStore) -> None:
    await store.create_player("Bob", now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=Seat.computer(2), o=BOB, clock=None, rated=False, now=1.0
    )
    finished = await store.finish_game(game.id, result="1/2-1/2", reason="full", now=2.0)
    assert finished.x_rating_change is None and finished.o_rating_change is None
    bob = await store.get_player("Bob")
    assert bob is not None
    assert (bob.rating, bob.games, bob.rated_games, bob.draws) == (1500, 1, 0, 1)
    with pytest.raises(StoreError, match="not a registered player"):
        await store.create_game(
            variant="4x4x4", x=Seat.human("Guest"), o=BOB, clock=None, rated=True, now=3.0
        )


async def test_the_end_of_a_game_and_its_rating_updates_commit_together(
    store: SQLiteStore, db: Path
) -> None:
    await store.create_player("Alice", now=0.0)
    await store.create_player("Bob", now=0.0)
    rated = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=True, now=1.0
    )
    other = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=1.0
    )
    with contextlib.closing(sqlite3.connect(db)) as conn:  # players can no longer be updated
        conn.execute(
            "CREATE TRIGGER frozen BEFORE UPDATE ON players"
            " BEGIN SELECT RAISE(ABORT, 'frozen'); END"
        )
        conn.commit()
    finishing = store.finish_game(rated.id, result="0-1", reason="time", now=5.0)
    moving = store.record_move(other.id, MoveRecord(1, 0, None, None, 5.0))
    outcomes = await asyncio.gather(finishing, moving, return_exceptions=True)
    assert isinstance(outcomes[0], StoreError) and "frozen" in str(outcomes[0])
    assert outcomes[1] is None  # a write grouped with the failed one still commits
    game = await store.get_game(rated.id)
    assert game is not None and game.status == GameStatus.ACTIVE and game.result is None
    assert game.x_rating_change is None
    alice = await store.get_player("Alice")
    assert alice is not None and (alice.rating, alice.games) == (1500, 0)
    assert (await store.get_game(other.id)).cells == [0]  # type: ignore[union-attr]


# Files the store cannot use.


async def test_a_missing_directory_or_a_directory_cannot_be_opened(tmp_path: Path) -> None:
    for path in (tmp_path / "missing" / "qubic.db", tmp_path):
        with pytest.raises(StoreError, match="cannot be opened"):
            await SQLiteStore.open(path)


async def test_a_file_that_is_not_a_database_is_refused(db: Path) -> None:
    db.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreError, match="not a SQLite database"):
        await SQLiteStore.open(db)


async def test_a_database_locked_by_another_writer_is_refused(db: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="locked by another process"):
            await SQLiteStore.open(db, busy_timeout=0.1)
        other.execute("ROLLBACK")
    await (await SQLiteStore.open(db)).close()


async def test_a_read_only_database_is_refused(db: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with read_only(db), pytest.raises(StoreError, match="read-only"):
        await SQLiteStore.open(db)


async def test_a_newer_schema_or_a_foreign_database_is_refused(db: Path, tmp_path: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
        conn.commit()
    with pytest.raises(StoreError, match="newer qubic"):
        await SQLiteStore.open(db)
    foreign = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.commit()
    with pytest.raises(StoreError, match="another program"):
        await SQLiteStore.open(foreign)


KILLED_WRITER = """
import asyncio, sys
from server.sqlite_store import SQLiteStore
from server.store import MoveRecord, Seat

async def main() -> None:
    store = await SQLiteStore.open(sys.argv[1], synchronous="NORMAL")
    game = await store.create_game(
        variant="4x4x4", x=Seat.human("a"), o=Seat.human("b"), clock=None, rated=False, now=0
    )
    print(game.id, flush=True)
    for ply in range(1, 65):
        await store.record_move(game.id, MoveRecord(ply, ply - 1, None, None, float(ply)))
        print(ply, flush=True)  # acknowledged
    await asyncio.sleep(60)

asyncio.run(main())
"""


async def test_every_acknowledged_move_survives_kill_9(db: Path) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", KILLED_WRITER, str(db),
        stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert child.stdout is not None
    game_id = (await child.stdout.readline()).decode().strip()
    acknowledged = 0
    while acknowledged < 20:
        acknowledged = int(await child.stdout.readline())
    child.kill()  # SIGKILL, with the writer thread mid-stream
    await child.wait()
    async with await SQLiteStore.open(db) as store:
        game = await store.get_game(game_id)
    assert game is not None and len(game.moves) >= acknowledged
    assert game.cells == list(range(len(game.moves)))
