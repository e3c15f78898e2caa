"""The wire protocol: every message a client and the server exchange, decoded in one place.

Frames are JSON objects keyed by ``"t"``. Client requests form the closed union
``ClientMessage``; ``decode_client_message`` turns a frame into one of them or raises
``ProtocolError`` with a stable ``ErrorCode``. Server frames form ``ServerMessage``;
``decode_server_message`` is the client's side of the same contract. Pure: no asyncio, no
aiohttp, so the terminal client imports this module too. ``docs/protocol.md`` is the prose.

Every message is a ``gc=False`` Struct: it holds plain data only and is never part of a
reference cycle, so the garbage collector need not track the few a move makes under load.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from server.errors import ProtocolError, ServerError

# -- transport limits (the app enforces them; docs/protocol.md states them) -------------------

MAX_FRAME_BYTES = 8 * 1024
RATE_LIMIT_PER_SECOND = 10  # sustained client frames per second ...
RATE_LIMIT_BURST = 30  # ... with this many allowed at once; beyond: close 1008
HEARTBEAT_SECONDS = 20  # a websocket ping after this long without a frame from the peer ...
PONG_WAIT_SECONDS = HEARTBEAT_SECONDS / 2  # ... then dropped if no pong comes within this
CLOSE_POLICY_VIOLATION = 1008
PROTOCOL_VERSION = 1
VARIANTS = ("4x4x4", "3x3x3", "4x4")
PLAYERS_SHOWN = 200  # the lobby lists at most this many players online, the first by name


class ErrorCode(enum.StrEnum):
    """Every stable code the server sends in an ``error`` message (see docs/protocol.md)."""

    # transport and decoding
    FRAME_TOO_LARGE = "frame_too_large"
    BINARY_FRAME = "binary_frame"
    BAD_UTF8 = "bad_utf8"
    BAD_JSON = "bad_json"
    UNKNOWN_TYPE = "unknown_type"
    BAD_MESSAGE = "bad_message"
    BAD_NAME = "bad_name"
    BAD_TOKEN = "bad_token"
    BAD_CHAT = "bad_chat"
    BAD_CELL = "bad_cell"
    BAD_LEVEL = "bad_level"
    BAD_VARIANT = "bad_variant"
    BAD_CLOCK = "bad_clock"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    # session
    NOT_AUTHENTICATED = "not_authenticated"
    ALREADY_AUTHENTICATED = "already_authenticated"
    NAME_TAKEN = "name_taken"
    NO_SUCH_PLAYER = "no_such_player"
    TOO_MANY_PLAYERS = "too_many_players"
    # lobby and matchmaking
    NO_SUCH_SEEK = "no_such_seek"
    OWN_SEEK = "own_seek"
    TOO_MANY_SEEKS = "too_many_seeks"
    TOO_MANY_COMPUTER_GAMES = "too_many_computer_games"
    ALREADY_QUEUED = "already_queued"
    NOT_QUEUED = "not_queued"
    NO_SUCH_CODE = "no_such_code"
    AI_UNAVAILABLE = "ai_unavailable"
    OWN_CHALLENGE = "own_challenge"
    ALREADY_CHALLENGED = "already_challenged"
    TOO_MANY_CHALLENGES = "too_many_challenges"
    NO_SUCH_CHALLENGE = "no_such_challenge"
    # game rooms
    NO_SUCH_GAME = "no_such_game"
    NOT_SEATED = "not_seated"
    SPECTATOR = "spectator"
    NOT_YOUR_TURN = "not_your_turn"
    STALE_MOVE = "stale_move"
    ILLEGAL_MOVE = "illegal_move"
    OCCUPIED = "occupied"
    GAME_OVER = "game_over"
    GAME_NOT_OVER = "game_not_over"
    NO_DRAW_OFFER = "no_draw_offer"
    ALREADY_OFFERED = "already_offered"
    TOO_LATE_TO_ABORT = "too_late_to_abort"
    CLAIM_TOO_EARLY = "claim_too_early"
    OPPONENT_PRESENT = "opponent_present"
    # generic
    NOT_ALLOWED = "not_allowed"
    STORE_UNAVAILABLE = "store_unavailable"
    SHUTTING_DOWN = "shutting_down"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


# -- field types ------------------------------------------------------------------------------

# Patterns are searched, so each is anchored with \A and \Z: "$" would also match before a
# trailing newline and let "ann\n" through as a second "ann".
_WORD = r"\A[A-Za-z0-9_-]+\Z"
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=24, pattern=_WORD)]
Token = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=_WORD)]
GameId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
ChallengeId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
SeekId = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=_WORD)]
PrivateCode = Annotated[str, msgspec.Meta(min_length=4, max_length=32, pattern=_WORD)]
RequestId = (
    Annotated[str, msgspec.Meta(max_length=64)]
    | Annotated[int, msgspec.Meta(ge=-(2**53 - 1), le=2**53 - 1)]
)
Variant = Literal["4x4x4", "3x3x3", "4x4"]
Colour = Literal["x", "o"]
ColourChoice = Literal["x", "o", "random"]
Level = Annotated[int, msgspec.Meta(ge=1, le=8)]
Ply = Annotated[int, msgspec.Meta(ge=0, le=729)]
Version = Annotated[int, msgspec.Meta(ge=0)]
CellText = Annotated[
    str, msgspec.Meta(min_length=2, max_length=3, pattern=r"\A[1-9]?[a-iA-I][1-9]\Z")
]
CellIndex = Annotated[int, msgspec.Meta(ge=0, le=728)]
ChatText = Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
Result = Literal["1-0", "0-1", "1/2-1/2", "*"]
EngineState = Literal["preparing", "unavailable", "ready"]
Reason = Literal[
    "line", "full", "dead", "resign", "time", "agreement", "abort", "claim", "abandoned"
]
ChallengeGoneReason = Literal["declined", "cancelled", "offline"]
OfferKind = Literal["draw", "draw_declined", "rematch"]
COLOURS: tuple[Colour, Colour] = ("x", "o")


def has_control_characters(text: str) -> bool:
    """Whether ``text`` holds any character of Unicode category C (control, format, ...)."""
    return any(unicodedata.category(char)[0] == "C" for char in text)


class ClockSpec(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A time control: ``initial`` seconds each plus ``increment`` seconds per move."""

    initial: Annotated[int, msgspec.Meta(ge=0, le=10800)]
    increment: Annotated[int, msgspec.Meta(ge=0, le=180)]

    def __post_init__(self) -> None:
        if self.initial == 0 and self.increment == 0:
            raise ProtocolError("clock: initial and increment cannot both be 0", "bad_clock")


