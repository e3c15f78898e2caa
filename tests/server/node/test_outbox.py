"""``server.node.bus.Outbox``: the rooms' batches in order, taken at once by one publisher,
``join`` until each is dealt with, as ``asyncio.Queue`` with ``drain`` did."""

from __future__ import annotations

import asyncio

from server.node.bus import MAX_AT_ONCE, Outbox, next_batch


async def test_items_are_taken_in_order_all_at_once_up_to_a_bound() -> None:
    outbox: Outbox[int] = Outbox()
    for item in range(MAX_AT_ONCE + 3):
        outbox.put_nowait(item)
    assert await next_batch(outbox) == list(range(MAX_AT_ONCE))
    assert await next_batch(outbox) == [MAX_AT_ONCE, MAX_AT_ONCE + 1, MAX_AT_ONCE + 2]
    assert outbox.empty()


async def test_a_take_waits_for_the_next_item() -> None:
    outbox: Outbox[str] = Outbox()
    taking = asyncio.ensure_future(outbox.take())
    await asyncio.sleep(0)
    assert not taking.done()
    outbox.put_nowait("a")
    outbox.put_nowait("b")
    assert await taking == ["a", "b"]


async def test_a_cancelled_take_loses_nothing() -> None:
    outbox: Outbox[str] = Outbox()
    taking = asyncio.ensure_future(outbox.take())
    await asyncio.sleep(0)
    taking.cancel()
    await asyncio.sleep(0)
    outbox.put_nowait("a")
    assert await outbox.take() == ["a"]


async def test_join_waits_until_every_item_put_is_done() -> None:
    outbox: Outbox[str] = Outbox()
    await asyncio.wait_for(outbox.join(), 1)  # nothing put: at once
    outbox.put_nowait("a")
    outbox.put_nowait("b")
    joins = [asyncio.ensure_future(outbox.join()) for _ in range(2)]
    taken = await outbox.take()
    outbox.task_done()
    await asyncio.sleep(0)
    assert not any(join.done() for join in joins)
    outbox.put_nowait("c")  # put meanwhile: joined too
    outbox.task_done()
    await asyncio.sleep(0)
    assert taken == ["a", "b"] and not any(join.done() for join in joins)
    await outbox.take()
    outbox.task_done()
    await asyncio.wait_for(asyncio.gather(*joins), 1)
