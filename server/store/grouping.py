"""Group commit's window, shared by the SQLite and the PostgreSQL stores.

Moves are gathered on the event loop into groups, and each group is handed over at once (to
SQLite's writer thread, or to one PostgreSQL statement on one pooled connection) and committed
in one transaction; every move of it is acknowledged only after that commit. A group goes when
the window since the last hand-over ends (``commit_interval``), as soon as it holds
``commit_max`` writes, or at the end of the loop's turn after a quiet spell or when a write
that must not wait joins it. A game's start or end (``along``) goes with a group that waits
for the window, and at the end of the turn when none does: under load it shares the moves'
commit rather than making one more (``docs/benchmarks.md``, *Group commit*)."""

from __future__ import annotations

import asyncio
import bisect
from typing import Generic, TypeVar

from server.metrics import LAG_BUCKETS

W = TypeVar("W")

COMMIT_INTERVAL = 0.020  # seconds between two hand-overs (commits) under load, at least
COMMIT_MAX = 64  # writes in a group that is handed over at once, without waiting out the window


class CommitWindow(Generic[W]):
    """Gathers writes of type ``W`` and decides when the group goes; a subclass says what
    handing a group over does (``_send_group``). Lives on one event loop."""

    _loop: asyncio.AbstractEventLoop

    def _init_window(self, loop: asyncio.AbstractEventLoop, commit_interval: float,
                     commit_max: int) -> None:
        self._loop = loop
        self.commit_interval = commit_interval
        self.commit_max = max(1, commit_max)
        self._handed_at = float("-inf")  # when the last group was handed over (loop.time())
        self._hand_over_at: asyncio.Handle | None = None  # the gathering group's hand-over
        self._at_turn_end = False  # that hand-over is at the end of this turn of the loop
        self._handing: list[W] = []  # the group being gathered, not yet handed over
        self.hand_overs = 0  # groups handed over (each one wake-up of the writer, one commit)
        self.commits = 0  # transactions committed, for metrics
        # how long each group's transaction took, as counts over metrics.LAG_BUCKETS and
        # +Inf, and their sum: /metrics' store_commit_seconds
        self.commit_buckets = [0] * (len(LAG_BUCKETS) + 1)
        self.commit_seconds = 0.0

    @property
    def handed_at(self) -> float:
        """When the last group was handed over (the loop's clock; -inf before the first)."""
        return self._handed_at

    def _committed(self, took: float) -> None:
        """A group's transaction committed in ``took`` seconds (counted for /metrics)."""
        self.commits += 1
        self.commit_buckets[bisect.bisect_left(LAG_BUCKETS, took)] += 1
        self.commit_seconds += took

    def _send_group(self, group: list[W]) -> None:
        """Hand ``group`` over to be committed; called on the loop, must not block."""
        raise NotImplementedError

    def _gather(self, write: W, *, window: bool, along: bool = False) -> None:
        """Add ``write`` to the group gathered. ``window``: it may wait out the window to
        share a commit (a move: the flood the window is for). ``along``: it goes with a group
        that waits for the window, if one does (a game's start or end: as frequent as the
        moves under load), else at the end of this turn. Any other write sends the group
        gathered so far at the end of this turn of the loop, so a rare write (a new player, a
        lever) is not kept waiting."""
        handing = self._handing
        handing.append(write)
        size = len(handing)
        if size >= self.commit_max:
            self._hand_over()  # full: no need to wait out the window
        elif not window:
            if along and self._hand_over_at is not None and not self._at_turn_end:
                return  # a group waits for the window: this write goes with it
            if not self._at_turn_end:
                self._hand_over_at_turn_end()
        elif size == 1:
            # The group's first write: it goes when the window since the last hand-over ends,
            # or at the end of this turn after a quiet spell (with this turn's other writes).
            due = self._handed_at + self.commit_interval
            if due > self._loop.time():
                self._hand_over_at = self._loop.call_at(due, self._hand_over)
            else:
                self._hand_over_at_turn_end()

    def _hand_over_at_turn_end(self) -> None:
        if self._hand_over_at is not None:
            self._hand_over_at.cancel()
        self._hand_over_at = self._loop.call_soon(self._hand_over)
        self._at_turn_end = True

    def _hand_over(self) -> None:
        """Hand the group gathered so far over as one: the writer is woken once for it (not
        once a write), and its writes share a commit."""
        if self._hand_over_at is not None:
            self._hand_over_at.cancel()
            self._hand_over_at = None
        self._at_turn_end = False
        batch, self._handing = self._handing, []
        if batch:
            self._handed_at = self._loop.time()
            self.hand_overs += 1
            self._send_group(batch)
