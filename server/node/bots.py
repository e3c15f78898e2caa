"""Bots: what a bot account may not do, and the bot API's streams told from the
websocket events a session receives.

A bot's stream is a ``Session`` like a websocket's (``server.http.bot_api`` gives it its
outlet): delivery, the cluster's bus, challenges by name and the host's levers reach it as
they reach any connection. ``EventFeed`` and ``GameFeed`` turn what it receives into the
lines of ``GET /api/stream/event`` and ``GET /api/bot/game/stream/{id}``
(``server.protocol.bot_events``); they keep what a line needs and do no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.rules.geometry import variant as variant_geometry
from engine.rules.notation import format_cell
from server.errors import ServerError
from server.game.records import PlayerRecord
from server.protocol import (
    AcceptSeek,
    ChallengeGone,
    ChallengeReceived,
    ChatLine,
    ClientMessage,
    ErrorCode,
    GameEnd,
    GameState,
    MovePlayed,
    Offer,
    PrivateCreate,
    PrivateJoin,
    Quick,
    Seek,
    ServerMessage,
    TakenBack,
)
from server.protocol.bot_events import (
    BotChallenge,
    BotChallengeCanceled,
    BotChallengeDeclined,
    BotChatLine,
    BotEvent,
    BotGame,
    BotGameFinish,
    BotGameFull,
    BotGameStart,
    BotGameState,
    ChallengeGoneInfo,
)

PAIRING = (Seek, AcceptSeek, Quick, PrivateCreate, PrivateJoin)
"""The requests that pair a player with whoever comes: a bot's are refused unless the host
allows bots in pairing (``HubConfig.bots_in_pairing``)."""


def refuse_pairing(player: PlayerRecord | None, message: ClientMessage, allowed: bool) -> None:
    """Refuse a bot's seek, quick pairing or private room (``bot_pairing_off``) unless
    ``allowed``: a bot plays only the challenges it accepts."""
    if not allowed and player is not None and player.bot and isinstance(message, PAIRING):
        raise ServerError("a bot plays the challenges it accepts: this server keeps bots out "
                          "of seeks and pairing", ErrorCode.BOT_PAIRING_OFF)


CHALLENGES_KEPT = 64  # challenges an event stream remembers telling (a player has 10 at most)


def _to_move(ply: int) -> str:
    return "x" if ply % 2 == 0 else "o"


class EventFeed:
    """The lines of a bot's event stream from what its session receives: each challenge
    (the stream's first lines replay those waiting, which on a cluster may also come as
    they are made) and each game's start and finish once."""

    def __init__(self) -> None:
        self.games: dict[str, BotGame] = {}  # started, not finished
        self.finished: set[str] = set()
        self.challenges: dict[str, None] = {}  # the last CHALLENGES_KEPT told, oldest first

    def feed_all(self, messages: Iterable[ServerMessage]) -> list[BotEvent]:
        return [event for message in messages for event in self.feed(message)]

    def feed(self, message: ServerMessage) -> list[BotEvent]:
        match message:
            case ChallengeReceived():
                if message.challenge.id in self.challenges:
                    return []  # replayed and also sent as it was made (a cluster's)
                self.challenges[message.challenge.id] = None
                if len(self.challenges) > CHALLENGES_KEPT:
                    del self.challenges[next(iter(self.challenges))]
                return [BotChallenge(challenge=message.challenge)]
            case ChallengeGone():
                gone = ChallengeGoneInfo(id=message.challenge, reason=message.reason)
                if message.reason == "declined":
                    return [BotChallengeDeclined(challenge=gone)]
                return [BotChallengeCanceled(challenge=gone)]
            case GameState():
                return self._game(message)
            case MovePlayed():
                game = self.games.get(message.game)
                if game is not None:
                    game.ply = message.ply
                    game.my_turn = _to_move(message.ply) == game.color
                return []
            case GameEnd():
                game = self.games.get(message.game)
                if game is None:
                    return []
                return [self._finish(game, message)]
            case _:
                return []

    def _game(self, state: GameState) -> list[BotEvent]:
        if state.you is None or state.id in self.finished:
            return []  # watched, not played; or told already
        side = 0 if state.you == "x" else 1
        ply = len(state.moves)
        game = BotGame(
            id=state.id, variant=state.variant, clock=state.clock, rated=state.rated,
            color=state.you, opponent=state.seats[1 - side], ply=ply,
            my_turn=state.status == "playing" and _to_move(ply) == state.you,
        )
        started = state.id in self.games
        self.games[state.id] = game
        events: list[BotEvent] = [] if started else [BotGameStart(game=game)]
        if state.status == "over" and state.end is not None:
            if not started:
                return []  # over before the bot heard of it: nothing to start or finish
            events.append(self._finish(game, state.end))
        return events

    def _finish(self, game: BotGame, end: GameEnd) -> BotGameFinish:
        del self.games[game.id]
        self.finished.add(game.id)
        game.status, game.result, game.reason, game.winner = "over", end.result, end.reason, \
            end.winner
        game.my_turn = False
        return BotGameFinish(game=game)


