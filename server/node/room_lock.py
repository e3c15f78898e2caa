"""A room's lock: ``asyncio.Lock``'s job for the one owner at a time of a room's change, with
a free lock taken and given back in no call on the rooms' hot path (``Rooms.act``).

``asyncio.Lock`` costs five calls a use taken free (``__aenter__``, ``acquire``,
``__aexit__``, ``release``, ``_wake_up_first``), and every move takes one. ``RoomLock`` is
held while ``held``; ``take`` is the fast path (a free lock with nobody waiting: taken, no
await), ``acquire`` waits in line. ``release`` hands the lock to the first waiter still
waiting (it stays held: nobody can slip in between), else frees it. A waiter cancelled after
it was handed the lock passes it on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from types import TracebackType


class RoomLock:
    """One room's lock; see the module docstring. ``async with`` as ``asyncio.Lock``."""

    __slots__ = ("_waiters", "held")

    def __init__(self) -> None:
        self.held = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def locked(self) -> bool:
        return self.held

    def take(self) -> bool:
        """Take the lock if it is free and nobody waits for it; whether it did."""
        if self.held or self._waiters:
            return False
        self.held = True
        return True

    async def acquire(self) -> bool:
        """Take the lock, waiting in line for it if it is held or others wait."""
        if self.take():
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the lock as it was cancelled: pass it on
            else:  # (a release may have dropped it already)
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise
        return True

    def release(self) -> None:
        """Hand the lock to the first waiter still waiting, else free it."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # it holds the lock now
                return
        self.held = False

    async def __aenter__(self) -> None:
        if not self.take():
            await self.acquire()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        self.release()
