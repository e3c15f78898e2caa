"""Who plays whom, both clocks, whose turn it is and how the game stands."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from client_tui.model import (
    SIDES,
    GameModel,
    describe_end,
    format_clock,
    format_clock_spec,
    other,
    threats,
)
from client_tui.text import bot_mark, literal, visible
from server.protocol import Colour

SIDE_STYLES = {"x": "bold #ff6b6b", "o": "bold #5fafff"}


def seat_line(model: GameModel, side: Colour, now: float, width: int) -> Text:
    """One seat: turn marker, colour, name, rating or level, presence, and the clock."""
    seat = model.seat(side)
    to_move = not model.over and model.turn == side
    line = Text("▶ " if to_move else "  ", style="bold")
    line.append(side.upper(), SIDE_STYLES[side])
    line.append(" ")
    line.append_text(literal(seat.name, "bold" if model.you == side else ""))
    line.append_text(bot_mark(seat.bot))
    if seat.ai is None and seat.rating is not None:
        line.append(f" ({seat.rating})", "dim")
    if model.you == side:
        line.append(" · you", "dim")
    if seat.ai is None and not seat.online and model.over:
        line.append(" · away", "italic #d7af5f")
    elif seat.ai is None and not seat.online:
        wait = model.claim_in(side, now)
        away = " · away" if wait is None else f" · away, claim in {wait:.0f}s"
        if wait is not None and wait <= 0:
            away = " · away, claim possible"
        line.append(away, "italic #d7af5f")
    elif seat.ai is None:
        line.append(" ●", "green")
    left = model.time_left(side, now)
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
    """What is going on: the result, whose move, the computer thinking, the move shown."""
    if model.reviewing:
        return Text(
            f"Move {model.shown_ply} of {model.ply} · , . step · end: back",
            "italic",
        )
    if model.over:
        return Text(describe_end(model), "bold")
    mover = model.seat(model.turn)
    if model.engine is not None and mover.ai is not None:
        engine = model.engine
        progress = f" {engine.progress:.0%}" if engine.state == "preparing" else ""
        return Text(f"{visible(engine.message)}{progress}", "italic #d7af5f")
    if model.thinking is not None and mover.ai is not None:
        depth = "" if model.thinking.depth is None else f" (depth {model.thinking.depth})"
        return Text(f"Computer thinking…{depth}", "italic #d7af5f")
    if model.my_turn:
        return Text("Your move", "bold green")
    if model.you is None:
        return Text(f"{model.turn.upper()} to move", "bold")
    return Text("Waiting for ").append_text(literal(mover.name))


def game_kind(model: GameModel) -> str:
    """``rated · 5+3`` or ``casual · untimed``, then ``· 2 watching`` while anyone watches
    (as the game's last snapshot counted them: the server sends no event when one comes)."""
    kind = f"{'rated' if model.rated else 'casual'} · {format_clock_spec(model.clock)}"
    if model.spectators:
        kind += f" · {model.spectators} watching"
    return kind


def threat_line(model: GameModel) -> Text | None:
    """Where a side would complete a line on its next move, the opponent's first."""
    if model.over or model.reviewing:
        return None
    sides = [model.turn, other(model.turn)]  # the side to move wins first, if it can
    if model.you is not None and not model.my_turn:
        sides = [other(model.you), model.you]  # a player waiting sees the danger first
    for side in sides:
        cells = sorted(threats(model.board, SIDES.index(side)))
        if not cells:
            continue
        where = " ".join(model.notation(cell) for cell in cells[:3])
        if len(cells) > 3:
            where += " …"
        if side == model.you:
            text = "You can win at " if model.my_turn else "Your threat: "
            return Text(text + where, "bold green")
        who = "Your opponent" if model.you is not None else side.upper()
        block = ": block it!" if model.my_turn and len(cells) == 1 else ""
        return Text(f"{who} wins next at {where}{block}", "bold #ff5f5f")
    return None


def note_line(model: GameModel, now: float, show_threats: bool = False) -> Text | None:
    """An offer or a claim waiting for this player, else a threat (when shown), if any."""
    mine = model.you
    if model.over:
        if model.rematch_game is not None:
            return Text("A rematch followed this game", "italic")
        if len(model.rematch) == 2:
            return Text("Rematch agreed: starting it…", "italic")
        if model.rematch:
            if mine is not None and mine not in model.rematch:
                return Text("Rematch asked: m accepts", "bold #d7af5f")
            asked = ", ".join(side.upper() for side in sorted(model.rematch))
            return Text(f"Rematch asked by {asked}", "italic")
        return None
    if model.can_claim(now):
        return Text("Opponent gone: w claims the win", "bold #d7af5f")
    if model.draw_offer is not None:
        if mine is not None and model.draw_offer == other(mine):
            return Text("Draw offered: o accepts, n declines", "bold #d7af5f")
        return Text(f"Draw offered by {model.draw_offer.upper()}", "italic")
    return threat_line(model) if show_threats else None


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
        self._threats = False
        self._height = 1  # the lines drawn last: the layout changes when their number does

    def show(self, model: GameModel, now: float, show_threats: bool = False) -> None:
        """Draw ``model`` as it stands at ``now`` (for the clocks)."""
        self._model = model
        self._now = now
        self._threats = show_threats
        # the model is changed in place, so the height drawn last is what to compare with
        self.refresh(layout=len(self._rows(self.content_size.width)) != self._height)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        self._height = len(self._rows(width))
        return self._height

    def _rows(self, width: int) -> list[Text]:
        """The seats, the status (a result too long for one line wraps: a spectator's names
        the winner and both rating changes) and a note, if any."""
        model = self._model
        if model is None:
            return [Text("")]
        width = max(10, width)
        lines = [seat_line(model, side, self._now, width) for side in SIDES]
        status = status_line(model, self._now)
        watching = f"{model.spectators} watching" if model.spectators else ""
        kind = next((k for k in (game_kind(model), watching)
                     if status.cell_len + len(k) + 2 <= width), "")
        if kind:
            status.append(" " * (width - status.cell_len - len(kind)))
            status.append(kind, "dim")
            lines.append(status)
        elif model.over and not model.reviewing:
            lines.extend(status.wrap(self.app.console, width))
        else:
            status.truncate(width, overflow="ellipsis")
            lines.append(status)
        note = note_line(model, self._now, self._threats)
        if note is not None:
            note.truncate(width, overflow="ellipsis")
            lines.append(note)
        return lines

    def render(self) -> Text:
        return Text("\n").join(self._rows(self.content_size.width))
