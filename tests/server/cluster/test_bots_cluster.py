"""Bots on the three-node cluster (issue 43, item 3): a bot's streams on one node follow a game
held on another (its events come over the bus, as a websocket's do), its requests are carried
out from a third, and the lobby's players mark it as a bot on every node."""

from __future__ import annotations

from typing import Any

import aiohttp

from tests.eventually import eventually
from tests.server.cluster.test_cluster_levers import admin
from tests.server.http.test_bot_api import Stream
from tests.server.servers import Nodes


async def test_a_bot_plays_across_nodes_over_its_streams(nodes: Nodes) -> None:
    robo = await nodes.client("a", "robo")
    assert (await admin(nodes, "grant", "robo", "bot"))[0] == 0
    ann = await nodes.client("b", "ann")
    headers = {"Authorization": f"Bearer {robo.token}"}
    a, c = nodes["a"].http_url, nodes["c"].http_url

    async def post(path: str) -> tuple[int, Any]:
        async with http.post(c + path, headers=headers) as reply:
            return reply.status, await reply.json()

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        events = Stream(await http.get(a + "/api/stream/event", headers=headers))
        assert events.reply.status == 200

        async def marked() -> bool:
            lobby = await ann.request(t="lobby_sub")
            return {p["name"]: p["bot"] for p in lobby["players"]} == {"ann": False,
                                                                       "robo": True}

        await eventually(marked, timeout=30)
        await ann.send(t="challenge", name="robo", variant="4x4", colour="x")
        challenge = (await events.expect("challenge"))["challenge"]
        status, accepted = await post(f"/api/challenge/{challenge['id']}/accept")
        assert status == 200, accepted
        game_id = accepted["game"]
        assert (await events.expect("gameStart"))["game"]["id"] == game_id
        game = Stream(await http.get(f"{a}/api/bot/game/stream/{game_id}", headers=headers))
        full = await game.expect("gameFull")
        assert full["o"] == {"name": "robo", "rating": 1500, "online": True, "ai": None,
                             "bot": True}
        await ann.expect("game", id=game_id)
        for ply, (mine, theirs) in enumerate([("a1", "a2"), ("b1", "b2"), ("c1", "c2")]):
            await ann.send(t="move", game=game_id, cell=mine, ply=2 * ply)
            # the bot answers the position it has heard of: the one with ann's move
            while len((await game.expect("gameState"))["moves"].split()) != 2 * ply + 1:
                pass
            status, answer = await post(f"/api/bot/game/{game_id}/move/{theirs}")
            assert status == 200, answer
            await ann.expect("move", game=game_id, ply=2 * ply + 2)
        await ann.send(t="move", game=game_id, cell="d1", ply=6)  # a1 b1 c1 d1: a line
        while (state := await game.expect("gameState"))["status"] == "playing":
            pass
        assert (state["moves"], state["winner"]) == ("a1 a2 b1 b2 c1 c2 d1", "x")
        assert await game.next() is None
        finish = (await events.expect("gameFinish"))["game"]
        assert (finish["id"], finish["result"]) == (game_id, "1-0")
        events.reply.close()
