"""The connect screen: which server (none: play offline) and under which name."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Static

from client_tui.messages import ConnectRequested
from client_tui.text import literal

NAME_PATTERN = r"[A-Za-z0-9_-]*"


class ConnectScreen(Screen[None]):
    """Server URL and name, a Connect button, and what happened on the last try."""

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", id="quit")]

    def __init__(self, url: str | None, name: str) -> None:
        super().__init__()
        self.url = url
        self.player_name = name
        self._status: tuple[str, bool] = ("", False)
        self._ready = False  # composed and mounted: the widgets can be queried

    def compose(self) -> ComposeResult:
        yield Header()
        with Center(), Vertical(id="connect"):
            yield Label("Qubic", id="connect-title")
            yield Label("Server (leave empty to play offline on this computer)")
            yield Input(self.url or "", placeholder="ws://host:8080/ws", id="url")
            yield Label("Name (1–24 letters, digits, _ or -)")
            yield Input(self.player_name, placeholder="your name", restrict=NAME_PATTERN,
                        max_length=24, id="name")
            yield Button("Connect", variant="primary", id="connect-button")
            yield Static("", id="connect-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True
        self.set_status(*self._status)

    def set_status(self, text: str, error: bool = False) -> None:
        """Say what is happening (or went wrong) below the form."""
        self._status = (text, error)
        if not self._ready:
            return
        status = self.query_one("#connect-status", Static)
        status.update(literal(text))
        status.set_class(error, "-error")

    @on(Input.Submitted)
    @on(Button.Pressed, "#connect-button")
    def connect(self) -> None:
        url = self.query_one("#url", Input).value.strip() or None
        name = self.query_one("#name", Input).value.strip()
        if not name:
            self.set_status("Pick a name first.", error=True)
            self.query_one("#name", Input).focus()
            return
        self.set_status("Connecting…")
        self.post_message(ConnectRequested(url, name))
