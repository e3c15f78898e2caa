"""``qubic serve`` with a database it cannot use: one clear line and exit code 2, no traceback."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.store.sqlite import SQLiteStore
from tests.server.servers import read_only


def serve(db: Path | str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db", str(db),
         "--computer-workers", "1"],
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


def test_computer_nice_defaults_to_the_pools_and_is_parsed() -> None:
    from qubic_cli.main import build_parser
    from server.computer.local import DEFAULT_NICE
    from server.http.app import ServerConfig

    assert ServerConfig().computer_nice == DEFAULT_NICE
    assert build_parser().parse_args(["serve"]).computer_nice is None  # ServerConfig's default
    assert build_parser().parse_args(["serve", "--computer-nice", "0"]).computer_nice == 0


@pytest.mark.parametrize(("argv", "environ", "file"), [
    (["--computer-workers", "3", "--computer-nice", "4", "--computer-time", "0.5"], {}, ""),
    (["--ai-workers", "3", "--ai-nice", "4", "--computer-time", "0.5"], {}, ""),
    ([], {"QUBIC_COMPUTER_WORKERS": "3", "QUBIC_COMPUTER_NICE": "4",
          "QUBIC_COMPUTER_TIME": "0.5"}, ""),
    ([], {"QUBIC_AI_WORKERS": "3", "QUBIC_AI_NICE": "4", "QUBIC_AI_TIME": "0.5"}, ""),
    ([], {}, "computer_workers = 3\ncomputer_nice = 4\ncomputer_time = 0.5\n"),
    ([], {}, "ai_workers = 3\nai_nice = 4\nai_time = 0.5\n"),
])
def test_the_computer_options_keep_their_former_ai_names(
    tmp_path: Path, argv: list[str], environ: dict[str, str], file: str,
) -> None:
    """docs/operations.md: the --computer-* options were --ai-* (QUBIC_AI_*, ai_* in the
    file); the former spellings still work, as flags, variables and keys."""
    from qubic_cli.main import build_parser
    from qubic_cli.serve import SETTINGS, server_config
    from qubic_cli.settings import apply

    if file:
        (tmp_path / "q.toml").write_text(file)
        argv = [*argv, "--config", str(tmp_path / "q.toml")]
    args = build_parser().parse_args(["serve", *argv])
    apply(args.parser, SETTINGS, "serve", args, argv, environ)
    config = server_config(args)
    assert (config.computer_workers, config.computer_nice, config.computer_move_time) == (
        3, 4, 0.5)


def test_computer_nice_out_of_range(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db",
         str(tmp_path / "q.db"), "--computer-nice", "20"],
        capture_output=True, text=True, timeout=60,
    )
    assert_refused(result, "--computer-nice must be 0-19")


def test_address_limits_are_on_by_default_and_parsed() -> None:
    from qubic_cli.main import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.max_connections_per_address, args.new_players_per_hour) == (64, 30)
    assert args.trusted_proxy == [] and args.abandon_after == 600.0
    args = build_parser().parse_args(
        ["serve", "--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "::1",
         "--max-connections-per-address", "0", "--abandon-after", "30"]
    )
    assert args.trusted_proxy == ["10.0.0.0/8", "::1"] and args.max_connections_per_address == 0
    assert args.abandon_after == 30.0


def test_a_trusted_proxy_that_is_no_address(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--db",
         str(tmp_path / "q.db"), "--trusted-proxy", "proxy.example.org"],
        capture_output=True, text=True, timeout=60,
    )
    assert_refused(result, "--trusted-proxy 'proxy.example.org' is not an address or network")
