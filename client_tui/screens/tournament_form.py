"""The moderators' form that schedules a tournament (``n`` on the tournaments' list): the web
client's fields, returned as the ``tournament_create`` request it makes, checked as the
server checks it (a field at fault is said in the form, which stays open)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from server.errors import ServerError
from server.protocol import VARIANTS, TournamentCreate

TOURNAMENT_CLOCKS = ("1+0", "1+1", "3+0", "3+2", "5+3", "10+5")  # the web client's
LENGTHS = {"arena": ("Minutes", "60"), "swiss": ("Rounds", "5")}


class TournamentForm(ModalScreen[TournamentCreate | None]):
    """Name, kind, when it starts, how long (an arena's minutes, a Swiss's rounds), clock,
    board, computer players, rated; Create returns the request, Escape None. ``now``: the
    clock the start is counted from (Unix seconds)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="tournament_form.cancel")]

    def __init__(self, now: Callable[[], float]) -> None:
        super().__init__()
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="tournament-form", classes="dialog"):
            yield Label("Create a tournament", classes="dialog-title")
            with Grid(classes="dialog-fields"):
                yield Label("Name")
                yield Input(placeholder="Evening arena", max_length=60, id="name", compact=True)
                yield Label("Kind")
                yield Select([("Arena", "arena"), ("Swiss", "swiss")], value="arena",
                             allow_blank=False, id="kind", compact=True)
                yield Label("Starts in (min)")
                yield Input("5", type="integer", id="start", compact=True)
                yield Label(LENGTHS["arena"][0], id="length-label")
                yield Input(LENGTHS["arena"][1], type="integer", id="length", compact=True)
                yield Label("Clock")
                yield Select([(c, c) for c in TOURNAMENT_CLOCKS], value="3+2",
                             allow_blank=False, id="clock", compact=True)
                yield Label("Board")
                yield Select([(v, v) for v in VARIANTS], value="4x4x4", allow_blank=False,
                             id="variant", compact=True)
                yield Label("Computers")
                yield Input(placeholder="levels, e.g. 2 5", max_length=40, id="levels",
                            compact=True)
                yield Label("Rated")
                yield Select([("rated", True), ("casual", False)], value=True,
                             allow_blank=False, id="rated", compact=True)
            yield Static("", classes="dialog-text", id="form-fault")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create", variant="primary", id="create")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()

    @on(Select.Changed, "#kind")
    def kind_changed(self, event: Select.Changed) -> None:
        label, value = LENGTHS[str(event.value)]
        self.query_one("#length-label", Label).update(label)
        self.query_one("#length", Input).value = value

    def request(self) -> TournamentCreate:
        """The form as the request, checked as the server checks it (``ValueError`` says
        which field is at fault)."""
        text = {i.id: i.value.strip() for i in self.query(Input)}
        kind = str(self.query_one("#kind", Select).value)
        if not text["name"]:
            raise ValueError("Give the tournament a name.")
        if not text["start"].isdigit():
            raise ValueError("Starts in: a number of minutes (0: now).")
        if not text["length"].isdigit() or int(text["length"]) < 1:
            raise ValueError(f"{LENGTHS[kind][0]}: a whole number, 1 or more.")
        levels = text["levels"].replace(",", " ").split()
        if not all(level.isdigit() and 1 <= int(level) <= 8 for level in levels):
            raise ValueError("Computers: levels from 1 to 8, separated by spaces.")
        fields: dict[str, Any] = {
            "t": "tournament_create", "name": text["name"], "kind": kind,
            "starts_at": int(self.now()) + 60 * int(text["start"]),
            "clock": self.query_one("#clock", Select).value,
            "variant": self.query_one("#variant", Select).value,
            "rated": bool(self.query_one("#rated", Select).value),
            "computer_levels": [int(level) for level in levels],
            "minutes" if kind == "arena" else "rounds": int(text["length"]),
        }
        try:
            return msgspec.convert(fields, TournamentCreate)
        except (msgspec.ValidationError, ServerError) as fault:
            raise ValueError(str(fault)) from None

    @on(Button.Pressed, "#create")
    @on(Input.Submitted)
    def create(self) -> None:
        try:
            request = self.request()
        except ValueError as fault:
            self.query_one("#form-fault", Static).update(str(fault))
            return
        self.dismiss(request)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
