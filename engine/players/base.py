"""What every computer player shares: the limit it is given and the decision it returns."""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from engine.errors import GameOver, UnknownPlayer
from engine.rules.board import Board
from engine.rules.geometry import Cell
from engine.rules.notation import format_cell


@dataclass(frozen=True)
class Limit:
    """How long a player may think: seconds for this move and/or plies of search.

    ``stop`` is an optional one-byte numpy array the caller may set to non-zero (from
    another thread or process) to make a search answer at once with what it has.

    ``started`` is when the move's time began, a ``time.perf_counter()`` reading (default:
    when ``decide`` is called); the deadline is ``started + time``. It is the clock hook:
    the compiled searches poll ``time.perf_counter`` itself, so a start set in the past or
    far ahead puts the deadline behind or beyond the whole search, deterministically, and
    a caller whose request waited in a queue may count the wait against the limit.
    """

    time: float | None = None
    depth: int | None = None
    stop: np.ndarray | None = field(default=None, compare=False, repr=False)
    started: float | None = None

    def start(self) -> float:
        """When the move's time began: ``started``, or now on ``time.perf_counter``."""
        return time.perf_counter() if self.started is None else self.started


@dataclass(frozen=True)
class Forced:
    """A proved result for the side to move: ``"win"`` or ``"loss"`` in ``plies`` plies."""

    result: str
    plies: int


@dataclass(frozen=True)
class Decision:
    """A player's move and how it was found."""

    move: Cell
    score: int | None = None
    depth: int = 0
    nodes: int = 0
    evaluations: int = 0
    pv: tuple[Cell, ...] = ()
    elapsed: float = 0.0
    forced: Forced | None = None
    branching: float | None = None  # average children expanded per interior node

    def to_json(self, board: Board) -> dict[str, Any]:
        """The decision as JSON-ready data, moves also in notation."""
        data = asdict(self)
        data["cell"] = self.move
        data["move"] = format_cell(self.move, board.geometry)
        data["pv"] = [format_cell(c, board.geometry) for c in self.pv]
        return data


@dataclass(frozen=True)
class Option:
    """A player option: its parser, default and a line of help."""

    parse: Callable[[str], Any]
    default: Any
    help: str


Number = TypeVar("Number", int, float)


def _in_range(convert: Callable[[str], Number], low: Number, high: Number,
              bounds: str) -> Callable[[str], Number]:
    def parse(text: str) -> Number:
        value = convert(text)
        if not low <= value <= high:
            raise ValueError(f"must be {bounds}")
        return value

    return parse


def parse_int(low: int, high: int) -> Callable[[str], int]:
    return _in_range(int, low, high, f"{low}-{high}")


def parse_float(low: float, high: float, unit: str = "") -> Callable[[str], float]:
    """A parser of a number from ``low`` to ``high``; ``unit`` (e.g. " seconds") ends its error."""
    return _in_range(float, low, high, f"{low:g}-{high:g}{unit}")


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("on", "true", "yes", "1"):
        return True
    if lowered in ("off", "false", "no", "0"):
        return False
    raise ValueError("must be on or off")


def parse_choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return text.lower()

    return parse


class Player(ABC):
    """A computer player. ``decide`` never returns an illegal move.

    Randomness among equal moves comes from ``seed`` and the position alone, so a match
    with the same seeds replays move for move, in any process.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    options: ClassVar[Mapping[str, Option]] = {}

    def __init__(self, seed: int = 0, **settings: Any) -> None:
        self.seed = seed
        self.settings = {key: opt.default for key, opt in self.options.items()}
        self.settings.update(settings)

    def rng(self, board: Board) -> random.Random:
        """The random source for one decision: a function of the seed and the position."""
        return random.Random(f"{self.seed}/{board.geometry.name}/{board.notation()}")

    @property
    def spec(self) -> str:
        """The spec that builds this player again, e.g. ``rubinoff:eval=eval2,depth=3``."""
        changed = [
            f"{k}={_format_value(v)}"
            for k, v in self.settings.items()
            if v != self.options[k].default
        ]
        return f"{self.name}:{','.join(changed)}" if changed else self.name

    def decide(self, board: Board, limit: Limit | None = None) -> Decision:
        """The move for the side to move in ``board`` (which is left as it was)."""
        if board.outcome() is not None:
            raise GameOver("the game is over: there is no move to choose")
        return self._decide(board.copy(), limit or Limit())

    def quick(self, board: Board) -> Decision | None:
        """The move :meth:`decide` makes in ``board``, when a path of this player that needs
        neither a compiled kernel nor a clock finds it (its opening book, say), or None.

        For a process in which numba does not compile (``NUMBA_DISABLE_JIT=1``, where the
        kernels run as plain Python, about a hundred times slower): it answers the first
        moves while the compiled engine is being prepared (``server.computer.quick``). A
        move it returns is the one ``decide`` returns with any time limit that lets the
        compiled search finish; never a weaker stand-in. This default has no such path."""
        if board.outcome() is not None:
            raise GameOver("the game is over: there is no move to choose")
        return None

    @abstractmethod
    def _decide(self, board: Board, limit: Limit) -> Decision: ...

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec} seed={self.seed}>"


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


@dataclass
class Registry:
    """Players by name; ``make`` builds one from a spec such as ``rubinoff:depth=2,ab=off``."""

    players: dict[str, type[Player]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def register(self, cls: type[Player]) -> type[Player]:
        self.players[cls.name] = cls
        return cls

    def alias(self, name: str, spec: str) -> None:
        self.aliases[name] = spec

    @property
    def names(self) -> list[str]:
        return sorted(self.players) + sorted(self.aliases)

    def make(self, spec: str, seed: int = 0) -> Player:
        spec = spec.strip()
        name, _, options_text = spec.partition(":")
        name = name.strip().lower()
        if name in self.aliases:
            base = self.aliases[name]
            if options_text:
                base += ("," if ":" in base else ":") + options_text
            return self.make(base, seed)
        cls = self.players.get(name)
        if cls is None:
            raise UnknownPlayer(
                f"no player named {name!r}: choose from {', '.join(self.names)}"
            )
        settings: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in options_text.split(","))):
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            if not eq or key not in cls.options:
                known = ", ".join(f"{k}=..." for k in cls.options) or "none"
                raise UnknownPlayer(f"{name}: bad option {item!r} (options: {known})")
            try:
                settings[key] = cls.options[key].parse(value.strip())
            except ValueError as error:
                raise UnknownPlayer(f"{name}: option {key} {error}") from None
        return cls(seed=seed, **settings)
