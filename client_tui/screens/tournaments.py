"""Tournaments: the list (``t`` in the lobby) and a tournament's page, with its live
standings and its games.

The list asks for ``tournaments`` when shown (and ``r`` again); ``⏎`` opens a tournament's
page, which follows it (``tournament_sub``) while it is open, or for as long as this player is
in it. The server sends one page of 10 lines of standings (the one holding this player's line,
or the one ``[``/``]`` asked for) and this player's own line, shown under the page when it is
not on it. The app hands every ``tournament`` it receives to the model and redraws the screens
(``refresh_tournaments``). A paired player's next game opens by itself, as any game that
starts does; its screen names the tournament and ``b`` comes back here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from client_tui.messages import Outgoing
from client_tui.screens.game import GameScreen
from client_tui.screens.player import PlayerScreen
from client_tui.screens.tournament_form import TournamentForm
from client_tui.text import bot_mark, literal
from client_tui.tournament_model import (
    TournamentsModel,
    halves,
    kind_name,
    point_text,
    stage,
    terms,
    when,
)
from client_tui.widgets.header import ScreenHeader
from server.protocol import (
    Standing,
    TournamentCreate,
    TournamentGame,
    TournamentJoin,
    TournamentLeave,
    Tournaments,
    TournamentState,
    TournamentSub,
    TournamentUnsub,
    Watch,
)

STATUS_STYLES = {"created": "", "started": "bold green", "finished": "dim"}
STATUS_WORDS = {"created": "soon", "started": "playing", "finished": "finished"}


def player_cell(standing: Standing, me: str) -> Text:
    """The standings' name cell: the name (bold for this player), BOT, fire, playing, left."""
    cell = literal(standing.name, "bold" if standing.name.casefold() == me.casefold() else "")
    cell.append_text(bot_mark(standing.bot))
    if standing.fire:
        cell.append(" on fire", "bold #d7875f")
    if standing.withdrawn:
        cell.append(" left", "dim italic")
    elif standing.playing:
        cell.append(" ●", "green")
    return cell


def points_cell(points: list[int], swiss: bool) -> Text:
    """Each game's points, the doubled ones (an arena player on fire) bright, the zeros dim."""
    cell = Text()
    for n, value in enumerate(points):
        if n:
            cell.append(" ")
        style = "dim" if value == 0 else "bold #d7875f" if not swiss and value > 2 else ""
        cell.append(point_text(value, swiss), style)
    return cell


def result_cell(game: TournamentGame) -> Text:
    if game.result is None:
        return Text("playing", "bold green")
    return Text("½-½" if game.result == "1/2-1/2" else game.result)


def _fill(table: DataTable, rows: list[tuple[str, list[Text]]]) -> None:
    """Replace the rows, the cursor kept on the row it was on (by key)."""
    selected = None
    if table.row_count and table.cursor_row >= 0:
        with contextlib.suppress(Exception):
            selected = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    table.clear()
    keys = []
    for key, cells in rows:
        table.add_row(*cells, key=key)
        keys.append(key)
    if selected in keys:
        table.move_cursor(row=keys.index(selected))


