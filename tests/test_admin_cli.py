"""``qubic admin`` as a command: its help, its registry of subcommands (which another module
extends), and bad arguments refused in one line. What each lever does is tested against
running servers in tests/server/test_levers.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from qubic_cli import admin
from qubic_cli.main import main
from server.store.levers import roles_of


def test_the_help_lists_every_lever(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["admin", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("grant", "revoke-role", "ban", "unban", "mute", "unmute", "kick", "announce",
                 "end-game", "rename", "export-player", "delete-player", "audit"):
        assert f"    {name} " in out or f"    {name}\n" in out, name


def test_another_module_adds_a_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[str] = []

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    @admin.register("wave", "wave at a player", configure)
    async def wave(store: Any, args: argparse.Namespace) -> Any:
        seen.append(args.name)
        return {"waved at": args.name,
                "roles": sorted(await store.query(roles_of(args.name)))}

    try:
        code = main(["admin", "wave", "ann", "--db", str(tmp_path / "q.db")])
    finally:
        del admin.COMMANDS["wave"]
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
