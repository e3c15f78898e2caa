"""Tournaments on a cluster (issue 43, item 5): players on different nodes are paired by the
node holding the tournament's lease, their games start through the cluster's usual paths,
every node passes on the live updates, and when the holder dies (its lease lapses) another
node takes the tournament over from the database and goes on pairing; a bot is paired while
its stream is open on any node."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from server.node.tournaments import ROUND_GAP, SEEN_EVERY, TICK
from server.store import tournaments as ops
from tests.eventually import eventually
from tests.server.cluster.test_cluster_levers import admin
from tests.server.http.test_bot_api import Stream
from tests.server.servers import Client, Nodes, play


def holders(nodes: Nodes, tournament: str) -> list[str]:
    return [name for name, running in nodes.running.items()
            if tournament in running.hub.tournaments.held]


async def held_arena(nodes: Nodes, tid: str, name: str) -> None:
    """An hour's arena, started now, written to the database; returns once a node holds it."""
    await nodes["a"].store.apply(ops.insert_tournament(ops.TournamentRecord(
        id=tid, name=name, kind="arena", status="created", starts_at=time.time(),
        ends_at=time.time() + 3600, minutes=60, rounds=None, round=0, clock=(60, 0),
        variant="4x4x4", rated=False, created=time.time(), created_by="test"), []))
    await eventually(lambda: len(holders(nodes, tid)) == 1, "one node holds the tournament",
                     timeout=15.0)


async def next_game(client: Client, tournament: str, *, not_: str | None = None
                    ) -> dict[str, Any]:
    while True:
        game = await client.expect("game", tournament=tournament, status="playing")
        if game["id"] != not_:
            return game


async def test_a_tournament_pairs_across_nodes_and_survives_its_holder(nodes: Nodes) -> None:
    tid = "Tcluster1"
    await held_arena(nodes, tid, "Cluster arena")
    holder = holders(nodes, tid)[0]
    others = [name for name in nodes.names if name != holder]
    # three players, none on the holder: two on one node, one on the other
    clients = {}
    for name, node in (("ann", others[0]), ("bob", others[1]), ("cat", others[1])):
        clients[name] = await nodes.client(node, name)
        reply = await clients[name].request(t="tournament_join", tournament=tid)
        assert reply["t"] == "ack", reply
    first = {}
    heard = await asyncio.gather(*(client.quiet(4.0) for client in clients.values()))
    for (name, client), later in zip(clients.items(), heard, strict=True):
        got = [*client.inbox, *later]
        client.inbox = [message for message in got if message["t"] != "game"]
        for message in got:
            if message["t"] == "game" and message.get("tournament") == tid:
                first[name] = message
    assert len(first) == 2, first
    game = next(iter(first.values()))
    seated = [seat["name"] for seat in game["seats"]]
    waiting = next(name for name in clients if name not in seated)
    # every node passes the live updates on: the one who waits follows from its own node
    update = await clients[waiting].expect("tournament", timeout=10.0)
    assert update["info"]["id"] == tid and update["info"]["status"] == "started"
    # the holder dies: its director stops without letting the lease go
    dead = nodes[holder].hub.tournaments
    assert dead._task is not None  # noqa: SLF001
    dead._task.cancel()  # noqa: SLF001
    dead.held.clear()
    await eventually(lambda: len(holders(nodes, tid)) == 1, "another node takes it over",
                     timeout=15.0)
    assert holders(nodes, tid)[0] != holder
    # the game goes on and is scored; the next pairing comes from the new holder
    x, o = (clients[name] for name in seated)
    await play(x, game["id"], "1a1", 0)
    await play(o, game["id"], "2b2", 1)
    assert (await o.request(t="resign", game=game["id"]))["t"] == "ack"
    again = await next_game(clients[waiting], tid, not_=game["id"])
    assert waiting in {seat["name"] for seat in again["seats"]}
    state = await clients[waiting].request(t="tournament_sub", tournament=tid)
    scores = {row["name"]: row["score"] for row in state["standings"]}
    assert scores[seated[0]] == 2 and scores[seated[1]] == 0


async def test_a_bots_stream_on_another_node_makes_it_paired(nodes: Nodes) -> None:
    """A bot joins over HTTP on one node, its event stream open on another: joined with no
    stream open it is not paired; its stream's node notes it (no connection there carried
    the join, nor did the stream, opened before it), so the holder pairs it."""
    tid = "Tcluster2"
    await held_arena(nodes, tid, "Bots' arena")
    ann = await nodes.client("a", "ann")
    assert (await ann.request(t="tournament_join", tournament=tid))["t"] == "ack"
    robo = await nodes.client("b", "robo")
    assert (await admin(nodes, "grant", "robo", "bot"))[0] == 0
    await robo.ws.close()  # a bot speaks HTTP only
    await eventually(lambda: not nodes["b"].hub.delivery.by_player.get("robo"))
    headers = {"Authorization": f"Bearer {robo.token}"}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:

        async def post(path: str) -> int:
            async with http.post(nodes["c"].http_url + path, headers=headers) as reply:
                return reply.status

        assert await post(f"/api/tournaments/{tid}/join") == 200
        await asyncio.sleep(2 * TICK + ROUND_GAP)
        assert [m for m in await ann.quiet(1.0) if m["t"] == "game"] == []
        assert await post(f"/api/tournaments/{tid}/withdraw") == 200
        events = Stream(await http.get(nodes["b"].http_url + "/api/stream/event",
                                       headers=headers))
        assert events.reply.status == 200
        assert await post(f"/api/tournaments/{tid}/join") == 200
        game = await next_game(ann, tid)
        assert {seat["name"] for seat in game["seats"]} == {"ann", "robo"}
        assert (await events.expect("gameStart"))["game"]["id"] == game["id"]
        events.reply.close()


async def test_a_player_still_connected_on_another_node_is_noted_there(nodes: Nodes) -> None:
    """A player who joined through a socket on one node and has another socket on a second
    node, opened before the join, closes the first: the second node notes them connected
    (every node reads who has joined and not left), so the arena goes on pairing them."""
    tid = "Tcluster3"
    await held_arena(nodes, tid, "Two sockets")
    earlier = await nodes.client("b", "dan")  # open before the join: b has no note of it
    joining = await nodes.client("c", token=earlier.token)
    assert (await joining.request(t="tournament_join", tournament=tid))["t"] == "ack"
    await joining.ws.close()
    await eventually(lambda: not nodes["c"].hub.delivery.by_player.get("dan"))
    closed = time.time()

    async def seen() -> float:
        data = await nodes["a"].store.query(ops.tournament_data(tid, games=False))
        assert data is not None
        return next(e.seen or 0.0 for e in data.entries if e.name == "dan")

    deadline = time.time() + 3 * SEEN_EVERY
    while await seen() <= closed and time.time() < deadline:
        await asyncio.sleep(0.5)
    assert await seen() > closed  # b, where dan still is, noted them
    await earlier.ws.close()
