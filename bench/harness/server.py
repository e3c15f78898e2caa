"""``qubic serve`` as a subprocess, as a host runs it: started on a port the system picks, ready
once it has said where it listens and answered ``/health``, stopped as a host stops it
(SIGTERM) or as a crash does (SIGKILL), and nothing of it left running at the end."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .procs import children, raise_fd_limit, tree_cpu_seconds

ROOT = Path(__file__).resolve().parents[2]

NO_LIMITS = ("--max-connections-per-address", "0", "--new-players-per-hour", "0")
"""Flags for a load generator: thousands of bots from one address, new names every second."""

ANNOUNCED = re.compile(rb"on (http://\S+) .* websocket (ws://\S+)")


class ServerProcess:
    """``python -m qubic_cli serve --port 0`` on the database file ``db`` with ``extra`` flags;
    knows its URLs, pid and log (stderr, beside the database).

    It runs in a process group of its own, so that :meth:`close` can reach every helper it
    started (resource tracker, fork server, computer workers) even after the server itself is gone.
    The port is the system's choice (``--port 0``) and read from the line the server prints:
    a port picked here could be taken before the server binds it."""

    def __init__(self, db: Path, *extra: str, computer_workers: int = 1,
                 log_level: str = "warning") -> None:
        self.db = db
        self.log = db.with_suffix(".log")
        self.args = [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db", str(db),
                     "--computer-workers", str(computer_workers), "--log-level", log_level, *extra]
        self.process: subprocess.Popen[bytes] | None = None
        self.http_url = ""
        self.ws_url = ""

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 120.0) -> ServerProcess:
        """Start the server; return once it has announced its URLs and answers ``/health``."""
        raise_fd_limit()  # the child inherits it: a server under load holds thousands of sockets
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.args, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                stdout=subprocess.PIPE, stderr=log, process_group=0,
            )
        deadline = time.monotonic() + timeout
        if self._read_urls(deadline) and self._healthy(deadline):
            return self
        self.close(kill=True)
        raise RuntimeError(f"the server did not start; see {self.log}:\n"
                           + self.log.read_text(errors="replace")[-2000:])

    def _read_urls(self, deadline: float) -> bool:
        """Read the server's output until its ``Qubic server on <http> — websocket <ws>``."""
        assert self.process is not None and self.process.stdout is not None
        stdout, seen = self.process.stdout.fileno(), b""
        while time.monotonic() < deadline and self.process.poll() is None:
            ready, _, _ = select.select([stdout], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(stdout, 4096)
            if not chunk:
                return False
            seen += chunk
            match = ANNOUNCED.search(seen)
            if match:
                self.http_url, self.ws_url = (url.decode() for url in match.groups())
                return True
        return False

    def _healthy(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), \
                    urllib.request.urlopen(f"{self.http_url}/health", timeout=10) as reply:
                return reply.status == 200
            time.sleep(0.1)
        return False

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as {series: value}."""
        with urllib.request.urlopen(f"{self.http_url}/metrics", timeout=10) as reply:
            text = reply.read().decode()
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def metrics_or_nothing(self, failures: list[str]) -> dict[str, float]:
        """``metrics()``, or {} with the reason added to ``failures`` (a dead server's log)."""
        try:
            return self.metrics()
        except OSError as error:
            assert self.process is not None
            code = self.process.poll()
            tail = self.log.read_text()[-1500:] if code is not None else ""
            failures.append(f"no /metrics ({error}); server exit code {code}\n{tail}")
            return {}

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU seconds of the server process, and of everything below it (computer workers)."""
        return tree_cpu_seconds(self.pid)

    def computer_workers(self) -> list[int]:
        """The computer workers: the children of the fork server, itself a child of the server."""
        return [pid for child in children(self.pid) for pid in children(child)]

    def stop(self, *, kill: bool = False, timeout: float = 30.0) -> int | None:
        """SIGTERM (a clean shutdown: the server stops its helpers) or SIGKILL (a crash, as the
        OOM killer does it: the server alone, its helpers left to notice); returns the exit
        code. Either way SIGKILL after ``timeout`` seconds."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, as a crash or the OOM killer would do it."""
        self.stop(kill=True)

    def close(self, *, kill: bool = False) -> int | None:
        """:meth:`stop`, then SIGKILL whatever is left of the server's process group (helpers
        that outlived it): a bench or a test leaves nothing running. Returns the exit code."""
        code = self.stop(kill=kill)
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        return code
