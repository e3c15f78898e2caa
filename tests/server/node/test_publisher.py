"""The rooms' ``Publisher`` on the embedded server's ``LocalBus``: each batch published at once
(``LocalBus.publish_soon``), numbered and in order, delivered on a later turn of the loop as
every bus delivers, with no publisher task; a closed bus loses the batch and says so."""

from __future__ import annotations

import asyncio
import logging

import msgspec
import pytest

from server.errors import BusError
from server.game.room import GameRoom, Outbound, RoomSeat
from server.node.bus import LocalBus
from server.node.delivery import Batch, game_topic
from server.node.publisher import Publisher
from server.protocol import Watching


def _room() -> GameRoom:
    return GameRoom("g1", (RoomSeat("ann", "ann"), RoomSeat("bob", "bob")))


async def test_a_local_bus_gets_each_batch_at_once_in_order_and_no_task_is_made() -> None:
    bus, heard = LocalBus(), []
    await bus.subscribe(game_topic("g1"), lambda topic, message: heard.append(
        msgspec.msgpack.decode(message, type=Batch)))
    publisher, room = Publisher(bus, ""), _room()
    for count in (1, 2, 3):
        publisher.deliver(room, [Outbound(Watching(game="g1", count=count))])
    assert heard == []  # never from inside the publish: on a later turn
    await asyncio.sleep(0)
    assert [batch.seq for batch in heard] == [1, 2, 3]
    assert [msgspec.json.decode(batch.items[0].frame)["count"] for batch in heard] == [1, 2, 3]
    assert publisher._task is None  # noqa: SLF001
    await publisher.flush()
    await publisher.close()


async def test_local_publish_soon_refuses_once_the_bus_is_closed() -> None:
    bus = LocalBus()
    await bus.close()
    with pytest.raises(BusError, match="closed"):
        bus.publish_soon("t", b"x")


async def test_a_batch_for_a_closed_local_bus_is_lost_and_said_so_quietly(
        caplog: pytest.LogCaptureFixture) -> None:
    """The embedded bus closes when the server stops, after every session: a batch made
    then (a bot stream's session leaving its game) has nobody to reach; not an error."""
    bus = LocalBus()
    publisher = Publisher(bus, "")
    await bus.close()
    with caplog.at_level(logging.DEBUG, logger="server.node.publisher"):
        publisher.deliver(_room(), [Outbound(Watching(game="g1", count=1))])
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "events for game:g1 not published: the server has stopped")]
