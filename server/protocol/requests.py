"""Client -> server: the field types every message checks, and the closed union of requests."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Annotated, Literal

import msgspec

from server.errors import ProtocolError

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
PASSWORD_MIN, PASSWORD_MAX = 8, 128  # characters; docs/protocol.md and docs/security.md say so
Password = Annotated[str, msgspec.Meta(min_length=1, max_length=PASSWORD_MAX)]
NewPassword = Annotated[str, msgspec.Meta(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)]
RecoveryCode = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
DeviceLabel = Annotated[str, msgspec.Meta(max_length=40)]
DeviceId = Annotated[int, msgspec.Meta(ge=1, le=2**53 - 1)]
Result = Literal["1-0", "0-1", "1/2-1/2", "*"]
EngineState = Literal["preparing", "unavailable", "ready"]
Reason = Literal[
    "line", "full", "dead", "resign", "time", "agreement", "abort", "claim", "abandoned",
    "host",
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


class _Terms(_Request):
    """The terms of a game asked for: a seek, a private room or a challenge; ``colour`` is the
    asker's."""

    variant: Variant = "4x4x4"
    clock: ClockSpec | None = None
    rated: bool = False
    colour: ColourChoice = "random"


class Seek(_Terms, tag="seek"):
    """Post an open seek in the lobby."""


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


class PrivateCreate(_Terms, tag="private_create"):
    """Open a private room; the reply gives the code to pass to a friend."""


class PrivateJoin(_Request, tag="private_join"):
    code: PrivateCode


class PrivateCancel(_Request, tag="private_cancel"):
    """Close your private room before a friend joins it."""


class Challenge(_Terms, tag="challenge", kw_only=True):
    """Ask the online player ``name`` for a game on these terms (``colour`` is yours)."""

    name: Name


class _ChallengeRequest(_Request):
    """A request about one challenge, the one ``challenge`` names."""

    challenge: ChallengeId


class ChallengeAccept(_ChallengeRequest, tag="challenge_accept"):
    """Accept a challenge sent to you: the game starts."""


class ChallengeDecline(_ChallengeRequest, tag="challenge_decline"):
    """Decline a challenge sent to you: its sender is told."""


class ChallengeCancel(_ChallengeRequest, tag="challenge_cancel"):
    """Withdraw a challenge you sent."""


class PlayAI(_Request, tag="play_ai"):
    """Start a game against the computer at ``level`` 1 (weakest) to 8 (strongest)."""

    level: Level
    variant: Variant = "4x4x4"
    colour: ColourChoice = "random"
    clock: ClockSpec | None = None


class _GameRequest(_Request):
    """A request about one game, the one ``game`` names."""

    game: GameId


class Watch(_GameRequest, tag="watch"):
    """Open a game: as a spectator, or to retake your seat; ``since`` asks for catch-up."""

    since: Version | None = None


class Unwatch(_GameRequest, tag="unwatch"):
    """Close a game opened by ``watch``: a seated player leaves it."""


class Move(_GameRequest, tag="move"):
    """Play ``cell`` (``"2b3"`` or an index) in the position after ``ply`` moves (0 at first)."""

    cell: CellText | CellIndex
    ply: Ply


class Resign(_GameRequest, tag="resign"):
    """Lose the game now (before both sides have moved: call it off, as ``abort``)."""


class DrawOffer(_GameRequest, tag="draw_offer"):
    """Offer a draw (accepts the opponent's, when theirs stands)."""


class DrawAccept(_GameRequest, tag="draw_accept"):
    """Accept the draw offered."""


class DrawDecline(_GameRequest, tag="draw_decline"):
    """Decline the draw offered."""


class Abort(_GameRequest, tag="abort"):
    """Abort the game (before both sides have moved)."""


class Rematch(_GameRequest, tag="rematch"):
    """After the game, ask for a rematch: both asking (the computer always does) starts it."""


class Claim(_GameRequest, tag="claim"):
    """Claim the win once the opponent has been gone longer than the grace period."""


class Chat(_GameRequest, tag="chat"):
    """Say ``text`` in the game's chat: the players' if you are seated, else the spectators'."""

    text: ChatText

    def __post_init__(self) -> None:
        if has_control_characters(self.text):
            raise ProtocolError("chat `text` may not hold control characters", "bad_chat")
        if not self.text.strip():
            raise ProtocolError("chat `text` is blank", "bad_chat")


