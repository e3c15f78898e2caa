"""Waiting for an event with a timeout, without losing a cancellation.

On Python 3.11, ``asyncio.wait_for`` returns the inner result when the inner future finishes
in the same turn as the outer task is cancelled, and the cancellation is lost (CPython issue
86296, fixed in 3.12 by a new ``wait_for``). A loop ``while True: ... await
wait_for(event.wait(), t)`` then never stops: its ``cancel()`` at shutdown is swallowed, and
whoever gathers it waits for ever (a cluster test's teardown hung this way). ``asyncio.wait``
has no such race.
"""

from __future__ import annotations

import asyncio


async def wait_event(event: asyncio.Event, timeout: float) -> bool:
    """``event.wait()`` for at most ``timeout`` seconds: True if the event is set."""
    if event.is_set():
        return True
    waiter = asyncio.ensure_future(event.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()
    return bool(done)


async def stop_tasks(tasks: list[asyncio.Task[None]], every: float = 0.5) -> None:
    """Cancel ``tasks`` and wait until each has ended, cancelling again every ``every``
    seconds: a library that loses a cancellation (a timeout firing as it arrives, a
    reconnect that retries through it) cannot keep a loop alive and its closer waiting."""
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=every)
    await asyncio.gather(*tasks, return_exceptions=True)  # retrieve their outcomes
