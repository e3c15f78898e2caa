"""Recovery from the connect screen: a player who lost the password of a protected name types
one of its recovery codes and a new password; the connect screen then opens the session with
``recover`` instead of ``hello`` (as the web client's connect screen does). The code works
once, and every other device of the player is logged out."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from client_tui.screens.account import device_label, password_problem
from client_tui.text import literal
from server.protocol import PASSWORD_MAX, PASSWORD_MIN, Recover


def recover_request(name: str, code: str, password: str) -> Recover:
    """The ``recover`` that opens a session on this device with a recovery code."""
    return Recover(name=name, recovery_code=code.strip(), password=password,
                   device=device_label())


class RecoverDialog(ModalScreen[Recover | None]):
    """A recovery code and a new password, twice, for ``name``; Recover returns the request,
    Escape returns None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.player = name

    def compose(self) -> ComposeResult:
        with Vertical(id="recover", classes="dialog"):
            yield Label(f"Recover {self.player}", classes="dialog-title", markup=False)
            yield Static(literal(
                "Lost the password? Type one of the recovery codes you were given when you "
                "protected the name, and a new password. The code then no longer works, and "
                "every other device is logged out."), classes="dialog-text")
            yield Label("Recovery code")
            yield Input(placeholder="abcd-efgh-jkmn-pqrs", max_length=64, id="recovery-code",
                        compact=True)
            yield Label(f"New password ({PASSWORD_MIN}-{PASSWORD_MAX} characters), twice")
            yield Input(password=True, max_length=PASSWORD_MAX, id="recover-new", compact=True)
            yield Input(password=True, max_length=PASSWORD_MAX, id="recover-again",
                        compact=True)
            yield Static("", id="recover-status", classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Recover and log in", variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#recovery-code", Input).focus()

    @on(Input.Submitted, "#recover-again")
    @on(Button.Pressed, "#ok")
    def recover(self) -> None:
        code = self.query_one("#recovery-code", Input).value.strip()
        new = self.query_one("#recover-new", Input).value
        again = self.query_one("#recover-again", Input).value
        problem = "Type one of your recovery codes." if not code else password_problem(
            new, again, self.player)
        if problem is not None:
            self.query_one("#recover-status", Static).update(literal(problem))
            return
        self.dismiss(recover_request(self.player, code, new))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
