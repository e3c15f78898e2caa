"""Bots on the three-node cluster (issue 43, item 3): a bot's streams on one node follow a game
held on another (its events come over the bus, as a websocket's do), its requests are carried
out from a third, and the lobby's players mark it as a bot on every node."""

from __future__ import annotations

import asyncio
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


async def test_a_bots_event_stream_opens_with_the_challenges_sent_from_another_node(
        nodes: Nodes) -> None:
    """A challenge made on one node before the bot's stream opened is replayed to a stream
    opened on any node (the node holding the lobby answers), once."""
    robo = await nodes.client("b", "robo")  # online on b, no stream yet
    assert (await admin(nodes, "grant", "robo", "bot"))[0] == 0
    ann = await nodes.client("a", "ann")
    sent = await ann.request(t="challenge", name="robo", variant="4x4x4")
    assert sent["t"] == "challenge_sent", sent
    await robo.expect("challenge")  # told as it was made
    headers = {"Authorization": f"Bearer {robo.token}"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        for node in "abc":  # two of them do not hold the lobby
            events = Stream(await http.get(nodes[node].http_url + "/api/stream/event",
                                           headers=headers))
            assert events.reply.status == 200
            replayed = await asyncio.wait_for(events.expect("challenge"), 10)
            assert replayed["challenge"]["id"] == sent["challenge"]["id"], node
            assert replayed["challenge"]["by"] == "ann"
            events.reply.close()


async def test_a_revoked_bot_is_no_longer_marked_in_the_lobby(nodes: Nodes) -> None:
    """The role's revocation reaches the lobby's players list on every node while the
    former bot stays connected."""
    await nodes.client("b", "robo")
    assert (await admin(nodes, "grant", "robo", "bot"))[0] == 0
    watchers = {node: await nodes.client(node, f"w{node}") for node in "ac"}

    async def marked(bot: bool) -> bool:
        for watcher in watchers.values():
            lobby = await watcher.request(t="lobby_sub")
            if {p["name"]: p["bot"] for p in lobby.get("players", [])}.get("robo") is not bot:
                return False
        return True

    await eventually(lambda: marked(True), timeout=30)
    assert (await admin(nodes, "revoke", "robo", "bot"))[0] == 0
    await eventually(lambda: marked(False), timeout=10)
