"""Real Redis and PostgreSQL servers for the tests, started once per session on loopback.

The servers themselves (``RedisServer``, ``PostgresServer``, ``run_sql``) are in
``bench/harness/services.py``, shared with the benchmarks; this module holds the fixtures. Both
are stopped at the end of the session, also when tests fail, and in temporary directories of
their own. Should pytest itself be killed, they stop with it (see the harness).

Each test gets a clean slate: ``redis_url`` flushes the shared server, ``postgres_url`` is a
fresh database made for the test and dropped after it. Tests that restart Redis take their own
server from ``redis_factory``.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.harness.services import PostgresServer, RedisServer, run_sql


def _timed(what: str, start: Callable[[], Any]) -> Any:
    began = time.perf_counter()
    started = start()
    elapsed = time.perf_counter() - began
    # Shown with ``pytest -s`` or in the captured output of a failing test.
    print(f"\n[services] {what} started in {elapsed:.2f} s", file=sys.stderr)
    return started


@contextlib.contextmanager
def _stopping(servers: list[RedisServer]) -> Iterator[list[RedisServer]]:
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def redis_factory() -> Iterator[Callable[[], RedisServer]]:
    """Make Redis servers of the test's own (to stop and restart); stopped after the test."""
    with _private_directory("redis") as directory, _stopping([]) as made:

        def make() -> RedisServer:
            server = RedisServer(directory / str(len(made)))
            made.append(server)
            server.start()
            return server

        yield make


@contextlib.contextmanager
def _private_directory(what: str) -> Iterator[Path]:
    """A temporary directory of our own: not under pytest's basetemp, which a concurrent
    pytest run may prune while this session's servers still use it."""
    directory = Path(tempfile.mkdtemp(prefix=f"qubic-{what}-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """The session's shared Redis server."""
    with _private_directory("redis") as directory:
        server = RedisServer(directory)
        with _stopping([server]):
            _timed("redis-server", server.start)
            yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The shared Redis server, emptied for this test (and started again if a test stopped it)."""
    if redis_server.process is None or redis_server.process.poll() is not None:
        redis_server.process = None
        redis_server.start()
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=5) as conn:
        conn.sendall(b"FLUSHALL\r\n")
        assert conn.recv(16).startswith(b"+OK")
    return redis_server.url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server."""
    with _private_directory("postgres") as directory:
        server: PostgresServer = _timed("PostgreSQL", lambda: PostgresServer(directory))
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL server, dropped after the test."""
    name = postgres_server.new_database_name()
    run_sql(postgres_server.url(), f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.url(name)
    finally:
        run_sql(postgres_server.url(), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
