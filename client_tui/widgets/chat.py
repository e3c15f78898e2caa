"""A game's chat: the lines said so far and a line to type in.

A game has two chats (docs/protocol.md): the players' and the spectators', each seen only by
its own. The panel says which one it is, so nobody takes one for the other."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, RichLog

from client_tui.text import literal
from server.protocol import ChatLine

SIDE_STYLES = {"x": "bold #ff6b6b", "o": "bold #5fafff"}


def chat_text(line: ChatLine) -> Text:
    """``X name: text`` for a player, ``(watching) name: text`` dimmed for a spectator; both
    shown literally (never markup, never a control)."""
    if line.side is None:
        text = Text("(watching) ", "dim italic")
        text.append_text(literal(line.name, "italic"))
        text.append(": ")
        text.append_text(literal(line.text, "dim"))
        return text
    text = Text(f"{line.side.upper()} ", SIDE_STYLES[line.side])
    text.append_text(literal(line.name, SIDE_STYLES[line.side]))
    text.append(": ")
    text.append_text(literal(line.text))
    return text


class ChatPanel(Vertical):
    """The chat log with an input below; posts ``ChatPanel.Said`` for each line entered."""

    DEFAULT_CSS = """
    ChatPanel {
        height: 1fr;
    }
    ChatPanel > RichLog {
        height: 1fr;
        background: $surface;
        scrollbar-size-vertical: 1;
    }
    ChatPanel > Input {
        margin-top: 0;
    }
    """

    class Said(Message):
        """The player entered ``text`` to say."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: list[ChatLine] = []

    def compose(self) -> ComposeResult:
        # min_width=1: wrap to the panel (the default of 78 columns wraps past its edge)
        yield RichLog(markup=False, wrap=True, highlight=False, max_lines=500, min_width=1)
        yield Input(placeholder="chat: / to type, ⏎ to send", max_length=300, compact=True)

    def describe(self, seated: bool, spectator_chat: bool = True) -> None:
        """Say which chat this is: the players' (to a seated player) or the spectators'
        (off, and the line to type in with it, when the host has turned it off)."""
        field = self.query_one(Input)
        if seated:
            field.placeholder = "players' chat · / to type"
        elif spectator_chat:
            field.placeholder = "spectators' chat · / to type"
        else:
            field.placeholder = "spectators' chat is off on this server"
        field.disabled = not (seated or spectator_chat)

    def show(self, lines: list[ChatLine]) -> None:
        """Show ``lines`` (appending the new ones when the old are unchanged)."""
        log = self.query_one(RichLog)
        if lines[: len(self._shown)] != self._shown:
            log.clear()
            self._shown = []
        for line in lines[len(self._shown) :]:
            log.write(chat_text(line))
        self._shown = list(lines)

    def on_resize(self) -> None:
        """Wrap again to the new width: a line is wrapped once, when written."""
        log = self.query_one(RichLog)
        log.clear()
        for line in self._shown:
            log.write(chat_text(line))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        event.input.value = ""
        if text:
            self.post_message(self.Said(text))
