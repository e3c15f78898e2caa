"""A game clock with Fischer increment, driven by times passed in (no timers, no I/O).

The rule Qubic plays by (the same as lichess): no clock runs until both sides have made their
first move. From then on the clock of the side to move runs from the moment the previous move
was made, and each timed move adds the increment to its mover's clock. The server flags a side
whose time has run out (``GameClock.flagged``); a paused clock (after a server restart) runs
again on the next move or ``resume``, so downtime is never charged to anyone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GameClock:
    """Two countdowns in seconds; ``running`` is the side whose time is ticking, if any."""

    initial: float
    increment: float
    remaining: list[float]
    running: int | None = None
    started_at: float | None = None  # when ``running`` started ticking; None while paused

    @classmethod
    def fresh(cls, initial: float, increment: float) -> GameClock:
        """A clock where both sides have ``initial`` seconds and nothing runs yet."""
        return cls(initial, increment, [float(initial), float(initial)])

    def time_left(self, side: int, now: float) -> float:
        """Seconds ``side`` has at ``now``, never below zero."""
        left = self.remaining[side]
        if side == self.running and self.started_at is not None:
            left -= now - self.started_at
        return max(0.0, left)

    def flagged(self, now: float) -> int | None:
        """The side whose time has run out at ``now``, or ``None``."""
        if self.running is None or self.started_at is None:
            return None
        return self.running if self.time_left(self.running, now) <= 0 else None

    def press(self, mover: int, ply: int, now: float) -> None:
        """Record the move number ``ply`` (0-based) by ``mover`` made at ``now``.

        The first move of each side is free; from the second move on the mover is charged the
        time since the previous move and given the increment, and the opponent's clock starts.
        """
        if ply >= 2:
            self.remaining[mover] = self.time_left(mover, now) + self.increment
        if ply >= 1:
            self.running = mover ^ 1
            self.started_at = now

    def stop(self, now: float) -> None:
        """Charge the running side up to ``now`` and stop the clock for good (the game ended)."""
        self.pause(now)
        self.running = None

    def pause(self, now: float) -> None:
        """Charge the running side up to ``now`` and hold its clock until ``resume``."""
        if self.running is not None and self.started_at is not None:
            self.remaining[self.running] = self.time_left(self.running, now)
        self.started_at = None

    def resume(self, now: float) -> None:
        """Let the side to move's clock run again from ``now`` (no effect unless paused)."""
        if self.running is not None and self.started_at is None:
            self.started_at = now

    @property
    def paused(self) -> bool:
        return self.running is not None and self.started_at is None

    def grant(self, side: int, seconds: float) -> None:
        """Give ``side`` extra seconds (e.g. to make up for a server's downtime)."""
        self.remaining[side] += seconds
