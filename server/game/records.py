"""What a game server keeps: players, games and their moves, as frozen records of plain values.

Times are Unix seconds (``time.time()``), cells are engine cell indices. The stores
(``server.store``) write and read them; the room (``server.game.room``) is built from them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec

from server.game.ratings import DEFAULT_RATING, DEFAULT_RD, DEFAULT_VOLATILITY, Rating


class TimeControl(NamedTuple):
    """A clock: ``initial`` seconds each, plus ``increment`` seconds after every move."""

    initial: float
    increment: float = 0.0


class GameStatus(enum.StrEnum):
    """Where a game stands: still being played, played to a result, or called off."""

    ACTIVE = "active"
    FINISHED = "finished"
    ABORTED = "aborted"


@dataclass(frozen=True)
class Seat:
    """Who plays one side: a player by name, or the computer at a level of strength.
    ``bot``: the player's account is a bot, as the store read it (not part of the seat's
    identity: a seat written and the same seat read back are equal)."""

    player: str | None = None
    computer_level: int | None = None
    bot: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if (self.player is None) == (self.computer_level is None):
            raise ValueError("a seat is either a player or the computer")

    @classmethod
    def human(cls, name: str) -> Seat:
        return cls(player=name)

    @classmethod
    def computer(cls, level: int) -> Seat:
        return cls(computer_level=level)

    @property
    def is_computer(self) -> bool:
        return self.computer_level is not None

    def __str__(self) -> str:
        return self.player if self.player is not None else f"computer level {self.computer_level}"


@dataclass(frozen=True)
class PlayerRecord:
    """A registered player. ``games`` counts finished games; ``rated_games`` the rated ones;
    ``last_rated`` is when the last of those ended (None: never, or not known); ``bot``:
    the account holds the bot role (plays over the bot API, docs/bots.md)."""

    name: str
    created: float
    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY
    games: int = 0
    rated_games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    last_rated: float | None = None
    bot: bool = False

    @property
    def glicko(self) -> Rating:
        return Rating(self.rating, self.rd, self.volatility)


class MoveRecord(msgspec.Struct, frozen=True, gc=False):
    """One move: ``ply`` 1 is X's first move; clocks are the seconds left after it, or None.
    (A frozen struct, not a dataclass: made once a move, in a tenth of the time.)"""

    ply: int
    cell: int
    clock_x: float | None
    clock_o: float | None
    at: float


@dataclass(frozen=True)
class GameRecord:
    """A game with its moves in order.

    ``result`` is ``"1-0"``, ``"0-1"`` or ``"1/2-1/2"`` once finished; ``reason`` says why it
    ended (``"line"``, ``"resign"``, ``"time"``, ...). The ratings are the players' ratings
    before the game and the change it made, set only when a rated game finished. ``fence`` is
    the highest fencing token a write to the game carried (0: none; see ``check_fence``).
    ``listed`` says the lobby may show the game in its public list: False for private-room
    and computer games, and for games stored before the field existed (nobody knows).
    """

    id: str
    variant: str
    clock: TimeControl | None
    rated: bool
    x: Seat
    o: Seat
    status: GameStatus
    created: float
    result: str | None = None
    reason: str | None = None
    winning_line: tuple[int, ...] | None = None
    ended: float | None = None
    x_rating: float | None = None
    o_rating: float | None = None
    x_rating_change: float | None = None
    o_rating_change: float | None = None
    moves: tuple[MoveRecord, ...] = ()
    fence: int = 0
    listed: bool = False
    tournament: str | None = None  # the tournament the game belongs to

    @property
    def cells(self) -> list[int]:
        """The moves as cells, ready for ``engine.Board(variant, cells)``."""
        return [move.cell for move in self.moves]


RESULT_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
"""X's score for each result."""
