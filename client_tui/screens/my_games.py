"""My games: this player's unfinished games to go back to, and finished ones to replay."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label

from client_tui.messages import Outgoing
from client_tui.settings import PlayedGame
from client_tui.text import literal
from server.protocol import ReviewGame, Watch


def game_rows(played: list[PlayedGame], unfinished: list[str]) -> list[tuple[str, list[Text]]]:
    """One row per game: those still on first (the server's list), then the latest first."""
    known = {game.id: game for game in played}
    rows: list[tuple[str, list[Text]]] = []
    for game_id in unfinished:
        game = known.get(game_id)
        if game is None:  # played from another computer: the server knows, we do not
            rows.append((game_id, [Text("on", "bold green"), Text(game_id), Text(""),
                                   Text(""), Text("")]))
    for game in played:
        if game.result is None and game.id not in unfinished:
            continue  # ended while this client was away: the server no longer lists it
        on = game.result is None
        result = Text("on", "bold green") if on else Text(_result(game))
        when = time.strftime("%d %b %H:%M", time.localtime(game.started))
        rows.append((game.id, [result, literal(game.opponent),
                               Text(f"{game.variant} as {game.you.upper()}"),
                               Text(str(game.ply)), Text(when, "dim")]))
    return rows


def _result(game: PlayedGame) -> str:
    if game.result == "*":
        return "aborted"
    if game.result == "1/2-1/2":
        return "draw"
    won = (game.result == "1-0") == (game.you == "x")
    return "won" if won else "lost"


class MyGamesScreen(Screen[None]):
    """Pick a game: an unfinished one goes back to it, a finished one opens to replay."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Lobby", id="my_games.back"),
        Binding("v", "review", "Review", id="my_games.review",
                tooltip="The review of the finished game selected"),
    ]

    def __init__(self, played: list[PlayedGame], unfinished: list[str]) -> None:
        super().__init__()
        self.played = played
        self.unfinished = unfinished

    def compose(self) -> ComposeResult:
        yield Header()
        yield Label("My games · ⏎ opens (a finished game: , . step through it) · v reviews",
                    classes="section-title")
        yield DataTable(id="my-games", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = "My games"
        table = self.query_one(DataTable)
        table.add_columns("", "Opponent", "Board", "Moves", "Started")
        rows = game_rows(self.played, self.unfinished)
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if not rows:
            table.add_row(Text(""), Text("No games yet: play one from the lobby.", "dim"),
                          Text(""), Text(""), Text(""))
        table.focus()

    @on(DataTable.RowSelected)
    def open_game(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(Outgoing(Watch(game=event.row_key.value)))

    def action_review(self) -> None:
        """Ask the server for the selected game's review (its screen opens with the reply)."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is not None:
            self.post_message(Outgoing(ReviewGame(game=key)))
