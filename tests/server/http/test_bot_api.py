"""The bot API (issue 43, item 3; docs/bots.md) end to end on one server: the bot role, the
event and game streams as NDJSON, moves, chat and resignations posted with the bearer token,
challenges made and answered over HTTP, bots kept out of pairing, and a ban that ends a
bot's streams."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from tests.eventually import eventually
from tests.server.node.test_levers import admin
from tests.server.servers import Client, Server

WAIT = 20.0


class Stream:
    """An NDJSON stream of the bot API: its lines as dicts (keep-alive lines counted apart)."""

    def __init__(self, reply: aiohttp.ClientResponse) -> None:
        self.reply = reply
        self.keep_alives = 0

    async def next(self, timeout: float = WAIT) -> dict[str, Any] | None:
        """The next event (None: the stream ended)."""
        while True:
            line = await asyncio.wait_for(self.reply.content.readline(), timeout)
            if not line:
                return None
            if not line.strip():
                self.keep_alives += 1
                continue
            event: dict[str, Any] = json.loads(line)
            return event

    async def expect(self, kind: str, timeout: float = WAIT) -> dict[str, Any]:
        """The next event of type ``kind`` (others are passed over)."""
        while True:
            event = await self.next(timeout)
            assert event is not None, f"the stream ended before a {kind}"
            if event["type"] == kind:
                return event


@pytest_asyncio.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        yield session


def url(server: Server, path: str) -> str:
    assert server.running is not None
    return server.running.http_url + path


def bearer(token: str | None) -> dict[str, str]:
    assert token is not None
    return {"Authorization": f"Bearer {token}"}


async def post(http: aiohttp.ClientSession, server: Server, path: str, token: str | None,
               body: Any = None) -> tuple[int, Any]:
    async with http.post(url(server, path), headers=bearer(token),
                         data=None if body is None else json.dumps(body)) as reply:
        return reply.status, await reply.json()


async def stream(http: aiohttp.ClientSession, server: Server, path: str,
                 token: str | None) -> Stream:
    reply = await http.get(url(server, path), headers=bearer(token))
    assert reply.status == 200, await reply.text()
    assert reply.content_type == "application/x-ndjson"
    return Stream(reply)


async def bot_account(server: Server, name: str = "robo") -> Client:
    """A player made a bot by the host (``qubic admin grant NAME bot``)."""
    client = await server.client(name)
    assert (await admin(server, "grant", name, "bot"))[0] == 0
    return client


async def test_a_bot_accepts_a_challenge_and_plays_it_over_the_streams(
        server: Server, http: aiohttp.ClientSession) -> None:
    robo = await bot_account(server)
    ann = await server.client("ann")
    events = await stream(http, server, "/api/stream/event", robo.token)
    await ann.send(t="challenge", name="robo", variant="4x4", colour="x")
    challenge = (await events.expect("challenge"))["challenge"]
    assert (challenge["by"], challenge["to"], challenge["variant"]) == ("ann", "robo", "4x4")
    status, accepted = await post(http, server, f"/api/challenge/{challenge['id']}/accept",
                                  robo.token)
    assert status == 200, accepted
    game_id = accepted["game"]
    start = (await events.expect("gameStart"))["game"]
    assert (start["id"], start["color"], start["my_turn"]) == (game_id, "o", False)
    assert start["opponent"]["name"] == "ann" and start["opponent"]["bot"] is False
    state = await ann.expect("game", id=game_id)
    assert [seat["bot"] for seat in state["seats"]] == [False, True]  # marked for people

    game = await stream(http, server, f"/api/bot/game/stream/{game_id}", robo.token)
    full = await game.expect("gameFull")
    assert (full["id"], full["x"]["name"], full["o"]["bot"]) == (game_id, "ann", True)
    assert full["state"] == {"type": "gameState", "moves": "", "cells": [], "x_time": None,
                             "o_time": None, "status": "playing", "result": None,
                             "reason": None, "winner": None, "draw_offer": None}
    await ann.send(t="move", game=game_id, cell="a1", ply=0)
    assert (await game.expect("gameState"))["moves"] == "a1"
    status, answer = await post(http, server, f"/api/bot/game/{game_id}/move/b2", robo.token)
    assert (status, answer) == (200, {"ok": True, "game": None})
    assert (await ann.expect("move", game=game_id, ply=2))["notation"] == "b2"
    assert (await game.expect("gameState"))["cells"] == [0, 5]
    status, answer = await post(http, server, f"/api/bot/game/{game_id}/move/b2", robo.token,
                                None)
    assert (status, answer["code"]) == (409, "not_your_turn")
    status, _ = await post(http, server, f"/api/bot/game/{game_id}/chat", robo.token,
                           {"text": "good luck"})
    assert status == 200
    assert (await ann.expect("chat", game=game_id))["text"] == "good luck"
    await ann.send(t="chat", game=game_id, text="thanks")
    lines = [await game.expect("chatLine"), await game.expect("chatLine")]
    assert [(line["room"], line["name"], line["text"]) for line in lines] == [
        ("player", "robo", "good luck"), ("player", "ann", "thanks")]
    status, _ = await post(http, server, f"/api/bot/game/{game_id}/resign", robo.token)
    assert status == 200
    over = await game.expect("gameState")
    assert (over["status"], over["result"], over["winner"]) == ("over", "1-0", "x")
    assert await game.next() is None  # the game's stream ends with the game
    finish = (await events.expect("gameFinish"))["game"]
    assert (finish["id"], finish["result"], finish["status"]) == (game_id, "1-0", "over")
    events.reply.close()
    game.reply.close()


async def test_a_bot_is_marked_in_the_lobby_and_its_profile(
        server: Server, http: aiohttp.ClientSession) -> None:
    await bot_account(server)
    ann = await server.client("ann")
    await ann.request(t="lobby_sub")

    async def marked() -> bool:
        async with http.get(url(server, "/api/players/robo")) as reply:
            profile = await reply.json()
        lobby = await ann.request(t="lobby_sub")
        return profile["bot"] is True and {p["name"]: p["bot"] for p in lobby["players"]} == {
            "ann": False, "robo": True}

    await eventually(marked)


async def test_only_a_bot_uses_the_bot_routes_and_only_a_new_account_becomes_one(
        server: Server, http: aiohttp.ClientSession) -> None:
    ann = await server.client("ann")
    bob = await server.client("bob")
    status, refused = await post(http, server, "/api/bot/game/abc/resign", ann.token)
    assert (status, refused["code"]) == (403, "not_bot")
    async with http.get(url(server, "/api/bot/game/stream/abc"), headers=bearer(ann.token)
                        ) as reply:
        assert (reply.status, (await reply.json())["code"]) == (403, "not_bot")
    with sqlite3.connect(server.path) as db:  # bob has played a rated game
        db.execute("UPDATE players SET rated_games = 1 WHERE name = 'bob'")
    status, refused = await post(http, server, "/api/bot/account/upgrade", bob.token)
    assert (status, refused["code"]) == (403, "bot_refused")
    assert (await post(http, server, "/api/bot/account/upgrade", ann.token)) == (200, {
        "ok": True, "game": None})
    status, refused = await post(http, server, "/api/bot/game/abc/resign", ann.token)
    assert (status, refused["code"]) == (404, "no_such_game")  # a bot now: past the role
    code, audit = await admin(server, "audit")
    assert code == 0 and any(e["action"] == "grant" and e["target"] == "ann"
                             and e["detail"] == "bot" for e in audit), audit
    code, roles = await admin(server, "export-player", "ann")
    assert {"role": "bot", "granted": None, "by": None} in roles["roles"]
    assert (await admin(server, "revoke", "ann", "bot"))[0] == 0
    status, refused = await post(http, server, "/api/bot/game/abc/resign", ann.token)
    assert (status, refused["code"]) == (403, "not_bot")


async def test_a_bot_stays_out_of_pairing_unless_the_host_allows_it(tmp_path: Any) -> None:
    for allowed in (False, True):
        server = Server(tmp_path / f"{allowed}.db", bots_in_pairing=allowed)
        await server.start()
        try:
            robo = await bot_account(server)
            again = await server.client()
            await again.hello(token=robo.token)  # the role is read at hello
            for request in ({"t": "quick", "variant": "4x4x4"},
                            {"t": "seek", "variant": "4x4x4"},
                            {"t": "private_create", "variant": "4x4x4"}):
                reply = await again.request(**request)
                if allowed:
                    assert reply["t"] in ("queued", "seeking", "private"), reply
                    await again.request(**{"queued": {"t": "cancel_quick"},
                                           "private": {"t": "private_cancel"},
                                           "seeking": {"t": "cancel_seek",
                                                       "seek": reply.get("seek", {}).get("id")},
                                           }[reply["t"]])
                else:
                    assert reply["code"] == "bot_pairing_off", reply
                    assert (await again.request(t="ping"))["t"] == "pong"  # the socket stays
        finally:
            await server.stop()


async def test_a_ban_ends_a_bots_streams_and_the_api_refuses_it(
        server: Server, http: aiohttp.ClientSession) -> None:
    robo = await bot_account(server)
    events = await stream(http, server, "/api/stream/event", robo.token)
    assert (await admin(server, "ban", "robo", "--reason", "cheating"))[0] == 0
    assert await events.next() is None
    status, refused = await post(http, server, "/api/challenge/ann", robo.token, {})
    assert (status, refused["code"]) == (403, "banned")


async def test_the_event_stream_opens_with_the_challenges_waiting(
        server: Server, http: aiohttp.ClientSession) -> None:
    """As on lichess: a bot that connects hears of the challenges sent to it before."""
    robo = await bot_account(server)
    ann = await server.client("ann")
    sent = await ann.request(t="challenge", name="robo", variant="4x4x4")
    events = await stream(http, server, "/api/stream/event", robo.token)
    assert (await events.expect("challenge"))["challenge"]["id"] == sent["challenge"]["id"]
    events.reply.close()


async def test_a_quiet_stream_says_it_is_alive_and_requests_are_rated_like_a_socket(
        server: Server, http: aiohttp.ClientSession, monkeypatch: Any) -> None:
    from server.http import bot_api
    from server.protocol import RATE_LIMIT_BURST

    monkeypatch.setattr(bot_api, "KEEP_ALIVE", 0.2)
    robo = await bot_account(server)
    events = await stream(http, server, "/api/stream/event", robo.token)
    with contextlib.suppress(TimeoutError):  # nothing but keep-alive lines for a second
        assert await asyncio.wait_for(events.next(), 1.0) is None
    assert events.keep_alives >= 3
    answered = 0
    while (answer := await post(http, server, "/api/bot/game/abc/resign", robo.token))[0] != 429:
        assert answer[1]["code"] == "no_such_game"
        answered += 1
        assert answered < 10 * RATE_LIMIT_BURST, "never limited"
    assert answer[1]["code"] == "rate_limited"
    assert answered >= RATE_LIMIT_BURST - 1  # the burst, less the stream's opening
    events.reply.close()



async def test_a_bot_is_marked_in_every_list(tmp_path: Any, http: aiohttp.ClientSession
                                             ) -> None:
    """A bot's seek, its game in the live list, a spectator's seats, a page of games (the
    websocket's and the HTTP API's), a game over HTTP and the leaderboard all say so."""
    server = Server(tmp_path / "q.db", bots_in_pairing=True)
    await server.start()
    try:
        robo = await bot_account(server)
        ann, sam = await server.client("ann"), await server.client("sam")

        async def granted() -> bool:  # the role reaches robo's socket (the control channel)
            lobby = await sam.request(t="lobby_sub")
            return {p["name"]: p["bot"] for p in lobby["players"]}["robo"]

        await eventually(granted)
        seek = (await robo.request(t="seek", variant="4x4", rated=True, colour="x"))["seek"]
        assert seek["bot"] is True
        delta = await sam.expect("lobby_delta", timeout=WAIT)
        assert [s["bot"] for s in delta["seeks_added"]] == [True]
        game = await ann.request(t="accept_seek", seek=seek["id"])
        game_id = game["id"]
        assert [seat["bot"] for seat in game["seats"]] == [True, False]

        async def listed() -> bool:
            lobby = await sam.request(t="lobby_sub")
            return [(g["id"], g.get("x_bot"), g.get("o_bot")) for g in lobby["games"]] == [
                (game_id, True, None)]  # false is left out

        await eventually(listed)
        watched = await sam.request(t="watch", game=game_id)
        assert [seat["bot"] for seat in watched["seats"]] == [True, False]
        async with http.get(url(server, "/api/lobby")) as reply:
            assert [g["x_bot"] for g in (await reply.json())["games"]] == [True]
        await robo.request(t="move", game=game_id, cell="a1", ply=0)
        await ann.request(t="move", game=game_id, cell="b2", ply=1)
        await ann.request(t="resign", game=game_id)  # a rated game over: on the board
        page = await sam.request(t="player_games", name="ann")
        assert [(g["x_bot"], g.get("o_bot")) for g in page["games"]] == [(True, None)]
        async with http.get(url(server, "/api/players/robo/games")) as reply:
            assert [g["x_bot"] for g in (await reply.json())["games"]] == [True]
        async with http.get(url(server, f"/api/games/{game_id}")) as reply:
            stored = await reply.json()
            assert (stored["x_bot"], stored["o_bot"]) == (True, False)
        async with http.get(url(server, "/api/leaderboard")) as reply:
            board = {p["name"]: p["bot"] for p in (await reply.json())["players"]}
            assert board == {"robo": True, "ann": False}
    finally:
        await server.stop()


async def bot_game(http: aiohttp.ClientSession, server: Server, robo: Client, ann: Client
                   ) -> tuple[str, Stream]:
    """ann (X) challenges robo, which accepts: the game's id and robo's game stream."""
    events = await stream(http, server, "/api/stream/event", robo.token)
    await ann.send(t="challenge", name="robo", variant="4x4", colour="x")
    challenge = (await events.expect("challenge"))["challenge"]
    events.reply.close()
    status, accepted = await post(http, server, f"/api/challenge/{challenge['id']}/accept",
                                  robo.token)
    assert status == 200, accepted
    game = await stream(http, server, f"/api/bot/game/stream/{accepted['game']}", robo.token)
    await game.expect("gameFull")
    return accepted["game"], game


async def test_a_bot_aborts_offers_declines_and_accepts_draws(
        server: Server, http: aiohttp.ClientSession) -> None:
    """lichess's ``abort`` and ``draw/{accept}``: abort before both sides moved (409
    ``too_late_to_abort`` after); ``draw/no`` declines the opponent's offer, ``draw/yes``
    accepts it or offers one (409 ``no_draw_offer`` with nothing to decline)."""
    robo, ann = await bot_account(server), await server.client("ann")
    game_id, game = await bot_game(http, server, robo, ann)
    assert (await post(http, server, f"/api/bot/game/{game_id}/abort", robo.token))[0] == 200
    over = await game.expect("gameState")
    assert (over["status"], over["result"], over["reason"]) == ("over", "*", "abort")
    game.reply.close()

    game_id, game = await bot_game(http, server, robo, ann)
    base = f"/api/bot/game/{game_id}"
    status, refused = await post(http, server, f"{base}/draw/no", robo.token)
    assert (status, refused["code"]) == (409, "no_draw_offer")
    await ann.send(t="move", game=game_id, cell="a1", ply=0)
    await game.expect("gameState")
    assert (await post(http, server, f"{base}/move/b2", robo.token))[0] == 200
    status, refused = await post(http, server, f"{base}/abort", robo.token)
    assert (status, refused["code"]) == (409, "too_late_to_abort")
    assert (await ann.request(t="draw_offer", game=game_id))["t"] == "ack"
    while (state := await game.expect("gameState"))["draw_offer"] != "x":
        pass
    assert (await post(http, server, f"{base}/draw/no", robo.token))[0] == 200
    await ann.expect("offer", game=game_id, kind="draw_declined")
    assert (await post(http, server, f"{base}/draw/yes", robo.token))[0] == 200  # an offer
    await ann.expect("offer", game=game_id, kind="draw", by="o")
    status, refused = await post(http, server, f"{base}/draw/yes", robo.token)
    assert (status, refused["code"]) == (409, "already_offered")
    assert (await ann.request(t="draw_accept", game=game_id))["t"] == "ack"
    while (state := await game.expect("gameState"))["status"] != "over":
        pass
    assert (state["result"], state["reason"]) == ("1/2-1/2", "agreement")
    async with http.post(url(server, f"{base}/draw/maybe"), headers=bearer(robo.token)) as reply:
        assert reply.status == 404
    game.reply.close()


async def test_a_server_stopping_under_an_open_game_stream_logs_no_error(
        server: Server, http: aiohttp.ClientSession,
        caplog: pytest.LogCaptureFixture) -> None:
    """The stream's session leaves its game after the hub closed (its bus too): nothing is
    left to publish to, and that is not an error."""
    robo, ann = await bot_account(server), await server.client("ann")
    _, game = await bot_game(http, server, robo, ann)
    with caplog.at_level(logging.ERROR):
        await server.stop()
        assert await game.next() is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
