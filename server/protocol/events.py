"""Server -> client: the game and lobby events with the values nested in them, and the closed
union of every event (``learning_events`` holds the puzzles and reviews, ``account_events``
the devices, passwords and moderation)."""

from __future__ import annotations

from typing import Literal

import msgspec

from server.protocol.account_events import ChatRemoved, Devices, PasswordSet, ReportQueue
from server.protocol.codes import PROTOCOL_VERSION
from server.protocol.event_base import _Event, _GameEvent, _Value
from server.protocol.field_types import (
    ChallengeGoneReason,
    ClockSpec,
    Colour,
    ColourChoice,
    EngineState,
    OfferKind,
    Reason,
    RequestId,
    Result,
    Variant,
)
from server.protocol.learning_events import (
    GameReviewed,
    PuzzleHistoryList,
    PuzzleResult,
    PuzzleShown,
)
from server.protocol.requests import ClientMessage
from server.protocol.tournament_events import TournamentList, TournamentState

# -- server -> client: values nested in messages ----------------------------------------------


class Clocks(_Value):
    """Milliseconds left for each side; ``running`` is whose clock is ticking, if any."""

    x: int
    o: int
    running: Colour | None = None


class SeatInfo(_Value):
    """Who sits on one side: ``ai`` is the computer's level, ``online`` its presence, ``bot``
    whether the account is a bot (plays over the bot API, docs/bots.md)."""

    name: str
    rating: int | None = None
    online: bool = True
    ai: int | None = None
    bot: bool = False


class RatingChange(_Value):
    """Rating points won (positive) or lost by each side."""

    x: int
    o: int


class SeekInfo(_Value, omit_defaults=True):
    """An open seek; ``bot``: the seeker is a bot account (sent only when true)."""

    id: str
    name: str
    rating: int | None
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    colour: ColourChoice
    bot: bool = False


class PlayerOnline(_Value):
    name: str
    rating: int | None
    bot: bool = False


class ChallengeInfo(_Value):
    """A challenge's terms: ``colour`` is the challenger's (``by``) choice."""

    id: str
    by: str
    to: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    colour: ColourChoice


class GameHeading(_Value):
    """A game's id, terms and players: what the lobby's listing and the HTTP API's game
    (``server.http.api.ApiGame``) both begin with."""

    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    x: str
    o: str


class GameSummary(GameHeading, omit_defaults=True):
    """A game in the lobby's live list; ``x_bot``, ``o_bot``: that side's player is a bot
    account (sent only when true)."""

    ply: int
    x_bot: bool = False
    o_bot: bool = False


class PlayerProfile(_Value):
    """A player's record; ``rating`` and ``rd`` (Glicko-2) rounded, times in Unix seconds."""

    name: str
    created: float
    rating: int
    rd: int
    games: int
    rated_games: int
    wins: int
    losses: int
    draws: int
    bot: bool = False


class PlayedGame(_Value, omit_defaults=True):
    """One game in a player's history, from that player's side (``side``): ``x`` and ``o``
    are named as in a game's seats (``x_bot``, ``o_bot``: a bot account, sent only when
    true), ``status`` is ``playing`` or ``over`` (``result`` ``*``
    when called off), ``rating`` the player's before a rated game and ``rating_change`` what
    it made of it; ``moves`` replay it."""

    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    side: Colour
    x: str
    o: str
    x_ai: int | None
    o_ai: int | None
    status: Literal["playing", "over"]
    result: Result | None
    reason: Reason | None
    moves: list[int]
    created: float
    ended: float | None
    rating: int | None
    rating_change: int | None
    x_bot: bool = False
    o_bot: bool = False


class RatingPoint(_Value):
    """A player's rating after a rated game that ended at ``at`` (Unix seconds)."""

    at: float
    rating: int


def _server_name() -> str:
    """``qubic/<version>``: read when a welcome is made, so that importing the protocol does
    not read the package's metadata (a command such as ``qubic admin`` never needs it)."""
    from server.version import VERSION

    return f"qubic/{VERSION}"