class GameFeed:
    """The lines of one game's stream from what its session receives: ``gameFull`` on the
    game's first state, ``gameState`` after each change, ``chatLine``; other games' events
    are left out."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.full: GameState | None = None
        self.cells: list[int] = []
        self.notation: list[str] = []
        self.times: tuple[int | None, int | None] = (None, None)
        self.end: GameEnd | None = None
        self.draw_offer: str | None = None

    @property
    def over(self) -> bool:
        return self.end is not None

    def feed_all(self, messages: Iterable[ServerMessage]) -> list[BotEvent]:
        """The lines of messages received together (one change of the game): a state left
        behind by a later one of them is left out (a move and the end it made are one
        ``gameState``, so no bot plays on a game that is over)."""
        events = [event for message in messages for event in self.feed(message)]
        last = max((i for i, e in enumerate(events) if isinstance(e, BotGameState)), default=-1)
        return [e for i, e in enumerate(events) if not isinstance(e, BotGameState) or i == last]

    def feed(self, message: ServerMessage) -> list[BotEvent]:
        if isinstance(message, GameState):
            return self._state(message) if message.id == self.game_id else []
        if getattr(message, "game", None) != self.game_id or self.full is None:
            return []
        match message:
            case MovePlayed():
                self.cells.append(message.cell)
                self.notation.append(message.notation)
                if message.clocks is not None:
                    self.times = (message.clocks.x, message.clocks.o)
                self.draw_offer = None
            case GameEnd():
                self.end = message
                if message.clocks is not None:
                    self.times = (message.clocks.x, message.clocks.o)
            case Offer():
                if message.kind == "rematch":
                    return []
                self.draw_offer = message.by if message.kind == "draw" else None
            case TakenBack():
                del self.cells[message.ply:], self.notation[message.ply:]
                if message.clocks is not None:
                    self.times = (message.clocks.x, message.clocks.o)
            case ChatLine():
                return [BotChatLine(room="player" if message.side else "spectator",
                                    name=message.name, text=message.text)]
            case _:
                return []
        return [self.state()]

    def _state(self, state: GameState) -> list[BotEvent]:
        first = self.full is None
        self.full = state
        geometry = variant_geometry(state.variant)
        self.cells = list(state.moves)
        self.notation = [format_cell(cell, geometry) for cell in state.moves]
        self.times = (None, None) if state.clocks is None else (state.clocks.x, state.clocks.o)
        self.end = state.end
        self.draw_offer = state.draw_offer
        if not first:
            return [self.state()]
        return [BotGameFull(id=state.id, variant=state.variant, clock=state.clock,
                            rated=state.rated, x=state.seats[0], o=state.seats[1],
                            state=self.state())]

    def state(self) -> BotGameState:
        end = self.end
        return BotGameState(
            moves=" ".join(self.notation), cells=list(self.cells),
            x_time=self.times[0], o_time=self.times[1],
            status="over" if end is not None else "playing",
            result=None if end is None else end.result,
            reason=None if end is None else end.reason,
            winner=None if end is None else end.winner,
            draw_offer=self.draw_offer,  # type: ignore[arg-type]
        )
