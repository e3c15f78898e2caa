"""Issue 13, "the server keeps its written word": each promise of docs/protocol.md and
docs/security.md that an outside client found broken, held against a live server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import websockets

from server.game.records import MoveRecord
from server.store.factory import open_store
from tests.server.servers import Client, Server, play, start_private_game


async def started(tmp_path: Path, **config: Any) -> Server:
    server = Server(tmp_path / "qubic.db", **config)
    await server.start()
    return server


async def connect(server: Server, headers: dict[str, str] | None = None) -> Client:
    assert server.running is not None
    ws = await websockets.connect(server.running.ws_url, max_size=None,
                                  additional_headers=headers)
    server.clients.append(ws)
    return Client(ws)


async def public_game(ann: Client, bob: Client) -> str:
    """``ann`` seeks as X and ``bob`` accepts: a game the lobby lists."""
    seeking = await ann.request(t="seek", colour="x")
    await bob.send(t="accept_seek", seek=seeking["seek"]["id"])
    return (await ann.expect("game"))["id"]


# -- item 1: look-alike names ----------------------------------------------------------------


async def test_a_name_with_a_trailing_newline_is_not_a_second_player(server: Server) -> None:
    await server.client("ann")
    eve = await server.client()
    refused = await eve.request(t="hello", name="ann\n")
    assert (refused["t"], refused["code"]) == ("error", "bad_name")
    assert (await eve.request(t="hello", name="ANN"))["code"] == "name_taken"


# -- items 3, 4, 6, 7: replies the document promises -------------------------------------------


async def test_chat_with_an_id_is_acknowledged_after_its_broadcast(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    ref = await ann.send(t="chat", game=game, text="hi")
    line = await ann.expect("chat", game=game)
    ack = await ann.expect("ack", ref=ref)
    assert ann.seen.index(line) < ann.seen.index(ack) and "ref" not in line


async def test_rate_limited_says_which_frame_and_when_to_retry(tmp_path: Path) -> None:
    server = await started(tmp_path, rate=0.5, burst=3)
    try:
        eve = await server.client()
        for n in range(4):
            await eve.send(t="ping", id=f"p{n}")
        refused = await eve.error("rate_limited")
        assert refused["ref"] == "p3"
        assert 0 < refused["retry_in"] <= 2.0
    finally:
        await server.stop()


async def test_the_mover_hears_move_then_end_then_ack(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    for ply, cell in enumerate(["1a1", "2a1", "1b1", "2b1", "1c1", "2c1"]):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    ref = await ann.send(t="move", game=game, cell="1d1", ply=6)
    await ann.expect("ack", ref=ref)
    tail = [m["t"] for m in ann.seen[-3:]]
    assert tail == ["move", "end", "ack"]


async def test_ping_is_answered_before_hello(server: Server) -> None:
    eve = await server.client()
    assert (await eve.request(t="ping"))["t"] == "pong"
    assert (await eve.request(t="lobby_sub"))["code"] == "not_authenticated"


async def test_a_catch_up_ends_with_an_ack_and_repeats_no_version(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    seen = (await bob.expect("move", game=game))["version"]
    await bob.ws.close()
    await ann.expect("presence", game=game, online=False)
    await ann.request(t="chat", game=game, text="still there?")
    back = await server.client()
    await back.hello(token=bob.token)
    ref = await back.send(t="watch", game=game, since=seen)
    await back.expect("ack", ref=ref)
    caught = back.seen[1:-1]  # between the welcome and the ack
    assert [m["t"] for m in caught] == ["presence", "chat", "presence", "watching"]
    # the chat takes no version (it reaches the players only): it comes in its place; the
    # count of spectators, unversioned, ends the catch-up
    assert [m.get("version") for m in caught] == [seen + 1, None, seen + 2, None]
    assert [m["online"] for m in caught if m["t"] == "presence"] == [False, True]
    again = await back.send(t="watch", game=game, since=seen + 2)  # nothing missed
    assert (await back.recv())["t"] == "watching"  # only the count, then the ack
    assert (await back.recv())["t"] == "ack" and back.seen[-1]["ref"] == again


# -- item 14: a move is told to nobody before it is committed ---------------------------------


class HeldMoves:
    """The server's real store, except that ``record_move`` waits for ``release``."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.holding = asyncio.Event()
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def record_move(self, game_id: str, move: MoveRecord, **options: Any) -> None:
        self.holding.set()
        await self.release.wait()
        await self._store.record_move(game_id, move, **options)


async def test_no_ack_or_move_reaches_anyone_before_the_move_is_committed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "qubic.db"
    held = HeldMoves(await open_store(str(path)))
    server = Server(path, store=held)  # type: ignore[arg-type]
    await server.start()
    try:
        await _told_after_the_commit(server, held)
    finally:
        await server.stop()


async def _told_after_the_commit(server: Server, held: HeldMoves) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    eve = await server.client("eve")
    await eve.request(t="watch", game=game)
    ref = await ann.send(t="move", game=game, cell="1a1", ply=0)
    await asyncio.wait_for(held.holding.wait(), 20)
    heard = [m for c in (ann, bob, eve) for m in await c.quiet(0.5)]
    assert [m for m in heard if m["t"] in ("move", "ack")] == []
    held.release.set()
    await ann.expect("ack", ref=ref)
    for client in (ann, bob, eve):
        await client.expect("move", game=game, ply=1)
    record = await held.get_game(game)
    assert record is not None and record.cells == [0]
