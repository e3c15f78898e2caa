"""A finished game's review: step through its moves, each marked by what it did.

The server computes the review (the websocket's ``review`` request; the app pushes this screen
with the reply). ``,`` ``.`` (or ``←`` ``→``) step, Home and End jump; the board shows the
position, the move played and the best move there (``!``); beside it, the move's class, the
verdicts before and after it for its mover, the best moves and the line that would have won.
``a`` opens the analysis board on the position shown.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from client_tui.screens.analysis import AnalysisScreen, Fetch, verdict_words
from client_tui.text import count, within
from client_tui.widgets.board import BoardView, BoardWidget
from client_tui.widgets.header import ScreenHeader
from engine import Board, parse_cell
from server.protocol import MoveReview, ReviewInfo, VerdictInfo

# Each class's mark (as chess annotators mark moves), words and style.
CLASSES = {
    "found": ("!", "found a forced win", "bold green"),
    "blunder": ("??", "a blunder: a forced win or a draw thrown away", "bold red"),
    "missed_threat": ("?!", "a threat missed", "bold yellow"),
    "best": ("", "the best move", ""),
    "ok": ("", "a good move, not the best", ""),
    "unknown": ("", "not proved either way", "dim"),
}


def standing(info: VerdictInfo, side: str) -> str:
    """A side's verdict in words: ``X wins within 12 plies (proof)``."""
    by = "proof" if info.proved_by == "book" else "search"
    who, other = side.upper(), "O" if side == "x" else "X"
    if info.plies == 0 and info.verdict in ("win", "loss"):  # the game is over already
        return f"{who if info.verdict == 'win' else other} has won"
    plies = within(info.plies)
    return {"win": f"{who} wins{plies} ({by})", "loss": f"{who} loses{plies} ({by})",
            "draw": f"a draw ({by})"}.get(info.verdict, "unknown")


class ReviewScreen(Screen[None]):
    """One game's review; see the module docstring."""

    DEFAULT_CSS = """
    ReviewScreen #review-below { height: 1fr; }
    ReviewScreen #review-left { width: 1fr; padding: 0 1; }
    ReviewScreen #review-moves { width: 30; padding: 0 1; }
    """

    BINDINGS = [
        Binding("comma,left", "step(-1)", "Moves", key_display=", .", id="review.back",
                tooltip="Step back one move"),
        Binding("full_stop,right", "step(1)", "Forward", show=False, id="review.forward",
                tooltip="Step forward one move"),
        Binding("home", "go(0)", "First", show=False, id="review.first",
                tooltip="The position before the first move"),
        Binding("end", "go(-1)", "Last", show=False, id="review.last",
                tooltip="The last position"),
        Binding("a", "analyse", "Analyse", id="review.analyse",
                tooltip="Open the analysis board on the position shown"),
        Binding("escape", "leave", "Back", id="review.leave", tooltip="Leave the review"),
    ]

    def __init__(self, review: ReviewInfo, fetch: Fetch | None = None) -> None:
        super().__init__()
        self.review = review
        self.fetch = fetch  # /api/solve, for the analysis board
        self.ply = 0

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        board = BoardWidget(self._view(), id="review-board")
        board.can_focus = False  # the keys step through the moves: nothing is typed here
        yield board
        with Horizontal(id="review-below"):
            with Vertical(id="review-left"):
                yield Static(id="review-summary")
                yield Static(id="review-explain")
            yield Static(id="review-moves")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        review = self.review
        self.title = f"Review: {review.x} (X) – {review.o} (O), {review.result}"
        self.update()

    def _view(self) -> BoardView:
        review = self.review
        board = Board(review.variant, [m.cell for m in review.moves[:self.ply]])
        current = review.moves[self.ply - 1] if self.ply else None
        best = None
        if current is not None and current.best and current.best[0] != current.move:
            best = parse_cell(current.best[0], board.geometry)
        return BoardView(board=board, last_move=current.cell if current else None,
                         winning_line=board.winning_line or (), suggested=best,
                         show_guides=False, caption=f"after ply {self.ply} of {len(review.moves)} "
                         "· , . step · a analyses from here")

    def update(self) -> None:
        self.query_one(BoardWidget).view = self._view()
        review = self.review
        summary = Text()
        for side in ("x", "o"):
            counts = review.summary.get(side, {})
            missed = count(counts.get("missed_threat", 0), "threat missed", "threats missed")
            summary.append(f"{side.upper()}: {counts.get('found', 0)} found, "
                           f"{count(counts.get('blunder', 0), 'blunder')}, {missed}.\n")
        self.query_one("#review-summary", Static).update(summary)
        self.query_one("#review-explain", Static).update(self._explain())
        self.query_one("#review-moves", Static).update(self._moves())

    def _explain(self) -> Text:
        review = self.review
        if self.ply == 0:
            start = review.start
            words = verdict_words(start.verdict, start.plies, start.proved_by, "x")
            return Text(f"The start: {words}\n. steps to the first move.")
        move: MoveReview = review.moves[self.ply - 1]
        mark, words, style = CLASSES.get(move.kind, ("", move.kind, ""))
        text = Text()
        text.append(f"{move.ply}. {move.side.upper()} {move.move}{mark}", style="bold")
        text.append(": ")
        text.append(words, style=style)
        text.append(f".\nBefore: {standing(move.before, move.side)}."
                    f"\nAfter: {standing(move.after, move.side)}.")
        if move.best and move.best != [move.move]:
            text.append(f"\nBest: {', '.join(move.best)} (! on the board).")
        if move.line:
            text.append(f"\nThe line that would have won: {' '.join(move.line)}.")
        return text

    def _moves(self) -> Text:
        text = Text()
        for move in self.review.moves:
            mark, _, style = CLASSES.get(move.kind, ("", "", ""))
            here = move.ply == self.ply
            if move.side == "x":
                text.append(f"{(move.ply + 1) // 2:>3}. ", style="dim")
            label = f"{move.move}{mark}"
            text.append(f"{label:<7}", style=f"{style} reverse" if here else style)
            if move.side == "o":
                text.append("\n")
        return text

    def action_step(self, delta: int) -> None:
        self.action_go(self.ply + delta)

    def action_go(self, ply: int) -> None:
        last = len(self.review.moves)
        self.ply = last if ply < 0 else max(0, min(last, ply))
        self.update()

    def action_analyse(self) -> None:
        cells = [m.cell for m in self.review.moves[:self.ply]]
        self.app.push_screen(AnalysisScreen(self.fetch, self.review.variant, cells))

    def action_leave(self) -> None:
        self.app.pop_screen()

