"""Cluster mode through a Redis restart or outage (issue 15): three in-process nodes on a Redis
of the test's own, with players on two nodes mid-game and a spectator on the third. Redis
restarted empty (leases, lobby, heartbeats gone), or stopped for longer than the lease's time
and started again: the nodes reconnect by themselves, the game goes on across nodes from the
same ply, every acknowledged move is in PostgreSQL once, the lobby works again and no game has
two owners. Nothing waits a fixed time: each step waits for a condition, with a generous
deadline."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import pytest_asyncio

from server.cluster.awaiting import Asked, Awaiting
from server.cluster.messages import Forward, decode_envelope, encode_message
from server.node.routing import Join, Leave
from server.protocol import Chat, Hint, Move, Watch
from server.tasks import stop_tasks
from tests.eventually import eventually
from tests.server.cluster.test_cluster import holders, move_to, owner, private_game
from tests.server.servers import Client, Nodes, play
from tests.services import RedisServer

ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]  # X wins on level 1, row 1


class Outage:
    """Three nodes on a Redis the test may stop and start."""

    def __init__(self, redis: RedisServer, nodes: Nodes) -> None:
        self.redis = redis
        self.nodes = nodes

    async def stop_redis(self) -> None:
        await asyncio.to_thread(self.redis.stop)

    async def start_redis(self) -> None:
        await asyncio.to_thread(self.redis.start)


@contextlib.asynccontextmanager
async def three_nodes(redis: RedisServer, postgres_url: str,
                      **config: Any) -> AsyncIterator[Outage]:
    nodes = Nodes(redis.url, postgres_url, **config)
    try:
        await nodes.start()
        yield Outage(redis, nodes)
    finally:
        if redis.process is None:  # a test that failed mid-outage: the nodes close faster
            await asyncio.to_thread(redis.start)
        await nodes.stop()


@pytest_asyncio.fixture
async def outage(redis_factory: Callable[[], RedisServer],
                 postgres_url: str) -> AsyncIterator[Outage]:
    async with three_nodes(redis_factory(), postgres_url) as started:
        yield started


def lobby_holders(nodes: Nodes) -> list[str]:
    return [name for name, running in nodes.running.items()
            if getattr(running.hub.lobby, "holding", None) is not None]


async def recovered(nodes: Nodes, game: str) -> str:
    """Every node's bus is connected again, one node holds the lobby and one the game (the
    same one three looks in a row); returns the game's owner."""
    await eventually(lambda: all(r.hub.cluster is not None and r.hub.cluster.bus.connected
                            for r in nodes.running.values()), "every bus reconnected")
    await eventually(lambda: len(lobby_holders(nodes)) == 1, "one node holds the lobby")
    return await owner(nodes, game)


async def recorded(postgres_url: str, game: str) -> list[tuple[int, int]]:
    conn = await asyncpg.connect(postgres_url)
    try:
        rows = await conn.fetch("SELECT ply, cell FROM moves WHERE game_id = $1 ORDER BY ply",
                                game)
    finally:
        await conn.close()
    return [(row["ply"], row["cell"]) for row in rows]


async def game_across_nodes(nodes: Nodes) -> tuple[Client, Client, Client, str]:
    """ann (x) on a, bob (o) on b, eve watching on c; two moves played."""
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    bob = await move_to(nodes, "b", bob, game)
    eve = await nodes.client("c", "eve")
    assert (await eve.request(t="watch", game=game))["t"] == "game"
    await play(ann, game, ROW[0], 0)
    await play(bob, game, ROW[1], 1)
    await eve.expect("move", notation=ROW[1])
    return ann, bob, eve, game


