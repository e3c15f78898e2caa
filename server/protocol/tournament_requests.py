"""Client -> server: tournaments (docs/tournaments.md): the list, following one, joining and
leaving, and a moderator creating one."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.errors import ProtocolError
from server.protocol.field_types import Level, Variant, text_fault
from server.protocol.request_base import _Request

TournamentId = Annotated[str, msgspec.Meta(min_length=1, max_length=32,
                                           pattern=r"\A[A-Za-z0-9_][A-Za-z0-9_-]*\Z")]
TournamentName = Annotated[str, msgspec.Meta(min_length=1, max_length=60)]
TournamentKind = Literal["arena", "swiss"]
TournamentClock = Annotated[str, msgspec.Meta(pattern=r"\A[0-9]{1,3}\+[0-9]{1,3}\Z")]
"""A tournament's clock as people write it: ``"3+2"``, minutes each plus seconds a move."""
MAX_MINUTES = 24 * 60
MAX_ROUNDS = 30
MAX_COMPUTERS = 16
MAX_PAGE = 1000
MIN_ROUND_INTERVAL = 10.0  # seconds
MAX_ROUND_INTERVAL = 7 * 86400.0


class Tournaments(_Request, tag="tournaments"):
    """The tournaments created, going on, and finished in the last 24 h (reply:
    ``tournaments``)."""


class _TournamentRequest(_Request):
    """A request about one tournament, the one ``tournament`` names (``id`` is the request's
    own, echoed as ``ref``)."""

    tournament: TournamentId


class TournamentSub(_TournamentRequest, tag="tournament_sub"):
    """Receive the tournament's state now (``tournament``) and again when it changes:
    standings ``page`` (from 1; past the last: the last), or, without it, the page holding
    your own line (page 1 if you are not in it). Asking again changes the page."""

    page: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] | None = None


class TournamentUnsub(_TournamentRequest, tag="tournament_unsub"):
    """Stop receiving the tournament's updates."""


class TournamentJoin(_TournamentRequest, tag="tournament_join"):
    """Enter the tournament (or come back to it); the reply is ``ack``."""


class TournamentLeave(_TournamentRequest, tag="tournament_leave"):
    """Withdraw: an arena's score stays, a Swiss pairs you no more; the reply is ``ack``."""


class TournamentCreate(_Request, tag="tournament_create"):
    """Moderators: schedule a tournament (reply: ``tournament``). An arena lasts ``minutes``,
    a Swiss plays ``rounds``; ``computer_levels`` enters computer players. A Swiss round
    starts once the last game of the one before has ended, or earlier at its set time:
    ``round_interval`` seconds after the one before started, or ``round_times`` (Unix
    seconds, rounds 2, 3, ... in order)."""

    name: TournamentName
    kind: TournamentKind
    starts_at: Annotated[float, msgspec.Meta(ge=0)]
    clock: TournamentClock
    minutes: Annotated[int, msgspec.Meta(ge=1, le=MAX_MINUTES)] | None = None
    rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)] | None = None
    variant: Variant = "4x4x4"
    rated: bool = False
    computer_levels: Annotated[list[Level], msgspec.Meta(max_length=MAX_COMPUTERS)] = []
    round_interval: Annotated[float, msgspec.Meta(ge=MIN_ROUND_INTERVAL,
                                                  le=MAX_ROUND_INTERVAL)] | None = None
    round_times: Annotated[list[Annotated[float, msgspec.Meta(ge=0)]],
                           msgspec.Meta(max_length=MAX_ROUNDS)] = []

    def __post_init__(self) -> None:
        fault = text_fault(self.name)
        if fault is not None or not self.name.strip():
            raise ProtocolError(f"a tournament's `name` may not hold {fault or 'only spaces'}",
                                "bad_message")
        if self.kind == "arena" and (self.minutes is None or self.rounds is not None):
            raise ProtocolError("an arena needs `minutes` (and no `rounds`)", "bad_message")
        if self.kind == "swiss" and (self.rounds is None or self.minutes is not None):
            raise ProtocolError("a Swiss needs `rounds` (and no `minutes`)", "bad_message")
        if self.kind == "arena" and (self.round_interval is not None or self.round_times):
            raise ProtocolError("`round_interval` and `round_times` are a Swiss's",
                                "bad_message")
        times = [self.starts_at, *self.round_times]
        if any(later <= earlier for earlier, later in zip(times, times[1:], strict=False)) \
                or len(self.round_times) >= (self.rounds or 1):
            raise ProtocolError("`round_times` are rounds 2, 3, ...: after `starts_at`, in "
                                "order, fewer than `rounds`", "bad_message")
        minutes, _, increment = self.clock.partition("+")
        if not 0 < int(minutes) * 60 <= 10800 or int(increment) > 180:
            raise ProtocolError("a tournament's clock is 1 to 180 minutes, 0 to 180 s a move",
                                "bad_clock")


TournamentRequest = (
    Tournaments | TournamentSub | TournamentUnsub | TournamentJoin | TournamentLeave
    | TournamentCreate
)  # fmt: skip
"""The tournaments' requests (``server.node.tournaments`` answers them)."""
