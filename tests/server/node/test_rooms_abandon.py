"""The abandoned-games sweep acts only on the rooms this server still holds."""

from __future__ import annotations

import asyncio

from tests.eventually import eventually
from tests.server.servers import Server, play, start_private_game


async def test_a_room_dropped_while_the_sweep_waits_for_its_lock_is_left_alone(
    server: Server,
) -> None:
    """A room handed off (or whose lease was lost) while the sweep waited for its lock is
    not this server's any more: ending it would write to a game someone else now holds."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game_id = await start_private_game(server, ann, bob)
    await play(ann, game_id, "1a1", 0)
    rooms = server.running.hub.rooms
    room = rooms.held[game_id]
    await ann.ws.close()
    await bob.ws.close()
    await eventually(lambda: room.abandoned_since() is not None, "the room is abandoned")

    lock = rooms.locks[game_id]
    async with lock:  # a change in flight
        sweep = asyncio.create_task(rooms.upkeep.end_abandoned(rooms.now() + 10**6))
        await eventually(lambda: lock._waiters, "the sweep waits for the lock")  # noqa: SLF001
        rooms.drop(game_id)  # meanwhile the game went to another holder
    await sweep

    assert not room.over
    record = await server.running.store.get_game(game_id)
    assert record is not None and record.result is None
