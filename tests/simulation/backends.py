"""The servers a simulation runs against: one embedded server on a SQLite file (which can be
stopped and started again on the same file), or a two-node cluster on real Redis and
PostgreSQL. Both give the host's levers as ``qubic admin`` gives them, on the same database,
and a way to read the store the servers write."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from server.game.records import GameRecord
from server.http.app import RunningServer, ServerConfig, start_server
from server.store import pacing
from server.store.factory import open_store

# a short grace, so that claims come within a run
CONFIG: dict[str, Any] = {"computer_workers": 1, "computer_move_time": 0.05, "grace": 3.0}


def pace_always() -> None:
    """The SQLite stores opened from now on pace their loop after every group handed over
    (``server.store.pacing``): the simulation's few moves a second never reach the load at
    which a server paces, so this is how its checkers see a paced loop."""
    pacing.NAP_MIN = 1


class Backend:
    """Servers by node name; ``db`` is what ``qubic admin --db`` is given."""

    nodes: tuple[str, ...] = ()
    mode = ""  # "embedded" or "cluster": KNOWN_BUGS may name a checker on one of them only
    db: str = ""
    can_restart = False

    def __init__(self) -> None:
        self.running: dict[str, RunningServer] = {}

    def ws_url(self, node: str) -> str:
        return self.running[node].ws_url

    def http_url(self, node: str) -> str:
        return self.running[node].http_url

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        for node in list(self.running):
            await self.running.pop(node).stop()

    async def restart(self) -> None:
        raise NotImplementedError

    async def admin(self, *argv: str) -> tuple[int, Any]:
        """``qubic admin ARGV --db DB --json`` in-process (in a thread: it runs its own loop);
        its exit code and what it printed (JSON when it could be read so)."""
        from qubic_cli.main import main

        out, err = io.StringIO(), io.StringIO()

        def run() -> int:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    return main(["admin", *argv, "--db", self.db, "--json"])
                except SystemExit as stopped:
                    return int(stopped.code or 0)

        code = await asyncio.to_thread(run)
        text = out.getvalue()
        try:
            return code, json.loads(text)
        except ValueError:
            return code, (text + err.getvalue()).strip()

    async def games(self, ids: list[str]) -> dict[str, GameRecord | None]:
        """The stored records of ``ids``, read through a store of our own."""
        store = await open_store(self.db)
        try:
            return {game: await store.get_game(game) for game in ids}
        finally:
            await store.close()

    async def cleanup(self) -> None:
        await self.stop()


class Embedded(Backend):
    """One server on a SQLite file in a temporary directory of its own."""

    nodes = ("s",)
    mode = "embedded"
    can_restart = True

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="qubic-sim-"))
        self.db = str(self.directory / "qubic.db")

    async def start(self) -> None:
        self.running["s"] = await start_server(ServerConfig(port=0, db_path=self.db, **CONFIG))

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def cleanup(self) -> None:
        await self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class Cluster(Backend):
    """Two nodes, ``a`` and ``b``, on one Redis and one PostgreSQL database."""

    nodes = ("a", "b")
    mode = "cluster"

    def __init__(self, redis_url: str, postgres_url: str) -> None:
        super().__init__()
        self.redis_url = redis_url
        self.db = postgres_url

    async def start(self) -> None:
        for node in self.nodes:
            self.running[node] = await start_server(ServerConfig(
                port=0, node=node, redis_url=self.redis_url, db_path=self.db, lease_ttl=1.5,
                **CONFIG))
        for _ in range(200):  # until each node has seen the other
            seen = [r.hub.cluster.ownership.alive  # type: ignore[attr-defined]
                    for r in self.running.values() if r.hub.cluster is not None]
            if all(alive >= set(self.running) for alive in seen):
                return
            await asyncio.sleep(0.05)


class Services:
    """A Redis server and a PostgreSQL server of our own (outside pytest), for any number of
    runs: ``fresh()`` empties Redis and makes a new database; ``stop()`` ends both."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="qubic-sim-services-"))
        self.redis: Any = None
        self.postgres: Any = None

    async def start(self) -> None:
        from bench.harness.services import PostgresServer, RedisServer

        self.redis = RedisServer(self.directory / "redis")
        self.redis.start()
        (self.directory / "postgres").mkdir()
        self.postgres = await asyncio.to_thread(PostgresServer, self.directory / "postgres")

    async def fresh(self) -> tuple[str, str]:
        """``(redis_url, postgres_url)``: an empty Redis and a new database."""
        import redis.asyncio as aioredis

        from bench.harness.services import run_sql

        connection = aioredis.from_url(self.redis.url)
        try:
            await connection.flushall()
        finally:
            await connection.aclose()
        name = self.postgres.new_database_name()
        await asyncio.to_thread(run_sql, self.postgres.url(), f'CREATE DATABASE "{name}"')
        return self.redis.url, self.postgres.url(name)

    async def stop(self) -> None:
        if self.redis is not None:
            self.redis.stop()
        if self.postgres is not None:
            await asyncio.to_thread(self.postgres.stop)
        shutil.rmtree(self.directory, ignore_errors=True)


@contextlib.asynccontextmanager
async def cluster_services() -> AsyncIterator[Services]:
    """``Services`` started, and stopped after (also on an error)."""
    services = Services()
    try:
        await services.start()
        yield services
    finally:
        await services.stop()
