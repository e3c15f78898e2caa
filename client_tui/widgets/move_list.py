"""The moves of a game in notation, numbered in pairs, the shown one highlighted."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget


def move_rows(moves: list[str], shown_ply: int) -> list[Text]:
    """``1. 1a1  2b2`` rows; the move that made the shown position is highlighted."""
    rows = []
    for start in range(0, len(moves), 2):
        row = Text(f"{start // 2 + 1:>3}. ", style="dim")
        for ply in (start + 1, start + 2):
            if ply > len(moves):
                break
            style = "reverse bold" if ply == shown_ply else ("#ff6b6b" if ply % 2 else "#5fafff")
            row.append(f"{moves[ply - 1]:<4}", style)
            row.append(" ")
        rows.append(row)
    return rows


class MoveList(Widget):
    """The move list; it keeps the shown move in view by drawing the rows around it."""

    DEFAULT_CSS = """
    MoveList {
        height: 1fr;
        min-height: 2;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._moves: list[str] = []
        self._shown = 0

    def show(self, moves: list[str], shown_ply: int) -> None:
        """Draw ``moves`` with the position after ``shown_ply`` moves highlighted."""
        if moves != self._moves or shown_ply != self._shown:
            self._moves = list(moves)
            self._shown = shown_ply
            self.refresh()

    def render(self) -> Text:
        height = max(1, self.content_size.height)
        if not self._moves:
            return Text("Moves appear here.", style="dim")
        rows = move_rows(self._moves, self._shown)
        current = max(0, (self._shown - 1) // 2)
        end = min(len(rows), max(height, current + 1 + height // 3))
        return Text("\n").join(rows[max(0, end - height) : end])
