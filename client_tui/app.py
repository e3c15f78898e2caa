"""The Qubic terminal client: connect, lobby, game and help screens around one server link.

The app owns the models (``PlayerSession``, ``LobbyModel``, one ``GameModel`` per open game) and
the ``ServerLink``, run in one exclusive worker. Link events arrive as ``LinkMessage``; the app
updates the models and tells the screens to redraw (attributes down). Screens post
``Outgoing`` requests and ``LeaveGame`` (messages up); the app sends them and remembers each
request by its id, so a reply or an error can be matched to what was asked.

This module is the app's shell: its state, start and stop, the link's life (connect,
reconnect, refusals) and the screens it shows. What it does with each message the server
sends, and the sending of requests, is ``client_tui.server_messages.ServerMessages``, which
``QubicApp`` extends.
"""

from __future__ import annotations

import getpass
import re
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from textual import events, work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer

from client_tui.connection import (
    Connected,
    Connecting,
    Dropped,
    LinkEvent,
    Received,
    Refused,
    ServerLink,
    Unreachable,
    http_base,
)
from client_tui.embedded import EmbeddedServer, StartLocal, default_db_path, server_key
from client_tui.messages import (
    ChallengePlayer,
    ConnectRequested,
    LeaveGame,
    OpenTournament,
    Outgoing,
    SettingsChanged,
)
from client_tui.model import (
    GameModel,
    LobbyModel,
    PlayerSession,
)
from client_tui.puzzle_model import PuzzleEvent, PuzzleModel
from client_tui.screens.account import AccountScreen, login_request
from client_tui.screens.analysis import AnalysisScreen, Fetch, fetch_solve
from client_tui.screens.connect import ConnectScreen
from client_tui.screens.dialogs import ConfirmDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.help import HelpScreen
from client_tui.screens.lobby import LobbyScreen
from client_tui.screens.my_games import MyGamesScreen
from client_tui.screens.puzzle import PuzzleScreen
from client_tui.screens.review import ReviewScreen
from client_tui.screens.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmallScreen
from client_tui.screens.tournaments import TournamentScreen, TournamentsScreen
from client_tui.server_messages import ServerMessages
from client_tui.settings import SettingsStore
from client_tui.text import visible
from client_tui.tokens import TokenStore
from client_tui.tournament_model import TournamentsModel
from client_tui.widgets.board import BoardWidget
from server.protocol import (
    ClientMessage,
    Error,
    GameReviewed,
    LobbySub,
    PuzzleRequest,
    Recover,
    ReviewGame,
    ServerMessage,
    TournamentSub,
    Unwatch,
    Watch,
)

REFUSALS = {
    "name_taken": "The name {name!r} is taken on this server: pick another one, or type its "
                  "password to log in.",
    "bad_name": "{name!r} cannot be a name: use 1–24 letters, digits, _ or -.",
    "bad_token": "The server does not know the player saved for {name!r}.",
    "token_revoked": "Logged out on this device: {name!r} was logged out here from another "
                     "device (or its password was changed). Type the password to log in again.",
    "bad_credentials": "Wrong name or password.",
    "too_many_attempts": "Too many tries for {name!r}: wait a while, then try again.",
    "bad_recovery_code": "That name and recovery code do not match (each code works once).",
}


class LinkMessage(Message):
    """An event of the server link, delivered on the app's message queue (``link``: which
    of the links run so far sent it; None for one made by hand, always read)."""

    def __init__(self, event: LinkEvent, link: int | None = None) -> None:
        super().__init__()
        self.event = event
        self.link = link


SYSTEM_LOGINS = frozenset({"root", "admin", "administrator"})
"""Logins that are not a person's name, and that servers keep back from players (Qubic's
among them: ``server.game.names.STAFF_NAMES``): a fresh machine or a container logs in as root."""


def default_name() -> str:
    """The login name made into a valid player name, or ``player`` (also for a system login,
    which the server would refuse as reserved before the player typed anything)."""
    try:
        name = re.sub(r"[^A-Za-z0-9_-]", "", getpass.getuser())[:24]
    except Exception:  # noqa: BLE001 - no login name in this environment
        name = ""
    return "player" if name.lower() in SYSTEM_LOGINS else name or "player"


