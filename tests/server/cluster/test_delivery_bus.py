"""The rooms publish their events on the bus and Delivery sends them on (issue 15).

On one node the bus is a ``LocalBus`` and the whole suite runs through it; these tests pin
what the split adds: the batch format's addressing, the publish sequence that keeps a late
opener from hearing an event twice, and the same game played end to end on a ``RedisBus``
(a real redis-server), as a cluster's nodes will use it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import server.node.hub
from server.cluster.bus import RedisBus
from server.game.records import PlayerRecord
from server.game.room import Audience, Outbound
from server.node.bus import LocalBus
from server.node.delivery import EPOCH_BITS, PENDING, Delivery, Peer, game_topic, pack
from server.node.session import Session
from server.protocol import Ack, ChatLine
from tests.eventually import eventually
from tests.server.servers import Server, play, start_private_game


def _player(name: str) -> PlayerRecord:
    return PlayerRecord(name=name, created=0.0)


def _heard(session: Session) -> list[dict[str, object]]:
    return [json.loads(frame) for frame in session.take_frames()]


async def test_a_batch_reaches_each_event_s_audience_and_a_reply_its_session() -> None:
    bus = LocalBus()
    delivery = Delivery(bus)
    ann, ann2, bob, eve = Session(), Session(), Session(), Session()
    for session, name in ((ann, "ann"), (ann2, "ann"), (bob, "bob"), (eve, "eve")):
        delivery.identified(session, _player(name))
        await delivery.open(session, "g1", 0)
    said = ChatLine(game="g1", name="ann", side="x", text="hi", line=1)
    events = [
        Outbound(said),
        Outbound(Ack(ref=1), Audience.PLAYER, "bob"),
        Outbound(Ack(ref=2), Audience.OTHERS, "ann"),
    ]
    await bus.publish(game_topic("g1"), pack(1, events, only=Peer.of(ann), reply=Ack(ref=3)))
    await asyncio.sleep(0)
    assert [m["t"] for m in _heard(eve)] == ["chat", "ack"]  # the room's, and OTHERS than ann
    assert [m.get("ref") for m in _heard(bob)] == [None, 2]  # ann's PLAYER event went to ann
    assert [m.get("ref") for m in _heard(ann)] == [None, 1, 3]  # only=ann: hers, then reply
    assert [m.get("ref") for m in _heard(ann2)] == [None]  # the same player, not the session
    await bus.close()


class Heard:
    """A ``Followers`` that keeps what it hears."""

    def __init__(self) -> None:
        self.said: list[tuple[object, ...]] = []

    def owner_changed(self, game_id: str) -> None:
        self.said.append(("changed", game_id))

    def owner_heard(self, game_id: str, node: str) -> None:
        self.said.append(("heard", game_id, node))

    def replied(self, session: int, frame: bytes) -> None:
        self.said.append(("replied", session, json.loads(frame)["ref"]))

    def rejoin(self, game_id: str, sessions: list[Session]) -> None:
        self.said.append(("rejoin", game_id, [session.id for session in sessions]))


async def test_the_followers_given_at_construction_hear_of_holders_and_replies() -> None:
    bus, heard = LocalBus(), Heard()
    delivery = Delivery(bus, "a", followers=heard)
    ann = Session()
    delivery.identified(ann, _player("ann"))
    await delivery.open(ann, "g1", 0)
    await bus.publish(game_topic("g1"), pack((1 << EPOCH_BITS) + 1, [], owner="b"))
    await bus.publish(game_topic("g1"), pack((2 << EPOCH_BITS) + 1, [], owner="c",
                                             only=Peer("a", ann.id, "ann"), reply=Ack(ref=7)))
    await asyncio.sleep(0)
    assert heard.said == [("heard", "g1", "b"), ("changed", "g1"), ("heard", "g1", "c"),
                          ("replied", ann.id, 7)]
    await bus.close()


async def test_a_session_answered_by_a_deposed_owner_joins_the_new_one() -> None:
    """A game handed on (the simulation's ``presence.as_told`` on two nodes): the new
    owner's first batch (epoch 2) came before the old owner's reply to a session that opened
    the game with it (epoch 1). The reply reaches the session, which then joins the new
    owner: that one has nobody present but those who joined it."""
    bus, heard = LocalBus(), Heard()
    delivery = Delivery(bus, "a", followers=heard)
    ann, bob = Session(), Session()
    for session, name in ((ann, "ann"), (bob, "bob")):
        delivery.connected(session)
        delivery.identified(session, _player(name))
        await delivery.open(session, "g1", PENDING)
    await bus.publish(game_topic("g1"), pack((2 << EPOCH_BITS) + 1, [], owner="c"))
    await bus.publish(game_topic("g1"), pack((1 << EPOCH_BITS) + 5, [], owner="b",
                                             only=Peer("a", ann.id, "ann"), reply=Ack(ref=7)))
    await asyncio.sleep(0)
    assert heard.said == [("heard", "g1", "c"), ("replied", ann.id, 7),
                          ("rejoin", "g1", [ann.id])]
    assert [m["ref"] for m in _heard(ann)] == [7]
    # bob's reply comes from the owner holding it now: nothing more to do
    await bus.publish(game_topic("g1"), pack((2 << EPOCH_BITS) + 2, [], owner="c",
                                             only=Peer("a", bob.id, "bob"), reply=Ack(ref=8)))
    await asyncio.sleep(0)
    assert heard.said[3:] == [("heard", "g1", "c"), ("replied", bob.id, 8)]
    await bus.close()


async def test_a_game_started_here_and_handed_on_before_any_batch_rejoins_its_sessions() -> None:
    """The game started on this node (its sessions opened with its state, epoch 1) and was
    handed on before any batch of it came back: the new owner's first batch (epoch 2) is the
    first one heard here, and the sessions open the game again with it (the simulation's
    ``presence.as_told`` on two nodes, seed 240 step 150: the new owner had nobody present)."""
    bus, heard = LocalBus(), Heard()
    delivery = Delivery(bus, "a", followers=heard)
    ann = Session()
    delivery.connected(ann)
    delivery.identified(ann, _player("ann"))
    await delivery.open(ann, "g1", 1 << EPOCH_BITS)
    await bus.publish(game_topic("g1"), pack((2 << EPOCH_BITS) + 1, [], owner="b"))
    await asyncio.sleep(0)
    assert heard.said == [("changed", "g1"), ("heard", "g1", "b")]
    await bus.close()


async def test_a_session_that_opened_after_a_batch_is_not_sent_it() -> None:
    bus = LocalBus()
    delivery = Delivery(bus)
    early, late = Session(), Session()
    delivery.identified(early, _player("ann"))
    delivery.identified(late, _player("bob"))
    await delivery.open(early, "g1", 0)
    said = ChatLine(game="g1", name="ann", side="x", text="hi", line=1)
    await bus.publish(game_topic("g1"), pack(1, [Outbound(said)]))
    await delivery.open(late, "g1", 1)  # it has the game as of batch 1 (its snapshot)
    await asyncio.sleep(0)
    assert [m["t"] for m in _heard(early)] == ["chat"]
    assert _heard(late) == []
    await bus.publish(game_topic("g1"), pack(2, [Outbound(said)]))
    await asyncio.sleep(0)
    assert len(_heard(early)) == len(_heard(late)) == 1


async def test_the_last_session_closing_a_game_unsubscribes_delivery() -> None:
    bus = LocalBus()
    delivery = Delivery(bus)
    ann, bob = Session(), Session()
    delivery.identified(ann, _player("ann"))
    delivery.identified(bob, _player("ann"))
    await delivery.open(ann, "g1", 0)
    await delivery.open(bob, "g1", 0)
    assert delivery.close(ann, "g1")  # ann still has it open on her other connection
    assert not delivery.close(bob, "g1")
    await eventually(lambda: delivery.audience == {} and not bus._handlers,
                     "the game's audience and its subscription gone")
    await delivery.close_all(1001, "bye")
    await bus.close()


async def test_a_game_end_to_end_with_the_rooms_and_delivery_on_redis(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bus = await RedisBus.open(redis_url, prefix="qubic-test:")
    monkeypatch.setattr(server.node.hub, "LocalBus", lambda: bus)  # the hub owns and closes it
    running = Server(tmp_path / "q.db")
    await running.start()
    try:
        ann, bob, eve = [await running.client(n) for n in ("ann", "bob", "eve")]
        game = await start_private_game(running, ann, bob)
        await eve.request(t="watch", game=game)
        await play(ann, game, "1a1", 0)
        await play(bob, game, "1a2", 1)
        for client in (ann, bob, eve):
            await client.expect("move", game=game, ply=2)
        ref = await bob.send(t="chat", game=game, text="good luck")  # the players' chat
        await ann.expect("chat", text="good luck")
        await bob.expect("ack", ref=ref)
        said = [m for m in bob.seen if m["t"] == "chat" or m.get("ref") == ref]
        assert [m["t"] for m in said] == ["chat", "ack"]  # the chat reached bob before its ack
        ref = await eve.send(t="chat", game=game, text="nice")  # the spectators' chat
        await eve.expect("ack", ref=ref)
        assert [m["text"] for m in eve.seen if m["t"] == "chat"] == ["nice"]
        ref = await bob.send(t="resign", game=game)
        await bob.expect("ack", ref=ref)
        ended = [m for m in bob.seen if m["t"] == "end" or m.get("ref") == ref]
        assert [m["t"] for m in ended] == ["end", "ack"]
        for client in (ann, eve):
            assert (await client.expect("end", game=game))["reason"] == "resign"
        seen = len(eve.seen)
        ref = await eve.send(t="watch", game=game, since=1)  # a catch-up, then its ack
        await eve.expect("ack", ref=ref)
        caught = [m["t"] for m in eve.seen[seen:]]
        # her chat, not the players'; the count of spectators last
        assert caught == ["move", "chat", "end", "watching", "ack"], caught
        assert [m["text"] for m in eve.seen[seen:] if m["t"] == "chat"] == ["nice"]
    finally:
        await running.stop()
    assert bus.closed
