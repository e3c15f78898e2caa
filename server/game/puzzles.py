"""Puzzle play, pure: judging an attempt against a stored solution, rating it, and picking
the next puzzle, the puzzle of the day and a streak's puzzles.

An attempt is the solver's moves so far (the opponent's replies are the solution's, so the
client never sends them): each must be one the solution accepts at its step (every move that
wins within the moves left was recorded and is accepted). A player's first finished try of a
puzzle (solved, or its first wrong move) is rated: the player and the puzzle play one Glicko-2
game (``server.game.ratings``, as games are rated), the player scoring 1 for a solve. Later
tries, and the streak's, change no rating.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.puzzles.mate import Step
from engine.rules.geometry import Cell
from server.game.ratings import Rating, rate_game

Verdict = Literal["right", "wrong", "solved"]
Mode = Literal["next", "daily", "streak"]
STREAK_STEPS = 20  # a streak climbs the puzzles, easiest first, in about this many steps


@dataclass(frozen=True)
class Judged:
    """What an attempt's last move was: ``right`` (``reply`` is the opponent's answer, and
    there is more to find), ``solved``, or ``wrong`` (``solution``: the moves from the
    puzzle's position that solve it, replies included)."""

    verdict: Verdict
    reply: Cell | None = None
    solution: tuple[Cell, ...] = ()

    @property
    def finished(self) -> bool:
        return self.verdict != "right"


def judge(solution: Step, moves: Sequence[Cell]) -> Judged:
    """Judge the solver's ``moves`` (at least one) against ``solution``."""
    if not moves:
        raise ValueError("an attempt holds at least one move")
    step: Step | None = solution
    line: list[Cell] = []
    for index, cell in enumerate(moves):
        if step is None or not step.accepted:
            raise ValueError(f"the puzzle was solved before move {index + 1}")
        if cell not in step.accepted:
            return Judged("wrong", solution=tuple(line + step.main_line()))
        reply, step = step.accepted[cell]
        line.append(cell)
        if reply is None or step is None or not step.accepted:
            if index != len(moves) - 1:
                raise ValueError(f"the puzzle was solved at move {index + 1}")
            return Judged("solved", solution=tuple(line))
        line.append(reply)
        if index == len(moves) - 1:
            return Judged("right", reply=reply)
    raise AssertionError("unreachable")


def rate_attempt(player: Rating, puzzle: Rating, solved: bool) -> tuple[Rating, Rating]:
    """The player and the puzzle after one rated try: a Glicko-2 game between them."""
    return rate_game(player, puzzle, 1.0 if solved else 0.0)


def daily_index(day: datetime.date, count: int) -> int:
    """The puzzle of ``day`` (UTC) among ``count``: the same all day, for everyone; days
    follow each other in a shuffled order, not the list's."""
    digest = hashlib.sha256(f"qubic puzzle of {day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def utc_day(now: float) -> datetime.date:
    return datetime.datetime.fromtimestamp(now, datetime.UTC).date()


def day_start(day: datetime.date) -> float:
    """The first second of ``day`` (UTC), as Unix seconds."""
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).timestamp()


@dataclass(frozen=True)
class Streak:
    """A player's puzzle streak: ``count`` puzzles solved in a row in the streak going on, the
    ``best`` count, and ``run``, how many streaks were started (``streak_index`` varies each
    run's puzzles by it)."""

    count: int = 0
    best: int = 0
    run: int = 0

    def restarted(self) -> Streak:
        """A new streak: the count back to 0, the next run."""
        return Streak(0, self.best, self.run + 1)

    def after(self, solved: bool) -> Streak:
        """The streak after one of its puzzles is finished: one more if solved, else 0."""
        count = self.count + 1 if solved else 0
        return Streak(count, max(self.best, count), self.run)


def streak_index(streak: int, count: int, run: int) -> int:
    """The position, among ``count`` puzzles ordered easiest first, of a streak's puzzle
    after ``streak`` solves: the easiest fifth first, harder with every solve; ``run``
    varies which puzzle of its band a new streak meets."""
    band = max(1, count // STREAK_STEPS)
    return min(count - 1, streak * band + run % band)


def nearest(ratings: Sequence[tuple[int, float]], target: float) -> int | None:
    """The id, among ``(id, rating)`` pairs, whose rating is nearest ``target``."""
    if not ratings:
        return None
    return min(ratings, key=lambda pair: (abs(pair[1] - target), pair[0]))[0]
