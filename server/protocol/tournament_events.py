"""Server -> client: tournaments (docs/tournaments.md): the list, and one tournament's state
with its standings and games."""

from __future__ import annotations

from typing import Literal

from server.protocol.event_base import _Event, _Value
from server.protocol.field_types import RequestId, Variant


class TournamentInfo(_Value):
    """A tournament in a list: ``starts_at`` and ``ends_at`` are Unix seconds (``ends_at``:
    an arena's end; a Swiss's once it has finished); ``rounds`` and ``round`` (the one being
    played) are a Swiss's; ``clock`` as ``"3+2"``; ``players`` who joined; ``next_round_at``
    (Unix seconds) when a Swiss's next round is due by the clock at the latest (its set time,
    or the interval after the round being played started), null when none is (an arena, a
    Swiss not started, finished or playing its last round, or whose rounds wait for the last
    game's end)."""

    id: str
    name: str
    kind: Literal["arena", "swiss"]
    status: Literal["created", "started", "finished"]
    starts_at: float
    ends_at: float | None
    rounds: int | None
    round: int | None
    clock: str
    variant: Variant
    rated: bool
    players: int
    next_round_at: float | None = None


class Standing(_Value):
    """One player's line: ``score`` (an arena's points; a Swiss's, 1 a win and ½ a draw),
    ``points`` each game's (a Swiss's in half points, a bye 2), ``fire`` (an arena's streak:
    games score double), ``playing`` (in a game now), ``withdrawn``, ``bot`` (a bot account),
    ``computer`` (the level of a computer the host entered: it has no player page); a Swiss's
    tie-breaks."""

    rank: int
    name: str
    score: int | float
    points: list[int]
    fire: bool
    rating: int
    performance: int
    games: int
    playing: bool
    withdrawn: bool
    bot: bool
    buchholz: float | None = None
    sonneborn_berger: float | None = None
    computer: int | None = None


class TournamentGame(_Value):
    """A game of the tournament: ``round`` a Swiss's; ``result`` null while it goes on."""

    id: str
    x: str
    o: str
    round: int | None
    result: Literal["1-0", "0-1", "1/2-1/2"] | None


class TournamentList(_Event, tag="tournaments"):
    """The tournaments created, going on, and finished in the last 24 h, soonest/newest first
    (reply to ``tournaments``)."""

    tournaments: list[TournamentInfo]
    ref: RequestId | None = None


class TournamentState(_Event, tag="tournament"):
    """A tournament's state (reply to ``tournament_sub`` and ``tournament_create``, then
    again when what this follower sees changes, at most once a second): ``info`` (the
    header), ``page`` of ``pages`` of the standings (``PAGE_SIZE`` lines, best first), the
    games of that page's players (and of ``me``; going on first, then newest first), and
    ``me``, the follower's own line (null if not in it). ``GET /api/tournaments/{id}`` gives
    the whole table."""

    info: TournamentInfo
    standings: list[Standing]
    games: list[TournamentGame]
    page: int = 1
    pages: int = 1
    me: Standing | None = None
    ref: RequestId | None = None


PAGE_SIZE = 10
"""Lines of standings on a page of a ``tournament`` event (lichess's arena shows 10)."""
