"""``server.node.room_lock.RoomLock``: a room's changes one at a time, in the order they came,
as ``asyncio.Lock`` gave them, with a free lock taken without waiting; a waiter cancelled
before or after it is woken loses nobody their turn."""

from __future__ import annotations

import asyncio

import pytest

from server.node.room_lock import RoomLock


async def test_a_free_lock_is_taken_at_once_and_a_held_one_is_not() -> None:
    lock = RoomLock()
    assert lock.take() and lock.locked()
    assert not lock.take()
    lock.release()
    assert not lock.locked() and lock.take()


async def test_waiters_get_the_lock_in_the_order_they_came_and_nobody_slips_in() -> None:
    lock = RoomLock()
    order: list[int] = []

    async def change(n: int) -> None:
        async with lock:
            order.append(n)
            await asyncio.sleep(0)

    assert lock.take()
    changes = [asyncio.create_task(change(n)) for n in range(4)]
    await asyncio.sleep(0)
    assert len(lock._waiters) == 4  # noqa: SLF001
    lock.release()  # free, the first waiter woken: it takes the lock when it runs
    assert not lock.locked() and not lock.take()  # a newcomer waits its turn
    await asyncio.gather(*changes)
    assert order == [0, 1, 2, 3]
    assert not lock.locked()


async def test_a_waiter_cancelled_while_waiting_leaves_the_line() -> None:
    lock = RoomLock()
    assert lock.take()
    first = asyncio.create_task(lock.acquire())
    second = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    lock.release()
    assert await second  # the next in line has it
    lock.release()
    assert not lock.locked() and not lock._waiters  # noqa: SLF001


async def test_a_waiter_cancelled_once_woken_passes_the_turn_on() -> None:
    lock = RoomLock()
    assert lock.take()
    first = asyncio.create_task(lock.acquire())
    second = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # ``first`` woken, and not run yet ...
    first.cancel()  # ... and is cancelled before it does
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await second  # its turn passed on, not lost
    lock.release()
    assert not lock.locked()


async def test_a_waiter_cancelled_after_a_release_dropped_it_does_not_fail() -> None:
    lock = RoomLock()
    assert lock.take()
    first = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    first.cancel()  # its future is cancelled; the task has not seen it yet
    lock.release()  # the lock is free; the cancelled waiter is not woken
    with pytest.raises(asyncio.CancelledError):
        await first
    assert not lock.locked() and lock.take()


async def test_a_lock_released_to_a_waiter_is_free_for_the_rooms_to_forget() -> None:
    """``Rooms.drop`` forgets a room's lock once ``locked()`` is false: from the release on,
    as with ``asyncio.Lock``, though a woken waiter has yet to run (it finds the room gone)."""
    lock = RoomLock()
    assert lock.take()
    waiting = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()
    assert not lock.locked()
    assert await waiting and lock.locked()
    lock.release()


async def test_releasing_a_free_lock_is_a_bug() -> None:
    with pytest.raises(RuntimeError):
        RoomLock().release()