# -- client -> server -------------------------------------------------------------------------


class _Request(
    msgspec.Struct,
    tag_field="t",
    forbid_unknown_fields=True,
    omit_defaults=True,
    kw_only=True,
    gc=False,
):
    id: RequestId | None = None


class Hello(_Request, tag="hello"):
    """Start a session: a new player by ``name``, or the same player again by ``token``."""

    name: Name | None = None
    token: Token | None = None

    def __post_init__(self) -> None:
        if self.name is None and self.token is None:
            raise ProtocolError("hello needs a `name` or a `token`", "bad_message")


class LobbySub(_Request, tag="lobby_sub"):
    """Receive the lobby snapshot now and its updates from now on."""


class LobbyUnsub(_Request, tag="lobby_unsub"):
    """Stop receiving lobby updates."""


class Seek(_Request, tag="seek"):
    """Post an open seek in the lobby."""

    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None
    rated: bool = False
    colour: ColourChoice = "random"


class CancelSeek(_Request, tag="cancel_seek"):
    seek: SeekId


class AcceptSeek(_Request, tag="accept_seek"):
    seek: SeekId


class Quick(_Request, tag="quick"):
    """Join the quick-pairing pool of a variant and clock (quick games are rated)."""

    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None


class CancelQuick(_Request, tag="cancel_quick"):
    """Leave the quick-pairing pool."""


