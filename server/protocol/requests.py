"""Client -> server: opening a session, the lobby's requests and the games', and the closed
union of every request (``learning_requests`` holds the puzzles and the review,
``account_requests`` the passwords, devices and moderation; ``field_types`` the types their
fields check)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.errors import ProtocolError
from server.protocol.account_requests import AccountRequest, Login, ModerationRequest, Recover
from server.protocol.field_types import (
    CellIndex,
    CellText,
    ChallengeId,
    ChatText,
    ClockSpec,
    ColourChoice,
    GameId,
    Level,
    Name,
    Ply,
    PrivateCode,
    SeekId,
    Token,
    Variant,
    Version,
    text_fault,
)
from server.protocol.learning_requests import PuzzleRequest, ReviewGame
from server.protocol.request_base import _Request
from server.protocol.tournament_requests import TournamentRequest


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
        fault = text_fault(self.text)
        if fault is not None:
            raise ProtocolError(f"chat `text` may not hold {fault}", "bad_chat")


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


class Ping(_Request, tag="ping"):
    """Application-level ping; the server answers ``pong``."""


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

ClientMessage = (
    Hello | LobbyRequest | GameRequest | Ping | PlayerGames | ReviewGame | AccountRequest
    | ModerationRequest | PuzzleRequest | TournamentRequest
)  # fmt: skip
"""Every client request: hello and ping for the session, then the lobby's and the games',
then a player's history and the review of a finished game, then the account's (passwords,
devices), then reports and moderation, then the puzzles', then the tournaments'."""