async def the_rest_of_the_game(outage: Outage, postgres_url: str, ann: Client, bob: Client,
                               eve: Client, game: str) -> None:
    """After the outage: the game goes on from ply 2 across nodes and ends; PostgreSQL has
    every acknowledged move once; a seek made on a is seen and accepted on b."""
    nodes = outage.nodes
    held = await recovered(nodes, game)
    cluster = nodes[held].hub.cluster
    stored = await nodes[held].store.get_game(game)
    assert cluster is not None and stored is not None
    # the owner's token is the newest written
    assert stored.fence == cluster.ownership.held[game].token
    for ply in range(2, len(ROW)):
        await play(ann if ply % 2 == 0 else bob, game, ROW[ply], ply)
    for client in (ann, bob, eve):
        end = await client.expect("end", game=game)
        assert end["result"] == "1-0" and end["reason"] == "line"
    record = await nodes["c"].store.get_game(game)
    assert record is not None
    assert [m.ply for m in record.moves] == list(range(1, len(ROW) + 1))
    rows = await recorded(postgres_url, game)
    assert [ply for ply, _cell in rows] == list(range(1, len(ROW) + 1))  # each once, in order
    assert len(holders(nodes, game)) <= 1  # never two owners
    # the lobby is one lobby again
    cat, dan = await nodes.client("a", "cat"), await nodes.client("b", "dan")
    seeking = await cat.request(t="seek", colour="x")
    assert seeking["t"] == "seeking", seeking
    seek = seeking["seek"]["id"]
    await eventually(lambda: _sees_seek(dan, seek), "the seek made on a is listed on b")
    await dan.send(t="accept_seek", seek=seek)
    started_a, started_b = await cat.expect("game"), await dan.expect("game")
    assert started_a["id"] == started_b["id"] and started_b["you"] == "o"
    new_game = started_a["id"]
    await owner(nodes, new_game)
    await play(cat, new_game, ROW[0], 0)
    await play(dan, new_game, ROW[1], 1)


async def _welcome_lists(nodes: Nodes, client: Client, game: str) -> bool:
    other = await nodes.client("c")
    try:
        return (await other.hello(token=client.token))["games"] == [game]
    finally:
        await other.ws.close()


async def _sees_seek(client: Client, seek: str) -> bool:
    snapshot = await client.request(t="lobby_sub")
    assert snapshot["t"] == "lobby", snapshot
    await client.request(t="lobby_unsub")
    return seek in [s["id"] for s in snapshot["seeks"]]


async def test_redis_restarted_empty_mid_game(outage: Outage, postgres_url: str) -> None:
    nodes = outage.nodes
    ann, bob, eve, game = await game_across_nodes(nodes)
    before = await owner(nodes, game)
    await outage.stop_redis()
    await outage.start_redis()  # empty: leases, heartbeats, the lobby's state are gone
    held = await recovered(nodes, game)
    assert held in nodes.running and before in nodes.running
    # the players' games are known on every node again (made again by the claim)
    await eventually(lambda: _welcome_lists(nodes, bob, game), "bob's welcome on c lists the game")
    await the_rest_of_the_game(outage, postgres_url, ann, bob, eve, game)


async def test_redis_away_longer_than_the_lease_mid_game(
    outage: Outage, postgres_url: str
) -> None:
    nodes = outage.nodes
    ann, bob, eve, game = await game_across_nodes(nodes)
    held = await owner(nodes, game)
    await outage.stop_redis()
    # every node gives its games up once their leases run out by its own clock
    await eventually(lambda: not holders(nodes, game), "the owner dropped the game")
    await eventually(lambda: not any(r.hub.cluster is not None and r.hub.cluster.bus.connected
                                for r in nodes.running.values()), "every bus saw Redis go")
    # a request meanwhile is answered at once, wherever its player is: `unavailable`
    for client in (ann, bob):
        ref = await client.send(t="chat", game=game, text="still there?")
        refused = await client.error("unavailable", ref=ref)
        assert refused["retry_in"] > 0
    await outage.start_redis()
    assert held in nodes.running
    await the_rest_of_the_game(outage, postgres_url, ann, bob, eve, game)


