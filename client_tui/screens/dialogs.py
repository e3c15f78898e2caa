"""Modal dialogs returning typed results: game options, a private code, a yes/no question,
which of the things a player waits for to cancel."""

from __future__ import annotations

from dataclasses import replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static

from client_tui.model import format_clock_spec, parse_clock_spec
from client_tui.settings import DialogKind, GameOptions
from server.protocol import VARIANTS

CLOCK_CHOICES = ("untimed", "1+0", "3+2", "5+3", "10+5", "15+10", "30+20")
LEVEL_NAMES = {n: str(n) for n in range(1, 9)} | {1: "1 · weakest", 8: "8 · strongest"}
TITLES = {
    "computer": "Play the computer",
    "seek": "Post a seek",
    "quick": "Quick pairing",
    "private": "Create a private room",
    "challenge": "Challenge a player",
}


class OptionsDialog(ModalScreen[GameOptions | None]):
    """Pick a game's options; Play returns them, Escape returns None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, kind: DialogKind, options: GameOptions, title: str | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.options = options
        self.title_text = title or TITLES[kind]

    def compose(self) -> ComposeResult:
        o = self.options
        clock = format_clock_spec(o.clock)
        clocks = CLOCK_CHOICES if clock in CLOCK_CHOICES else (*CLOCK_CHOICES, clock)
        with Vertical(id="dialog", classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            with Grid(classes="dialog-fields"):
                if self.kind == "computer":
                    yield Label("Level")
                    yield Select(
                        [(LEVEL_NAMES[n], n) for n in range(1, 9)], value=o.level,
                        allow_blank=False, id="level", compact=True,
                    )
                yield Label("Board")
                yield Select(
                    [(v, v) for v in VARIANTS], value=o.variant, allow_blank=False,
                    id="variant", compact=True,
                )
                yield Label("Clock")
                yield Select(
                    [(c, c) for c in clocks], value=clock, allow_blank=False, id="clock",
                    compact=True,
                )
                if self.kind != "quick":
                    yield Label("Colour")
                    yield Select(
                        [("random", "random"), ("X (moves first)", "x"), ("O", "o")],
                        value=o.colour, allow_blank=False, id="colour", compact=True,
                    )
                if self.kind in ("seek", "private", "challenge"):
                    yield Label("Rated")
                    yield Select(
                        [("casual (no rating change)", False), ("rated", True)],
                        value=o.rated, allow_blank=False, id="rated", compact=True,
                    )
            if self.kind == "quick":
                yield Static("Quick games are rated: your rating changes with the result.",
                             classes="dialog-text", id="rated-note")
            elif self.kind == "computer":
                yield Static("Games against the computer are never rated.",
                             classes="dialog-text", id="rated-note")
            with Horizontal(classes="dialog-buttons"):
                label = {"computer": "Play", "challenge": "Challenge"}.get(self.kind, "OK")
                yield Button(label, variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query(Select).first().focus()  # Enter on opening must not start a game

    def _chosen(self) -> GameOptions:
        options = self.options
        for select in self.query(Select):
            value = select.value
            if select.id == "level":
                options = replace(options, level=int(value))  # type: ignore[arg-type]
            elif select.id == "variant":
                options = replace(options, variant=value)  # type: ignore[arg-type]
            elif select.id == "clock":
                options = replace(options, clock=parse_clock_spec(str(value)))
            elif select.id == "colour":
                options = replace(options, colour=value)  # type: ignore[arg-type]
            elif select.id == "rated":
                options = replace(options, rated=bool(value))
        return options

    @on(Button.Pressed, "#ok")
    def play(self) -> None:
        self.dismiss(self._chosen())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def normalise_code(text: str) -> str:
    """A private code as the server writes it: capitals, and the digits people type for the
    letters that look alike (codes are base32: they have O, I and B, never 0, 1 or 8)."""
    return text.strip().upper().translate(str.maketrans("018", "OIB"))


class CodeDialog(ModalScreen[str | None]):
    """Ask for a private room's code (0 or O, 1 or I, either case: all are read the same)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Join a private room", classes="dialog-title")
            yield Input(placeholder="the code your friend sent", restrict=r"[A-Za-z0-9_-]*",
                        max_length=32, id="code")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Join", variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def join(self) -> None:
        code = normalise_code(self.query_one("#code", Input).value)
        if len(code) >= 4:
            self.dismiss(code)
        else:
            self.notify("A code has at least 4 characters.", severity="warning")

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; ``y`` says yes, ``n``/Escape/Enter say no (the focus opens on the
    safe answer: a key pressed by habit never resigns or leaves). The safe answer is the
    first button, so Tab and Right go on to the other and Shift+Tab and Left come back."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="dialog.yes"),
        Binding("n,escape", "answer(False)", "No", id="dialog.no"),
        Binding("left", "app.focus_previous", "Previous button", show=False,
                id="dialog.left"),
        Binding("right", "app.focus_next", "Next button", show=False, id="dialog.right"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, markup=False, classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.no, id="no")
                yield Button(self.yes, variant="error", id="yes")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class NoticeDialog(ModalScreen[None]):
    """A message to read (such as a private room's code), closed with Enter or Escape."""

    BINDINGS = [Binding("escape", "close", "Close", id="dialog.close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.text, markup=False, classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", variant="primary", id="ok")

    def on_mount(self) -> None:
        self.query_one("#ok", Button).focus()

    def on_button_pressed(self) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class CancelDialog(ModalScreen[list[int] | None]):
    """What the player waits for (each challenge sent, the seek, the quick pairing, the
    private room), one a line: Enter on one cancels it, on the last line all of them; Escape
    keeps them. Returns the indices to cancel, or None."""

    BINDINGS = [Binding("escape", "keep", "Keep all", id="dialog.keep")]

    def __init__(self, waits: list[str]) -> None:
        super().__init__()
        self.waits = waits

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Cancel which?", classes="dialog-title")
            yield OptionList(*self.waits, "All of them", id="waits", markup=False)
            yield Static("⏎ cancels the one selected · Esc keeps them all",
                         classes="dialog-text", markup=False)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        index = event.option_index
        self.dismiss(list(range(len(self.waits))) if index >= len(self.waits) else [index])

    def action_keep(self) -> None:
        self.dismiss(None)
