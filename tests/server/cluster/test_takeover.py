"""Issue 37, bugs 2 and 3 and the stale batches, on three nodes in this process.

Bug 2: a node that lost a game's state (its write failed, then reading the game again failed:
a PostgreSQL restart) took its own game back under the same fencing token, so its batches'
sequence restarted silently: the opponent on another node never heard the acked moves, and
versions went backwards. Bug 3: a node kept sending a game's requests to where it first found
the game (the lobby's node, before the hand-off). And a deposed owner's late batch must not be
delivered after the new owner's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest_asyncio

from server.game.records import PlayerRecord
from server.game.room import Audience, Outbound
from server.node.bus import LocalBus
from server.node.delivery import EPOCH_BITS, Delivery, Peer, game_topic, pack
from server.node.session import Session
from server.protocol import Ack, ChatLine, MovePlayed
from tests.eventually import eventually
from tests.server.cluster.faultkit import InProcessCluster, private_game, versions_seen


@pytest_asyncio.fixture
async def cluster(redis_url: str, postgres_url: str) -> AsyncIterator[InProcessCluster]:
    made = InProcessCluster(redis_url, postgres_url)
    try:
        await made.start()
        yield made
    finally:
        await made.stop()


async def test_a_node_that_lost_a_game_s_state_takes_it_back_under_a_new_fence(
    cluster: InProcessCluster,
) -> None:
    ann = await cluster.client("a", "ann")
    bob = await cluster.client("a", "bob")
    game = await private_game(ann, bob)
    owner = await cluster.owner(game)
    other = next(n for n in "abc" if n != owner)
    await bob.close()  # bob goes to another node than the owner and opens the game there
    bob = await cluster.client(other, token=bob.token)
    assert (await bob.request(t="watch", game=game))["t"] == "game"
    for ply, (mover, cell) in enumerate([(ann, 0), (bob, 16)]):
        assert (await mover.request(t="move", game=game, cell=cell, ply=ply))["t"] == "ack"
    await bob.expect("move", game=game, ply=2)
    before = cluster.ownership(owner).held[game].token
    # The owner's write failed and reading the game back failed too (PostgreSQL restarting):
    # the room is let go (Rooms._put_back), the lease still held.
    cluster.running[owner].hub.rooms.held.pop(game)
    assert (await ann.request(t="move", game=game, cell=1, ply=2))["t"] == "ack"
    assert cluster.ownership(owner).held[game].token > before  # a new fence
    await bob.expect("move", game=game, ply=3)  # the acked move reached the opponent
    assert (await bob.request(t="move", game=game, cell=17, ply=3))["t"] == "ack"
    await ann.expect("move", game=game, ply=4)

    def seats_online() -> list[bool]:
        room = cluster.running[owner].hub.rooms.held[game]
        state = room.snapshot("eve", cluster.running[owner].hub.rooms.now())
        return [seat.online for seat in state.seats]

    # both players are present again (their rejoins)
    await eventually(lambda: seats_online() == [True, True], "both players present again",
                     detail=lambda: repr(seats_online()))
    for client in (ann, bob):
        seen = versions_seen(client, game)
        assert seen == sorted(seen), (client.name, seen)  # never backwards


async def test_a_node_learns_a_game_s_owner_from_its_batches(
    cluster: InProcessCluster,
) -> None:
    ann = await cluster.client("a", "ann")
    bob = await cluster.client("a", "bob")
    game = await private_game(ann, bob)
    owner = await cluster.owner(game)
    other = next(n for n in "abc" if n != owner)
    stale = next(n for n in "abc" if n not in (owner, other))
    await bob.close()
    bob = await cluster.client(other, token=bob.token)
    assert (await bob.request(t="watch", game=game))["t"] == "game"
    # bob's node believes the game is where it first found it (the lobby's node, which
    # passes every request on): as after a hand-off it heard of from nobody
    cluster.ownership(other).owners[game] = stale
    assert (await ann.request(t="move", game=game, cell=0, ply=0))["t"] == "ack"
    await bob.expect("move", game=game, ply=1)
    assert cluster.ownership(other).owners.get(game) == owner  # heard from the batch
    forwarded = cluster.running[stale].hub.cluster.owners.forwarded
    assert (await bob.request(t="move", game=game, cell=16, ply=1))["t"] == "ack"
    assert cluster.running[stale].hub.cluster.owners.forwarded == forwarded  # not through it


def _player(name: str) -> PlayerRecord:
    return PlayerRecord(name=name, created=0.0)


async def test_a_deposed_owner_s_late_batch_is_not_delivered_but_its_replies_are() -> None:
    bus = LocalBus()
    delivery = Delivery(bus)
    ann, bob = Session(), Session()
    for session, name in ((ann, "ann"), (bob, "bob")):
        delivery.identified(session, _player(name))
        await delivery.open(session, "g1", 0)

    def moved(version: int) -> Outbound:
        return Outbound(MovePlayed(game="g1", ply=1, cell=0, notation="1a1", side="x",
                                   clocks=None, version=version))

    await bus.publish(game_topic("g1"), pack((5 << EPOCH_BITS) + 1, [moved(10)]))
    await bus.publish(game_topic("g1"), pack((7 << EPOCH_BITS) + 1, [moved(20)]))
    await asyncio.sleep(0)
    # the owner of epoch 5, woken from a pause, publishes what it decided before it knew
    await bus.publish(game_topic("g1"), pack((5 << EPOCH_BITS) + 2, [moved(11)],
                                             only=Peer.of(ann), reply=Ack(ref=3)))
    # and a catch-up it made for ann (a rejoin it served as it was being deposed)
    said = ChatLine(game="g1", name="ann", side="x", text="hi", line=1)
    await bus.publish(game_topic("g1"), pack((5 << EPOCH_BITS) + 3,
                                             [Outbound(said, Audience.PLAYER, "ann")],
                                             only=Peer.of(ann), reply=Ack(ref=4)))
    await asyncio.sleep(0)
    heard = {s: [json.loads(f) for f in s.take_frames()] for s in (ann, bob)}
    assert [m.get("version") for m in heard[bob]] == [10, 20]
    assert [(m["t"], m.get("version")) for m in heard[ann]] == [
        ("move", 10), ("move", 20), ("ack", None), ("ack", None)]
    assert delivery.stale_batches == 2
    await bus.close()
