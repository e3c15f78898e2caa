"""The account screen: protect this name with a password (its recovery codes shown once),
my devices (log the selected one out), log out everywhere else.

The screen posts its requests up (``Outgoing``); the app hands it the server's answers
(``received``: ``password_set``, ``devices``). Logging in on this device is the connect
screen's password field (``login_request`` makes its request).
"""

from __future__ import annotations

import platform
import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Input, Label, Static

from client_tui.messages import Outgoing
from client_tui.text import count, literal
from client_tui.widgets.header import ScreenHeader
from server.protocol import (
    PASSWORD_MAX,
    PASSWORD_MIN,
    Devices,
    Login,
    PasswordSet,
    Revoke,
    Sessions,
    SetPassword,
)


def device_label() -> str:
    """How this computer names itself in the device list."""
    return f"terminal: {platform.node() or 'this computer'}"[:40]


def login_request(name: str, password: str | None) -> Login | None:
    """The ``login`` that opens a session on this device with ``password``, if one is given."""
    if not password:
        return None
    return Login(name=name, password=password, device=device_label())


def password_problem(password: str, again: str, name: str) -> str | None:
    """Why ``password`` cannot be set (the server's rule, said before asking it), or None."""
    if len(password) < PASSWORD_MIN:
        return f"A password has at least {PASSWORD_MIN} characters."
    if len(password) > PASSWORD_MAX:
        return f"A password has at most {PASSWORD_MAX} characters."
    if password.casefold() == name.casefold():
        return "A password cannot be your name."
    if password != again:
        return "The two new passwords differ."
    return None


def recovery_codes(codes: list[str]) -> Text:
    """The recovery codes under a line saying what they are: one code a line, each kept whole
    (the server's text, shown literally; the lines are ours, not a visible ``␊``)."""
    text = Text("Your recovery codes: write them down now, they are shown only once. Each "
                "lets you set a new password once if you lose yours.")
    for number, code in enumerate(codes, 1):
        text.append(f"\n  {number:2}. ")
        text.append_text(literal(code))
    return text


class AccountScreen(Screen[None]):
    """Your name's password and your devices."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Lobby", id="account.back"),
        Binding("r", "revoke", "Log out device", id="account.revoke",
                tooltip="Log out the device selected in the list"),
        Binding("ctrl+r", "reload", "Reload", show=False, id="account.reload"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.player = name
        self.devices: list[int] = []  # the table's rows, by device id
        self.current: int | None = None

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        with VerticalScroll(id="account"):
            yield Label("Protect this name", classes="section-title")
            yield Static(literal(
                f"With a password you can log in as {self.player} on any computer (type it on "
                "the connect screen). Setting or changing it logs out every other device."))
            yield Label("Current password (if you have set one)")
            yield Input(password=True, id="current", compact=True,
                        placeholder="empty if you have none")
            yield Label(f"New password ({PASSWORD_MIN}-{PASSWORD_MAX} characters), twice")
            yield Input(password=True, id="new", compact=True, placeholder="new password")
            yield Input(password=True, id="again", compact=True,
                        placeholder="the new password again")
            yield Button("Set password", variant="primary", id="set-password", compact=True)
            yield Static("", id="account-status")
            yield Static("", id="recovery-codes")
            yield Label("My devices · r logs out the selected one", classes="section-title")
            yield DataTable(id="devices", cursor_type="row", zebra_stripes=True)
            yield Horizontal(Button("Log out everywhere else", id="logout-others",
                                    compact=True))
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "Account"
        self.query_one("#devices", DataTable).add_columns("", "Device", "Last used", "From")
        self.query_one("#current", Input).focus()  # the first key typed is the password's
        self.action_reload()

    def say(self, text: str) -> None:
        self.query_one("#account-status", Static).update(literal(text))

    # -- requests up -----------------------------------------------------------------------

    def action_reload(self) -> None:
        self.post_message(Outgoing(Sessions()))

    @on(Button.Pressed, "#set-password")
    @on(Input.Submitted, "#again")
    def set_password(self) -> None:
        fields = {key: self.query_one(f"#{key}", Input) for key in ("current", "new", "again")}
        problem = password_problem(fields["new"].value, fields["again"].value, self.player)
        if problem is not None:
            self.say(problem)
            return
        self.post_message(Outgoing(SetPassword(password=fields["new"].value,
                                               current=fields["current"].value or None)))
        for field in fields.values():
            field.value = ""
        self.say("Setting the password…")

    def action_revoke(self) -> None:
        table = self.query_one("#devices", DataTable)
        if not self.devices or table.cursor_row >= len(self.devices):
            return
        device = self.devices[table.cursor_row]
        if device == self.current:
            self.say("That is this computer: log out the others, or quit.")
            return
        self.post_message(Outgoing(Revoke(device=device)))

    @on(Button.Pressed, "#logout-others")
    def log_out_others(self) -> None:
        self.post_message(Outgoing(Revoke(others=True)))

    # -- the server's answers --------------------------------------------------------------

    def received(self, message: PasswordSet | Devices) -> None:
        if isinstance(message, PasswordSet):
            self.query_one("#recovery-codes", Static).update(
                recovery_codes(message.recovery_codes))
            others = (f" {count(message.revoked, 'other device')} logged out."
                      if message.revoked else "")
            self.say(f"Your name is protected.{others}")
            self.action_reload()
            return
        if message.revoked:
            self.say(f"{message.revoked} device{'s' if message.revoked > 1 else ''} logged out.")
        table = self.query_one("#devices", DataTable)
        table.clear()
        self.devices = [device.id for device in message.devices]
        for device in message.devices:
            if device.current:
                self.current = device.id
            seen = "never" if device.last_seen is None else time.strftime(
                "%d %b %H:%M", time.localtime(device.last_seen))
            table.add_row("this" if device.current else "",
                          literal(device.label or "first device"), seen,
                          literal(device.address or ""))
