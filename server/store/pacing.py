"""Under load, the event loop keeps the time of SQLite's commit window (``--pacing``).

At a thousand moves a second the loop woke about once a move: each frame found it waiting in
``epoll``, and each wake-up cost a context switch and a turn of the loop for a frame or two,
while the writer thread, committing the last group, fought it for the interpreter's lock a
statement at a time. A move is acknowledged only after its group's commit anyway, so under
load the loop can work in the window's time instead:

- once a group of at least ``nap_min`` writes is handed over, the loop **waits for its
  commit** (blocked, the interpreter's lock free; at most one window): the writer runs with
  nobody contending for the lock, and the frames that come meanwhile are read together after;
- then, when the commit's results have had ``DRAIN_TURNS`` turns of the loop to reach the
  sockets (the movers' acks, the opponents' and spectators' updates), it **naps** until
  ``lead`` seconds before the next group's window ends: the frames that come meanwhile wait in
  the kernel and are read in one turn, in time to join that group.

A move's ack comes when it came before: it waits for the same commit. What is not a move (a
chat line, a lobby request, a computer's reply, a timer) may wait up to one window more, and
only under load. The loop-lag probe counts the pauses apart (``paused``). With PostgreSQL the
commit is the loop's own work (asyncpg), so there is nothing to wait for: no pacing.
Measured in docs/benchmarks.md, *The loop keeps the window's time*.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol

NAP_MIN = 8
"""Writes in a handed-over group that say the server is under load (400 moves a second at the
20 ms window): below it, the loop wakes for each frame as before."""

DRAIN_TURNS = 8
"""Turns of the loop between a commit's wake-up and the nap. A commit's results reach the
sockets in four (the writer's callback resolves the group's futures; each mover's coroutine
resumes and queues its ack and its batch; the batch is delivered to the opponent's and the
spectators' sessions; each session's queued frames are written at the end of its turn); twice
that leaves room for what follows a move (a game's end, the next game's start)."""

LEAD = 0.002
"""Seconds before the next group's window ends at which a nap ends, at least: time to read the
frames that came during it and carry their moves out, so that they join that group. The pacer
lengthens it when that took longer (the group went late) and shortens it again, a tenth a
window, when it did not."""


class Window(Protocol):
    """What the pacer reads of ``server.store.grouping.CommitWindow``."""

    commit_interval: float
    hand_overs: int

    @property
    def handed_at(self) -> float: ...


class WriterProgress:
    """How many groups the writer thread has committed, for the loop to wait on."""

    def __init__(self) -> None:
        self._done = 0
        self._changed = threading.Condition()

    def committed(self, groups: int) -> None:
        """The writer thread committed ``groups`` more (after scheduling their callbacks)."""
        with self._changed:
            self._done += groups
            self._changed.notify_all()

    def wait_for(self, groups: int, timeout: float) -> bool:
        """Block until ``groups`` groups in all are committed, at most ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done >= groups, timeout)


class LoopPacer:
    """Paces one event loop by one store's commit window (see the module's docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, window: Window,
                 progress: WriterProgress, *, nap_min: int | None = None,
                 lead: float = LEAD) -> None:
        self.loop, self.window, self.progress = loop, window, progress
        self.nap_min = NAP_MIN if nap_min is None else nap_min  # (the module's, when made)
        self.least_lead, self.lead = lead, lead
        self._woke: float | None = None  # when the last nap ended (its group's due time less lead)
        self.active = False  # a wait, its drain or its nap is under way
        self.stopped = False
        self._group = 0  # the hand-over (``window.hand_overs``) waited for
        self.naps = 0
        self.napped = 0.0  # seconds asleep in naps
        self.commit_waits = 0
        self.commit_waited = 0.0  # seconds blocked waiting for the writer

    @property
    def paused(self) -> float:
        """Seconds the loop has spent paced (waiting for commits and napping), in all."""
        return self.napped + self.commit_waited

    def handed_over(self, size: int) -> None:
        """A group of ``size`` writes was handed to the writer (on the loop)."""
        if self._woke is not None:  # the group gathered after a nap: was it handed over late?
            late = self.window.handed_at - (self._woke + self.lead)
            self._woke = None
            self.lead = (min(self.lead + late, self.window.commit_interval / 2) if late > 0
                         else max(self.least_lead, self.lead * 0.9))
        if self.active or self.stopped or size < self.nap_min:
            return
        if self.window.commit_interval <= 0:  # no window to keep
            return
        self.active = True
        self._group = self.window.hand_overs
        self.loop.call_soon(self._wait_commit)

    def stop(self) -> None:
        self.stopped = True

    def _wait_commit(self) -> None:
        started = time.monotonic()
        self.progress.wait_for(self._group, self.window.commit_interval)
        self.commit_waits += 1
        self.commit_waited += time.monotonic() - started
        self.loop.call_soon(self._drain, DRAIN_TURNS)

    def _drain(self, turns: int) -> None:
        if turns:
            self.loop.call_soon(self._drain, turns - 1)
            return
        if self.stopped:
            self.active = False
            return
        if self.window.hand_overs != self._group:  # another group went meanwhile: wait for it too
            self._group = self.window.hand_overs
            self.loop.call_soon(self._wait_commit)
            return
        # The loop's clock is the monotonic one (uvloop's read coarsely and once a turn, so
        # a little behind): reckoned against time.monotonic(), a nap ends early, never late.
        until = self.window.handed_at + self.window.commit_interval - self.lead
        nap = until - time.monotonic()
        if nap > 0:
            time.sleep(nap)
            self.naps += 1
            self.napped += nap
            self._woke = until
        self.active = False
