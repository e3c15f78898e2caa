"""``qubic admin tournament create|list|show|cancel`` on a SQLite database: what it writes,
prints and audits, and what it refuses (the server's side is tests/server/node/
test_tournaments.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from qubic_cli.admin_tournaments import start_time
from qubic_cli.main import main


def admin(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, Any]:
    code = main(["admin", "tournament", *argv, "--db", str(db), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else err


def test_create_list_show_and_cancel(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    db = tmp_path / "q.db"
    code, arena = admin(capsys, db, "create", "--name", "Evening", "--start", "+10",
                        "--minutes", "30", "--clock", "3+2", "--rated", "--computer", "3",
                        "--computer", "3")
    assert code == 0, arena
    assert (arena["kind"], arena["status"], arena["clock"], arena["rated"]) == (
        "arena", "created", "3+2", True)
    assert arena["ends_at"] - arena["starts_at"] == 1800 and arena["players"] == 2
    code, swiss = admin(capsys, db, "create", "--name", "Sunday", "--kind", "swiss",
                        "--rounds", "4", "--start", "2026-12-06T18:00")
    assert code == 0 and swiss["rounds"] == 4 and swiss["starts_at"] == 1796580000.0
    code, listed = admin(capsys, db, "list")
    assert [t["id"] for t in listed] == [arena["id"], swiss["id"]]
    code, shown = admin(capsys, db, "show", arena["id"])
    assert [row["name"] for row in shown["standings"]] == ["computer-3", "computer-3-2"]
    assert shown["info"] == arena and shown["games"] == []
    assert admin(capsys, db, "cancel", arena["id"], "--reason", "rain")[1] == {
        "cancelled": arena["id"]}
    code, again = admin(capsys, db, "cancel", arena["id"])
    assert code != 0 and "no tournament" in again
    code, log = main(["admin", "audit", "--db", str(db), "--json"]), None
    log = json.loads(capsys.readouterr().out)
    assert [(e["action"], e["target"]) for e in log] == [
        ("tournament-cancel", arena["id"]), ("tournament-create", swiss["id"]),
        ("tournament-create", arena["id"])]


def test_a_swiss_rounds_set_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                  ) -> None:
    import asyncio

    from server.store import tournaments as ops
    from server.store.factory import open_store

    db = tmp_path / "q.db"
    code, timed = admin(capsys, db, "create", "--name", "Timed", "--kind", "swiss",
                        "--rounds", "3", "--start", "+10", "--round-interval", "900")
    assert code == 0, timed
    code, listed = admin(capsys, db, "create", "--name", "Listed", "--kind", "swiss",
                         "--rounds", "3", "--start", "2026-12-06T18:00",
                         "--round-times", "2026-12-06T18:30,2026-12-06T19:00")
    assert code == 0, listed

    async def read(tid: str) -> ops.TournamentRecord:
        store = await open_store(str(db))
        try:
            data = await store.query(ops.tournament_data(tid))
            assert data is not None
            return data.tournament
        finally:
            await store.close()

    assert asyncio.run(read(timed["id"])).round_interval == 900.0
    assert asyncio.run(read(listed["id"])).round_times == (1796581800.0, 1796583600.0)


@pytest.mark.parametrize("argv", [["--clock", "0+0"], ["--clock", "3"], ["--computer", "9"],
                                  ["--name", ""], ["--minutes", "0"],
                                  ["--round-interval", "60"],  # an arena's: refused
                                  ["--kind", "swiss", "--round-interval", "1"],
                                  ["--kind", "swiss", "--start", "+10", "--round-times", "+5"],
                                  ["--kind", "swiss", "--rounds", "2", "--start", "+1",
                                   "--round-times", "+5,+9"]])
def test_bad_terms_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               argv: list[str]) -> None:
    code, said = admin(capsys, tmp_path / "q.db", "create", "--name", "x", *argv)
    assert code != 0 and said


def test_start_times() -> None:
    assert start_time("+15", now=1000.0) == 1900.0
    assert start_time("2026-12-06T18:00+01:00") == 1796576400.0
    with pytest.raises(argparse.ArgumentTypeError):
        start_time("tomorrow")
