"""Names and chat from others show literally: never markup, never terminal control."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from scenes import game, lobby
from textual.widgets import DataTable, RichLog
from tui_helpers import unconnected, until

from client_tui.app import LinkMessage
from client_tui.connection import Received
from client_tui.screens.game import GameScreen
from client_tui.widgets.game_info import GameInfo

EVIL = "[b]evil[/b]\x1b[31m"
SHOWN = "[b]evil[/b]␛[31m"


async def test_markup_and_escapes_in_names_and_chat_show_as_text(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.show_lobby()
        await until(pilot, lambda: app.screen is app.lobby_screen, "the lobby")
        await pilot.pause()
        app.post_message(LinkMessage(Received(lobby(name=EVIL))))
        assert app.lobby_screen is not None
        table = app.lobby_screen.query_one("#seeks", DataTable)
        await until(pilot, lambda: table.row_count == 3, "the seeks")
        cell = table.get_cell_at((0, 0))
        assert isinstance(cell, Text) and cell.plain == SHOWN and not cell.spans

        app.post_message(LinkMessage(Received(game(o=EVIL, chat=("[red]hi[/red]\x07",)))))
        await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
        info = app.screen.query_one(GameInfo).render()
        assert SHOWN in info.plain
        assert "\x1b" not in info.plain
        log = app.screen.query_one(RichLog)
        await until(pilot, lambda: log.lines, "the chat")
        line = "".join(segment.text for segment in log.lines[0])
        assert "[red]hi[/red]␇" in line
        assert app.screen.title == f"ann vs {SHOWN}"