class PrivateCreate(_Request, tag="private_create"):
    """Open a private room; the reply gives the code to pass to a friend."""

    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None
    rated: bool = False
    colour: ColourChoice = "random"


class PrivateJoin(_Request, tag="private_join"):
    code: PrivateCode


class Challenge(_Request, tag="challenge"):
    """Ask the online player ``name`` for a game on these terms (``colour`` is yours)."""

    name: Name
    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None
    rated: bool = False
    colour: ColourChoice = "random"


class ChallengeAccept(_Request, tag="challenge_accept"):
    """Accept a challenge sent to you: the game starts."""

    challenge: ChallengeId


class ChallengeDecline(_Request, tag="challenge_decline"):
    challenge: ChallengeId


class ChallengeCancel(_Request, tag="challenge_cancel"):
    """Withdraw a challenge you sent."""

    challenge: ChallengeId


class PlayAI(_Request, tag="play_ai"):
    """Start a game against the computer at ``level`` 1 (weakest) to 8 (strongest)."""

    level: Level
    variant: Variant = "4x4x4"
    colour: ColourChoice = "random"
    clock: ClockSpec | None = None


class Watch(_Request, tag="watch"):
    """Open a game: as a spectator, or to retake your seat; ``since`` asks for catch-up."""

    game: GameId
    since: Version | None = None


class Unwatch(_Request, tag="unwatch"):
    game: GameId


class Move(_Request, tag="move"):
    """Play ``cell`` (``"2b3"`` or an index) in the position after ``ply`` moves (0 at first)."""

    game: GameId
    cell: CellText | CellIndex
    ply: Ply


class Resign(_Request, tag="resign"):
    game: GameId


class DrawOffer(_Request, tag="draw_offer"):
    game: GameId


class DrawAccept(_Request, tag="draw_accept"):
    game: GameId


class DrawDecline(_Request, tag="draw_decline"):
    game: GameId


class Abort(_Request, tag="abort"):
    game: GameId


class Rematch(_Request, tag="rematch"):
    game: GameId


class Claim(_Request, tag="claim"):
    """Claim the win once the opponent has been gone longer than the grace period."""

    game: GameId


class Chat(_Request, tag="chat"):
    game: GameId
    text: ChatText

    def __post_init__(self) -> None:
        if has_control_characters(self.text):
            raise ProtocolError("chat `text` may not hold control characters", "bad_chat")
        if not self.text.strip():
            raise ProtocolError("chat `text` is blank", "bad_chat")


class Hint(_Request, tag="hint"):
    """Ask the engine for a move for you (a casual game against the computer, your turn)."""

    game: GameId


class TakeBack(_Request, tag="takeback"):
    """Take back your last move and the computer's reply (a casual game against it)."""

    game: GameId


class Ping(_Request, tag="ping"):
    """Application-level ping; the server answers ``pong``."""


ClientMessage = (
    Hello | LobbySub | LobbyUnsub | Seek | CancelSeek | AcceptSeek | Quick | CancelQuick
    | PrivateCreate | PrivateJoin | Challenge | ChallengeAccept | ChallengeDecline
    | ChallengeCancel | PlayAI | Watch | Unwatch | Move | Resign | DrawOffer
    | DrawAccept | DrawDecline | Abort | Rematch | Claim | Chat | Hint | TakeBack | Ping
)  # fmt: skip

# -- server -> client: values nested in messages ----------------------------------------------


class _Value(msgspec.Struct, kw_only=True, gc=False):
    pass


class Clocks(_Value):
    """Milliseconds left for each side; ``running`` is whose clock is ticking, if any."""

    x: int
    o: int
    running: Colour | None = None


