"""A finished game's review: what each move did to the verdict of :mod:`engine.solved.truth`.

Every position is solved once, so each move gets its mover's verdict before and after it, a
class (``found``, ``blunder``, ``missed_threat``, ``best``, ``ok``, ``unknown``:
docs/protocol.md, *review (reply)*), the best moves there and, where a forced win was let go,
the line that would have won. Pure: the server runs :func:`review_game` in the solver's worker."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.rules.board import Board
from engine.rules.notation import format_cell
from engine.solved.strategy import win_cells
from engine.solved.truth import DRAW, LOSS, UNKNOWN, WIN, Verdict, solve

FOUND, BLUNDER, MISSED_THREAT, BEST, OK = "found", "blunder", "missed_threat", "best", "ok"
CLASSES = (FOUND, BLUNDER, MISSED_THREAT, BEST, OK, UNKNOWN)
POSITION_BUDGET = 0.5  # seconds of search for a position off the proof's tree ...
TOTAL_BUDGET = 5.0  # ... until the review has spent this much; then the proof and tables only
LINE_PLIES = 8  # the line that would have won is cut here
LINE_BUDGET = 0.1  # seconds of search for each position of that line
MAX_BEST = 8  # best moves listed at most
_OPPOSITE = {WIN: LOSS, LOSS: WIN, DRAW: DRAW, UNKNOWN: UNKNOWN}
_ORDER = {LOSS: 0, DRAW: 1, WIN: 2}  # for the mover; unknown is not ordered


@dataclass(frozen=True)
class Standing:
    """A verdict as one side sees it: ``win``, ``loss``, ``draw`` or ``unknown``."""

    verdict: str
    plies: int | None = None
    proved_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "plies": self.plies, "proved_by": self.proved_by}


@dataclass(frozen=True)
class MoveReview:
    """One move of the game: who played it, the verdicts around it, its class, the best
    moves in the position before it and the line that would have won there."""

    ply: int  # 1 for X's first move
    side: str  # "x" or "o"
    cell: int
    move: str
    before: Standing
    after: Standing
    kind: str
    best: tuple[str, ...] = ()
    line: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"ply": self.ply, "side": self.side, "cell": self.cell, "move": self.move,
                "before": self.before.to_json(), "after": self.after.to_json(),
                "class": self.kind, "best": list(self.best), "line": list(self.line)}


@dataclass(frozen=True)
class Review:
    """A game's review: one entry per move, and how many of each class each side played."""

    variant: str
    moves: tuple[MoveReview, ...]
    seconds: float
    start: Standing = field(default_factory=lambda: Standing(UNKNOWN))  # X's at the start

    def summary(self) -> dict[str, dict[str, int]]:
        counts = {side: dict.fromkeys(CLASSES, 0) for side in ("x", "o")}
        for entry in self.moves:
            counts[entry.side][entry.kind] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "start": self.start.to_json(),
                "moves": [m.to_json() for m in self.moves], "summary": self.summary(),
                "seconds": round(self.seconds, 3)}


def review_game(variant: str, cells: Sequence[int], *,
                position_budget: float = POSITION_BUDGET,
                total_budget: float = TOTAL_BUDGET) -> Review:
    """The review of the game played as ``cells`` on ``variant`` (legal moves; the game may
    have ended by resignation, time or agreement before its board did). Each position gets
    ``position_budget`` seconds of search while the review has spent less than
    ``total_budget``; positions on the proof's tree or in the small boards' table cost none."""
    started = time.perf_counter()
    board = Board(variant)
    geometry = board.geometry

    def budget() -> float:
        return position_budget if time.perf_counter() - started < total_budget else 0.0

    verdicts = [solve(board, budget())]
    for cell in cells:
        board.push(cell)
        verdicts.append(solve(board, budget(), moves=len(verdicts) < len(cells)))
    board = Board(variant)
    entries = []
    for ply, cell in enumerate(cells):
        here = verdicts[ply]
        played = next((m for m in here.moves if m.move == cell), None)
        after = _after(verdicts[ply + 1], played)
        before = Standing(here.verdict, here.plies, here.proved_by)
        best = _best(here)
        kind = classify(board, cell, before, after, best)
        if kind == MISSED_THREAT and not best:  # unproved, but any other move loses at once
            best = [_block(board)]
        line: tuple[str, ...] = ()
        if before.verdict == WIN and after.verdict != WIN and best:
            winning = principal_line(board, best[0], seconds=min(LINE_BUDGET, budget()))
            line = tuple(format_cell(c, geometry) for c in winning)
        entries.append(MoveReview(
            ply=ply + 1, side="xo"[ply % 2], cell=cell, move=format_cell(cell, geometry),
            before=before, after=after, kind=kind,
            best=tuple(format_cell(c, geometry) for c in best[:MAX_BEST]), line=line))
        board.push(cell)
    start = verdicts[0]
    return Review(variant, tuple(entries), time.perf_counter() - started,
                  Standing(start.verdict, start.plies, start.proved_by))


def _after(position: Verdict, played: Verdict | None) -> Standing:
    """The mover's standing after the move: the opponent's verdict there, turned round; the
    position's own solve, or the move's entry in the position before where that says more."""
    found = position
    if found.verdict == UNKNOWN and played is not None and played.verdict != UNKNOWN:
        found = played
    return Standing(_OPPOSITE[found.verdict], found.plies, found.proved_by)


def _best(position: Verdict) -> list[int]:
    """The best moves of a position, as proved: those as good as the first (the same verdict
    and plies); none when not even the first is proved."""
    if not position.moves or position.moves[0].verdict == UNKNOWN:
        return []
    top = position.moves[0]
    return [m.move for m in position.moves
            if m.move is not None and (m.verdict, m.plies) == (top.verdict, top.plies)]


def _block(board: Board) -> int:
    """The cell that blocks the opponent's one open three."""
    theirs, mine = board.stones[1 - board.turn], board.stones[board.turn]
    return win_cells(theirs, mine, board.geometry.line_masks).bit_length() - 1


def classify(board: Board, cell: int, before: Standing, after: Standing,
             best: Sequence[int]) -> str:
    """The class of playing ``cell`` on ``board`` (the position before it), for its mover."""
    mine, theirs = board.stones[board.turn], board.stones[1 - board.turn]
    threat = win_cells(theirs, mine, board.geometry.line_masks)
    if after.verdict == WIN:
        return FOUND
    if threat.bit_count() == 1 and not (threat >> cell) & 1:  # two: lost whatever is played
        return MISSED_THREAT  # said first: it needs no search, and tells what went wrong
    if before.verdict == WIN and after.verdict in (LOSS, DRAW):
        return BLUNDER
    if before.verdict == UNKNOWN or after.verdict == UNKNOWN:
        return UNKNOWN
    if _ORDER[before.verdict] > _ORDER[after.verdict]:
        return BLUNDER
    return BEST if cell in best else OK


def principal_line(board: Board, first: int, plies: int = LINE_PLIES,
                   seconds: float = LINE_BUDGET) -> list[int]:
    """``first`` and then best play for both sides, as far as it is proved, up to ``plies``
    moves or the end of the game, each position searched for ``seconds`` at most
    (``board`` is left as it was)."""
    line = [first]
    board.push(first)
    try:
        while len(line) < plies and board.outcome() is None:
            verdict = solve(board, seconds)
            if not verdict.moves or verdict.moves[0].verdict == UNKNOWN:
                break
            move = verdict.moves[0].move
            assert move is not None
            line.append(move)
            board.push(move)
    finally:
        for _ in line:
            board.pop()
    return line