# -- server -> client: messages ---------------------------------------------------------------


class Welcome(_Event, tag="welcome"):
    """The session is open; ``token`` goes only to its owner. ``games`` are yours to resume."""

    name: str
    token: str
    rating: int
    games: list[str] = []
    protocol: int = PROTOCOL_VERSION
    server: str = msgspec.field(default_factory=_server_name)  # its name and version
    ref: RequestId | None = None
    roles: list[str] = []  # "admin", "moderator", "bot": what the client may offer (docs/admin.md)


class LobbySnapshot(_Event, tag="lobby"):
    """``players``: who is online, the first ``PLAYERS_SHOWN`` by name (``online`` counts all)."""

    seeks: list[SeekInfo]
    games: list[GameSummary]
    online: int
    players: list[PlayerOnline] = []
    ref: RequestId | None = None


class LobbyDelta(_Event, tag="lobby_delta"):
    """``players``: the whole new list when it changed, else null."""

    seeks_added: list[SeekInfo] = []
    seeks_removed: list[str] = []
    games_added: list[GameSummary] = []
    games_removed: list[str] = []
    online: int | None = None
    players: list[PlayerOnline] | None = None


class ChallengeSent(_Event, tag="challenge_sent"):
    """Your challenge is open (reply to ``challenge``)."""

    challenge: ChallengeInfo
    ref: RequestId | None = None


class ChallengeReceived(_Event, tag="challenge"):
    """Someone challenges you: answer ``challenge_accept`` or ``challenge_decline``."""

    challenge: ChallengeInfo


class ChallengeGone(_Event, tag="challenge_gone"):
    """A challenge closed without a game: ``declined`` (to its sender), ``cancelled`` (to the
    one challenged), or ``offline`` (the other player left; to whoever is still here)."""

    challenge: str
    reason: ChallengeGoneReason


class Seeking(_Event, tag="seeking"):
    """Your seek is posted (reply to ``seek``)."""

    seek: SeekInfo
    ref: RequestId | None = None


class Queued(_Event, tag="queued"):
    """You wait in the quick-pairing pool (reply to ``quick``)."""

    variant: Variant
    clock: ClockSpec | None
    ref: RequestId | None = None


class PrivateCreated(_Event, tag="private"):
    """Your private room waits for a friend who joins with ``code``."""

    code: str
    variant: Variant
    clock: ClockSpec | None
    ref: RequestId | None = None


class MovePlayed(_GameEvent, tag="move"):
    """A move was played; ``ply`` counts the moves so far (X's first move is ply 1)."""

    ply: int
    cell: int
    notation: str
    side: Colour
    clocks: Clocks | None
    version: int


class GameEnd(_GameEvent, tag="end"):
    """The game is over; ``rating_change`` is null for unrated and aborted games."""

    version: int
    result: Result
    reason: Reason
    winner: Colour | None = None
    line: list[int] | None = None
    clocks: Clocks | None = None
    rating_change: RatingChange | None = None


class Offer(_GameEvent, tag="offer"):
    """A draw offered or declined, or a rematch asked for, by side ``by``."""

    kind: OfferKind
    by: Colour
    version: int


class Presence(_GameEvent, tag="presence"):
    """A seated player left or came back; ``claim_in`` is seconds until the other may claim."""

    version: int
    side: Colour
    online: bool
    claim_in: float | None = None


class Watching(_GameEvent, tag="watching"):
    """How many watch the game now: sent to everyone in the game when a spectator comes or
    goes. Not versioned (a count, not history): the newest one holds; ``game``'s state
    carries it too (``spectators``)."""

    count: int


class ChatLine(_GameEvent, tag="chat"):
    """A line of the players' chat (``side`` is the speaker's), which only the two players
    see, or of the spectators' chat (``side`` null), which only spectators see. Not versioned
    (each chat reaches only part of the room): ``line`` numbers the game's lines of both
    chats, one count, never reused, so a client keeps each line once."""

    name: str
    side: Colour | None  # None: a spectator
    text: str
    line: int


