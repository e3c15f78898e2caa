"""The terminal client's side of the conversation with the server: requests out, each with
an id, and what the server sends applied to the models and the screens.

``ServerMessages`` is the part of ``client_tui.app.QubicApp`` (which extends it) that reads
messages: a game's state and events update its ``GameModel`` and its screen, lobby messages
the ``LobbyModel``, challenges prompt, errors and replies are matched to the request they
answer. The app around it owns the link (connect, reconnect, refusals) and the screens.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App

from client_tui.connection import ServerLink
from client_tui.model import (
    Applied,
    ChallengeEvent,
    GameEvent,
    GameModel,
    LobbyModel,
    PlayerSession,
    challenge_terms,
    describe_end,
    format_clock_spec,
    other,
)
from client_tui.screens.account import AccountScreen
from client_tui.screens.dialogs import ConfirmDialog, NoticeDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.lobby import LobbyScreen
from client_tui.screens.player import PlayerScreen
from client_tui.screens.tournaments import TournamentScreen, TournamentsScreen
from client_tui.settings import PlayedGame, Settings, SettingsStore
from client_tui.text import sentence, visible
from client_tui.tournament_model import TournamentsModel
from server.protocol import (
    Announce,
    CancelQuick,
    CancelSeek,
    ChallengeAccept,
    ChallengeCancel,
    ChallengeDecline,
    ChallengeInfo,
    ChallengeReceived,
    ChallengeSent,
    ClientMessage,
    Devices,
    Error,
    GameEnd,
    GameReviewed,
    GameState,
    LobbyDelta,
    LobbySnapshot,
    MovePlayed,
    Offer,
    PasswordSet,
    PlayerGamesPage,
    PrivateCancel,
    PrivateCreated,
    Queued,
    Rematched,
    Seeking,
    ServerMessage,
    Suggestion,
    TakenBack,
    TournamentCreate,
    TournamentJoin,
    TournamentLeave,
    TournamentList,
    Tournaments,
    TournamentState,
    TournamentSub,
    Watch,
)


class ServerMessages(App[None]):
    """Sends requests and applies the server's messages; see the module docstring. The state
    it works on is made by ``QubicApp``'s constructor."""

    session: PlayerSession
    lobby: LobbyModel
    tournaments: TournamentsModel
    games: dict[str, GameModel]
    settings: Settings
    settings_store: SettingsStore
    clock: Callable[[], float]
    link: ServerLink | None
    lobby_screen: LobbyScreen | None
    _key: str  # where games played are remembered for the current server
    _requests: dict[int | str, ClientMessage]  # sent and not yet answered, by id
    _next_id: int
    _challenge_prompts: dict[str, ConfirmDialog]

    # -- requests up -----------------------------------------------------------------------

    def send(self, request: ClientMessage, quiet: bool = False) -> bool:
        """Send ``request`` with a fresh id; says so on screen when not connected."""
        request_id = self._next_id
        self._next_id += 1
        request.id = request_id
        if self.link is None or not self.link.send(request):
            if not quiet:
                self.notify("Not connected: wait for the connection to come back.",
                            severity="warning", timeout=3)
            return False
        self._requests[request_id] = request
        return True

    def show_review(self, message: GameReviewed) -> None:
        """Show a game's review (``QubicApp`` pushes its screen)."""

    def open_tournament(self, tournament: str) -> None:
        """Show a tournament's page (``QubicApp`` pushes it)."""

    # -- server messages -------------------------------------------------------------------

    def _received(self, message: ServerMessage) -> None:
        now = self.clock()
        if isinstance(message, GameState):
            self._game_state(message, now)
        elif isinstance(message, GameEvent):
            if isinstance(message, Suggestion):
                self._requests.pop(message.ref or 0, None)
            self._game_event(message, now)
        elif isinstance(message, GameReviewed):
            self._requests.pop(message.ref or 0, None)
            self.show_review(message)
        elif isinstance(message, LobbySnapshot):
            self._requests.pop(message.ref or 0, None)  # the lobby is asked for again and again
            self.lobby.load(message)
            self._refresh_lobby()
        elif isinstance(message, LobbyDelta):
            self.lobby.apply(message)
            if self.session.my_seek in message.seeks_removed:
                self.session.my_seek = None
            self._refresh_lobby()
        elif isinstance(message, Seeking):
            self.session.my_seek = message.seek.id
            self._refresh_lobby()
        elif isinstance(message, Queued):
            self.session.queued = f"{message.variant} {format_clock_spec(message.clock)}"
            self._refresh_lobby()
        elif isinstance(message, PrivateCreated):
            self.session.private_code = message.code
            self._refresh_lobby()
            self.push_screen(NoticeDialog(
                "Private room",
                f"Your room's code is\n\n    {message.code}\n\nSend it to a friend: they "
                "press j in the lobby and type it. The game starts when they join; x in the "
                "lobby closes the room.",
            ))
        elif isinstance(message, ChallengeEvent):
            self._challenge(message)
        elif isinstance(message, TournamentList | TournamentState):
            self._tournament(message)
        elif isinstance(message, PasswordSet | Devices):
            self._requests.pop(message.ref or 0, None)
            for screen in self.screen_stack:
                if isinstance(screen, AccountScreen):
                    screen.received(message)
        elif isinstance(message, Error):
            self._error(message)
        elif isinstance(message, PlayerGamesPage):
            self._requests.pop(message.ref or 0, None)
            for screen in self.screen_stack:
                if isinstance(screen, PlayerScreen) and screen.shows(message):
                    screen.show_page(message)
        elif isinstance(message, Announce):  # the host speaks: stays up long enough to read
            self.bell()
            self.notify(message.text, title="From the server", severity="warning",
                        timeout=max(10.0, message.restart_in or 0.0))
        else:  # ack, pong, welcome
            request = self._requests.pop(getattr(message, "ref", None) or 0, None)
            if isinstance(request, Watch):
                self._caught_up(request)
            elif isinstance(request, ChallengeCancel):
                self.session.challenges_out.pop(request.challenge, None)
            elif isinstance(request, CancelSeek):
                self.session.my_seek = None
            elif isinstance(request, CancelQuick):
                self.session.queued = None
            elif isinstance(request, PrivateCancel):
                self.session.private_code = None
                self.notify("Private room closed: its code opens nothing now.", timeout=3)
            elif isinstance(request, TournamentJoin):
                self.notify(visible(f"You are in {self.tournaments.name(request.tournament)}: "
                                    "your games open by themselves."), timeout=4, markup=False)
            elif isinstance(request, TournamentLeave):
                self.notify(visible(f"You left {self.tournaments.name(request.tournament)}."),
                            timeout=4, markup=False)
            self._refresh_lobby()

    # -- tournaments -----------------------------------------------------------------------

    def _tournament(self, message: TournamentList | TournamentState) -> None:
        """The list or one tournament's state: into the model; the screens that show them,
        and the games that belong to them, redrawn."""
        request = self._requests.pop(message.ref or 0, None)
        if isinstance(message, TournamentList):
            self.tournaments.load(message)
        else:
            self.tournaments.update(message)
        for model in self.games.values():
            if model.tournament is not None:
                model.tournament_name = self.tournaments.name(model.tournament)
        for screen in self.screen_stack:
            if isinstance(screen, TournamentsScreen | TournamentScreen):
                screen.refresh_tournaments()
            elif isinstance(screen, GameScreen) and screen.model.tournament is not None:
                screen.update()
        if isinstance(request, TournamentCreate) and isinstance(message, TournamentState):
            self.notify(visible(f"{message.info.name} is scheduled."), timeout=4, markup=False)
            self.open_tournament(message.info.id)  # its page, as the web client opens it

    # -- challenges ------------------------------------------------------------------------

    def _challenge(self, message: ChallengeEvent) -> None:
        session = self.session
        if isinstance(message, ChallengeSent):
            self._requests.pop(message.ref or 0, None)
            session.challenges_out[message.challenge.id] = message.challenge
            self.notify(visible(f"Challenge sent to {message.challenge.to}; waiting for an "
                                "answer (x in the lobby cancels)."), timeout=4, markup=False)
        elif isinstance(message, ChallengeReceived):
            self.ring()
            self._prompt_challenge(message.challenge)
        else:
            sent = session.challenges_out.pop(message.challenge, None)
            received = session.challenges_in.pop(message.challenge, None)
            if sent is not None:
                why = {"declined": "declined your challenge",
                       "offline": "went offline: your challenge lapsed"}
                self.notify(visible(f"{sent.to} {why.get(message.reason, message.reason)}."),
                            title="Challenge", timeout=5, markup=False)
            elif received is not None:
                why = {"cancelled": "cancelled the challenge",
                       "offline": "went offline: the challenge lapsed"}
                self.notify(visible(f"{received.by} {why.get(message.reason, message.reason)}."),
                            title="Challenge", timeout=5, markup=False)
                prompt = self._challenge_prompts.pop(message.challenge, None)
                if prompt is not None and self.screen is prompt:
                    prompt.dismiss(False)
        self._refresh_lobby()

    def _prompt_challenge(self, challenge: ChallengeInfo) -> None:
        """Ask whether to accept ``challenge``; the focus opens on Decline."""
        self.session.challenges_in[challenge.id] = challenge
        terms = challenge_terms(challenge, sent=False)
        prompt = ConfirmDialog(f"{visible(challenge.by)} challenges you:\n{terms}\n\n"
                               "y accepts · n, Enter or Escape declines",
                               yes="Accept", no="Decline")
        self._challenge_prompts[challenge.id] = prompt

        def answered(accept: bool | None) -> None:
            self._challenge_prompts.pop(challenge.id, None)
            if self.session.challenges_in.pop(challenge.id, None) is None:
                return  # cancelled or lapsed meanwhile: already said
            if accept:
                self.send(ChallengeAccept(challenge=challenge.id))
            else:
                self.send(ChallengeDecline(challenge=challenge.id))

        self.push_screen(prompt, answered)

    def _refresh_lobby(self) -> None:
        if self.lobby_screen is not None:
            self.lobby_screen.refresh_lobby()

    def _error(self, error: Error) -> None:
        request = self._requests.pop(error.ref, None) if error.ref is not None else None
        if error.code == "stale_move" and request is not None:
            game = getattr(request, "game", None)
            model = self.games.get(game) if game else None
            if model is not None:
                self._resync(model)
                return
        if isinstance(request, Watch) and request.game in self.games:
            self.games[request.game].refused(request)
        if error.code == "no_such_game" and isinstance(request, Watch):
            self.games.pop(request.game, None)
        if error.code == "not_queued":
            self.session.queued = None
            if isinstance(request, PrivateCancel):
                self.session.private_code = None
                self._refresh_lobby()
        if error.code == "no_such_tournament" and isinstance(request, TournamentSub):
            self.tournaments.forget(request.tournament)
        if error.code == "no_such_challenge" and isinstance(request, ChallengeCancel):
            self.session.challenges_out.pop(request.challenge, None)
            self._refresh_lobby()
        # one sentence, no title: the code's words would only say it a second time
        self.notify(sentence(visible(error.message)), severity="error", timeout=5,
                    markup=False)

    def ring(self) -> None:
        """Call the player back (the terminal's bell), unless the settings say not to."""
        if self.settings.bell:
            self.bell()

    def _game_state(self, state: GameState, now: float) -> None:
        model = GameModel.from_state(state, now)
        if state.tournament is not None:
            model.tournament_name = self.tournaments.name(state.tournament)
            if state.tournament not in self.tournaments.listed:
                self.send(Tournaments(), quiet=True)  # its name comes with the list
        if (state.ref is None and state.id not in self.games and model.you is not None
                and not model.over and not model.against_computer):
            self.ring()  # a game found that this client did not just ask for: a seek taken
        self._remember(model)
        old = self.games.get(state.id)
        if old is not None and old.view_ply is not None:
            model.show(old.view_ply)
        self.games[state.id] = model
        if state.you is not None and not model.over:
            if not model.against_computer:
                self.session.queued = None
                self.session.private_code = None
            if self.session.my_seek and self.session.my_seek not in self.lobby.seeks:
                self.session.my_seek = None
            opponents = {seat.name for seat in state.seats}
            for challenge_id, challenge in list(self.session.challenges_out.items()):
                if challenge.to in opponents:  # accepted: this is its game
                    del self.session.challenges_out[challenge_id]
            self._refresh_lobby()
        screen = self._game_screen(state.id)
        if screen is not None:
            screen.update(model)
            return
        current = self.screen
        if isinstance(current, GameScreen):
            shown = current.model
            if shown.over or shown.you is None:
                self.games.pop(shown.id, None)
                self.switch_screen(GameScreen(model, self.clock, self.settings,
                                              back=current.back))
            else:
                self.notify(visible(f"Another game is waiting: {model.seat('x').name} vs "
                                    f"{model.seat('o').name}. Open it from the lobby."),
                            timeout=6, markup=False)
            return
        # a game opened from a list of games (a player's, a tournament's, or the next pairing
        # over a tournament's page) goes back to it; else Esc goes to the lobby
        self.push_screen(GameScreen(model, self.clock, self.settings,
                                    back=isinstance(current, PlayerScreen | TournamentScreen)))

    def _resync(self, model: GameModel) -> None:
        """Ask for what brings ``model`` up to date, unless a request for it is on its way."""
        request = model.resync()
        if request is not None:
            self.send(request, quiet=True)

    def _caught_up(self, request: Watch) -> None:
        """A ``watch`` is answered by its ``ack``: a catch-up complete. One that left the gap
        open asks again, at most ``CATCH_UPS`` times before the full game."""
        model = self.games.get(request.game)
        again = None if model is None else model.caught_up(request)
        if again is not None:
            self.send(again, quiet=True)

    def _game_event(self, event: GameEvent, now: float) -> None:
        model = self.games.get(event.game)
        if model is None:
            return
        applied = model.apply(event, now)
        if applied is Applied.GAP:
            self._resync(model)
            return
        if applied is Applied.IGNORED:
            return
        if isinstance(event, GameEnd):
            self._remember(model)
        if (isinstance(event, MovePlayed) and model.you not in (None, event.side)
                and not model.against_computer):
            self.ring()  # a person moved: the computer's quick replies ring nobody back
        if isinstance(event, Rematched) and model.you is None:
            self.send(Watch(game=event.rematch))  # a spectator follows the players
        if isinstance(event, GameEnd) and event.rating_change and model.you is not None:
            change = event.rating_change.x if model.you == "x" else event.rating_change.o
            if self.session.rating is not None:
                self.session.rating += change
            self._refresh_lobby()
        screen = self._game_screen(model.id)
        if screen is not None:
            screen.update()
        if screen is None or screen is not self.screen:
            return
        if isinstance(event, GameEnd):
            self.notify(describe_end(model), title="Game over", timeout=6, markup=False)
        elif isinstance(event, Suggestion):
            self.notify(f"Hint: {event.notation} (marked ! on the board).", timeout=4)
        elif isinstance(event, TakenBack):
            self.notify("Move taken back." if event.by == model.you else
                        f"{event.by.upper()} took back a move.", timeout=3)
        elif isinstance(event, Offer) and model.you is not None and event.by == other(model.you):
            if event.kind == "draw":
                self.notify("Your opponent offers a draw: o accepts, n declines.", timeout=6)
            elif event.kind == "rematch" and model.you not in model.rematch:
                self.notify("Your opponent asks for a rematch: m accepts.", timeout=6)
            elif event.kind == "draw_declined":
                self.notify("Your draw offer was declined.", timeout=4)

    def _remember(self, model: GameModel) -> None:
        """Keep the games this player plays (not watches) for "My games"."""
        if model.you is None or not self._key:
            return
        known = self.settings.game(self._key, model.id)
        result = None if model.end is None else model.end.result
        if known is not None and known.result == result and known.ply == model.ply:
            return
        if model.end is not None and model.id in self.session.unfinished:
            self.session.unfinished.remove(model.id)
        elif model.end is None and model.id not in self.session.unfinished:
            self.session.unfinished.append(model.id)
        self.settings.played(self._key, PlayedGame(
            id=model.id, variant=model.variant, x=model.seat("x").name, o=model.seat("o").name,
            you=model.you, started=known.started if known else time.time(), ply=model.ply,
            result=result,
        ))
        self.save_settings()

    def save_settings(self) -> None:
        """Write the settings (servers, options, games played), saying so if that fails."""
        try:
            self.settings_store.save(self.settings)
        except OSError as error:
            self.notify(f"Settings not saved: {error}", severity="warning", timeout=4,
                        markup=False)

    def _game_screen(self, game_id: str) -> GameScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, GameScreen) and screen.model.id == game_id:
                return screen
        return None
