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
