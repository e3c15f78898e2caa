"""``qubic serve`` with a database it cannot use: one clear line and exit code 2, no traceback."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import read_only

from server.sqlite_store import SQLiteStore


def serve(db: Path | str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db", str(db),
         "--ai-workers", "1"],
        capture_output=True, text=True, timeout=timeout,
    )


def assert_refused(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("qubic serve: error: ")
    assert words in result.stderr


def test_a_corrupt_database(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    db.write_bytes(b"this is not a database" * 100)
    assert_refused(serve(db), "not a SQLite database, or it is corrupt")


def test_a_missing_directory(tmp_path: Path) -> None:
    assert_refused(serve(tmp_path / "nowhere" / "q.db"), "cannot be opened")


def test_a_database_locked_by_another_writer(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    sqlite3.connect(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        assert_refused(serve(db), "locked by another process")
    finally:
        other.execute("ROLLBACK")
        other.close()


async def test_a_read_only_database(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    await (await SQLiteStore.open(db)).close()
    with read_only(db):
        assert_refused(serve(db), "read-only")
