"""A player's puzzle session as a plain object: no Textual here (as ``client_tui.model`` for
the games and the lobby).

``PuzzleModel`` holds the puzzle shown, the moves played since its position (yours and the
replies) and what the last judgement was; the app keeps it between visits to the puzzle
screen and hands it the server's ``puzzle``, ``puzzle_result`` and ``puzzle_history``
messages (``PuzzleEvent``) through the screen. It also makes the ``puzzle_attempt`` a move
sends, and says in words where the solving stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine import format_cell, format_moves, variant
from server.protocol import (
    PuzzleAttempt,
    PuzzleHistoryList,
    PuzzleInfo,
    PuzzleMode,
    PuzzleResult,
    PuzzleShown,
    PuzzleTry,
)

PuzzleEvent = PuzzleShown | PuzzleResult | PuzzleHistoryList
"""The server's messages about puzzles that change a ``PuzzleModel``."""

MODE_NAMES = {"next": "Puzzle", "daily": "Puzzle of the day", "streak": "Streak"}


@dataclass
class PuzzleModel:
    """One player's puzzle session: the puzzle on screen and where its solving stands.

    ``status``: ``idle`` (none yet), ``loading``, ``solving`` (your move), ``waiting`` (a move
    sent, not judged yet), ``solved`` or ``wrong``."""

    puzzle: PuzzleInfo | None = None
    mode: PuzzleMode = "next"
    day: str | None = None
    line: list[int] = field(default_factory=list)  # since the position: mine and replies
    mine: list[int] = field(default_factory=list)
    status: str = "idle"
    solution: list[int] = field(default_factory=list)
    rating: int | None = None
    change: int | None = None
    streak: int | None = None
    best: int | None = None
    history: list[PuzzleTry] = field(default_factory=list)

    def shown(self, message: PuzzleShown) -> None:
        self.puzzle, self.mode, self.day = message.puzzle, message.mode, message.day
        self.line, self.mine, self.solution = [], [], []
        self.status, self.rating, self.change = "solving", message.rating, None
        if message.streak is not None:
            self.streak, self.best = message.streak, message.best_streak

    def judged(self, message: PuzzleResult) -> None:
        if self.puzzle is None or message.puzzle != self.puzzle.id:
            return
        if message.verdict == "right":
            assert message.reply is not None
            self.line.append(message.reply)
            self.status = "solving"
            return
        self.status, self.solution = message.verdict, list(message.solution)
        self.rating, self.change = message.rating, message.rating_change
        if message.streak is not None:
            self.streak, self.best = message.streak, message.best_streak

    def listed(self, message: PuzzleHistoryList) -> None:
        self.history = list(message.attempts)
        self.rating = self.rating if self.rating is not None else message.rating
        self.best = self.best if self.best is not None else message.best_streak

    def play(self, cell: int) -> PuzzleAttempt | None:
        """The attempt that plays ``cell``, or None when no move can be made now."""
        if self.puzzle is None or self.status != "solving" or cell in self.moves():
            return None
        self.line.append(cell)
        self.mine.append(cell)
        self.status = "waiting"
        return PuzzleAttempt(puzzle=self.puzzle.id, moves=list(self.mine),
                             mode=self.mode)

    def refused(self) -> None:
        """The last request was refused: take back the move it carried."""
        if self.status == "waiting":
            self.line.pop()
            self.mine.pop()
            self.status = "solving"
        elif self.status == "loading":
            self.status = "solving" if self.puzzle else "idle"

    def moves(self) -> list[int]:
        """Every move of the position shown: after a mistake, the solution's."""
        assert self.puzzle is not None
        after = self.solution if self.status == "wrong" else self.line
        return [*self.puzzle.moves, *after]

    def words(self) -> str:
        """What the feedback line says."""
        if self.status == "loading":
            return "Finding a puzzle…"
        if self.puzzle is None:
            return "n: a puzzle near your rating · d: the puzzle of the day · s: a streak"
        g = variant(self.puzzle.variant)
        change = "" if self.change is None else f" ({self.change:+d})"
        other = "O" if self.puzzle.to_move == "x" else "X"
        if self.status == "waiting":
            return "Checking your move…"
        if self.status == "solved":
            return f"Solved! Your puzzle rating: {self.rating}{change}."
        if self.status == "wrong":
            return (f"Not that one: the solution was {format_moves(self.solution, g)}. "
                    f"Your puzzle rating: {self.rating}{change}.")
        if self.mine:
            return f"Right. {other} answered {format_cell(self.line[-1], g)}: your move."
        if self.puzzle.kind == "survive":
            return (f"Find the only move after which {other} cannot force a win within "
                    f"{self.puzzle.horizon} moves.")
        return "Find the winning move."

    def meta(self) -> str:
        if self.puzzle is None:
            return ""
        parts = [f"{MODE_NAMES.get(self.mode, self.mode)}{' ' + self.day if self.day else ''}",
                 f"#{self.puzzle.id} rated {self.puzzle.rating}"]
        if self.rating is not None:
            parts.append(f"you {self.rating}")
        if self.mode == "streak":
            parts.append(f"streak {self.streak or 0} (best {self.best or 0})")
        return " · ".join(parts)