class SeatInfo(_Value):
    """Who sits on one side: ``ai`` is the computer's level, ``online`` its presence."""

    name: str
    rating: int | None = None
    online: bool = True
    ai: int | None = None


class RatingChange(_Value):
    """Rating points won (positive) or lost by each side."""

    x: int
    o: int


class SeekInfo(_Value):
    id: str
    name: str
    rating: int | None
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    colour: ColourChoice


class PlayerOnline(_Value):
    name: str
    rating: int | None


class ChallengeInfo(_Value):
    """A challenge's terms: ``colour`` is the challenger's (``by``) choice."""

    id: str
    by: str
    to: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    colour: ColourChoice


class GameSummary(_Value):
    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    x: str
    o: str
    ply: int


# -- server -> client: messages ---------------------------------------------------------------


class _Event(msgspec.Struct, tag_field="t", kw_only=True, gc=False):
    pass


class Welcome(_Event, tag="welcome"):
    """The session is open; ``token`` goes only to its owner. ``games`` are yours to resume."""

    name: str
    token: str
    rating: int
    games: list[str] = []
    protocol: int = PROTOCOL_VERSION
    ref: RequestId | None = None


class Lobby(_Event, tag="lobby"):
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


class MovePlayed(_Event, tag="move"):
    """A move was played; ``ply`` counts the moves so far (X's first move is ply 1)."""

    game: str
    ply: int
    cell: int
    notation: str
    side: Colour
    clocks: Clocks | None
    version: int


class GameEnd(_Event, tag="end"):
    """The game is over; ``rating_change`` is null for unrated and aborted games."""

    game: str
    version: int
    result: Result
    reason: Reason
    winner: Colour | None = None
    line: list[int] | None = None
    clocks: Clocks | None = None
    rating_change: RatingChange | None = None


class Offer(_Event, tag="offer"):
    """A draw offered or declined, or a rematch asked for, by side ``by``."""

    game: str
    kind: OfferKind
    by: Colour
    version: int


class Presence(_Event, tag="presence"):
    """A seated player left or came back; ``claim_in`` is seconds until the other may claim."""

    game: str
    version: int
    side: Colour
    online: bool
    claim_in: float | None = None


class ChatLine(_Event, tag="chat"):
    game: str
    name: str
    side: Colour | None  # None: a spectator
    text: str
    version: int


class TakenBack(_Event, tag="takeback"):
    """Moves were taken back by side ``by``: the game is at ``ply`` again."""

    game: str
    ply: int
    by: Colour
    clocks: Clocks | None
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
    chat: list[ChatLine] = []
    ref: RequestId | None = None


class Pong(_Event, tag="pong"):
    ref: RequestId | None = None


class AIThinking(_Event, tag="ai_thinking"):
    game: str
    ply: int
    depth: int | None = None


class Suggestion(_Event, tag="hint"):
    """The engine's suggested move for the position after ``ply`` moves (reply to ``hint``)."""

    game: str
    ply: int
    cell: int
    notation: str
    ref: RequestId | None = None


class EngineStatus(_Event, tag="engine"):
    """Why the computer has not started thinking: its engine is being prepared (its first
    start compiles it; ``progress`` 0-1) or no worker of the fleet is connected
    (``unavailable``); then ``ready``."""

    game: str
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
    Welcome | Lobby | LobbyDelta | Seeking | Queued | PrivateCreated | ChallengeSent
    | ChallengeReceived | ChallengeGone | GameState | MovePlayed
    | GameEnd | Offer | Presence | ChatLine | TakenBack | Pong | AIThinking | Suggestion
    | EngineStatus | Ack | Error
)  # fmt: skip

CLIENT_MESSAGES: tuple[type[msgspec.Struct], ...] = ClientMessage.__args__  # type: ignore[attr-defined]
SERVER_MESSAGES: tuple[type[msgspec.Struct], ...] = ServerMessage.__args__  # type: ignore[attr-defined]

