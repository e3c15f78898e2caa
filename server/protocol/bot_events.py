"""The bot API's events (docs/bots.md): the lines of its two NDJSON streams, the shape lichess's
Bot API gives its users, with Qubic's names and notation.

``GET /api/stream/event`` sends ``challenge``, ``challengeCanceled``, ``challengeDeclined``,
``gameStart`` and ``gameFinish``; ``GET /api/bot/game/stream/{id}`` sends ``gameFull`` first,
then ``gameState`` after each change of the game and ``chatLine``. Each is one JSON object on
one line, tagged by ``"type"``; an empty line is a keep-alive. Pure, like the rest of
``server.protocol``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from server.protocol.event_base import _Value
from server.protocol.events import ChallengeInfo, SeatInfo
from server.protocol.field_types import (
    ChallengeGoneReason,
    ClockSpec,
    Colour,
    Reason,
    Result,
    Variant,
)


class _BotEvent(msgspec.Struct, tag_field="type", kw_only=True, gc=False):
    """One line of a bot API stream, tagged by ``"type"``."""


class ChallengeGoneInfo(_Value):
    """A challenge that closed without a game: its id and why (``ChallengeGone``'s reason)."""

    id: str
    reason: ChallengeGoneReason


class BotGame(_Value):
    """A game as the event stream tells it: the terms, the bot's ``color``, the opponent's
    seat, the moves so far (``ply``), whether it is the bot's turn; ``result``, ``reason``
    and ``winner`` once it is over (null before)."""

    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    color: Colour
    opponent: SeatInfo
    ply: int
    my_turn: bool
    status: Literal["playing", "over"] = "playing"
    result: Result | None = None
    reason: Reason | None = None
    winner: Colour | None = None


class BotChallenge(_BotEvent, tag="challenge"):
    """Someone challenges the bot: accept or decline it (``POST /api/challenge/{id}/...``)."""

    challenge: ChallengeInfo


class BotChallengeCanceled(_BotEvent, tag="challengeCanceled"):
    """A challenge to or from the bot was cancelled by its sender, or lapsed (``offline``)."""

    challenge: ChallengeGoneInfo


class BotChallengeDeclined(_BotEvent, tag="challengeDeclined"):
    """The bot's challenge was declined."""

    challenge: ChallengeGoneInfo


class BotGameStart(_BotEvent, tag="gameStart"):
    """A game of the bot's started (or was going on when the stream opened)."""

    game: BotGame


class BotGameFinish(_BotEvent, tag="gameFinish"):
    """A game of the bot's is over."""

    game: BotGame


class BotGameState(_BotEvent, tag="gameState"):
    """A game's state after a change: ``moves`` in notation, space-separated (as a game is
    written), ``cells`` the same moves as indices; ``x_time`` and ``o_time`` the milliseconds
    left (null: untimed); ``draw_offer`` the side whose draw offer stands."""

    moves: str
    cells: list[int]
    x_time: int | None
    o_time: int | None
    status: Literal["playing", "over"]
    result: Result | None = None
    reason: Reason | None = None
    winner: Colour | None = None
    draw_offer: Colour | None = None


class BotGameFull(_BotEvent, tag="gameFull"):
    """A game's terms and seats, and its state: the first line of its stream."""

    id: str
    variant: Variant
    clock: ClockSpec | None
    rated: bool
    x: SeatInfo
    o: SeatInfo
    state: BotGameState


class BotChatLine(_BotEvent, tag="chatLine"):
    """A chat line: ``room`` ``player`` (the players' chat) or ``spectator``."""

    room: Literal["player", "spectator"]
    name: str
    text: str


BotEvent = (
    BotChallenge | BotChallengeCanceled | BotChallengeDeclined | BotGameStart | BotGameFinish
    | BotGameFull | BotGameState | BotChatLine
)  # fmt: skip
"""Every line of the bot API's streams."""

BOT_EVENTS: tuple[type[msgspec.Struct], ...] = BotEvent.__args__
