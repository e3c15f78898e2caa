"""The analysis board: play moves for both sides on any position and see who wins.

Opened from the lobby (``a``: the empty board) or from a review ("analyse from here"). Moves
are played on the board (Enter, a click or a typed cell) and taken back (``u``); ``p`` sets up
a position from pasted moves (``1a1 2b2 ...``); ``y`` copies the move string. Each position's
verdict and its moves' come from ``GET /api/solve`` (in a thread: the server's answers are
kept here, so going back costs nothing; a refusal for the rate is asked again after the wait
the server gives).

What is known after a move tells about the position before it (``deduced``): a position the
solver left ``unknown`` (its time ran out) that has a move known to win is a win, whatever
it said before; so taking back after "X wins within 50 plies" shows the position before as
won, that move as the winning one. A position answered ``unknown`` is asked again when shown
again: the server keeps what it proved meanwhile.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from client_tui.text import count, within
from client_tui.widgets.board import BoardView, BoardWidget
from client_tui.widgets.header import ScreenHeader
from engine import Board, GameOver, IllegalMove, NotationError, format_moves, parse_cell

SHOWN_MOVES = 10  # moves listed with their verdicts, best first
Answer = dict[str, Any]  # /api/solve's answer, or {"error": "..."}
Fetch = Callable[[str, str], Answer]  # (variant, moves as "1a1+2b2") -> the answer


def fetch_solve(base: str, timeout: float = 30.0) -> Fetch:
    """``GET /api/solve`` on the server at ``base`` (blocking: run it in a thread). A refusal
    comes back as ``{"error", "retry_in"}``."""

    def fetch(variant: str, moves: str) -> Answer:
        query = urllib.parse.urlencode({"variant": variant, "moves": moves})
        try:
            with urllib.request.urlopen(f"{base}/api/solve?{query}", timeout=timeout) as answer:
                return json.loads(answer.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            body = json.loads(error.read().decode("utf-8") or "{}")
            retry = error.headers.get("Retry-After")
            return {"error": body.get("message", f"HTTP {error.code}"),
                    "retry_in": float(retry) if retry else None}

    return fetch


def verdict_words(verdict: str, plies: int | None, proved_by: str | None, to_move: str) -> str:
    """Who wins, for a position with ``to_move`` ("x" or "o") to play."""
    other = "O" if to_move == "x" else "X"
    by = "by the proof" if proved_by == "book" else "by search"
    winner = to_move.upper() if verdict == "win" else other
    if plies == 0 and verdict in ("win", "loss"):  # the game is over already
        return f"{winner} has won."
    if verdict in ("win", "loss"):
        return f"{winner} wins{within(plies)} ({by})."
    if verdict == "draw":
        return f"A draw with best play ({by})."
    return "Not proved within the solver's time: unknown."


RANK = {"loss": 0, "draw": 1, "unknown": 2, "win": 3}  # a move's verdict, best first


def deduced(answer: Answer, after: Callable[[Answer], Answer | None]) -> Answer:
    """``answer`` with what its moves' own answers (``after(move)``: the position after it,
    if known) prove: each move the solver left unknown takes the verdict of the position it
    leads to, and an unknown position becomes a win when one move wins, a draw or a loss when
    every move is known and none wins. The moves are sorted best first again."""
    if "error" in answer or not answer.get("moves"):
        return answer
    moves, changed = [], False
    for move in answer["moves"]:
        child = after(move)
        if (move["verdict"] == "unknown" and child is not None and "error" not in child
                and child.get("verdict") in ("win", "loss", "draw")):
            move = {**move, "verdict": child["verdict"], "plies": child.get("plies"),
                    "proved_by": child.get("proved_by")}
            changed = True
        moves.append(move)
    if not changed:
        return answer
    moves.sort(key=lambda m: (RANK[m["verdict"]], (m["plies"] or 0)
                              * (-1 if m["verdict"] == "win" else 1)))
    result = {**answer, "moves": moves}
    if answer["verdict"] == "unknown":
        best = moves[0]
        known = all(m["verdict"] != "unknown" for m in moves)
        verdict = {"loss": "win", "draw": "draw", "win": "loss"}[best["verdict"]] \
            if best["verdict"] == "loss" or (known and best["verdict"] != "unknown") else None
        if verdict is not None:
            plies = best["plies"]
            if verdict == "loss":  # the longest defence
                plies = max((m["plies"] for m in moves), default=None, key=lambda p: p or 0)
            result.update(verdict=verdict, plies=None if plies is None else plies + 1,
                          proved_by=best.get("proved_by"))
    return result


def move_words(move: Answer) -> tuple[str, str]:
    """A move's verdict for the player making it, and its style."""
    plies = "" if move.get("plies") is None else f" {move['plies'] + 1}"
    return {"loss": (f"wins{plies}", "bold green"), "win": (f"loses{plies}", "red"),
            "draw": ("draws", ""), "unknown": ("?", "dim")}[move["verdict"]]