# -- encoding and decoding --------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_client_decoder = msgspec.json.Decoder(ClientMessage)
_server_decoder = msgspec.json.Decoder(ServerMessage)
_AT_PATH = re.compile(r" - at `\$((?:\.\w+|\[\d+\])*)`$")
_CODE_BY_FIELD = {
    "t": ErrorCode.UNKNOWN_TYPE,
    "name": ErrorCode.BAD_NAME,
    "token": ErrorCode.BAD_TOKEN,
    "text": ErrorCode.BAD_CHAT,
    "cell": ErrorCode.BAD_CELL,
    "level": ErrorCode.BAD_LEVEL,
    "variant": ErrorCode.BAD_VARIANT,
    "clock": ErrorCode.BAD_CLOCK,
}
M = TypeVar("M")


def encode(message: msgspec.Struct) -> bytes:
    """The JSON frame of a message."""
    return _encoder.encode(message)


def decode_client_message(data: bytes | str) -> ClientMessage:
    """The client request in one text frame; raises ``ProtocolError`` with a stable code."""
    return _decode(_client_decoder, data)


def decode_server_message(data: bytes | str) -> ServerMessage:
    """The server message in one frame (for clients and tests); raises ``ProtocolError``."""
    return _decode(_server_decoder, data)


def _decode(decoder: msgspec.json.Decoder[M], data: bytes | str) -> M:
    try:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        raw.decode()  # msgspec would raise UnicodeDecodeError itself, inside strings only
    except UnicodeError:
        raise ProtocolError("the frame is not valid UTF-8", ErrorCode.BAD_UTF8) from None
    if len(raw) > MAX_FRAME_BYTES:
        raise ProtocolError(
            f"the frame has {len(raw)} bytes; at most {MAX_FRAME_BYTES}",
            ErrorCode.FRAME_TOO_LARGE,
        )
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as error:
        refused = error.__cause__ if isinstance(error.__cause__, ProtocolError) else None
        refused = refused or _validation_error(str(error))
        refused.ref = readable_id(raw)
        raise refused from None
    except msgspec.DecodeError as error:
        raise ProtocolError(f"not JSON: {error}", ErrorCode.BAD_JSON) from None


class _OnlyId(msgspec.Struct, gc=False):
    id: RequestId | None = None


def readable_id(raw: bytes | str) -> RequestId | None:
    """The request's ``id`` when the frame is an object whose ``id`` is valid, else None, so
    a refusal of an otherwise bad message still says which request it answers."""
    try:
        return msgspec.json.decode(raw, type=_OnlyId).id
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError):
        return None


def _validation_error(text: str) -> ProtocolError:
    """A ProtocolError whose code names the offending field when it has its own code."""
    if text.startswith("Expected `object`"):
        return ProtocolError(f"a message is a JSON object: {text}", ErrorCode.BAD_MESSAGE)
    if text == "Object missing required field `t`" or text.endswith("- at `$.t`"):
        return ProtocolError(f"no such message type: {text}", ErrorCode.UNKNOWN_TYPE)
    match = _AT_PATH.search(text)
    for field in re.findall(r"\.(\w+)", match[1]) if match else []:
        if field in _CODE_BY_FIELD:
            return ProtocolError(f"bad `{field}`: {text}", _CODE_BY_FIELD[field])
    return ProtocolError(text, ErrorCode.BAD_MESSAGE)


def error_message(error: ServerError, ref: RequestId | None = None) -> Error:
    """The ``error`` message reporting ``error`` (``retry_in`` is copied when it has one)."""
    retry_in: Any = getattr(error, "retry_in", None)
    return Error(code=str(error.code), message=error.message, ref=ref, retry_in=retry_in)


def with_ref(message: M, ref: RequestId | None) -> M:
    """A copy of a reply message echoing the request's ``id`` as its ``ref``."""
    return msgspec.structs.replace(message, ref=ref)  # type: ignore[type-var]
