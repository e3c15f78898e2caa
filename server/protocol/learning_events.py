"""Server -> client: the puzzles and the reviews of finished games (the learning side of the
site), and the values nested in them."""

from __future__ import annotations

from typing import Literal

import msgspec

from server.protocol.event_base import _Event, _Value
from server.protocol.field_types import Colour, PuzzleMode, Reason, RequestId, Result, Variant


class PuzzleInfo(_Value):
    """A puzzle: the position (``moves`` that led to it), the task (``kind`` ``win`` in
    ``length`` of the side to move's moves, or ``survive``: one move after which the other
    side cannot win within ``horizon`` moves), its ``title`` and rating."""

    id: int
    variant: Variant
    moves: list[int]
    notation: str
    to_move: Colour
    kind: Literal["win", "survive"]
    length: int
    horizon: int
    title: str
    rating: int
    plays: int
    solves: int


class PuzzleShown(_Event, tag="puzzle"):
    """A puzzle to solve (reply to ``puzzle_next``, ``puzzle_daily``, ``puzzle_streak``):
    ``rating`` is yours (null over HTTP without a token); ``streak`` and ``best_streak``
    for a streak; ``day`` (``YYYY-MM-DD``, UTC) for the puzzle of the day."""

    puzzle: PuzzleInfo
    mode: PuzzleMode
    rating: int | None = None
    streak: int | None = None
    best_streak: int | None = None
    day: str | None = None
    ref: RequestId | None = None


class PuzzleResult(_Event, tag="puzzle_result"):
    """The judgement of an attempt's last move: ``right`` (``reply`` is the opponent's
    answer; go on), ``solved``, or ``wrong`` (``solution``: the moves from the puzzle's
    position that solve it, replies included). A finished try gives your ``rating`` and, if
    it was rated (your first try of the puzzle, not in a streak), ``rating_change``."""

    puzzle: int
    verdict: Literal["right", "wrong", "solved"]
    reply: int | None = None
    solution: list[int] = msgspec.field(default_factory=list)
    rated: bool = False
    rating: int | None = None
    rating_change: int | None = None
    streak: int | None = None
    best_streak: int | None = None
    ref: RequestId | None = None


class PuzzleTry(_Value):
    """One finished puzzle of a player's history."""

    puzzle: int
    title: str
    mode: PuzzleMode
    solved: bool
    rated: bool
    rating_before: int
    rating_after: int
    at: float


class PuzzleHistoryList(_Event, tag="puzzle_history"):
    """A player's latest finished puzzles, newest first, with the puzzle rating and the best
    streak (reply to ``puzzle_history``)."""

    attempts: list[PuzzleTry]
    rating: int
    best_streak: int
    ref: RequestId | None = None


class VerdictInfo(_Value):
    """Who wins, for one side: ``win``, ``loss``, ``draw`` or ``unknown`` (``/api/solve``'s
    words), ``plies`` to the end when known, ``proved_by`` ``book`` or ``search``."""

    verdict: Literal["win", "loss", "draw", "unknown"]
    plies: int | None = None
    proved_by: Literal["book", "search"] | None = None


ReviewClass = Literal["found", "blunder", "missed_threat", "best", "ok", "unknown"]


class MoveReview(_Value):
    """One move of a review: its mover's verdict before and after it, its ``class``, the
    best moves there (notation) and, where a forced win was let go, the line that won."""

    ply: int
    side: Colour
    cell: int
    move: str
    before: VerdictInfo
    after: VerdictInfo
    kind: ReviewClass = msgspec.field(name="class")
    best: list[str] = []
    line: list[str] = []


class ReviewInfo(_Value):
    """A finished game's review: ``start`` is X's verdict before the first move, ``summary``
    counts each side's classes; ``seconds`` it took, ``computed`` when (Unix seconds)."""

    game: str
    variant: Variant
    x: str
    o: str
    result: Result
    reason: Reason | None
    start: VerdictInfo
    moves: list[MoveReview]
    summary: dict[Colour, dict[ReviewClass, int]]
    seconds: float
    computed: float


class GameReviewed(_Event, tag="review"):
    """The review asked for by ``review`` (computed once on the server, then kept)."""

    review: ReviewInfo
    ref: RequestId | None = None