class AnalysisScreen(Screen[None]):
    """A board to try ideas on, with the solver's verdicts; see the module docstring."""

    DEFAULT_CSS = """
    AnalysisScreen #analysis-below { height: 1fr; }
    AnalysisScreen #analysis-left { width: 1fr; padding: 0 1; }
    AnalysisScreen #analysis-moves { width: 24; padding: 0 1; }
    AnalysisScreen #analysis-input.hidden { display: none; }
    """

    BINDINGS = [
        Binding("u,backspace", "take_back", "Take back", id="analysis.back",
                tooltip="Take back the last move"),
        Binding("e", "empty", "Empty", id="analysis.empty", tooltip="Start from the empty board"),
        Binding("p", "paste", "Set up", id="analysis.paste",
                tooltip="Set up a position from moves (1a1 2b2 ...)"),
        Binding("y", "copy", "Copy", id="analysis.copy", tooltip="Copy the moves as text"),
        Binding("escape", "leave", "Back", id="analysis.leave", tooltip="Leave the board"),
    ]

    def __init__(self, fetch: Fetch | None, variant: str = "4x4x4",
                 moves: list[int] | None = None) -> None:
        super().__init__()
        self.fetch = fetch
        self.board = Board(variant)
        for cell in moves or []:
            self.board.push(cell)
        self.answers: dict[str, Answer] = {}

    @property
    def moves_text(self) -> str:
        return format_moves(self.board.moves, self.board.geometry)

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield BoardWidget(self._view(), id="analysis-board")
        with Horizontal(id="analysis-below"):
            with Vertical(id="analysis-left"):
                yield Static(id="analysis-position")
                yield Static(id="analysis-verdict")
            yield Static(id="analysis-moves")
        yield Input(placeholder="Moves to set up: 1a1 2b2 … then Enter (Esc: cancel)",
                    id="analysis-input", classes="hidden")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "Analysis board"
        self.query_one(BoardWidget).focus()
        self.changed()

    def _answer(self) -> Answer | None:
        """The solver's answer for the position shown, with what is known after its moves."""
        board = self.board
        answer = self.answers.get(f"{board.geometry.name} {self.moves_text}")
        if answer is None:
            return None

        def after(move: Answer) -> Answer | None:
            moves = format_moves([*board.moves, move["cell"]], board.geometry)
            return self.answers.get(f"{board.geometry.name} {moves}")

        return deduced(answer, after)

    def _view(self) -> BoardView:
        answer = self._answer()
        best = None
        if answer and answer.get("moves") and answer["moves"][0]["verdict"] == "loss":
            best = answer["moves"][0]["cell"]
        board = self.board
        return BoardView(board=board.copy(), last_move=board.moves[-1] if board.moves else None,
                         winning_line=board.winning_line or (), suggested=best,
                         show_guides=False)

    def changed(self) -> None:
        """Redraw, and ask the solver about the position if it is not known yet."""
        self.render_all()
        key = f"{self.board.geometry.name} {self.moves_text}"
        known = self.answers.get(key)
        if (known is None or known.get("verdict") == "unknown") and self.fetch is not None:
            self.ask(key, self.board.geometry.name, "+".join(self.moves_text.split()))

    @work(exclusive=True, thread=True, group="solve")
    def ask(self, key: str, variant: str, moves: str) -> None:
        assert self.fetch is not None
        answer = self.fetch(variant, moves)
        self.app.call_from_thread(self.answered, key, answer)

    def answered(self, key: str, answer: Answer) -> None:
        retry = answer.get("retry_in")
        if "error" in answer and retry:  # too many questions: ask again after the wait
            self.set_timer(float(retry), self.changed)
            return
        self.answers[key] = answer
        self.render_all()

    def render_all(self) -> None:
        self.query_one(BoardWidget).view = self._view()
        board = self.board
        to_move = "xo"[board.turn]
        moves = self.moves_text
        plies = count(len(board.moves), "ply", "plies")
        position = f"{plies}: {moves}." if moves else "The empty board."
        if board.outcome() is not None:
            position += " The game is over."
        else:
            position += f" {to_move.upper()} to move."
        self.query_one("#analysis-position", Static).update(Text(position))
        answer = self._answer()
        if answer is None:
            verdict = "Asking the solver…"
        elif "error" in answer:
            verdict = str(answer["error"])
        else:
            verdict = verdict_words(answer["verdict"], answer["plies"], answer["proved_by"],
                                    to_move)
        self.query_one("#analysis-verdict", Static).update(Text(verdict, style="bold"))
        listed = Text()
        for move in (answer or {}).get("moves", [])[:SHOWN_MOVES]:
            words, style = move_words(move)
            listed.append(f"{move['move']:>4} ", style="bold")
            listed.append(f"{words}\n", style=style)
        self.query_one("#analysis-moves", Static).update(listed)

    @on(BoardWidget.CellPicked)
    def play(self, event: BoardWidget.CellPicked) -> None:
        try:
            self.board.push(event.cell)
        except GameOver:
            self.notify("The game is over on this board: u takes a move back.", timeout=3)
            return
        except IllegalMove:
            self.notify("That cell is taken.", timeout=2)
            return
        self.changed()

    def action_take_back(self) -> None:
        if self.board.moves:
            self.board.pop()
            self.changed()

    def action_empty(self) -> None:
        self.board = Board(self.board.geometry.name)
        self.changed()

    def action_paste(self) -> None:
        field = self.query_one("#analysis-input", Input)
        field.remove_class("hidden")
        field.value = ""
        field.focus()

    @on(Input.Submitted, "#analysis-input")
    def set_up(self, event: Input.Submitted) -> None:
        board = Board(self.board.geometry.name)
        try:
            for word in (w for w in re.split(r"[\s,+]+", event.value.strip()) if w):
                board.push(parse_cell(word, board.geometry))
        except (NotationError, IllegalMove, GameOver) as error:
            self.notify(f"Those moves cannot be set up: {error}", severity="warning",
                        timeout=4, markup=False)
            return
        event.input.add_class("hidden")
        self.board = board
        self.query_one(BoardWidget).focus()
        self.changed()

    def on_key(self, event: events.Key) -> None:
        field = self.query_one("#analysis-input", Input)
        if event.key == "escape" and field.has_focus:
            field.add_class("hidden")
            self.query_one(BoardWidget).focus()
            event.stop()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.moves_text)
        self.notify(f"Copied: {self.moves_text or '(the empty board)'}", timeout=3,
                    markup=False)

    def action_leave(self) -> None:
        self.app.pop_screen()