async def test_while_the_bus_is_cut_off_every_game_request_gets_unavailable(
    redis_factory: Callable[[], RedisServer], postgres_url: str
) -> None:
    # the leases outlast the outage: the owner still holds the game while Redis is away
    async with three_nodes(redis_factory(), postgres_url, lease_ttl=15.0) as outage:
        nodes = outage.nodes
        ann, bob, eve, game = await game_across_nodes(nodes)
        await outage.stop_redis()
        await eventually(lambda: not any(r.hub.cluster is not None and r.hub.cluster.bus.connected
                                    for r in nodes.running.values()), "every bus saw Redis go")
        # on the owner's node too: a move there would be recorded and heard by nobody
        for client in (ann, bob):
            ref = await client.send(t="move", game=game, cell=ROW[2], ply=2)
            refused = await client.error("unavailable", ref=ref)
            assert refused["retry_in"] == 15.0
        await outage.start_redis()
        assert [ply for ply, _ in await recorded(postgres_url, game)] == [1, 2]
        await recovered(nodes, game)
        for ply in range(2, len(ROW)):
            await play(ann if ply % 2 == 0 else bob, game, ROW[ply], ply)
        assert [ply for ply, _ in await recorded(postgres_url, game)] == list(range(1, 8))
        await eve.expect("end", game=game)


async def test_a_request_forwarded_to_an_owner_that_dies_gets_unavailable(
    nodes: Nodes, postgres_url: str
) -> None:
    ann, bob, eve, game = await game_across_nodes(nodes)
    first = await owner(nodes, game)
    asker = bob if first != "b" else ann  # a player on another node than the owner
    frozen = nodes[first].hub.cluster
    assert frozen is not None
    # the owner stops (as if killed): it hears no forwarded request, its heartbeat and
    # leases run out, and another node takes the game over
    await stop_tasks(frozen._loops[:1])  # once: a cancel can be lost in a publish
    await frozen._subscriptions[0].cancel()
    ref = await asker.send(t="chat", game=game, text="hello?")
    refused = await asker.error("unavailable", ref=ref)
    assert refused["retry_in"] > 0
    assert not any(m.get("ref") == ref and m["t"] == "ack" for m in asker.seen)
    second = await eventually(lambda: [n for n in holders(nodes, game) if n != first],
                         "another node took the game over")
    assert len(second) == 1
    again = await asker.send(t="chat", game=game, text="hello?")  # sent again: it reaches
    await asker.expect("ack", ref=again)  # the new owner
    for ply in range(2, len(ROW)):
        await play(ann if ply % 2 == 0 else bob, game, ROW[ply], ply)
    assert [ply for ply, _ in await recorded(postgres_url, game)] == list(range(1, 8))


def test_awaiting_keeps_a_forwarded_request_until_its_reply_or_its_deadline() -> None:
    awaiting = Awaiting()
    awaiting.sent(1, Asked("r1", "g", False, "b", sent=0.0))
    awaiting.sent(1, Asked(7, "g", True, "b", sent=1.0))
    awaiting.sent(2, Asked("r1", "g", False, "c", sent=0.0))
    awaiting.answered(1, b'{"t": "move", "game": "g"}')  # an event, not a reply
    awaiting.answered(1, b'{"t": "ack", "ref": "r1"}')
    assert len(awaiting) == 2
    alive = {"b", "c"}
    assert awaiting.expired(5.0, 3.0, lambda node: node not in alive) == []
    alive.discard("c")  # c is found gone: its request is given up after the deadline
    assert [(s, a.ref) for s, a in awaiting.expired(5.0, 3.0,
                                                    lambda node: node not in alive)] == [(2, "r1")]
    assert awaiting.expired(9.5, 3.0, lambda node: False) == []  # b lives: wait longer
    assert [a.ref for _s, a in awaiting.expired(10.0, 3.0, lambda node: False)] == [7]
    assert len(awaiting) == 0
    awaiting.sent(3, Asked("x", "g", False, "b", sent=0.0))
    assert awaiting.take(3, "y") is None
    taken = awaiting.take(3, "x")  # its sending failed
    assert taken is not None and taken.ref == "x" and len(awaiting) == 0


def test_a_forward_carries_the_typed_request_across_decoded_once() -> None:
    requests = [Move(game="g", cell="1a1", ply=0, id="r"), Move(game="g", cell=5, ply=2),
                Chat(game="g", text="hi", id=4), Watch(game="g", since=7, id="w"),
                Hint(game="g"), Join(game="g"), Leave(game="g")]
    for request in requests:
        forward = decode_envelope(encode_message(Forward(request, "a", 3, "ann", True)))
        assert isinstance(forward, Forward)
        assert forward.request == request and type(forward.request) is type(request)
        assert (forward.game, forward.node, forward.session, forward.hops) == ("g", "a", 3, 0)
