"""PostgreSQL beyond the shared store tests: migrations, databases it cannot use, and a real
server on PostgreSQL (``qubic serve --database postgresql://...``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from server.errors import StoreError
from server.game.records import MoveRecord, Seat
from server.store.factory import open_store
from server.store.postgres import PostgresStore, redact
from server.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.server.servers import Client, Server, play, start_private_game
from tests.services import PostgresServer

ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]  # X wins on level 1, row 1


async def execute(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def test_nodes_starting_together_migrate_once(postgres_url: str) -> None:
    stores = await asyncio.gather(*(PostgresStore.open(postgres_url) for _ in range(4)))
    for store in stores:
        await store.close()
    conn = await asyncpg.connect(postgres_url)
    try:
        versions = [row["version"] for row in await conn.fetch("SELECT version FROM qubic_schema")]
    finally:
        await conn.close()
    assert versions == list(range(1, SCHEMA_VERSION + 1)) == list(range(1, len(MIGRATIONS) + 1))


async def test_a_newer_schema_or_a_foreign_database_is_refused(
    postgres_url: str, postgres_server: PostgresServer
) -> None:
    await (await PostgresStore.open(postgres_url)).close()
    await execute(postgres_url, f"INSERT INTO qubic_schema (version) VALUES ({SCHEMA_VERSION + 1})")
    with pytest.raises(StoreError, match="newer qubic"):
        await PostgresStore.open(postgres_url)
    await execute(postgres_url, "DROP TABLE qubic_schema", "CREATE TABLE notes (text TEXT)")
    with pytest.raises(StoreError, match="another program"):
        await PostgresStore.open(postgres_url)


async def test_a_database_that_cannot_be_reached_is_refused_with_a_reason(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match='database "nowhere" does not exist'):
        await open_store(postgres_server.url("nowhere"))
    with pytest.raises(StoreError, match="cannot use the database"):
        await open_store(f"postgresql://qubic@/qubic?host={tmp_path}&port=5432", )


def test_a_password_never_shows_in_a_message() -> None:
    assert redact("postgresql://qubic:s3cret@db:5432/qubic") == "postgresql://qubic:***@db:5432/qubic"
    assert redact("postgresql://qubic@db/qubic") == "postgresql://qubic@db/qubic"


async def test_a_server_on_postgresql_plays_and_resumes_a_game_after_a_restart(
    postgres_url: str,
) -> None:
    server = Server(postgres_url)  # type: ignore[arg-type]
    await server.start()
    try:
        ann, bob = await server.client("ann"), await server.client("bob")
        game = await start_private_game(server, ann, bob, clock={"initial": 60, "increment": 1})
        for ply, cell in enumerate(ROW[:4]):
            await play(ann if ply % 2 == 0 else bob, game, cell, ply)
        tokens = ann.token, bob.token
        await server.stop()
        await server.start()
        ann, bob = await server.client(), await server.client()
        assert game in (await ann.hello(token=tokens[0]))["games"]
        await bob.hello(token=tokens[1])
        state = await ann.request(t="watch", game=game)
        assert state["moves"] == [0, 16, 1, 17] and state["status"] == "playing"
        await bob.request(t="watch", game=game)
        for ply, cell in list(enumerate(ROW))[4:]:
            await play(ann if ply % 2 == 0 else bob, game, cell, ply)
        assert (await bob.expect("end"))["result"] == "1-0"
    finally:
        await server.stop()
    async with await PostgresStore.open(postgres_url) as store:
        record = await store.get_game(game)
        ann_record = await store.get_player("ann")
    assert record is not None and record.result == "1-0" and len(record.moves) == len(ROW)
    assert ann_record is not None and ann_record.wins == 1


async def test_a_client_can_be_refused_a_name_taken_on_postgresql(postgres_url: str) -> None:
    server = Server(postgres_url)  # type: ignore[arg-type]
    await server.start()
    try:
        await server.client("ann")
        other: Client = await server.client()
        refused = await other.request(t="hello", name="ANN")
        assert refused["t"] == "error" and refused["code"] == "name_taken"
    finally:
        await server.stop()


def test_qubic_serve_names_a_postgresql_database_it_cannot_use(
    postgres_server: PostgresServer,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--computer-workers", "1",
         "--database", postgres_server.url("no_such_database")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("qubic serve: error: cannot use the database postgresql://")
    assert 'database "no_such_database" does not exist' in result.stderr


def test_database_is_the_long_name_of_db() -> None:
    from qubic_cli.main import build_parser

    url = "postgresql://qubic@127.0.0.1/qubic"
    assert build_parser().parse_args(["serve", "--database", url]).db == url
    assert build_parser().parse_args(["serve", "--db", "x.db"]).db == "x.db"
    assert build_parser().parse_args(["serve"]).db == "qubic.db"


ANN, BEA = Seat.human("Ann"), Seat.human("Bea")


async def new_games(store: PostgresStore, count: int) -> list[str]:
    return [(await store.create_game(variant="4x4", x=ANN, o=BEA, clock=None, rated=False,
                                     now=0)).id for _ in range(count)]


async def test_a_window_of_moves_is_one_statement_on_postgresql(postgres_url: str) -> None:
    """Group commit on PostgreSQL (issue 41), as SQLite's: ten moves, each asked for in its
    own turn of the loop (1 ms apart), within a second's window after a quiet spell: the
    first goes at once, the nine after it together when the window ends (one pooled
    connection, one statement, one commit), each acknowledged only then."""
    store = await PostgresStore.open(postgres_url, commit_interval=1.0)
    try:
        games = await new_games(store, 10)
        commits, hand_overs = store.commits, store.hand_overs
        loop = asyncio.get_running_loop()
        started = loop.time()
        pending = []
        for game in games:
            pending.append(asyncio.create_task(
                store.record_move(game, MoveRecord(1, 0, None, None, 1.0))))
            await asyncio.sleep(0.001)
        await pending[0]
        assert loop.time() - started < 0.5  # the first, after the quiet spell: at once
        assert not any(task.done() for task in pending[1:])  # the rest wait for the window
        await asyncio.gather(*pending)
        assert loop.time() - started >= 0.9
        assert (store.commits - commits, store.hand_overs - hand_overs) == (2, 2)
        unfinished = await store.unfinished_games()
        assert sorted(game.cells for game in unfinished) == [[0]] * 10
        # each group's statement timed for /metrics' qubic_store_commit_seconds
        assert sum(store.commit_buckets) == store.commits and store.commit_seconds > 0
    finally:
        await store.close()


async def test_each_move_of_a_group_is_refused_or_written_on_its_own(postgres_url: str) -> None:
    """A group's statement checks each move as ``record_move`` alone does: a move at the
    wrong ply, in a game over, of no game, or under a fencing token older than the game's
    is refused with its code, and the others of the group are written; a game's second move
    in the group follows its first; a newer token becomes the game's."""
    store = await PostgresStore.open(postgres_url, commit_interval=30.0, commit_max=100)
    try:
        good, twice, stale, over, fenced, newer = await new_games(store, 6)
        await store.record_move(twice, MoveRecord(1, 5, None, None, 1.0))  # quiet: at once
        await store.finish_game(over, result="1-0", reason="resign", now=1.0)
        await store.claim(fenced, fence=5)
        await store.claim(newer, fence=5)
        asked = {
            "good": store.record_move(good, MoveRecord(1, 0, None, None, 2.0)),
            "twice": store.record_move(twice, MoveRecord(2, 6, 1.5, None, 2.0)),
            "twice again": store.record_move(twice, MoveRecord(3, 7, None, 2.5, 2.0)),
            "stale": store.record_move(stale, MoveRecord(2, 0, None, None, 2.0)),
            "over": store.record_move(over, MoveRecord(1, 0, None, None, 2.0)),
            "nowhere": store.record_move("no-such-game", MoveRecord(1, 0, None, None, 2.0)),
            "fenced": store.record_move(fenced, MoveRecord(1, 0, None, None, 2.0), fence=4),
            "newer": store.record_move(newer, MoveRecord(1, 0, None, None, 2.0), fence=6),
        }
        tasks = {name: asyncio.create_task(call) for name, call in asked.items()}
        await asyncio.sleep(0.05)
        assert not any(task.done() for task in tasks.values())  # one group, in the window
        hand_overs = store.hand_overs
        await store.flush()
        assert store.hand_overs - hand_overs == 1
        outcomes = {name: task.exception() for name, task in tasks.items()}
        codes = {name: getattr(error, "code", None) for name, error in outcomes.items()
                 if error is not None}
        assert codes == {"stale": "stale_move", "over": "game_over", "nowhere": "no_such_game",
                         "fenced": "fenced"}
        assert all(isinstance(outcomes[name], StoreError) for name in codes)
        moves = {game: await store.get_game(game) for game in (good, twice, newer, fenced)}
        assert [m.cell for m in moves[good].moves] == [0]  # type: ignore[union-attr]
        assert moves[twice].moves == (  # type: ignore[union-attr]
            MoveRecord(1, 5, None, None, 1.0), MoveRecord(2, 6, 1.5, None, 2.0),
            MoveRecord(3, 7, None, 2.5, 2.0))
        assert moves[newer].fence == 6 and moves[fenced].fence == 5  # type: ignore[union-attr]
        assert moves[fenced].moves == ()  # type: ignore[union-attr]
    finally:
        await store.close()


