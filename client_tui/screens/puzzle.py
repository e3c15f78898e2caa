"""The puzzle screen: "X to play and win in 2" on the board, each move judged by the server,
the rating change, and the next puzzle, the puzzle of the day or a streak one key away.

Its state is a ``PuzzleModel`` (``client_tui.puzzle_model``), kept by the app between visits;
the app hands the server's puzzle messages to ``received`` (attributes down), and the screen
posts ``Outgoing`` requests (messages up).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from client_tui.messages import Outgoing
from client_tui.puzzle_model import PuzzleEvent, PuzzleModel
from client_tui.text import visible
from client_tui.widgets.board import BoardView, BoardWidget
from client_tui.widgets.header import ScreenHeader
from engine import Board
from server.protocol import (
    PuzzleDaily,
    PuzzleHistory,
    PuzzleNext,
    PuzzleResult,
    PuzzleShown,
    PuzzleStreak,
)


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
        yield ScreenHeader()
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

    def received(self, message: PuzzleEvent) -> None:
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
