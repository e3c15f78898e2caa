"""Who plays whom, both clocks, whose turn it is and how the game stands."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from client_tui.model import SIDES, GameModel, describe_end, format_clock, other
from client_tui.text import literal

SIDE_STYLES = {"x": "bold #ff6b6b", "o": "bold #5fafff"}


def seat_line(model: GameModel, side: str, now: float, width: int) -> Text:
    """One seat: turn marker, colour, name, rating or level, presence, and the clock."""
    seat = model.seat(side)  # type: ignore[arg-type]
    to_move = not model.over and model.turn == side
    line = Text("▶ " if to_move else "  ", style="bold")
    line.append(side.upper(), SIDE_STYLES[side])
    line.append(" ")
    line.append_text(literal(seat.name, "bold" if model.you == side else ""))
    if seat.ai is None and seat.rating is not None:
        line.append(f" ({seat.rating})", "dim")
    if model.you == side:
        line.append(" · you", "dim")
    if seat.ai is None and not seat.online:
        wait = model.claim_in(side, now)  # type: ignore[arg-type]
        away = " · away" if wait is None else f" · away, claim in {wait:.0f}s"
        if wait is not None and wait <= 0:
            away = " · away, claim possible"
        line.append(away, "italic #d7af5f")
    elif seat.ai is None:
        line.append(" ●", "green")
    left = model.time_left(side, now)  # type: ignore[arg-type]
    if left is not None:
        clock = format_clock(left)
        running = model.clocks is not None and model.clocks.running == side and not model.over
        style = "bold reverse" if running else "bold"
        if left < 10_000:
            style += " #ff5f5f"
        pad = max(1, width - line.cell_len - len(clock))
        line.append(" " * pad)
        line.append(clock, style)
    line.truncate(width)
    return line


def status_line(model: GameModel, now: float) -> Text:
    """What is going on: the result, whose move, a draw offer, the computer thinking."""
    if model.reviewing:
        return Text(
            f"Move {model.shown_ply} of {model.ply} · , . step · end: back",
            "italic",
        )
    if model.over:
        text = Text(describe_end(model), "bold")
        if model.rematch:
            asked = ", ".join(side.upper() for side in sorted(model.rematch))
            text.append(f" · rematch asked by {asked}", "italic")
        return text
    parts = Text()
    mover = model.seat(model.turn)
    if model.thinking is not None and mover.ai is not None:
        depth = "" if model.thinking.depth is None else f" (depth {model.thinking.depth})"
        parts.append(f"Computer thinking…{depth}", "italic #d7af5f")
    elif model.my_turn:
        parts.append("Your move", "bold green")
    elif model.you is None:
        parts.append(f"{model.turn.upper()} to move", "bold")
    else:
        parts.append("Waiting for ", "")
        parts.append_text(literal(mover.name))
    if model.draw_offer is not None:
        if model.you is not None and model.draw_offer == other(model.you):
            parts.append(" · draw offered: o accepts, n declines", "bold #d7af5f")
        else:
            parts.append(f" · draw offered by {model.draw_offer.upper()}", "italic")
    if model.can_claim(now):
        parts.append(" · w claims the win", "bold #d7af5f")
    return parts


class GameInfo(Widget):
    """The seats with their clocks, and a status line; ``show`` sets what it draws."""

    DEFAULT_CSS = """
    GameInfo {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._model: GameModel | None = None
        self._now = 0.0

    def show(self, model: GameModel, now: float) -> None:
        """Draw ``model`` as it stands at ``now`` (for the clocks)."""
        self._model = model
        self._now = now
        self.refresh(layout=True)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return 3 if self._model is not None else 1

    def render(self) -> Text:
        model = self._model
        if model is None:
            return Text("")
        width = max(10, self.content_size.width)
        lines = [seat_line(model, side, self._now, width) for side in SIDES]
        status = status_line(model, self._now)
        status.truncate(width, overflow="ellipsis")
        lines.append(status)
        return Text("\n").join(lines)
