"""A room's lock: ``asyncio.Lock``'s algorithm, with a free lock taken and given back in one
call each on the rooms' hot path (``Rooms.act``).

``asyncio.Lock`` costs five calls a use taken free (``__aenter__``, ``acquire``,
``__aexit__``, ``release``, ``_wake_up_first``), and every move takes one. ``RoomLock`` is
held while ``held``; ``take`` is the fast path (free, nobody waiting: taken, no await),
``acquire`` waits in line. As ``asyncio.Lock`` (whose steps these are), ``release`` frees the
lock and wakes the first waiter, which takes it when it runs; nobody slips in meanwhile (a
newcomer waits behind it), and a waiter cancelled after it was woken wakes the next. The
lock is free (``locked()`` false) from the release on: ``Rooms.drop`` forgets a free lock
even if a woken waiter is yet to run (it finds the room gone).
"""

from __future__ import annotations

import asyncio
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
        if not self.held and all(waiter.cancelled() for waiter in self._waiters):
            self.held = True
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        except asyncio.CancelledError:
            if not self.held:
                self._wake_up_first()  # woken as it was cancelled: the next one's turn
            raise
        self.held = True
        return True

    def release(self) -> None:
        """Free the lock and wake the first waiter."""
        if not self.held:
            raise RuntimeError("the lock is not held")
        self.held = False
        if self._waiters:
            self._wake_up_first()

    def _wake_up_first(self) -> None:
        if self._waiters:
            first = self._waiters[0]
            if not first.done():
                first.set_result(None)

    async def __aenter__(self) -> None:
        if not self.take():
            await self.acquire()

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        self.release()
