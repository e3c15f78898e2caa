"""The connect screen: which server (none: play offline) and under which name; a password to
log in on this device, or a recovery code for a lost one (``RecoverDialog``).

The app shows it first, and again from inside a session ("Connect to a server…", "Rename…" in
the command palette, ``w`` in the lobby: ``edit``): the session goes on until Connect, and
Esc goes back to it. A connection that fails comes back here, saying why, the form as typed."""

from __future__ import annotations

import re

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Footer, Input, Label, Static

from client_tui.messages import ConnectRequested
from client_tui.screens.recover import RecoverDialog
from client_tui.settings import Settings
from client_tui.text import literal
from client_tui.widgets.header import ScreenHeader
from server.protocol import Recover

NAME = re.compile(r"[A-Za-z0-9_-]{1,24}")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a player's name (the words ``qubic play --name`` uses), or None."""
    if NAME.fullmatch(name):
        return None
    if not name:
        return "Pick a name first: 1-24 letters, digits, _ or -."
    return f"{name!r} is not a name: use 1-24 letters, digits, _ or -"


class ConnectScreen(Screen[None]):
    """Server URL and name, a Connect button, and what happened on the last try."""

    BINDINGS = [
        Binding("escape", "app.back_to_session", "Back", id="connect.back",
                tooltip="Back to the session this form was opened from"),
        Binding("ctrl+q", "app.quit", "Quit", id="quit"),
    ]

    def __init__(self, url: str | None, name: str, settings: Settings | None = None) -> None:
        super().__init__()
        self.url = url
        self.player_name = name
        self.settings = settings or Settings()  # its servers used before are offered
        self.starting = False  # the local server is starting: connecting again would cut it
        self._status: tuple[str, bool] = ("", False)
        self._ready = False  # composed and mounted: the widgets can be queried
        self.returnable = False  # opened from a session that goes on: Esc goes back to it
        self.busy = False  # a connection is under way: the form waits, nothing typed is lost

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        with VerticalScroll(id="connect-scroll"), Vertical(id="connect"):
            yield Label("Qubic", id="connect-title")
            yield Label("Server (empty: play offline on this computer)")
            yield Input(self.url or "", placeholder=self._url_placeholder(), id="url",
                        compact=True, suggester=SuggestFromList(self.settings.servers))
            yield Label("Name (1–24 letters, digits, _ or -)")
            yield Input(self.player_name, placeholder="your name", max_length=24, id="name",
                        compact=True)
            yield Label("Password (only for a name you protected)")
            yield Input("", placeholder="empty: play with this device's own key", password=True,
                        max_length=128, id="password", compact=True)
            with Horizontal(id="connect-buttons"):
                yield Button("Connect", variant="primary", id="connect-button", compact=True)
                yield Button("Lost your password?", id="recover-button", compact=True,
                             tooltip="Log in with one of your recovery codes and set a new "
                                     "password")
            yield Static("", id="connect-status")
        yield Footer(compact=True)

    def _url_placeholder(self) -> str:
        if self.settings.servers:
            return f"last: {self.settings.servers[0]} (→ fills in)"
        return "ws://host:8080/ws"

    def on_mount(self) -> None:
        self._ready = True
        self.set_status(*self._status)
        self.set_busy(self.busy)

    def set_busy(self, busy: bool, focus: str = "url") -> None:
        """While a connection is under way the form is greyed (typing in it would be lost
        when the lobby opens); when it ends here (a failure), the focus goes to ``focus``."""
        was, self.busy = self.busy, busy
        if not self._ready:
            return
        for widget in self.query("#connect Input, #connect Button"):
            widget.disabled = busy
        if was and not busy:
            self.query_one(f"#{focus}", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_to_session":
            return self.returnable
        return True

    def edit(self, url: str | None, name: str, field: str, status: str | None) -> None:
        """Show the form again from a session: ``url`` and ``name`` filled in, the focus on
        ``field`` (``url`` or ``name``), ``status`` said (None: a session is not open, so
        there is nothing to go back to)."""
        self.url, self.player_name = url, name
        self.returnable = status is not None
        self.set_busy(False, field)
        if self._ready:
            self.query_one("#url", Input).value = url or ""
            self.query_one("#name", Input).value = name
            self.query_one("#password", Input).value = ""
            self.query_one(f"#{field}", Input).focus()
        self.set_status(status or "")
        self.refresh_bindings()

    def on_screen_resume(self) -> None:
        """Back here after a session: offer the servers used since."""
        url = self.query_one("#url", Input)
        url.placeholder = self._url_placeholder()
        url.suggester = SuggestFromList(self.settings.servers)

    def set_status(self, text: str, error: bool = False) -> None:
        """Say what is happening (or went wrong) below the form."""
        self._status = (text, error)
        if not self._ready:
            return
        status = self.query_one("#connect-status", Static)
        status.update(literal(text))
        status.set_class(error, "-error")

    def on_key(self, key: object) -> None:
        """→ in an empty server field fills in the last server."""
        url = self.query_one("#url", Input)
        if getattr(key, "key", None) == "right" and url.has_focus and not url.value \
                and self.settings.servers:
            url.value = self.settings.servers[0]
            url.cursor_position = len(url.value)

    @on(Input.Submitted)
    @on(Button.Pressed, "#connect-button")
    def connect(self) -> None:
        name = self._checked_name()
        if name is None:
            return
        url = self.query_one("#url", Input).value.strip() or None
        password = self.query_one("#password", Input).value or None
        self.query_one("#password", Input).value = ""  # not kept on screen
        self.set_status("Logging in…" if password else "Connecting…")
        self.post_message(ConnectRequested(url, name, password))

    @on(Button.Pressed, "#recover-button")
    def recover(self) -> None:
        """Ask for a recovery code and a new password for the name typed, then connect with
        them."""
        name = self._checked_name()
        if name is None:
            return
        url = self.query_one("#url", Input).value.strip() or None

        def recovering(request: Recover | None) -> None:
            if request is not None:
                self.set_status("Recovering…")
                self.post_message(ConnectRequested(url, name, recovery=request))

        self.app.push_screen(RecoverDialog(name), recovering)

    def _checked_name(self) -> str | None:
        """The name typed, or None (said on screen) if it is not one or a connection to
        the local server is still starting."""
        if self.starting:
            self.notify("Still starting the local server: the lobby opens when it is ready.",
                        timeout=3)
            return None
        name = self.query_one("#name", Input).value.strip()
        problem = name_problem(name)
        if problem is not None:
            self.set_status(problem, error=True)
            self.query_one("#name", Input).focus()
            return None
        return name
