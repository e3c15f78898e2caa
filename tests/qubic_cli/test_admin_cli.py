"""``qubic admin`` as a command: its help, its registry of subcommands (which another module
extends), and bad arguments refused in one line. What each lever does is tested against
running servers in tests/server/node/test_levers.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from qubic_cli import admin
from qubic_cli.main import main
from server.store.lever_records import roles_of


def test_the_help_lists_every_lever(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["admin", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    names = ["grant", "revoke", "revoke-role", "ban", "unban", "mute", "unmute", "kick",
             "announce", "end-game", "remove-chat", "rename", "export-player", "delete-player",
             "audit", "sanctions", "reports", "tournament"]
    assert list(admin.COMMANDS) == names  # the table, in the order the help lists it
    for name in [*names, "reset-password"]:
        assert f"    {name} " in out or f"    {name}\n" in out, name


def test_a_line_in_the_table_is_a_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    async def wave(store: Any, args: argparse.Namespace) -> Any:
        seen.append(args.name)
        return {"waved at": args.name,
                "roles": sorted(await store.query(roles_of(args.name)))}

    monkeypatch.setitem(admin.COMMANDS, "wave",
                        admin.AdminCommand("wave", "wave at a player", configure, wave))
    code = main(["admin", "wave", "ann", "--db", str(tmp_path / "q.db")])
    assert code == 0 and seen == ["ann"]
    assert capsys.readouterr().out == "waved at: ann\nroles: []\n"


@pytest.mark.parametrize(("argv", "words"), [
    (["ban", "ann"], "--reason"),  # a ban says why
    (["mute", "ann", "--for", "5y"], "not a duration"),
    (["end-game", "g1", "--result", "maybe"], "invalid choice"),
])
def test_bad_arguments_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str,
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["admin", *argv, "--db", str(tmp_path / "q.db")])
    assert exit_info.value.code == 2
    assert words in capsys.readouterr().err


def test_a_lever_on_nobody_fails_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["admin", "kick", "nobody", "--db", str(tmp_path / "q.db")]) == 2
    assert capsys.readouterr().err == "qubic admin kick: error: no player 'nobody'\n"
    assert main(["admin", "rename", "nobody", "not a name", "--db", str(tmp_path / "q.db")]) == 2
    assert "is not a name" in capsys.readouterr().err


LEVERS_THAT_READ = {"export-player", "audit", "sanctions", "reports"}


def test_every_lever_takes_a_reason() -> None:
    """docs/admin.md: `--reason TEXT` goes into the audit log, on every lever."""
    from qubic_cli.main import build_parser

    parser = build_parser(only="admin")
    arguments = {"grant": ["ann", "moderator"], "revoke-role": ["ann", "moderator"],
                 "revoke": ["ann", "bot"],
                 "ban": ["ann"], "unban": ["ann"], "mute": ["ann"], "unmute": ["ann"],
                 "kick": ["ann"], "announce": ["hello"], "end-game": ["g1", "--result", "x"],
                 "remove-chat": ["g1", "9"],
                 "rename": ["ann", "bea"], "delete-player": ["ann"],
                 "tournament": ["cancel", "T1"]}
    levers = set(admin.COMMANDS) - LEVERS_THAT_READ
    assert levers <= set(arguments), sorted(levers - set(arguments))
    for name in sorted(levers):
        args = parser.parse_args(["admin", name, *arguments[name], "--reason", "why not"])
        assert args.reason == "why not", name


def test_the_reason_is_logged_and_the_audit_log_is_printed_for_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    import asyncio
    import json
    import re

    from server.store.sqlite import SQLiteStore

    db = str(tmp_path / "q.db")

    async def ann() -> None:
        async with await SQLiteStore.open(db) as store:
            await store.create_player("ann", 0.0)

    asyncio.run(ann())
    assert main(["admin", "grant", "ann", "moderator", "--reason", "helps out", "--db", db]) == 0
    assert main(["admin", "announce", "restart at six", "--reason", "upgrade", "--db", db]) == 0
    capsys.readouterr()
    assert main(["admin", "audit", "--db", db, "--json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [(e["action"], e["reason"]) for e in log] == [("announce", "upgrade"),
                                                        ("grant", "helps out")]
    assert all(isinstance(e["at"], float) for e in log)  # --json: Unix seconds, for programs
    assert main(["admin", "audit", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert re.search(r"at: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC  actor: cli", lines[1]), lines
    assert "action: grant" in lines[1] and "reason: helps out" in lines[1]
    assert not re.search(r"\b\d{10}\.\d", "\n".join(lines))  # no Unix seconds for people


def test_an_admin_command_loads_no_other_command() -> None:
    """Only the command named is imported and configured: none of the engine's players (and
    numba) for their help, as `qubic arena` and `qubic analyse` need (bench/cli_start.py)."""
    import subprocess
    import sys

    code = ("import sys\nfrom qubic_cli.main import build_parser\n"
            "build_parser(only='admin').parse_args(['admin', 'audit'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('engine', 'numba', 'numpy', 'aiohttp', 'textual') or m.startswith('qubic_cli.')))")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["qubic_cli.admin", "qubic_cli.admin_accounts",
                                       "qubic_cli.admin_tournaments", "qubic_cli.common",
                                       "qubic_cli.main", "qubic_cli.settings"])


def test_an_admin_lever_runs_without_the_engine_or_numpy(tmp_path: Path) -> None:
    """`qubic admin` answers quickly (bench/cli_start.py) because a lever, a read and the
    store they open import no engine player, no numpy and no numba: checked on real runs."""
    import subprocess
    import sys

    db = str(tmp_path / "q.db")
    code = ("import sys\nfrom qubic_cli.main import main\n"
            f"assert main(['admin', 'announce', 'hello', '--reason', 'r', '--db', {db!r}]) == 0\n"
            f"assert main(['admin', 'audit', '--db', {db!r}]) == 0\n"
            f"assert main(['admin', 'kick', 'nobody', '--db', {db!r}]) == 2\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numpy')"
            " or m.startswith('engine.players') or m == 'engine.rules.board'))")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