class TournamentsScreen(Screen[None]):
    """The tournaments of the day: ⏎ opens one, r asks for the list again, n (moderators)
    schedules one."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Lobby", id="tournaments.back"),
        Binding("r", "reload", "Reload", id="tournaments.reload",
                tooltip="Ask the server for the list again"),
        Binding("n", "create", "Create", id="tournaments.create",
                tooltip="Schedule a tournament (moderators)"),
    ]
    REFRESH_SECONDS = 30.0  # players join, tournaments start: the list is asked for again

    def __init__(self, model: TournamentsModel, open_tournament: Callable[[str], None],
                 moderator: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self.model = model
        self.open_tournament = open_tournament
        self.moderator = moderator  # whether this player may create tournaments, now
        self._ready = False

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield Label("Tournaments today · ⏎ opens one", classes="section-title")
        yield DataTable(id="tournament-list", cursor_type="row", zebra_stripes=True)
        yield Static(id="tournaments-note")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True
        self.title = "Tournaments"
        table = self.query_one(DataTable)
        table.add_columns("Name", "Kind", "", "When", "Clock", "Board", "Players")
        table.focus()
        self.set_interval(self.REFRESH_SECONDS, self.action_reload)
        self.action_reload()
        self.refresh_tournaments()

    def on_screen_resume(self) -> None:
        if self._ready:
            self.action_reload()

    def action_reload(self) -> None:
        if self.is_current:
            self.post_message(Outgoing(Tournaments(), quiet=True))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "create":
            return self.moderator()
        return True

    def action_create(self) -> None:
        """The form; the request it makes goes up (the reply opens the new tournament)."""
        def created(request: TournamentCreate | None) -> None:
            if request is not None:
                self.post_message(Outgoing(request))

        self.app.push_screen(TournamentForm(self.model.clock), created)

    def refresh_tournaments(self) -> None:
        """Redraw from the model."""
        if not self._ready:
            return
        with contextlib.suppress(NoMatches):
            self._redraw()

    def _redraw(self) -> None:
        now = self.model.clock()
        infos = list(self.model.listed.values())
        _fill(self.query_one(DataTable), [
            (info.id, [literal(info.name, "bold"), Text(kind_name(info)),
                       Text(STATUS_WORDS[info.status], STATUS_STYLES[info.status]),
                       Text(when(info, now)), Text(info.clock),
                       Text(info.variant + (" rated" if info.rated else "")),
                       Text(str(info.players), justify="right")])
            for info in infos])
        self.query_one("#tournaments-note", Static).update(Text(
            "No tournaments today." if not infos else
            "An arena pairs you again within seconds of each game's end, for as long as it "
            "runs; a Swiss plays a fixed number of rounds.", "dim"))

    @on(DataTable.RowSelected)
    def opened(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open_tournament(event.row_key.value)


class TournamentScreen(Screen[None]):
    """One tournament: what it is, the standings (⏎: a player's page) and its games (⏎:
    watch or replay); j joins, l leaves."""

    BINDINGS = [
        Binding("escape", "leave", "Back", id="tournament.back"),
        Binding("j", "join", "Join", id="tournament.join", tooltip="Join the tournament"),
        Binding("l", "withdraw", "Leave", id="tournament.leave",
                tooltip="Leave the tournament (an arena keeps your score)"),
        Binding("y", "my_game", "Your game", id="tournament.game",
                tooltip="Go to your game in this tournament"),
        Binding("left_square_bracket", "page(-1)", "Page up", key_display="[",
                id="tournament.page_up", tooltip="The page of the standings above"),
        Binding("right_square_bracket", "page(1)", "Page down", key_display="]",
                id="tournament.page_down", tooltip="The page of the standings below"),
    ]

    def __init__(self, tournament: str, model: TournamentsModel, me: Callable[[], str]) -> None:
        super().__init__()
        self.tournament = tournament
        self.model = model
        self.me = me  # this player's name, as the session says it now
        self._ready = False
        self._swiss: bool | None = None  # the tables' columns (a Swiss's have more), once known

    def compose(self) -> ComposeResult:
        yield ScreenHeader()
        yield Static("Loading…", id="tournament-info")
        yield Label("Standings · ⏎ player", classes="section-title", id="standings-title")
        yield DataTable(id="standings", cursor_type="row", zebra_stripes=True)
        yield Label("Their games, newest first · ⏎ watches", classes="section-title")
        yield DataTable(id="tournament-games", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._ready = True
        self.title = self.model.name(self.tournament)
        self.query_one("#standings", DataTable).focus()
        if self.tournament not in self.model.states:
            self.post_message(Outgoing(TournamentSub(tournament=self.tournament,
                                                     page=self.model.asked.get(self.tournament)),
                                       quiet=True))
        self.model.followed.add(self.tournament)
        self.set_interval(1.0, self._tick)
        self.refresh_tournaments()

    def _tick(self) -> None:
        """The countdown to the start or the end."""
        state = self.model.states.get(self.tournament)
        if state is not None and state.info.status != "finished":
            with contextlib.suppress(NoMatches):
                self.query_one("#tournament-info", Static).update(self._info())

    @property
    def joined(self) -> bool:
        return self.model.joined(self.tournament, self.me())

    def my_game(self) -> str | None:
        """The id of this player's game going on in the tournament, if any."""
        state = self.model.states.get(self.tournament)
        me = self.me().casefold()
        if state is None:
            return None
        return next((g.id for g in state.games if g.result is None
                     and me in (g.x.casefold(), g.o.casefold())), None)

    def refresh_tournaments(self) -> None:
        """Redraw from the model."""
        if not self._ready:
            return
        with contextlib.suppress(NoMatches):
            self._redraw()

    def _info(self) -> Text:
        state = self.model.states[self.tournament]
        info = state.info
        text = Text(stage(info, self.model.clock()), "bold")
        text.append(" · ")
        text.append(terms(info))
        text.append("\n")
        if info.status == "finished":
            text.append("Final standings.", "dim")
        elif self.joined:
            text.append("You are in: ", "bold green")
            text.append("your next game opens by itself when its round is paired (l leaves)."
                        if info.kind == "swiss" else
                        "your next game opens by itself after each game (l leaves).")
        else:
            text.append("j joins", "bold")
            text.append(" — from the next round on." if info.kind == "swiss" else
                        " — play as many games as you like, l leaves: your score stays.")
        return text

    def _redraw(self) -> None:
        state = self.model.states.get(self.tournament)
        if state is None:
            return
        self.title = state.info.name
        swiss = state.info.kind == "swiss"
        standings = self.query_one("#standings", DataTable)
        if self._swiss != swiss:
            self._swiss = swiss
            standings.clear(columns=True)
            standings.add_columns("#", "Player", "Score", "Points", "Games", "Rating", "Perf.",
                                  *(["Buchholz", "S-B"] if swiss else []))
            games = self.query_one("#tournament-games", DataTable)
            games.clear(columns=True)
            games.add_columns(*(["Round"] if swiss else []), "X", "O", "Result")
        self.query_one("#tournament-info", Static).update(self._info())
        me = self.me()
        lines = list(state.standings)
        mine = state.me
        if mine is not None and all(s.name != mine.name for s in lines):
            lines.append(mine)  # under the page: this player's own line
        _fill(standings, [
            (s.name, [Text(str(s.rank), justify="right"), player_cell(s, me),
                      Text(halves(s.score), "bold", justify="right"), points_cell(s.points, swiss),
                      Text(str(s.games), justify="right"), Text(str(s.rating), justify="right"),
                      Text(str(s.performance), justify="right"),
                      *([Text("" if s.buchholz is None else halves(s.buchholz), justify="right"),
                         Text("" if s.sonneborn_berger is None else str(s.sonneborn_berger),
                              justify="right")] if swiss else [])])
            for s in lines])
        self.query_one("#standings-title", Label).update(Text(
            f"Standings · page {state.page} of {state.pages} · [ ] pages · ⏎ player"
            if state.pages > 1 else "Standings · ⏎ player"))
        if not state.standings:
            standings.add_row(Text(""), Text("Nobody has joined yet.", "dim"),
                              *[Text("")] * (len(standings.columns) - 2))
        _fill(self.query_one("#tournament-games", DataTable), [
            (g.id, [*([Text(str(g.round or ""), justify="right")] if swiss else []),
                    literal(g.x).append_text(bot_mark(self._is_bot(state, g.x))),
                    literal(g.o).append_text(bot_mark(self._is_bot(state, g.o))),
                    result_cell(g)])
            for g in state.games])
        self.refresh_bindings()

    @staticmethod
    def _is_bot(state: TournamentState, name: str) -> bool:
        return any(s.bot and s.name == name for s in state.standings) or (
            state.me is not None and state.me.bot and state.me.name == name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        state = self.model.states.get(self.tournament)
        over = state is None or state.info.status == "finished"
        if action == "join":
            return not over and not self.joined
        if action == "withdraw":
            return not over and self.joined
        if action == "my_game":
            return self.my_game() is not None
        if action == "page":
            step = int(parameters[0]) if parameters else 0  # type: ignore[call-overload]
            return state is not None and 1 <= state.page + step <= state.pages
        return True

    def action_page(self, step: int) -> None:
        """The page of the standings above (-1) or below (1); the server sends it from now
        on."""
        state = self.model.states.get(self.tournament)
        if state is None or not 1 <= state.page + step <= state.pages:
            return
        self.model.asked[self.tournament] = state.page + step
        self.post_message(Outgoing(TournamentSub(tournament=self.tournament,
                                                 page=state.page + step), quiet=True))

    def action_join(self) -> None:
        self.post_message(Outgoing(TournamentJoin(tournament=self.tournament)))

    def action_withdraw(self) -> None:
        self.post_message(Outgoing(TournamentLeave(tournament=self.tournament)))

    def action_my_game(self) -> None:
        """This player's game: the one open under this page, else asked for."""
        game = self.my_game()
        if game is None:
            return
        under = next((s for s in self.app.screen_stack
                      if isinstance(s, GameScreen) and s.model.id == game), None)
        if under is None:
            self.post_message(Outgoing(Watch(game=game)))
            return
        while self.app.screen is not under:
            self.app.pop_screen()

    def action_leave(self) -> None:
        """Back; the tournament is no longer followed unless this player is in it."""
        if not self.joined and self.tournament in self.model.followed:
            self.model.forget(self.tournament)
            self.app.post_message(Outgoing(TournamentUnsub(tournament=self.tournament),
                                           quiet=True))
        self.app.pop_screen()

    @on(DataTable.RowSelected, "#tournament-games")
    def watch_game(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(Outgoing(Watch(game=event.row_key.value)))

    @on(DataTable.RowSelected, "#standings")
    def open_player(self, event: DataTable.RowSelected) -> None:
        """A player's page; a computer the host entered has none."""
        name = event.row_key.value
        state = self.model.states.get(self.tournament)
        lines = list(state.standings) + ([state.me] if state.me is not None else []) \
            if state else []
        line = next((s for s in lines if s.name == name), None)
        if line is None or name is None:
            return
        if line.computer is not None:
            self.notify(f"{name} is the computer (level {line.computer}): it has no page.",
                        timeout=3)
            return
        self.app.push_screen(PlayerScreen(name))
