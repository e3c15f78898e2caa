"""``/health/live`` and ``/health/ready`` (issue 28): ready turns 503 with its reasons when the
database cannot be written (a full disk, here SQLite's page limit) or the server is shutting
down, and 200 again once it can; what was acknowledged is kept, the refusal names no path,
and /metrics counts the refused writes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from server.errors import StoreError
from server.protocol import PUBLIC_MESSAGES
from server.store.sqlite import SQLiteStore
from tests.server.servers import Server, play, start_private_game


async def get(server: Server, path: str) -> tuple[int, Any]:
    assert server.running is not None
    async with aiohttp.ClientSession() as session, session.get(
            server.running.http_url + path) as response:
        body = await response.json() if path.startswith("/health") else await response.text()
        return response.status, body


async def test_ready_follows_a_database_that_refuses_writes_and_takes_them_again(
        server: Server) -> None:
    """SQLite refusing every write (``query_only``, as a read-only filesystem does) during a
    game: the move is refused with words that name no path, ready is 503 with the reason,
    /metrics counts it; once writes are taken again the move is played and ready is 200."""
    assert server.running is not None
    store: Any = server.running.store
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    status, body = await get(server, "/health/live")
    assert status == 200 and body["status"] == "ok"
    assert await get(server, "/health/ready") == (200, {"status": "ready"})

    await store._submit(lambda c: c.execute("PRAGMA query_only = ON"))
    await bob.send(t="move", game=game, cell="4d4", ply=1)
    refused = await bob.error("store_unavailable")
    assert refused["message"] == PUBLIC_MESSAGES["store_unavailable"]
    assert str(server.path.parent) not in refused["message"]
    status, body = await get(server, "/health/ready")
    assert status == 503 and body["reasons"] == ["the database cannot be written"]
    assert (await get(server, "/health/live"))[0] == 200
    _, text = await get(server, "/metrics")
    failures = [line for line in text.splitlines()
                if line.startswith("qubic_store_write_failures_total ")]
    assert failures and float(failures[0].split()[1]) >= 1

    # The writer is idle (the refused move was its last write): switch it back by hand, as
    # a write in its queue would fail to begin.
    store._writer_conn.execute("PRAGMA query_only = OFF")
    # Ready again at once: the check tries a write itself, not waiting for a player's.
    assert await get(server, "/health/ready") == (200, {"status": "ready"})
    await play(bob, game, "4d4", 1)  # the refused move, played again: the game goes on
    await ann.expect("move", ply=2)
    await play(ann, game, "1a2", 2)
    record = await store.get_game(game)
    assert record is not None and [m.cell for m in record.moves] == [0, 63, 4]


async def test_a_full_database_is_not_ready_until_it_has_room(tmp_path: Path) -> None:
    """SQLite's page limit reached (its "database or disk is full"): the store marks itself
    unwritable, counts the refusal, is writable again once a write succeeds, and every write it
    acknowledged is kept. (Under the page limit a small write can still fit in a page, so
    readiness is tested with a database that refuses every write, above.)"""
    async with await SQLiteStore.open(tmp_path / "q.db") as store:
        pages = await store._submit(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
        await store._submit(lambda c: c.execute(f"PRAGMA max_page_count = {pages}").fetchone())
        made = []
        with pytest.raises(StoreError) as refused:
            for number in range(10_000):
                await store.create_player(f"p{number}", 0.0)
                made.append(f"p{number}")
        assert refused.value.code == "store_unavailable" and made
        assert store.write_failing is not None and store.write_failures >= 1
        await store._submit(lambda c: c.execute("PRAGMA max_page_count = 1000000").fetchone())
        await store.create_player("after", 0.0)
        assert store.write_failing is None and await store.check() is None
        for name in [*made, "after"]:
            assert await store.get_player(name) is not None


async def test_ready_says_when_the_server_is_shutting_down(server: Server) -> None:
    assert server.running is not None
    server.running.hub.rooms.closing = True
    try:
        status, body = await get(server, "/health/ready")
        assert status == 503 and body["reasons"] == ["the server is shutting down"]
    finally:
        server.running.hub.rooms.closing = False


async def test_ready_says_when_the_database_is_gone(server: Server) -> None:
    assert server.running is not None
    await server.running.store.close()
    status, body = await get(server, "/health/ready")
    assert status == 503 and body["reasons"] == ["the database does not answer"]
    assert (await get(server, "/health"))[0] == 200  # /health answers as documented


async def test_a_drain_tells_the_players_before_the_server_stops(tmp_path: Path) -> None:
    """``qubic serve --drain-after S`` at SIGTERM: every player hears ``announce`` with
    ``restart_in`` S, no new game starts, a game going on is played, ready turns 503, and the
    connections close (1001) only after that."""
    import json
    import os
    import re
    import signal
    import subprocess
    import sys

    import websockets

    root = Path(__file__).resolve().parents[3]
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUBIC_")}
    server = subprocess.Popen(
        [sys.executable, "-m", "qubic_cli", "serve", "--port", "0", "--computer-workers", "1",
         "--db", str(tmp_path / "q.db"), "--drain-after", "3"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        line = await asyncio.to_thread(server.stdout.readline)
        http = re.search(r"(http://\S+?)\s", line)
        assert http, line
        base = http.group(1)
        ws_url = base.replace("http://", "ws://") + "/ws"
        async with websockets.connect(ws_url) as ann, websockets.connect(ws_url) as bob:
            async def request(ws: Any, **message: Any) -> dict[str, Any]:
                await ws.send(json.dumps(message))
                while True:
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if reply.get("ref") == message.get("id") or reply["t"] == "error":
                        return reply

            await request(ann, t="hello", name="ann", id=1)
            await request(bob, t="hello", name="bob", id=1)
            created = await request(ann, t="private_create", colour="x", id=2)
            await bob.send(json.dumps({"t": "private_join", "code": created["code"], "id": 2}))
            game = None
            while game is None:
                message = json.loads(await asyncio.wait_for(ann.recv(), 30))
                game = message["id"] if message["t"] == "game" else None
            server.send_signal(signal.SIGTERM)
            while True:
                message = json.loads(await asyncio.wait_for(ann.recv(), 30))
                if message["t"] == "announce":
                    break
            assert message["restart_in"] == 3 and "restarts in 3 seconds" in message["text"]
            refused = await request(ann, t="seek", id=3)
            assert refused["t"] == "error" and refused["code"] == "shutting_down"
            played = await request(ann, t="move", game=game, cell="1a1", ply=0, id=4)
            assert played["t"] == "ack"
            async with aiohttp.ClientSession() as session, session.get(
                    base + "/health/ready") as response:
                assert response.status == 503
                assert (await response.json())["reasons"] == [
                    "the server is draining before a restart"]
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ann.recv(), 30)
            # closed only now: the seek refused and the move played above were answered
            # during the drain, after the announce (a server that stopped at once had not)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert await asyncio.to_thread(server.wait, 30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


async def test_the_other_party_of_a_refused_start_is_told(server: Server) -> None:
    """A private room's creator hears it when the game cannot start (the database refuses to
    write it), not only the player who joined."""
    assert server.running is not None
    store: Any = server.running.store
    ann, bob = await server.client("ann"), await server.client("bob")
    created = await ann.request(t="private_create", colour="x")
    await store._submit(lambda c: c.execute("PRAGMA query_only = ON"))
    await bob.send(t="private_join", code=created["code"])
    assert (await bob.error("store_unavailable"))["message"] == PUBLIC_MESSAGES[
        "store_unavailable"]
    told = await ann.error("store_unavailable")
    assert told["message"] == PUBLIC_MESSAGES["store_unavailable"] and told.get("ref") is None
    store._writer_conn.execute("PRAGMA query_only = OFF")
