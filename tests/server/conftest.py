"""The fixtures of the server's tests: a started server, three started cluster nodes, a store
on SQLite or PostgreSQL, and the server processes a test starts, killed after it (the helpers
they build on are in tests/server/servers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bench.harness import ServerProcess
from server.store.base import Store
from server.store.factory import open_store
from tests.server.servers import Nodes, Server


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    s = Server(tmp_path / "qubic.db")
    await s.start()
    yield s
    await s.stop()


@pytest_asyncio.fixture
async def nodes(redis_url: str, postgres_url: str) -> AsyncIterator[Nodes]:
    """Three started nodes, a, b and c; stopped after the test."""
    cluster = Nodes(redis_url, postgres_url)
    try:
        await cluster.start()
        yield cluster
    finally:
        await cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives, for the store tests that run on both: a SQLite file
    (``tmp_path / "qubic.db"``), or a fresh database on the test PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "qubic.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def store(database: str) -> AsyncIterator[Store]:
    """The store opened on ``database``, closed after the test."""
    opened = await open_store(database)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def processes() -> AsyncIterator[list[ServerProcess]]:
    """Server processes started by a test; killed at its end whatever happened, with every
    helper they started."""
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.close(kill=True)