class Hint(_GameRequest, tag="hint"):
    """Ask the engine for a move for you (a casual game against the computer, your turn)."""


class TakeBack(_GameRequest, tag="takeback"):
    """Take back your last move and the computer's reply (a casual game against it)."""


class PlayerGames(_Request, tag="player_games"):
    """A player's record and a page of their games, newest first: ``limit`` (1-50) games
    started before the game ``before`` (the last of the page before; none: the newest)."""

    name: Name
    before: GameId | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=50)] = 20
class ReviewGame(_Request, tag="review"):
    """Ask for a finished game's review (the reply is ``review``, once it is computed)."""

    game: GameId


class Ping(_Request, tag="ping"):
    """Application-level ping; the server answers ``pong``."""


class PuzzleNext(_Request, tag="puzzle_next"):
    """A puzzle near your puzzle rating that you have not finished (reply: ``puzzle``)."""


class PuzzleDaily(_Request, tag="puzzle_daily"):
    """The puzzle of the day: the same for everyone on a UTC day (reply: ``puzzle``)."""


class PuzzleStreak(_Request, tag="puzzle_streak"):
    """A streak's puzzle: ``new`` starts a streak from 0 (the easiest puzzles first),
    otherwise the puzzle for the streak going on (reply: ``puzzle``)."""

    new: bool = True


PuzzleMode = Literal["next", "daily", "streak"]
PuzzleId = Annotated[int, msgspec.Meta(ge=1, le=2**53 - 1)]


class PuzzleAttempt(_Request, tag="puzzle_attempt"):
    """Your moves so far in a puzzle (yours only: the replies are the puzzle's); the reply
    ``puzzle_result`` judges the last."""

    puzzle: PuzzleId
    moves: Annotated[list[CellIndex], msgspec.Meta(min_length=1, max_length=8)]
    mode: PuzzleMode = "next"


class PuzzleHistory(_Request, tag="puzzle_history"):
    """Your latest finished puzzles, newest first (reply: ``puzzle_history``)."""

    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20


PuzzleRequest = PuzzleNext | PuzzleDaily | PuzzleStreak | PuzzleAttempt | PuzzleHistory
"""The puzzles' requests (``server.node.puzzles`` answers them)."""


class _Secret(_Request):
    """A request that carries a password or a recovery code: its repr leaves them out, so no
    log line can hold one."""

    def __repr__(self) -> str:
        secret = {"password", "current", "recovery_code"}
        shown = ", ".join(f"{field}={'***' if field in secret else repr(getattr(self, field))}"
                          for field in self.__struct_fields__)
        return f"{type(self).__name__}({shown})"


class _SettingPassword(_Secret):
    """A request that sets a new ``password``: the password rule beyond its length holds. Each
    request declares ``password`` itself, where it stands among its fields."""

    if TYPE_CHECKING:
        password: str

    def __post_init__(self) -> None:
        _check_password(self.password)


class SetPassword(_SettingPassword, tag="set_password"):
    """Protect your name with ``password`` (or change it: then ``current`` is the one now set).
    The reply, ``password_set``, carries new recovery codes; every other device is logged
    out."""

    password: NewPassword
    current: Password | None = None


class Login(_Secret, tag="login"):
    """Open the session as ``name`` by its password, from any device: the reply is a
    ``welcome`` with a new token for this device (``device`` labels it in ``sessions``)."""

    name: Name
    password: Password
    device: DeviceLabel | None = None


class Recover(_SettingPassword, tag="recover"):
    """Lost the password: a recovery code (each works once) sets ``password`` and opens the
    session as ``login`` does; every other device is logged out."""

    name: Name
    recovery_code: RecoveryCode
    password: NewPassword
    device: DeviceLabel | None = None


class Sessions(_Request, tag="sessions"):
    """List your devices (each token given out): the reply is ``devices``."""


class Revoke(_Request, tag="revoke"):
    """Log a device out (``device``, an id from ``devices``) or every device but this one
    (``others``); the reply is ``devices`` again."""

    device: DeviceId | None = None
    others: bool = False

    def __post_init__(self) -> None:
        if (self.device is None) == (not self.others):
            raise ProtocolError("revoke needs either a `device` or `others: true`",
                                "bad_message")


