"""A player's page, read from the server: their record, their rating's history and their
games, newest first, each opened with Enter (a game going on to watch or retake a seat, a
finished one to step through with , and .). "My games" is this page for oneself
(``client_tui.screens.my_games``), so it is the same on every machine.

The screen asks with ``player_games`` (a page at a time: ``m`` asks for the next, older one)
and the app hands it each ``player_games`` reply whose player it shows (``show_page``).
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Sparkline, Static

from client_tui.messages import ChallengePlayer, Outgoing
from client_tui.text import bot_mark, count, literal, moves_of
from client_tui.widgets.header import ScreenHeader
from server.protocol import PlayedGame, PlayerGames, PlayerGamesPage, ReviewGame, Watch

PAGE = 20  # games asked for at a time


def outcome(game: PlayedGame) -> Text:
    """The game from its player's side: playing, won, lost, draw or called off."""
    if game.status == "playing":
        return Text("playing", "bold green")
    if game.result == "*":
        return Text("called off", "dim")
    if game.result == "1/2-1/2":
        return Text("draw")
    won = (game.result == "1-0") == (game.side == "x")
    return Text("won", "bold") if won else Text("lost")


def game_cells(game: PlayedGame) -> list[Text]:
    """One row of the games table: outcome, opponent, board and side, moves (as numbered: X's
    and O's together), rating change, when it started (UTC: the same on every machine)."""
    opponent = game.o if game.side == "x" else game.x
    opponent_bot = game.o_bot if game.side == "x" else game.x_bot
    change = Text("")
    if game.rating_change is not None:
        change = Text(f"{game.rating_change:+d}", "green" if game.rating_change > 0 else "red")
    when = time.strftime("%d %b %Y", time.gmtime(game.created))
    board = f"{game.variant} as {game.side.upper()}" + (" rated" if game.rated else "")
    return [outcome(game), literal(opponent).append_text(bot_mark(opponent_bot)), Text(board),
            Text(str(moves_of(len(game.moves)))), change, Text(when, "dim")]


def summary(page: PlayerGamesPage) -> str:
    """The record in one line: rating, games, wins, losses, draws."""
    p = page.player
    return (f"Rating {p.rating} ±{p.rd} · {count(p.games, 'game')} ({p.rated_games} rated) · "
            f"{p.wins} won · {p.losses} lost · {p.draws} drawn")


def rating_history(ratings: list[int]) -> str:
    """The sparkline's title: the rating's change over the games shown, said once, oldest to
    newest; the lowest and highest too when the line went past its ends."""
    first, last = ratings[0], ratings[-1]
    change = f"{first} → {last}" if len(ratings) > 1 else str(first)
    low, high = min(ratings), max(ratings)
    beyond = (f" (lowest {low}, highest {high})"
              if low < min(first, last) or high > max(first, last) else "")
    games = "the last game" if len(ratings) == 1 else f"the last {len(ratings)}"
    return f"Rating after each rated game ({games}): {change}{beyond}"


class PlayerScreen(Screen[None]):
    """A player's record, rating history and games; ⏎ opens a game, m loads older ones."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="player.back"),
        Binding("m", "more", "More", id="player.more", tooltip="Load older games"),
        Binding("v", "review", "Review", id="player.review",
                tooltip="The review of the finished game selected"),
        Binding("c", "challenge", "Challenge", id="player.challenge",
                tooltip="Challenge this player (a bot too), on terms you choose"),
    ]

    challengeable = True  # c challenges the player shown

    def __init__(self, name: str, title: str | None = None) -> None:
        super().__init__()
        self.player = name
        self.heading = title or name
        self.next: str | None = None  # the cursor of the next, older page, once known
        self.loaded = False
        self.ids: list[str] = []

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield Static("Loading…", id="player-record")
        yield Label("Rating after each rated game (last 50)", classes="section-title")
        yield Sparkline([], id="player-ratings")
        yield Label("Games, newest first · ⏎ opens (a finished game: , . step through it)",
                    classes="section-title")
        yield DataTable(id="player-games", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.title = self.heading
        table = self.query_one(DataTable)
        table.add_columns("", "Opponent", "Board", "Moves", "Rating", "Started")
        table.focus()
        self.post_message(Outgoing(PlayerGames(name=self.player, limit=PAGE), quiet=True))

    def shows(self, page: PlayerGamesPage) -> bool:
        """Whether ``page`` is of the player this screen shows (any case)."""
        return page.player.name.casefold() == self.player.casefold()

    def show_page(self, page: PlayerGamesPage) -> None:
        """Add a page of games (the first also fills the record and the rating history)."""
        table = self.query_one(DataTable)
        if not self.loaded:
            self.loaded = True
            self.player = page.player.name
            record = literal(summary(page))
            if page.player.bot:
                record = bot_mark(True)[1:].append(" a program plays this account · ",
                                                   "dim").append_text(record)
            self.query_one("#player-record", Static).update(record)
            ratings = [point.rating for point in page.ratings]
            self.query_one(Sparkline).data = ratings
            if ratings:
                self.query(Label).first().update(rating_history(ratings))
        for game in page.games:
            if game.id not in self.ids:
                self.ids.append(game.id)
                table.add_row(*game_cells(game), key=game.id)
        if not self.ids:
            table.add_row(Text(""), Text("No games yet.", "dim"), *[Text("")] * 4)
        self.next = page.next

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "challenge":  # not on "My games" (oneself; the lobby says so elsewhere)
            return self.challengeable
        return True

    def action_challenge(self) -> None:
        self.post_message(ChallengePlayer(self.player))

    def action_more(self) -> None:
        if self.next is None:
            self.notify("No older games.", timeout=2)
            return
        self.post_message(Outgoing(PlayerGames(name=self.player, before=self.next, limit=PAGE)))
        self.next = None

    @on(DataTable.RowSelected)
    def open_game(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None and event.row_key.value in self.ids:
            self.open(event.row_key.value)

    def open(self, game_id: str) -> None:
        """Open a game of the page: to replay it, watch it, or go back to it (the hook where
        another way to open a finished game, such as its review, comes in)."""
        self.post_message(Outgoing(Watch(game=game_id)))

    def action_review(self) -> None:
        """Ask for the selected game's review (its screen opens with the reply; a game
        still going on is refused in words)."""
        table = self.query_one(DataTable)
        if not self.ids or not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key in self.ids:
            self.post_message(Outgoing(ReviewGame(game=key)))