async def test_a_group_beaten_to_a_ply_by_another_writer_refuses_only_that_move(
    postgres_url: str,
) -> None:
    """Another writer's move at a ply the group writes too, committed while the group's
    statement waits for it: the statement fails on the primary key, and the group's moves
    are written one by one, so only the move beaten to its ply is refused (``stale_move``)."""
    store = await PostgresStore.open(postgres_url, commit_interval=30.0)
    other = await asyncpg.connect(postgres_url)
    try:
        beaten, free = await new_games(store, 2)
        transaction = other.transaction()
        await transaction.start()
        await other.execute("INSERT INTO moves VALUES ($1, 1, 9, NULL, NULL, 1.0)", beaten)
        tasks = [asyncio.create_task(store.record_move(game, MoveRecord(1, 0, None, None, 2.0)))
                 for game in (beaten, free)]
        await asyncio.sleep(0)
        flushed = asyncio.create_task(store.flush())
        await asyncio.sleep(0.3)
        assert not flushed.done()  # the statement waits for the other writer's row
        await transaction.commit()
        await asyncio.wait_for(flushed, 10)
        error = tasks[0].exception()
        assert isinstance(error, StoreError) and error.code == "stale_move"
        assert tasks[1].exception() is None
        beaten_game, free_game = await store.get_game(beaten), await store.get_game(free)
        assert beaten_game is not None and [m.cell for m in beaten_game.moves] == [9]
        assert free_game is not None and [m.cell for m in free_game.moves] == [0]
    finally:
        await other.close()
        await store.close()


async def test_close_commits_the_moves_gathered_on_postgresql(postgres_url: str) -> None:
    """``close()`` hands the group gathered over at once and waits for its commit."""
    store = await PostgresStore.open(postgres_url, commit_interval=30.0)
    games = await new_games(store, 3)
    await store.record_move(games[0], MoveRecord(1, 0, None, None, 1.0))  # quiet: at once
    tasks = [asyncio.create_task(store.record_move(game, MoveRecord(ply, ply, None, None, 2.0)))
             for game, ply in ((games[0], 2), (games[1], 1), (games[2], 1))]
    await asyncio.sleep(0.01)
    assert not any(task.done() for task in tasks)
    await asyncio.wait_for(store.close(), 10)
    assert all(task.done() and task.exception() is None for task in tasks)
    async with await PostgresStore.open(postgres_url) as again:
        assert sorted(len(game.moves) for game in await again.unfinished_games()) == [1, 1, 2]