class TakenBack(_GameEvent, tag="takeback"):
    """Moves were taken back by side ``by``: the game is at ``ply`` again."""

    ply: int
    by: Colour
    clocks: Clocks | None
    version: int


class Rematched(_GameEvent, tag="rematched"):
    """The rematch of ``game`` has started as the game ``rematch``: its players have its
    ``game`` already; a spectator follows it by watching it."""

    rematch: str
    version: int


class GameState(_Event, tag="game"):
    """The whole state of a game for one receiver (``you`` is its colour if seated)."""

    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    seats: list[SeatInfo]  # [x, o]
    moves: list[int]
    clocks: Clocks | None
    status: Literal["playing", "over"]
    version: int
    you: Colour | None = None
    draw_offer: Colour | None = None
    rematch: list[Colour] = []
    end: GameEnd | None = None
    spectators: int = 0
    chat: list[ChatLine] = []  # the receiver's chat: the players' to a player, else theirs
    ref: RequestId | None = None
    spectator_chat: bool = True  # false: the host has turned spectators' chat off
    rematch_game: str | None = None  # the rematch's id, once it has started
    tournament: str | None = None  # the tournament the game belongs to


class Announce(_Event, tag="announce"):
    """The host says something to every player (``restart_in``: seconds until the server
    restarts, when that is what it says; no new games start meanwhile)."""

    text: str
    restart_in: float | None = None


class PlayerGamesPage(_Event, tag="player_games"):
    """A player's record and a page of their games, newest first (reply to
    ``player_games``): ``next`` is the ``before`` of the next page (null: none older);
    ``ratings`` the rating after each of the player's last 50 rated games, oldest first."""

    player: PlayerProfile
    games: list[PlayedGame]
    next: str | None
    ratings: list[RatingPoint]
    ref: RequestId | None = None


class Pong(_Event, tag="pong"):
    ref: RequestId | None = None


class ComputerThinking(_GameEvent, tag="ai_thinking"):
    """The computer is searching its move for the position after ``ply`` moves; ``depth`` when
    known (not versioned: purely informative)."""

    ply: int
    depth: int | None = None


class Suggestion(_GameEvent, tag="hint"):
    """The engine's suggested move for the position after ``ply`` moves (reply to ``hint``)."""

    ply: int
    cell: int
    notation: str
    ref: RequestId | None = None


class EngineStatus(_GameEvent, tag="engine"):
    """Why the computer has not started thinking: its engine is being prepared (its first
    start compiles it; ``progress`` 0-1) or no worker of the fleet is connected
    (``unavailable``); then ``ready``."""

    state: EngineState
    progress: float
    message: str


class Ack(_Event, tag="ack"):
    """The request ``ref`` was done and has no other reply."""

    ref: RequestId | None = None


class Error(_Event, tag="error"):
    """A refused request or bad frame; ``retry_in`` seconds when waiting would help."""

    code: str
    message: str
    ref: RequestId | None = None
    retry_in: float | None = None


ServerMessage = (
    Welcome | LobbySnapshot | LobbyDelta | Seeking | Queued | PrivateCreated | ChallengeSent
    | ChallengeReceived | ChallengeGone | GameState | MovePlayed
    | GameEnd | Offer | Presence | Watching | ChatLine | TakenBack | Pong | ComputerThinking
    | Suggestion
    | EngineStatus | Ack | Error | Announce | PlayerGamesPage | GameReviewed | PasswordSet
    | Devices | ChatRemoved | ReportQueue | Rematched | PuzzleShown | PuzzleResult
    | PuzzleHistoryList | TournamentList | TournamentState
)  # fmt: skip

CLIENT_MESSAGES: tuple[type[msgspec.Struct], ...] = ClientMessage.__args__
SERVER_MESSAGES: tuple[type[msgspec.Struct], ...] = ServerMessage.__args__
