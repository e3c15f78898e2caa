"""The lobby: open seeks, live games, players online, the leaderboard, and ways to start a
game (a challenge to a player online among them)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from client_tui.connection import LeaderboardRow, fetch_leaderboard
from client_tui.messages import Outgoing, SettingsChanged
from client_tui.model import LobbyModel, PlayerSession, challenge_terms, format_clock_spec
from client_tui.screens.dialogs import CancelDialog, CodeDialog, OptionsDialog
from client_tui.screens.player import PlayerScreen
from client_tui.settings import DialogKind, GameOptions, Settings
from client_tui.text import bot_mark, literal
from client_tui.widgets.header import ScreenHeader
from server.protocol import (
    AcceptSeek,
    CancelQuick,
    CancelSeek,
    Challenge,
    ChallengeCancel,
    ClientMessage,
    LobbySub,
    PlayAI,
    PrivateCancel,
    PrivateCreate,
    PrivateJoin,
    Quick,
    Seek,
    Watch,
)


class LobbyScreen(Screen[None]):
    """Seeks and live games (kept current by the app), the leaderboard, and game starters."""

    # The footer must fit 80 columns with "? Help" and the palette: the rest is in both.
    BINDINGS = [
        Binding("c", "play_computer", "Computer", id="lobby.computer",
                tooltip="Play the computer with the options shown"),
        Binding("o", "computer_options", "Options", show=False, id="lobby.options",
                tooltip="Change the computer's level, the board, your colour, the clock"),
        Binding("p", "quick", "Quick", id="lobby.quick",
                tooltip="Quick pairing: a rated game against a person of close rating"),
        Binding("s", "seek", "Seek", id="lobby.seek",
                tooltip="Post a seek that anyone can accept"),
        Binding("n", "private", "Private", id="lobby.private",
                tooltip="Create a private room and get its code"),
        Binding("j", "join", "Join", id="lobby.join", tooltip="Join a private room by its code"),
        Binding("x", "cancel_wait", "Cancel", id="lobby.cancel",
                tooltip="Cancel your seek, quick pairing, private room or a challenge you sent"),
        Binding("v", "challenge", "Challenge", show=False, id="lobby.challenge",
                tooltip="Challenge the player selected among the players online"),
        Binding("u", "app.account", "Account", show=False, id="lobby.account",
                tooltip="Protect your name with a password; your devices"),
        Binding("g", "app.my_games", "Games", id="lobby.my_games",
                tooltip="My games: go back to a game, or replay a finished one"),
        Binding("z", "app.puzzles", "Puzzles", show=False, id="lobby.puzzles",
                tooltip="Puzzles: win in N, survive, the puzzle of the day, streaks"),
        Binding("l", "leaderboard", "Leaders", show=False, id="lobby.leaderboard",
                tooltip="Reload the leaderboard"),
        Binding("i", "player_page", "Player", show=False, id="lobby.player",
                tooltip="The page of the player selected online or on the leaderboard"),
        Binding("a", "app.analysis", "Analysis", show=False, id="lobby.analysis",
                tooltip="The analysis board: try moves and see who wins"),
        Binding("w", "app.change_server", "Server", show=False, id="lobby.server",
                tooltip="Connect to a server…"),
        Binding("t", "app.tournaments", "Tournaments", show=False, id="lobby.tournaments",
                tooltip="Tournaments: arenas and Swiss, their standings and games"),
    ]
    REFRESH_SECONDS = 10.0  # the live games' move counts come with a fresh snapshot

    def __init__(
        self,
        lobby: LobbyModel,
        session: PlayerSession,
        http_base: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        super().__init__()
        self.lobby = lobby
        self.session = session
        self.http_base = http_base
        self.settings = settings or Settings()
        self.options = self.settings.options  # the last options chosen, by dialog
        self.leaders: list[LeaderboardRow] | None = None
        self._ready = False  # composed and mounted: the widgets can be queried

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield Static(id="lobby-status")
        with Horizontal(id="lobby-main"):
            with Vertical(id="lobby-left"):
                yield Label("Open seeks · ⏎ accepts", classes="section-title")
                yield DataTable(id="seeks", cursor_type="row", zebra_stripes=True)
                yield Label("Live games · ⏎ watches", classes="section-title")
                yield DataTable(id="games", cursor_type="row", zebra_stripes=True)
            with Vertical(id="lobby-right"):
                yield Label("Online · ⏎ challenges", classes="section-title")
                yield DataTable(id="players", cursor_type="row", zebra_stripes=True)
                yield Label("Leaderboard · ⏎ player", classes="section-title")
                yield DataTable(id="leaderboard", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    @property
    def computer(self) -> GameOptions:
        """The options of the next game against the computer."""
        return self.settings.options_for("computer")

    @computer.setter
    def computer(self, options: GameOptions) -> None:
        self.settings.chose("computer", options)

    def on_mount(self) -> None:
        self._ready = True
        self.set_interval(self.REFRESH_SECONDS, self._resubscribe)
        self.query_one("#seeks", DataTable).add_columns("Name", "Rating", "Board", "Clock",
                                                        "Rated", "Colour")
        self.query_one("#games", DataTable).add_columns("X", "O", "Board", "Clock", "Moves")
        self.query_one("#players", DataTable).add_columns("Name", "Rating")
        self.query_one("#leaderboard", DataTable).add_columns("#", "Name", "Rating")
        self.refresh_lobby()
        self.action_leaderboard()
        self.query_one("#seeks", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Back from a game: ratings may have changed."""
        if self._ready:
            self.refresh_lobby()
            self.action_leaderboard()
            self._resubscribe()

    def _resubscribe(self) -> None:
        """Ask for a fresh snapshot (the server's deltas do not carry move counts)."""
        if self.is_current:
            self.post_message(Outgoing(LobbySub(), quiet=True))

    # -- attributes down -------------------------------------------------------------------

    def refresh_lobby(self) -> None:
        """Redraw the status lines and tables from the app's models."""
        if not self._ready:
            return
        with contextlib.suppress(NoMatches):  # the screen is being taken down (app closing)
            self._redraw()

    def _redraw(self) -> None:
        self.query_one("#lobby-status", Static).update(self._status())
        self._fill(self.query_one("#seeks", DataTable), [
            (seek.id, [literal(seek.name).append_text(bot_mark(seek.bot)), seek.rating or "",
                       seek.variant,
                       format_clock_spec(seek.clock), "rated" if seek.rated else "casual",
                       seek.colour])
            for seek in self.lobby.seeks.values()
        ])
        self._fill(self.query_one("#games", DataTable), [
            (game.id, [literal(game.x).append_text(bot_mark(game.x_bot)),
                       literal(game.o).append_text(bot_mark(game.o_bot)), game.variant,
                       format_clock_spec(game.clock), game.ply])
            for game in self.lobby.games.values()
        ])
        self._fill(self.query_one("#players", DataTable), [
            (player.name, [literal(player.name, "bold" if player.name == self.session.name
                                   else "").append_text(bot_mark(player.bot)),
                           player.rating or ""])
            for player in self.lobby.players
        ])
        self.refresh_bindings()

    def _status(self) -> Text:
        session = self.session
        text = Text()
        text.append_text(literal(session.name or "…", "bold"))
        if session.rating is not None:
            text.append(f" · rating {session.rating}")
        text.append(f" · {self.lobby.online} online · ")
        text.append("t", "bold")
        text.append(" tournaments\n")
        text.append("Computer: ", "bold")
        text.append(self.computer.describe("computer"))
        text.append("  (c plays, o changes)", "dim")
        waiting = []
        if session.queued:
            waiting.append(f"Waiting for a quick pairing: {session.queued} (x cancels)")
        if session.my_seek:
            waiting.append("Your seek is posted; waiting for someone to accept (x cancels)")
        if session.private_code:
            waiting.append(f"Private room code: {session.private_code} — send it to a friend "
                           "(x cancels)")
        for challenge in session.challenges_out.values():
            waiting.append(f"You challenged {challenge.to} "
                           f"({challenge_terms(challenge, sent=True)}): waiting (x cancels)")
        for line in waiting:
            text.append("\n")
            text.append_text(literal(line, "bold #d7af5f"))
        return text

    def waits(self) -> list[tuple[str, ClientMessage]]:
        """What this player waits for, each with the request that cancels it."""
        session = self.session
        waits: list[tuple[str, ClientMessage]] = [
            (f"Your challenge to {c.to} ({challenge_terms(c, sent=True)})",
             ChallengeCancel(challenge=c.id))
            for c in session.challenges_out.values()]
        if session.my_seek:
            waits.append(("Your seek", CancelSeek(seek=session.my_seek)))
        if session.queued:
            waits.append((f"The quick pairing ({session.queued})", CancelQuick()))
        if session.private_code:
            waits.append((f"Your private room {session.private_code}", PrivateCancel()))
        return waits

    @staticmethod
    def _fill(table: DataTable, rows: list[tuple[str, list[object]]]) -> None:
        selected = None
        if table.row_count and table.cursor_row >= 0:
            try:
                selected = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            except Exception:  # noqa: BLE001 - the old cursor may be gone
                selected = None
        table.clear()
        for key, cells in rows:
            table.add_row(*[c if isinstance(c, Text) else Text(str(c)) for c in cells], key=key)
        keys = [key for key, _ in rows]
        if selected in keys:
            table.move_cursor(row=keys.index(selected))

    def show_leaderboard(self, rows: list[LeaderboardRow] | str) -> None:
        """Fill the leaderboard, or say why it could not be loaded."""
        if not self._ready or not self.is_attached:
            return  # the answer came after the screen went away
        table = self.query_one("#leaderboard", DataTable)
        table.clear()
        if isinstance(rows, str):
            table.add_row("", Text(rows, style="dim"), "")
            return
        for rank, row in enumerate(rows, start=1):
            table.add_row(Text(str(rank)), literal(row.name).append_text(bot_mark(row.bot)),
                          Text(str(row.rating)),
                          key=row.name)

    # -- actions (messages up) -------------------------------------------------------------

    def action_play_computer(self) -> None:
        o = self.computer
        self.post_message(Outgoing(PlayAI(level=o.level, variant=o.variant, colour=o.colour,
                                          clock=o.clock)))

    def action_computer_options(self) -> None:
        def chosen(options: GameOptions | None) -> None:
            if options is not None:
                self.computer = options
                self.post_message(SettingsChanged())
                self.refresh_lobby()
                self.action_play_computer()

        self.app.push_screen(OptionsDialog("computer", self.computer), chosen)

    def _ask(self, kind: DialogKind, then: Callable[[GameOptions], object]) -> None:
        def chosen(options: GameOptions | None) -> None:
            if options is not None:
                self.settings.chose(kind, options)
                self.post_message(SettingsChanged())
                then(options)

        self.app.push_screen(OptionsDialog(kind, self.settings.options_for(kind)), chosen)

    def action_quick(self) -> None:
        self._ask("quick", lambda o: self.post_message(
            Outgoing(Quick(variant=o.variant, clock=o.clock))))

    def action_seek(self) -> None:
        self._ask("seek", lambda o: self.post_message(Outgoing(
            Seek(variant=o.variant, clock=o.clock, rated=o.rated, colour=o.colour))))

    def action_private(self) -> None:
        self._ask("private", lambda o: self.post_message(Outgoing(
            PrivateCreate(variant=o.variant, clock=o.clock, rated=o.rated, colour=o.colour))))

    def action_join(self) -> None:
        def chosen(code: str | None) -> None:
            if code:
                self.post_message(Outgoing(PrivateJoin(code=code)))

        self.app.push_screen(CodeDialog(), chosen)

    def action_challenge(self) -> None:
        table = self.query_one("#players", DataTable)
        if not table.row_count:
            self.notify("Nobody is online to challenge.", timeout=3)
            return
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if name is not None:
            self.challenge(name)

    def action_player_page(self) -> None:
        """The page of the player selected on the leaderboard (when it has the focus), else
        among the players online."""
        leaders = self.query_one("#leaderboard", DataTable)
        table = leaders if leaders.has_focus else self.query_one("#players", DataTable)
        if not table.row_count:
            self.notify("No player to show: select one online or on the leaderboard.",
                        timeout=3)
            return
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if name is not None:
            self.app.push_screen(PlayerScreen(name))

    def challenge(self, name: str) -> None:
        """Ask for the terms, then challenge ``name`` (yourself: say why not)."""
        if name == self.session.name:
            self.notify("That is you: challenge another player.", timeout=3)
            return

        def chosen(options: GameOptions | None) -> None:
            if options is not None:
                self.settings.chose("challenge", options)
                self.post_message(SettingsChanged())
                self.post_message(Outgoing(Challenge(
                    name=name, variant=options.variant, clock=options.clock,
                    rated=options.rated, colour=options.colour)))

        self.app.push_screen(OptionsDialog("challenge", self.settings.options_for("challenge"),
                                           title=f"Challenge {name}"), chosen)

    def action_cancel_wait(self) -> None:
        """Cancel what this player waits for: the one thing at once, else the one chosen
        (or all) in a list."""
        waits = self.waits()
        if len(waits) == 1:
            self.post_message(Outgoing(waits[0][1]))
            return

        def chosen(indices: list[int] | None) -> None:
            for index in indices or []:
                self.post_message(Outgoing(waits[index][1]))

        self.app.push_screen(CancelDialog([text for text, _ in waits]), chosen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_wait":
            return bool(self.session.my_seek or self.session.queued
                        or self.session.private_code or self.session.challenges_out)
        return True

    @work(thread=True, exclusive=True, group="leaderboard", exit_on_error=False)
    def action_leaderboard(self) -> None:
        if self.http_base is None:
            return
        try:
            rows: list[LeaderboardRow] | str = fetch_leaderboard(self.http_base)
        except Exception as error:  # noqa: BLE001 - shown, not raised
            rows = f"unavailable ({error})"
        self.app.call_from_thread(self.show_leaderboard, rows)

    @on(DataTable.RowSelected, "#seeks")
    def accept_seek(self, event: DataTable.RowSelected) -> None:
        seek_id = event.row_key.value
        if seek_id is None:
            return
        if seek_id == self.session.my_seek:
            self.notify("That is your own seek: wait for someone to accept it.")
            return
        self.post_message(Outgoing(AcceptSeek(seek=seek_id)))

    @on(DataTable.RowSelected, "#players")
    def challenge_player(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.challenge(event.row_key.value)

    @on(DataTable.RowSelected, "#games")
    def watch_game(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(Outgoing(Watch(game=event.row_key.value)))

    @on(DataTable.RowSelected, "#leaderboard")
    def open_player(self, event: DataTable.RowSelected) -> None:
        """A leader's page: record, rating history, games."""
        if event.row_key.value is not None:
            self.app.push_screen(PlayerScreen(event.row_key.value))