class QubicApp(ServerMessages):
    """Play Qubic against people or the computer; offline (embedded server) by default."""

    CSS_PATH = "app.tcss"
    TITLE = "Qubic"
    COMMAND_PALETTE_BINDING = "ctrl+p"
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="app.quit"),
    ]

    def __init__(
        self,
        server_url: str | None = None,
        name: str | None = None,
        *,
        tokens: TokenStore | None = None,
        settings: SettingsStore | None = None,
        db_path: Path | None = None,
        start_local: StartLocal | None = None,
        autoconnect: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.server_url = server_url
        self.tokens = tokens or TokenStore()
        self.settings_store = settings or SettingsStore(self.tokens.path.parent / "settings.json")
        self.settings = self.settings_store.load()
        self.db_path = db_path or default_db_path()
        self.start_local = start_local  # starts the offline server (given by qubic play)
        self.autoconnect = autoconnect
        self.clock = clock
        self.session = PlayerSession(
            name=name or self._remembered_name(server_url) or default_name()
        )
        self.lobby = LobbyModel()
        self.tournaments = TournamentsModel()
        self._challenge_prompts: dict[str, ConfirmDialog] = {}
        self.games: dict[str, GameModel] = {}
        self.link: ServerLink | None = None
        self.embedded: EmbeddedServer | None = None
        self.lobby_screen: LobbyScreen | None = None
        self.connect_screen = ConnectScreen(server_url, self.session.name, self.settings)
        self._key = ""  # where tokens (and games played) are remembered for the current server
        self._retry_at: float | None = None  # when the link tries again after a drop
        self._countdown: Timer | None = None
        self._requests: dict[int | str, ClientMessage] = {}
        self._next_id = 1
        self._links = 0  # links run so far: the events of an older one are not read
        self._retried_name = False
        self._recovering = False  # the session opens with a recovery code: said once in
        self.puzzles = PuzzleModel()  # the puzzle screen's state, kept between visits

    def _remembered_name(self, url: str | None) -> str | None:
        return self.tokens.last_name(url or server_key(self.db_path))

    # -- start and stop --------------------------------------------------------------------

    def on_mount(self) -> None:
        self.push_screen(self.connect_screen)
        if self.autoconnect:
            self.connect(self.server_url, self.session.name)
        self._check_size()

    def on_resize(self, event: events.Resize) -> None:
        self._check_size(event.size.width, event.size.height)  # self.size is not yet updated
        for board in self.screen.query(BoardWidget):  # the room under it may have changed
            board.call_after_refresh(board.fit_toasts)

    def _check_size(self, width: int | None = None, height: int | None = None) -> None:
        """Cover everything with "terminal too small" below the size the board needs."""
        width = self.size.width if width is None else width
        height = self.size.height if height is None else height
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        covered = isinstance(self.screen, TooSmallScreen)
        if small and not covered:
            self.push_screen(TooSmallScreen())
        elif covered:
            if small:
                self.screen.refresh()
            else:
                self.pop_screen()

    def connect(self, url: str | None, name: str, password: str | None = None,
                recovery: Recover | None = None) -> None:
        """Open a session with ``url`` (None: start and use the embedded server) as ``name``
        (with ``password``: a login on this device; with ``recovery``: that ``recover``)."""
        self._recovering = recovery is not None
        self.server_url = url
        self.session.name = name
        self._retried_name = False
        starting = url is None and self.embedded is None
        self.connect_screen.starting = starting
        self.connect_screen.set_busy(True)
        self.connect_screen.set_status(
            ("Starting the local server…" if starting
             else f"Connecting to {url or 'the local server'} as {name}…")
            + "\n(w in the lobby connects to another server or changes the name)"
        )
        self.run_link(url, name, password, recovery)

    @work(exclusive=True, group="link", exit_on_error=False)
    async def run_link(self, url: str | None, name: str, password: str | None = None,
                       recovery: Recover | None = None) -> None:
        """The network worker: start the embedded server if needed, then run the link."""
        if url is None:
            if self.embedded is None:
                try:
                    if self.start_local is None:
                        raise RuntimeError("this client was given no server to start")
                    self.embedded = await self.start_local(self.db_path)
                except Exception as error:  # noqa: BLE001 - shown on the connect screen
                    self.post_message(LinkMessage(Unreachable(
                        f"cannot start the local server: {error}")))
                    return
            ws_url, self._key = self.embedded.ws_url, server_key(self.db_path)
        else:
            ws_url, self._key = url, url
        token = self.tokens.token(self._key, name)
        self._links += 1
        self.link = ServerLink(ws_url, partial(self._link_event, self._links), name=name,
                               token=token, opening=recovery or login_request(name, password))
        await self.link.run()

    def _link_event(self, link: int, event: LinkEvent) -> None:
        """The link's callback: deliver the event on the app's message queue, in order."""
        self.post_message(LinkMessage(event, link))

    async def stop_network(self) -> None:
        """Close the link and stop the embedded server (idempotent)."""
        self.workers.cancel_group(self, "link")
        link, self.link = self.link, None
        if link is not None:
            await link.close()
        server, self.embedded = self.embedded, None
        if server is not None:
            await server.stop()

    async def action_quit(self) -> None:
        await self.stop_network()
        self.exit()

    async def on_unmount(self) -> None:
        await self.stop_network()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p, or the header's icon): the game's commands only.

        The screen's keys first: only Qubic's own bindings (each has an id), not the
        framework's ("Copy selected text", "Focus Next", its "Theme" and second "Quit"); then
        the bell. Quit is among the keys (``ctrl+q``), so it is listed once.
        """
        seen = set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if (not active.enabled or not binding.description or binding.id is None
                    or binding.action in seen):
                continue
            seen.add(binding.action)
            shown = binding.key_display or self.get_key_display(binding)
            yield SystemCommand(binding.tooltip or binding.description, f"key: {shown or key}",
                                partial(self.run_action, binding.action, active.node))
        if "app.change_server" not in seen:
            yield SystemCommand("Connect to a server…", "Play on another server, or offline on "
                                "this computer: the connect form", self.action_change_server)
        yield SystemCommand("Rename…", "Play under another name (a name is its own player: "
                            "a new one, or a protected one with its password)",
                            self.action_rename)
        yield SystemCommand(
            "Bell: " + ("on" if self.settings.bell else "off"),
            "Turn " + ("off" if self.settings.bell else "on") + " the bell that rings when "
            "the opponent moves, a game is found or a challenge comes",
            self.action_toggle_bell,
        )

    def action_toggle_bell(self) -> None:
        """Ring, or stop ringing, for the opponent's moves, games found and challenges."""
        self.settings.bell = not self.settings.bell
        self.save_settings()
        self.notify("The bell rings when the opponent moves, a game is found or a challenge "
                    "comes." if self.settings.bell else "The bell is off.", timeout=3)

    def on_settings_changed(self, message: SettingsChanged) -> None:
        message.stop()
        self.save_settings()

    # -- requests up (sent by ``ServerMessages.send``) -------------------------------------

    def on_outgoing(self, message: Outgoing) -> None:
        message.stop()
        self.send(message.request, message.quiet)

    async def on_connect_requested(self, message: ConnectRequested) -> None:
        message.stop()
        await self._leave_session()
        self.connect(message.url, message.name, message.password, message.recovery)

    # -- another server or name, from inside the app ---------------------------------------

    def action_change_server(self) -> None:
        """Connect to a server…: the connect form, on its server field."""
        self._open_form("url")

    def action_rename(self) -> None:
        """Rename…: the connect form, on its name field (another name is another player)."""
        self._open_form("name")

    def _open_form(self, field: str) -> None:
        """The connect form filled with this session's server and name, the focus on
        ``field``; the session goes on until Connect (Esc goes back to it)."""
        while self.screen is not self.connect_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        open_ = self.link is not None and self.link.connected and self.lobby_screen is not None
        where = f"online at {self.server_url}" if self.server_url else "offline"
        self.connect_screen.edit(
            self.server_url, self.session.name, field,
            f"You play as {self.session.name}, {where}. Connect opens another session with "
            "what is typed here (another name is another player); Esc goes back."
            if open_ else None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_to_session":  # Esc on the connect form, shown only when it can
            return self.connect_screen.returnable
        return True

    def action_back_to_session(self) -> None:
        """Esc on the connect form opened from a session: back to its lobby."""
        if self.link is not None and self.link.connected and self.lobby_screen is not None:
            self.connect_screen.returnable = False
            self.connect_screen.set_status("")
            self.show_lobby()

    async def _leave_session(self) -> None:
        """End the session with the server (not the local server: going back offline is
        instant) and forget what it showed, before another one opens."""
        self.connect_screen.returnable = False
        self.connect_screen.refresh_bindings()
        self.workers.cancel_group(self, "link")
        link, self.link = self.link, None
        if link is not None:
            await link.close()
        self._stop_countdown()
        self.lobby_screen = None
        self.lobby = LobbyModel()
        self.tournaments = TournamentsModel()
        self.games.clear()
        self._requests.clear()
        self._challenge_prompts.clear()
        session = self.session
        session.rating = session.my_seek = session.queued = session.private_code = None
        session.challenges_out.clear()
        session.challenges_in.clear()
        session.unfinished = []

    def on_leave_game(self, message: LeaveGame) -> None:
        message.stop()
        model = self.games.pop(message.game_id, None)
        if model is not None and self.link is not None and self.link.connected:
            self.send(Unwatch(game=message.game_id))
        screen = self._game_screen(message.game_id)
        if screen is not None and screen is self.screen:
            self.pop_screen()
            # where the footer says Esc goes: back to the list of games it was opened from,
            # else to the lobby (from a game that opened over Puzzles, the Account...)
            if (not screen.back and self.lobby_screen is not None
                    and self.lobby_screen in self.screen_stack):
                while self.screen is not self.lobby_screen:
                    self.pop_screen()

    # -- link events -----------------------------------------------------------------------

    def on_link_message(self, message: LinkMessage) -> None:
        if message.link is not None and message.link != self._links:
            return  # from the session left for another server or name
        event = message.event
        if isinstance(event, Received):
            self._received(event.message)
        elif isinstance(event, Connected):
            self._connected(event)
        elif isinstance(event, Connecting):
            self._stop_countdown()
            where = self.server_url or "the local server"
            self._set_state(f"connecting to {where}…" if event.attempt == 1
                            else f"reconnecting (try {event.attempt})…")
        elif isinstance(event, Dropped):
            self._retry_at = self.clock() + event.retry_in
            self._count_down()
            if self._countdown is None:
                self._countdown = self.set_interval(1.0, self._count_down)
            if event.first:
                self.notify(f"Connection lost ({event.reason}). Reconnecting…",
                            severity="warning", timeout=4, markup=False)
        elif isinstance(event, Unreachable):
            self._back_to_connect(event.reason.capitalize())
        elif isinstance(event, Refused):
            self._refused(event)

    def _count_down(self) -> None:
        if self._retry_at is not None:
            left = max(0.0, self._retry_at - self.clock())
            self._set_state(f"connection lost: reconnecting in {left:.0f}s")

    def _stop_countdown(self) -> None:
        self._retry_at = None
        if self._countdown is not None:
            self._countdown.stop()
            self._countdown = None

    def _set_state(self, text: str) -> None:
        self.sub_title = visible(f"{self.session.name} · {text}")
        if isinstance(self.screen, GameScreen):
            self.screen.sub_title = self.sub_title

    def _connected(self, event: Connected) -> None:
        welcome = event.welcome
        self._stop_countdown()
        self.connect_screen.starting = False
        self.connect_screen.set_busy(False)
        self.tokens.save(self._key, welcome.name, welcome.token)
        if self.server_url is not None and self.settings.servers[:1] != [self.server_url]:
            self.settings.used_server(self.server_url)
            self.save_settings()
        self.session.unfinished = list(welcome.games)
        self.session.name = welcome.name
        self.session.rating = welcome.rating
        self.session.roles = list(welcome.roles)
        self.session.challenges_out.clear()  # a dropped connection lapsed them on the server
        self._set_state(f"online at {self.server_url}" if self.server_url else "offline")
        self.send(LobbySub())
        if event.reconnected:
            self.notify("Reconnected.", timeout=3)
            for model in self.games.values():
                self.send(model.reconnected())
            for tournament in self.tournaments.followed:
                self.send(TournamentSub(tournament=tournament,
                                        page=self.tournaments.asked.get(tournament)), quiet=True)
        else:
            self.show_lobby()
            for game_id in welcome.games:
                self.send(Watch(game=game_id))
            if self._recovering:
                self.notify("Recovered: your new password is set, that code is used up, and "
                            "every other device is logged out.", timeout=6)
        self._recovering = False
        if self.lobby_screen is not None:
            self.lobby_screen.refresh_lobby()

    def show_lobby(self) -> None:
        """Show the lobby screen (made once), above the connect screen."""
        if self.lobby_screen is None:
            base = None if self.server_url is None else http_base(self.server_url)
            if self.embedded is not None:
                base = self.embedded.http_url
            self.lobby_screen = LobbyScreen(self.lobby, self.session, base, self.settings)
        if self.lobby_screen not in self.screen_stack:
            while self.screen is not self.connect_screen and len(self.screen_stack) > 1:
                self.pop_screen()
            self.push_screen(self.lobby_screen)

    def action_account(self) -> None:
        """This player's account: protect the name, the devices."""
        if self.session.name and not isinstance(self.screen, AccountScreen):
            self.push_screen(AccountScreen(self.session.name))

    def action_tournaments(self) -> None:
        """The tournaments of the day."""
        if not isinstance(self.screen, TournamentsScreen):
            self.push_screen(TournamentsScreen(
                self.tournaments, self.open_tournament,
                lambda: not {"moderator", "admin"}.isdisjoint(self.session.roles)))

    def open_tournament(self, tournament: str) -> None:
        """Show ``tournament``'s page: the one already open (what is above it closed), else a
        new one on top."""
        open_ = next((s for s in self.screen_stack if isinstance(s, TournamentScreen)
                      and s.tournament == tournament), None)
        if open_ is None:
            self.push_screen(TournamentScreen(tournament, self.tournaments,
                                              lambda: self.session.name))
            return
        while self.screen is not open_:
            self.pop_screen()

    def on_open_tournament(self, message: OpenTournament) -> None:
        """From a tournament's game: a game over (or watched) is left for the tournament's
        page; one going on stays open under it."""
        message.stop()
        model = self.games.get(message.game) if message.game else None
        if model is not None and (model.over or model.you is None):
            self.games.pop(model.id, None)
            if self.link is not None and self.link.connected:
                self.send(Unwatch(game=model.id))
            screen = self._game_screen(model.id)
            if screen is not None and screen is self.screen:
                self.pop_screen()
        self.open_tournament(message.tournament)

    def on_challenge_player(self, message: ChallengePlayer) -> None:
        """A challenge from a player's page: the lobby's dialog of terms."""
        message.stop()
        if self.lobby_screen is not None:
            self.lobby_screen.challenge(message.name)

    def action_my_games(self) -> None:
        """The games this player has on this server, as the server lists them."""
        self.push_screen(MyGamesScreen(self.session.name))

    def solver(self) -> Fetch | None:
        """``/api/solve`` on the server this client plays on (None before it is known)."""
        if self.embedded is not None:
            return fetch_solve(self.embedded.http_url)
        return None if self.server_url is None else fetch_solve(http_base(self.server_url))

    def open_review(self, game_id: str) -> None:
        """Ask for a finished game's review; its screen opens with the reply (``show_review``).
        Screens post ``Outgoing(ReviewGame(game=...))`` to do the same (the game's end, My
        games); a player page can call this."""
        self.send(ReviewGame(game=game_id))

    def show_review(self, message: GameReviewed) -> None:
        """The reply to ``review`` (from a finished game or My games): its screen."""
        self.push_screen(ReviewScreen(message.review, self.solver()))

    def action_analysis(self) -> None:
        """The analysis board, from the empty board."""
        self.push_screen(AnalysisScreen(self.solver()))

    def action_puzzles(self) -> None:
        """The puzzles: the one on screen when last left, else one near the rating."""
        if not isinstance(self.screen, PuzzleScreen):
            self.push_screen(PuzzleScreen(self.puzzles))

    def _received(self, message: ServerMessage) -> None:
        """The puzzles' replies go to the puzzle screen (and a refused puzzle request takes
        back what it asked); everything else as ``ServerMessages`` reads it."""
        screen = next((s for s in self.screen_stack if isinstance(s, PuzzleScreen)), None)
        if isinstance(message, PuzzleEvent):
            self._requests.pop(message.ref or 0, None)
            if screen is not None:
                screen.received(message)
            return
        if isinstance(message, Error) and screen is not None and isinstance(
                self._requests.get(message.ref or 0), PuzzleRequest):
            screen.refused()
        super()._received(message)

    def _back_to_connect(self, reason: str, focus: str = "url") -> None:
        """Back to the connect form, saying ``reason``, the focus on the field to change."""
        while self.screen is not self.connect_screen and len(self.screen_stack) > 1:
            self.pop_screen()
        self.connect_screen.returnable = False
        self.connect_screen.refresh_bindings()
        self.lobby_screen = None
        self.games.clear()
        self._stop_countdown()
        self.connect_screen.starting = False
        self._set_state("not connected")
        self.connect_screen.set_status(reason, error=True)
        self.connect_screen.set_busy(False, focus)

    def _refused(self, event: Refused) -> None:
        name = self.session.name
        if event.code == "token_revoked":
            self.tokens.forget(self._key, name)  # dead: the next connect says hello or logs in
        if event.code == "bad_token" and not self._retried_name:
            self.tokens.forget(self._key, name)  # the server forgot us: register the name again
            self._retried_name = True
            self.run_link(self.server_url, name)
            return
        text = REFUSALS.get(event.code, "The server refused: {message}")
        password = event.code in ("token_revoked", "bad_credentials", "too_many_attempts")
        self._back_to_connect(text.format(name=name, message=event.message),
                              "password" if password else "name")
