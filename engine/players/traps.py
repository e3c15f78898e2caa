"""Traps: in a lost position, the losing move whose win is hardest for the opponent to find.

Among losing moves that last at least ``SEEN`` plies, the master prefers one after which the
opponent has no continuous-threat win and its natural moves do not win, judged by a small
``Master`` of its own so the main search's tables stay as they were. docs/engine.md, "Traps",
has the rules and why."""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine.kernels.deepening import Master, SearchParams, mate_plies
from engine.rules.board import Board
from engine.rules.geometry import Geometry

NATURAL = 4  # the opponent's replies examined: the first of the model's ranking
RANK_DEPTH = 2  # plies of the model's search that rank the opponent's replies
PROVE_DEPTH = 3  # plies of our search that decide whether a reply wins for the opponent
MODEL_TSS_ROOT = 30_000  # threat-search nodes at the model's roots
MODEL_TT_BITS = 16
SEEN = 11  # a loss this near (plies) any searching opponent sees: no trap, only the delay


@dataclass(frozen=True)
class Trap:
    """What the model saw after one of our losing moves (higher :meth:`key` is better)."""

    move: int
    easy: bool  # the opponent has a continuous-threat win at once
    natural_wins: bool  # the opponent's most natural move wins
    winners: int  # how many of its NATURAL most natural moves win
    delay: int  # plies to our loss, by the main search (0: unknown)

    def key(self) -> tuple[int, int, int, int]:
        return (not self.easy, not self.natural_wins, -self.winners, self.delay)


class TrapFinder:
    """Examines losing moves with a shallow model of the opponent."""

    def __init__(self, geometry: Geometry) -> None:
        params = SearchParams(tss_root=MODEL_TSS_ROOT)
        self.model = Master(geometry, tt_bits=MODEL_TT_BITS, params=params)

    def examine(self, board: Board, move: int, delay: int, deadline: float) -> Trap | None:
        """The trap ``move`` sets in ``board`` (our side to move), or None if ``deadline``
        (a ``time.perf_counter`` value) came first."""
        board.push(move)
        try:
            if (board.is_game_over()
                    or self.model.root_threat_win(board, MODEL_TSS_ROOT, deadline) is not None):
                return Trap(move, True, True, 1, delay)  # the easiest kind of win
            view = self.model.think(board, max_depth=RANK_DEPTH, deadline=deadline)
            if time.perf_counter() > deadline:
                return None
            natural = (view.ranking or [view.move])[:NATURAL]
            wins = []
            for reply in natural:
                board.push(reply)
                try:
                    wins.append(self._wins(board, deadline))
                finally:
                    board.pop()
                if wins[-1] is None:
                    return None
            return Trap(move, False, bool(wins[0]), sum(map(bool, wins)), delay)
        finally:
            board.pop()

    def _wins(self, board: Board, deadline: float) -> bool | None:
        """Whether the side to move (us, after the opponent's reply) is lost within the
        model's depth; None past ``deadline``."""
        if board.is_game_over():
            return True
        seen = self.model.think(board, max_depth=PROVE_DEPTH, deadline=deadline)
        if time.perf_counter() > deadline:
            return None
        return seen.proved and seen.score < 0

    def choose(self, board: Board, ranking: list[int], scores: dict[int, int],
               deadline: float) -> tuple[int, list[Trap]]:
        """The best trap among ``ranking`` (our losing moves, the main search's best first)
        by ``deadline``: the moves are examined in that order, so with little time the
        choice falls back on the main search's."""
        traps: list[Trap] = []
        longest = mate_plies(scores.get(ranking[0], 0)) or 0
        for move in ranking:
            if time.perf_counter() > deadline:
                break
            plies = mate_plies(scores.get(move, 0))
            if plies is not None and plies < min(longest, SEEN):
                continue  # it loses sooner than the others, and in sight
            trap = self.examine(board, move, plies or 0, deadline)
            if trap is None:
                break
            traps.append(trap)
        return (best(traps).move if traps else ranking[0]), traps


def best(traps: list[Trap]) -> Trap:
    """The best of ``traps``; of equals the first (they come in the search's order)."""
    return max(traps, key=Trap.key)


__all__ = ["Trap", "TrapFinder", "best"]
