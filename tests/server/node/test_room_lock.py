"""``server.node.room_lock.RoomLock``: a room's changes one at a time, in the order they came,
as ``asyncio.Lock`` gave them, with a free lock taken without waiting; a waiter cancelled
before or after it is handed the lock loses nobody their turn."""

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
    lock.release()  # handed to the first waiter: still held
    assert lock.locked() and not lock.take()  # a newcomer waits its turn
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


async def test_a_waiter_cancelled_once_handed_the_lock_passes_it_on() -> None:
    lock = RoomLock()
    assert lock.take()
    first = asyncio.create_task(lock.acquire())
    second = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # handed to ``first``, which has not run yet ...
    first.cancel()  # ... and is cancelled before it does
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await second  # passed on, not lost
    lock.release()
    assert not lock.locked()


async def test_a_waiter_cancelled_after_a_release_dropped_it_does_not_fail() -> None:
    lock = RoomLock()
    assert lock.take()
    first = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    first.cancel()  # its future is cancelled; the task has not seen it yet
    lock.release()  # drops the cancelled waiter: the lock is free
    with pytest.raises(asyncio.CancelledError):
        await first
    assert not lock.locked() and lock.take()
