"""Input the protocol promises to refuse cleanly (issue 36, item 8), sent to a real server by
real clients: JSON nested a thousand deep, a flood of websocket pings, chat that draws nothing,
and one player's chat from many sockets at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from websockets.exceptions import ConnectionClosed

from server.protocol import CHAT_BURST, CHAT_PER_SECOND
from tests.server.servers import Server, start_private_game

NESTED = "[" * 1000 + "]" * 1000  # 2 KB


async def test_json_nested_a_thousand_deep_is_bad_json_and_the_connection_stays(
    server: Server, caplog: pytest.LogCaptureFixture,
) -> None:
    ann = await server.client("ann")
    for frame, code in (('{"a":' * 1000 + "1" + "}" * 1000, "bad_json"),  # the report's 6 KB
                        ('{"x": ' + NESTED + ', "t": "ping"}', "bad_json"),
                        ('{"t": "chat", "id": 5, "x": ' + NESTED + "}", "bad_message"),
                        ('{"t": "ping", "id": ' + NESTED + "}", "bad_message"),
                        (NESTED, "bad_message")):  # refused as their shallow kin are
        await ann.ws.send(frame)
        refusal = await ann.expect("error")
        assert refusal["code"] == code, refusal
    assert (await ann.request(t="ping"))["t"] == "pong"
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_nested_body_on_http_is_refused_not_a_server_error(server: Server) -> None:
    ann = await server.client("ann")
    assert server.running is not None
    async with aiohttp.ClientSession() as http, http.post(
            server.running.http_url + "/api/puzzles/1/attempt", data=NESTED,
            headers={"Authorization": f"Bearer {ann.token}"}) as reply:
        assert reply.status == 400, await reply.text()
        assert (await reply.json())["code"] == "bad_message"


async def test_a_flood_of_pings_is_closed_with_1008_while_others_go_on(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    flooder = await server.client("flood")
    with pytest.raises(ConnectionClosed):
        for n in range(3000):
            await flooder.ws.ping(n.to_bytes(2, "big"))
        while True:  # the refusal, then the close
            await flooder.recv(5)
    assert flooder.ws.close_code == 1008
    assert any(m.get("code") == "rate_limited" for m in flooder.seen), flooder.seen
    await ann.send(t="move", game=game, cell="1a1", ply=0)
    assert (await bob.expect("move"))["notation"] == "1a1"


async def test_pings_within_the_rate_are_answered(server: Server) -> None:
    ann = await server.client("ann")
    for n in range(5):
        await asyncio.wait_for(await ann.ws.ping(bytes([n])), 5)
    assert (await ann.request(t="ping"))["t"] == "pong"


@pytest.mark.parametrize("text", ["\u3164", "\u2800\u2800", "gg" + "\u0301" * 296,
                                  "line\u2028break"])
async def test_chat_that_draws_nothing_is_bad_chat_and_the_connection_stays(
    server: Server, text: str,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    refusal = await ann.request(t="chat", game=game, text=text)
    assert (refusal["t"], refusal["code"]) == ("error", "bad_chat"), refusal
    assert (await ann.request(t="chat", game=game, text="gg"))["t"] == "ack"
    assert [m["text"] for m in await bob.quiet() if m["t"] == "chat"] == ["gg"]


async def test_the_heartbeat_still_holds_a_client_that_answers_its_pings(
    tmp_path: Path,
) -> None:
    s = Server(tmp_path / "qubic.db", heartbeat=0.2)  # a ping every 0.2 s of silence
    await s.start()
    try:
        ann = await s.client("ann")
        await asyncio.sleep(1.5)  # seven pings, each to be answered within 0.1 s
        assert (await ann.request(t="ping"))["t"] == "pong"
    finally:
        await s.stop()


async def test_the_heartbeat_cuts_a_client_that_does_not_answer_its_ping(
    tmp_path: Path,
) -> None:
    """A ping after ``heartbeat`` seconds without a frame, then half that for anything to
    come back: the connection is cut, with no close frame (docs/security.md: 1006), and a
    frame sent meanwhile puts the ping off."""
    s = Server(tmp_path / "qubic.db", heartbeat=0.4)
    await s.start()
    assert s.running is not None
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(
                s.running.ws_url, autoping=False) as ws:
            started = asyncio.get_running_loop().time()
            for _ in range(3):  # a frame every 0.2 s: no ping
                await asyncio.sleep(0.2)
                await ws.send_str('{"t": "ping"}')
                assert (await ws.receive(timeout=1)).type is aiohttp.WSMsgType.TEXT
            talked = asyncio.get_running_loop().time()
            frame = await ws.receive(timeout=2)
            assert frame.type is aiohttp.WSMsgType.PING  # 0.4 s after the last frame
            pinged = asyncio.get_running_loop().time()
            assert pinged - talked >= 0.35 and pinged - started >= 0.9
            frame = await ws.receive(timeout=2)  # not answered: cut 0.2 s later
            assert frame.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                  aiohttp.WSMsgType.ERROR), frame
            assert ws.close_code == 1006
            assert 0.15 <= asyncio.get_running_loop().time() - pinged < 1.5
    finally:
        await s.stop()


async def test_one_players_chat_is_rated_over_all_their_sockets_and_the_sockets_stay(
    server: Server,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    sockets = [ann]
    for _ in range(4):
        more = await server.client()
        await more.hello(token=ann.token)
        await more.request(t="watch", game=game)
        sockets.append(more)
    answers = [await sockets[n % 5].request(t="chat", game=game, text=f"line {n}")
               for n in range(CHAT_BURST + 3)]
    assert [a["t"] for a in answers[:CHAT_BURST]] == ["ack"] * CHAT_BURST
    refused = answers[CHAT_BURST:]
    assert {(a["t"], a["code"]) for a in refused} == {("error", "chat_too_fast")}, refused
    assert all(0 < a["retry_in"] <= 1 / CHAT_PER_SECOND for a in refused)
    for socket in sockets:  # refused, not closed
        assert (await socket.request(t="ping"))["t"] == "pong"
    assert (await bob.request(t="chat", game=game, text="calm down"))["t"] == "ack"
    await bob.quiet()
    heard = [m["text"] for m in bob.seen if m["t"] == "chat"]
    assert heard == [f"line {n}" for n in range(CHAT_BURST)] + ["calm down"]
