"""The server on either event loop (``--event-loop``, issue 30): uvloop, the default where it
is installed, and Python's own asyncio loop. On each, a real server process says which loop
it runs (``/health``), two players play a game to its end, and a SIGTERM stops it cleanly
with every move in the database."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path

import pytest
import websockets

from bench.harness import ServerProcess
from server.http.loop import uvloop_installed
from tests.server.servers import Client

X_WINS = ["1a1", "4d4", "1b1", "4d3", "1c1", "4d2", "1d1"]  # X takes the row 1a1-1d1


def health(server: ServerProcess) -> dict[str, object]:
    url = server.ws_url.replace("ws://", "http://").removesuffix("/ws") + "/health"
    with urllib.request.urlopen(url, timeout=10) as reply:
        answer: dict[str, object] = json.load(reply)
        return answer


@pytest.mark.parametrize("event_loop", ["uvloop", "asyncio"])
async def test_a_game_is_played_to_its_end_on_either_event_loop(
        tmp_path: Path, event_loop: str) -> None:
    if event_loop == "uvloop" and not uvloop_installed():
        pytest.skip("uvloop is not installed here (it does not run on Windows)")
    server = ServerProcess(tmp_path / "q.db", "--event-loop", event_loop).start()
    try:
        assert health(server)["event_loop"] == event_loop
        ann = Client(await websockets.connect(server.ws_url))
        bob = Client(await websockets.connect(server.ws_url))
        await ann.hello("ann")
        await bob.hello("bob")
        created = await ann.request(t="private_create", colour="x")
        await bob.send(t="private_join", code=created["code"])
        game = (await ann.expect("game"))["id"]
        await bob.expect("game", id=game)
        for ply, cell in enumerate(X_WINS):
            mover, other = (ann, bob) if ply % 2 == 0 else (bob, ann)
            ref = await mover.send(t="move", game=game, cell=cell, ply=ply)
            await mover.expect("ack", ref=ref)
            await other.expect("move", game=game, ply=ply + 1)  # the count after it
        end = await bob.expect("end", game=game)
        assert end["result"] == "1-0"
        await ann.ws.close()
        await bob.ws.close()
    finally:
        code = server.close()
    assert code == 0
    with sqlite3.connect(tmp_path / "q.db") as db:
        moves = db.execute("SELECT COUNT(*) FROM moves WHERE game_id = ?", (game,)).fetchone()
        result = db.execute("SELECT result FROM games WHERE id = ?", (game,)).fetchone()
    assert moves == (len(X_WINS),) and result == ("1-0",)


def test_the_loop_option_is_checked(tmp_path: Path) -> None:
    """``qubic config check serve`` knows the option and refuses a loop that is not one."""
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "config", "check", "serve", "--event-loop",
         "asyncio"], capture_output=True, text=True, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "event_loop" in shown.stdout and "asyncio" in shown.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "serve", "--event-loop", "tokio"],
        capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode == 2 and "--event-loop" in refused.stderr