def _check_password(password: str) -> None:
    """The password rule beyond its length: no control characters, not only spaces."""
    if has_control_characters(password) or not password.strip():
        raise ProtocolError("a password may not hold control characters or be only spaces",
                            "bad_password")


AccountRequest = SetPassword | Login | Recover | Sessions | Revoke
"""The requests about who a player is: passwords, devices and their tokens."""

SessionOpening = Hello | Login | Recover
"""The requests that open a session (all else needs one open)."""

MatchmakingRequest = (
    Seek | CancelSeek | AcceptSeek | Quick | CancelQuick | PrivateCreate | PrivateJoin
    | Challenge | ChallengeAccept | ChallengeDecline | ChallengeCancel | PlayAI | PrivateCancel
)  # fmt: skip
"""The lobby's requests that pair players or start a game: the one lobby decides them (in a
cluster, on the node holding it)."""

LobbyRequest = LobbySub | LobbyUnsub | MatchmakingRequest
"""Every request the lobby answers."""

RoomAction = (
    Move | Resign | DrawOffer | DrawAccept | DrawDecline | Abort | Rematch | Claim | Chat
    | TakeBack
)  # fmt: skip
"""The requests that change one game's room, each one of its methods."""

GameRequest = (
    Watch | Unwatch | Move | Resign | DrawOffer | DrawAccept | DrawDecline | Abort | Rematch
    | Claim | Chat | Hint | TakeBack
)  # fmt: skip
"""Every request about one game, carried out by the game's owner: the room actions, a hint,
opening and closing the game."""

# -- the host's levers: reports from anyone, moderators' actions (docs/admin.md) ---------------

Why = Annotated[str, msgspec.Meta(max_length=300)]
Minutes = Annotated[int, msgspec.Meta(ge=1, le=10 * 366 * 24 * 60)]


class _Moderation(_Request):
    """A request whose free text (``reason``) is checked like chat."""

    def __post_init__(self) -> None:
        reason = getattr(self, "reason", "")
        if has_control_characters(reason):
            raise ProtocolError("`reason` may not hold control characters", "bad_message")


class ReportPlayer(_Moderation, tag="report"):
    """Report the player ``name`` to the moderators (about ``game``, if given)."""

    name: Name
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    game: GameId | None = None


class ListReports(_Moderation, tag="reports"):
    """Moderators: the open reports, oldest first (the reply is ``reports``)."""


class ResolveReport(_Moderation, tag="resolve_report"):
    """Moderators: close a report, having acted on it or not."""

    report: Annotated[int, msgspec.Meta(ge=1)]
    reason: Why = ""


class RemoveChat(_Moderation, tag="remove_chat"):
    """Moderators: take the chat line of version ``line`` out of the game, on every screen."""

    game: GameId
    line: Version
    reason: Why = ""


class MutePlayer(_Moderation, tag="mute"):
    """Moderators: refuse the player's chat for ``minutes`` (none: until unmuted)."""

    name: Name
    minutes: Minutes | None = None
    reason: Why = ""


class UnmutePlayer(_Moderation, tag="unmute"):
    name: Name
    reason: Why = ""


class KickPlayer(_Moderation, tag="kick"):
    """Moderators: close the player's connections on every node (they may come back)."""

    name: Name
    reason: Why = ""


class BanPlayer(_Moderation, tag="ban"):
    """Moderators: close the player's connections and refuse them for ``minutes`` (none:
    until unbanned)."""

    name: Name
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    minutes: Minutes | None = None


class UnbanPlayer(_Moderation, tag="unban"):
    name: Name
    reason: Why = ""


ModerationRequest = (
    ReportPlayer | ListReports | ResolveReport | RemoveChat | MutePlayer | UnmutePlayer
    | KickPlayer | BanPlayer | UnbanPlayer
)  # fmt: skip
"""A report (any player) and the moderators' actions, carried out by ``server.node.moderation``."""

ClientMessage = (
    Hello | LobbyRequest | GameRequest | Ping | PlayerGames | ReviewGame | AccountRequest
    | ModerationRequest | PuzzleRequest
)  # fmt: skip
"""Every client request: hello and ping for the session, then the lobby's and the games',
then a player's history and the review of a finished game, then the account's (passwords,
devices), then reports and moderation, then the puzzles'."""
