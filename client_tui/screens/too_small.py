"""Shown over everything while the terminal is too small to draw the board readably."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_WIDTH = 45  # the board's smallest drawing of 4x4x4 (4 layers of 4 two-column cells)
MIN_HEIGHT = 12


class TooSmallScreen(ModalScreen[None]):
    """"Terminal too small", with the size needed; the app removes it once there is room."""

    DEFAULT_CSS = """
    TooSmallScreen {
        align: center middle;
        background: $background;
    }
    TooSmallScreen > Static {
        width: 100%;
        height: auto;
        content-align: center middle;
        text-align: center;
    }
    """
    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", id="too_small.quit")]

    def compose(self) -> ComposeResult:
        yield Static(id="too-small")

    def render_message(self) -> Text:
        width, height = self.app.size
        return Text.assemble(
            ("Terminal too small\n", "bold"),
            f"{width}x{height}: Qubic needs {MIN_WIDTH}x{MIN_HEIGHT}.\n",
            "Make the window bigger (ctrl+q quits).",
        )

    def on_mount(self) -> None:
        self.query_one(Static).update(self.render_message())

    def on_resize(self) -> None:
        self.query_one(Static).update(self.render_message())
