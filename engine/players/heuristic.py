"""Players that look one move ahead: random, Wood's engine (seed 004) and freeness (seed 002)."""

from __future__ import annotations

import random
import time

from engine.players.base import Decision, Limit, Player
from engine.rules.board import Board
from engine.rules.geometry import Cell


def _immediate(board: Board, side: int, rng: random.Random) -> Cell | None:
    """A cell completing a line for ``side``, chosen at random among such lines; else None."""
    g = board.geometry
    mine, theirs = board.stones[side], board.stones[side ^ 1]
    ready = [m for m in g.line_masks if not m & theirs and (m & ~mine).bit_count() == 1]
    if not ready:
        return None
    mask = rng.choice(ready)
    return (mask & ~mine).bit_length() - 1


def _win_or_block(board: Board, rng: random.Random) -> Cell | None:
    """The cell that wins now, else the cell that stops the other side winning next."""
    for side in (board.turn, board.turn ^ 1):
        cell = _immediate(board, side, rng)
        if cell is not None:
            return cell
    return None


class RandomPlayer(Player):
    name = "random"
    summary = "a uniformly random legal move"

    def _decide(self, board: Board, limit: Limit) -> Decision:
        started = time.perf_counter()
        move = self.rng(board).choice(board.legal_moves)
        return Decision(move=move, elapsed=time.perf_counter() - started)


class OneMoveAhead(Player):
    """Win if you can, else block, else the quiet move the subclass's rating prefers."""

    def _decide(self, board: Board, limit: Limit) -> Decision:
        started = time.perf_counter()
        rng = self.rng(board)
        cell = _win_or_block(board, rng)
        if cell is not None:
            return Decision(move=cell, depth=1, elapsed=time.perf_counter() - started)
        move, score = self._choose(board, rng)
        rated = board.empty.bit_count()
        return Decision(
            move=move, score=score, depth=1, nodes=rated, evaluations=rated,
            elapsed=time.perf_counter() - started,
        )

    def _choose(self, board: Board, rng: random.Random) -> tuple[Cell, int]:
        """The move among the legal ones, with its rating, when nothing wins or must block."""
        raise NotImplementedError


class WoodPlayer(OneMoveAhead):
    """Wood's engine: win if you can, else block, else score every move by the lines it
    advances (own stones on each line still open to you, minus one per line blocked), with a
    random choice among ties."""

    name = "wood"
    summary = "win, else block, else the move that advances most lines (Wood 2012)"

    def _choose(self, board: Board, rng: random.Random) -> tuple[Cell, int]:
        me = board.turn
        g = board.geometry
        theirs = board.stones[me ^ 1]
        scores: dict[Cell, int] = {}
        for cell in board.legal_moves:
            mine = board.stones[me] | 1 << cell
            # Wood scores each line n - moves_to_win(line), or -1 when the line is blocked:
            # n - (n - own stones) is the number of own stones on it.
            scores[cell] = sum(-1 if m & theirs else (m & mine).bit_count() for m in g.line_masks)
        best = max(scores.values())
        return rng.choice([c for c, s in scores.items() if s == best]), best


class FreenessPlayer(OneMoveAhead):
    """The 'freeness' rating of seed 002: win, else block, else rate each empty cell by its
    lines (0 if the other side holds a stone there, 1 if empty, 2 if only ours) and play the
    highest average rating when some average is above 1, otherwise the highest sum."""

    name = "freeness"
    summary = "win, else block, else the freest cell by line ratings 0/1/2 (seed 002)"

    def _choose(self, board: Board, rng: random.Random) -> tuple[Cell, int]:
        me = board.turn
        g = board.geometry
        mine, theirs = board.stones[me], board.stones[me ^ 1]
        sums: dict[Cell, int] = {}
        averages: dict[Cell, float] = {}
        for cell in board.legal_moves:
            ratings = []
            for index in g.lines_through[cell]:
                m = g.line_masks[index]
                ratings.append(0 if m & theirs else 2 if m & mine else 1)
            sums[cell] = sum(ratings)
            averages[cell] = sum(ratings) / len(ratings)
        top_average = max(averages.values())
        if top_average > 1:
            candidates = [c for c, a in averages.items() if a == top_average]
            score = round(top_average * 1000)
        else:
            top_sum = max(sums.values())
            candidates = [c for c, s in sums.items() if s == top_sum]
            score = top_sum
        return rng.choice(candidates), score
