"""``qubic puzzles``: puzzles harvested from a server's finished games (the games and moves
tables), and the check of a puzzle file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine import Board
from engine.puzzles.mate import WIN, load_puzzles, save_puzzles
from qubic_cli.main import main
from server.game.records import MoveRecord, Seat
from server.store.factory import open_store

# X forks at 1a1 (rows 1c1-1d1 and 1a3-1a4 of level 1), O blocks 1b1, X completes column a
FORKED = "1c1 4d4 1d1 4c4 1a3 4b3 1a4 4d2 1a1 1b1 1a2"


async def store_a_game(path: Path) -> None:
    store = await open_store(path)
    try:
        board = Board.from_notation("4x4x4", FORKED)
        outcome = board.outcome()
        assert outcome is not None and outcome.winner == 0
        game = await store.create_game(variant="4x4x4", x=Seat("ann"), o=Seat(None, 3),
                                       clock=None, rated=False, now=1.0)
        for ply, cell in enumerate(board.moves, 1):
            await store.record_move(game.id, MoveRecord(ply, cell, None, None, 1.0 + ply))
        await store.finish_game(game.id, result="1-0", reason="line", now=20.0,
                                winning_line=outcome.line)
        # an aborted game is no source
        other = await store.create_game(variant="4x4x4", x=Seat("ann"), o=Seat(None, 3),
                                        clock=None, rated=False, now=30.0)
        await store.abort_game(other.id, reason="abort", now=31.0)
    finally:
        await store.close()


def test_puzzles_from_the_servers_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    db = tmp_path / "qubic.db"
    asyncio.run(store_a_game(db))
    out = tmp_path / "found.json"
    code = main(["puzzles", "generate", "--source", "db", "--db", str(db), "--games", "10",
                 "--out", str(out), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 1 and report["candidates"] >= 1
    found = load_puzzles(out)
    win = next(p for p in found if p.kind == WIN)
    assert win.moves == 2 and win.source.startswith("game ")
    assert Board("4x4x4", win.position).notation() == " ".join(FORKED.split()[:8])
    assert 0 in win.first_moves  # 1a1, the fork
    # and the file checks out, and goes into the server's database (after the starting set)
    assert main(["puzzles", "check", str(out), "--json"]) == 0
    capsys.readouterr()
    assert main(["puzzles", "add", str(out), "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == len(found)
    assert main(["puzzles", "add", str(out), "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 0
    broken = load_puzzles(out)
    broken[0].solution.accepted.clear()
    save_puzzles(broken, out)
    assert main(["puzzles", "check", str(out), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["wrong"]
