"""The puzzle screen: "X to play and win in 2" on the board, each move judged by the server,
the rating change, and the next puzzle, the puzzle of the day or a streak one key away.

``PuzzleModel`` is the screen's state, pure (no Textual): the puzzle shown, the moves played
since its position (yours and the replies), and what the last judgement was. The app hands it
the server's ``puzzle``, ``puzzle_result`` and ``puzzle_history`` messages (attributes down);
the screen posts ``Outgoing`` requests (messages up).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Static

from client_tui.messages import Outgoing
from client_tui.text import visible
from client_tui.widgets.board import BoardView, BoardWidget
from engine import Board, format_cell, format_moves, variant
from server.protocol import (
    PuzzleAttempt,
    PuzzleDaily,
    PuzzleHistory,
    PuzzleHistoryList,
    PuzzleInfo,
    PuzzleNext,
    PuzzleResult,
    PuzzleShown,
    PuzzleStreak,
    PuzzleTry,
)

MODE_NAMES = {"next": "Puzzle", "daily": "Puzzle of the day", "streak": "Streak"}


@dataclass
class PuzzleModel:
    """One player's puzzle session: the puzzle on screen and where its solving stands.

    ``status``: ``idle`` (none yet), ``loading``, ``solving`` (your move), ``waiting`` (a move
    sent, not judged yet), ``solved`` or ``wrong``."""

    puzzle: PuzzleInfo | None = None
    mode: str = "next"
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
                             mode=self.mode)  # type: ignore[arg-type]

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


class PuzzleScreen(Screen[None]):
    """Puzzles: the board and the feedback; keys for the next puzzle, the day's, a streak."""

    BINDINGS = [
        Binding("n", "next", "Next", id="puzzle.next", tooltip="A puzzle near your rating"),
        Binding("d", "daily", "Daily", id="puzzle.daily", tooltip="The puzzle of the day"),
        Binding("s", "streak", "Streak", id="puzzle.streak",
                tooltip="Start a streak: puzzles in rising difficulty until the first mistake"),
        Binding("c", "streak_on", "Go on", id="puzzle.streak_on",
                tooltip="The streak's next puzzle"),
        Binding("escape", "app.pop_screen", "Lobby", id="puzzle.back",
                tooltip="Back to the lobby"),
    ]

    def __init__(self, model: PuzzleModel | None = None) -> None:
        super().__init__()
        self.model = model or PuzzleModel()
        self._ready = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="puzzle-top"):
            yield Label("", id="puzzle-title", markup=False)
            yield Label("", id="puzzle-meta", markup=False)
            yield Label("", id="puzzle-feedback", markup=False)
        yield BoardWidget(self._board_view(), id="puzzle-board")
        with Horizontal(id="puzzle-below"):
            yield Static("", id="puzzle-history", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "Puzzles"
        self._ready = True
        self.update()
        self.query_one(BoardWidget).focus()
        if self.model.puzzle is None and self.model.status != "loading":
            self.action_next()
        self.post_message(Outgoing(PuzzleHistory(limit=5), quiet=True))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "streak_on":
            return self.model.mode == "streak" and self.model.status == "solved"
        return True

    # -- attributes down -------------------------------------------------------------------

    def received(self, message: PuzzleShown | PuzzleResult | PuzzleHistoryList) -> None:
        """A puzzle message from the server (the app passes them here)."""
        if isinstance(message, PuzzleShown):
            self.model.shown(message)
        elif isinstance(message, PuzzleResult):
            finished = message.verdict != "right"
            self.model.judged(message)
            if finished:
                self.post_message(Outgoing(PuzzleHistory(limit=5), quiet=True))
        else:
            self.model.listed(message)
        self.update()

    def refused(self) -> None:
        self.model.refused()
        self.update()

    def _board_view(self) -> BoardView:
        model = self.model
        if model.puzzle is None:
            return BoardView(Board())
        moves = model.moves()
        board = Board(model.puzzle.variant, moves)
        return BoardView(board, last_move=moves[-1] if moves else None,
                         winning_line=board.winning_line or (), show_guides=False)

    def update(self) -> None:
        if not self._ready:
            return
        model = self.model
        title = "Puzzles" if model.puzzle is None else model.puzzle.title
        self.query_one("#puzzle-title", Label).update(visible(title))
        self.query_one("#puzzle-meta", Label).update(visible(model.meta()))
        feedback = self.query_one("#puzzle-feedback", Label)
        feedback.update(visible(model.words()))
        feedback.set_classes(f"puzzle-{model.status}")
        self.query_one(BoardWidget).view = self._board_view()
        lines = [f"{'✓' if t.solved else '✗'} {t.title}"
                 f" {t.rating_after - t.rating_before:+d}" if t.rated else
                 f"{'✓' if t.solved else '✗'} {t.title} ({t.mode})" for t in model.history]
        self.query_one("#puzzle-history", Static).update(
            "Your puzzles: " + ("; ".join(lines) if lines else "none yet"))
        self.refresh_bindings()

    # -- messages up -----------------------------------------------------------------------

    def on_board_widget_cell_picked(self, event: BoardWidget.CellPicked) -> None:
        event.stop()
        attempt = self.model.play(event.cell)
        if attempt is None:
            if self.model.status in ("solved", "wrong"):
                self.notify("This puzzle is over: n for the next one.", timeout=3)
            return
        self.post_message(Outgoing(attempt))
        self.update()

    def _ask(self, request: PuzzleNext | PuzzleDaily | PuzzleStreak) -> None:
        self.model.status = "loading"
        self.post_message(Outgoing(request))
        self.update()

    def action_next(self) -> None:
        self._ask(PuzzleNext())

    def action_daily(self) -> None:
        self._ask(PuzzleDaily())

    def action_streak(self) -> None:
        self._ask(PuzzleStreak(new=True))

    def action_streak_on(self) -> None:
        self._ask(PuzzleStreak(new=False))
