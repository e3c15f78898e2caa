"""The master search: iterative deepening over :func:`engine.kernels.pvs.pvs`.

:class:`Master` first looks for a continuous-threat win of the side to move
(:mod:`engine.kernels.threats`, within about a third of the time), then deepens the fixed-depth
search under the deadline, with aspiration windows from depth 4. It keeps the transposition table,
the threat table, history and killers between moves, and reports what was proved: a threat
win, or a mate score of the full-width search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from engine.kernels.negamax import INF, WIN, tables_for
from engine.kernels.pvs import (
    ABORTED,
    EVALS,
    MATE_BOUND,
    NODES,
    STATS_SIZE,
    TSS_NODES,
    SearchParams,
    pvs,
    wary_weights,
)
from engine.kernels.threats import (
    MAX_THREATS,
    Position,
    ThreatTable,
    completion,
    make_scratch,
    pop,
    threat_search,
    zobrist,
)
from engine.rules.board import Board
from engine.rules.geometry import Cell, Geometry

TSS_RATE = 3_000_000  # threat-search nodes a second, roughly, to budget the root's search


@dataclass(frozen=True)
class Iteration:
    """One completed (or aborted) depth of the iterative deepening."""

    depth: int
    move: Cell
    score: int
    pv: tuple[Cell, ...]
    complete: bool


@dataclass
class Thought:
    """What :meth:`Master.think` found."""

    move: Cell
    score: int
    depth: int
    pv: tuple[Cell, ...]
    nodes: int = 0
    evaluations: int = 0
    tss_nodes: int = 0
    proved: bool = False  # score is a proved win or loss
    elapsed: float = 0.0
    iterations: list[Iteration] = field(default_factory=list)
    ranking: list[Cell] = field(default_factory=list)  # root moves, best first (last iteration)
    scores: dict[Cell, int] = field(default_factory=dict)  # the best's value, others' bounds


class Master:
    """Iterative deepening over :func:`pvs` with a table kept between moves."""

    def __init__(self, geometry: Geometry, tt_bits: int = 20, params: SearchParams | None = None):
        self.geometry = geometry
        self.tables = tables_for(geometry)
        size = self.tables.size
        self.params = params or SearchParams()
        self.tt_keys = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_score = np.zeros(1 << tt_bits, dtype=np.int32)
        self.tt_depth = np.zeros(1 << tt_bits, dtype=np.int8)
        self.tt_flag = np.zeros(1 << tt_bits, dtype=np.int8)
        self.tt_move = np.zeros(1 << tt_bits, dtype=np.int8)
        self.threat_table = ThreatTable()
        self.scratch = make_scratch(size, self.tables.n)
        self.path = np.zeros(2 * MAX_THREATS + 4, dtype=np.int32)
        self.history = np.zeros((2, size), dtype=np.int64)
        self.killers = np.full((size + 2, 2), -1, dtype=np.int32)
        self.zob = zobrist(size)

    def clear(self) -> None:
        """Forget everything learnt: tables, history and killers."""
        for array in (self.tt_keys, self.tt_score, self.tt_depth, self.tt_flag, self.tt_move):
            array[:] = 0
        self.threat_table.clear()
        self.history[:] = 0
        self.killers[:] = -1

    def root_threat_win(
        self, board: Board, budget: int, deadline: float = 0.0
    ) -> tuple[Cell, ...] | None:
        """The shortest continuous-threat win for the side to move, deepening the number of
        threats one at a time, within ``budget`` nodes in all."""
        t = self.tables
        pos = Position.from_board(board)
        stats = np.zeros(1, dtype=np.int64)
        self.last_tss_nodes = 0
        for threats in range(1, MAX_THREATS + 1):
            left = budget - int(stats[0])
            if left <= 0:
                break
            plies = threat_search(
                pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
                t.cell_degree, t.n, pos.side, np.uint64(pos.key), self.zob, threats, left,
                self.threat_table.keys, self.path, stats,
                self.scratch, deadline,
            )
            if plies > 0:
                self.last_tss_nodes = int(stats[0])
                return tuple(int(c) for c in self.path[:plies])
            if 2 * threats > board.empty.bit_count():
                break
        self.last_tss_nodes = int(stats[0])
        return None

    def search_depth(
        self, board: Board, depth: int, root_moves: list[Cell], alpha: int, beta: int,
        deadline: float, stop: np.ndarray,
    ) -> tuple[int, np.ndarray, tuple[Cell, ...], np.ndarray]:
        """One iteration: ``(value, root scores, pv, stats)``."""
        t = self.tables
        pos = Position.from_board(board)
        moves = np.array(root_moves, dtype=np.int32)
        scores = np.zeros(len(moves), dtype=np.int64)
        stats = np.zeros(STATS_SIZE, dtype=np.int64)
        frames = t.size + 2
        pv = np.zeros((frames, frames), dtype=np.int32)
        pv_len = np.zeros(frames, dtype=np.int32)
        value = pvs(
            pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
            t.cell_degree, t.n, pos.side, np.uint64(pos.key), self.zob, depth, alpha, beta,
            moves, scores, self.tt_keys, self.tt_score, self.tt_depth, self.tt_flag,
            self.tt_move, self.threat_table.keys, self.scratch,
            self.path, self.history, self.killers, self.params.array(),
            self.params.weights, deadline, stop, stats, pv, pv_len,
        )
        line = tuple(int(c) for c in pv[0, : pv_len[0]])
        return int(value), scores, line, stats

    def think(
        self,
        board: Board,
        *,
        deadline: float = 0.0,
        max_depth: int = 64,
        stop: np.ndarray | None = None,
        root_moves: list[Cell] | None = None,
        share: float = 1.0,
    ) -> Thought:
        """The best move found by ``deadline`` (a ``time.perf_counter`` value; 0: none) or
        at ``max_depth``. ``root_moves`` fixes the moves considered (e.g. one per symmetry
        class) in a preferred order. When the threat search finds no win at the root, the
        main search keeps to the first ``share`` of the time (the rest is the caller's)."""
        started = time.perf_counter()
        stop = stop if stop is not None else np.zeros(1, dtype=np.int8)
        moves = list(root_moves if root_moves is not None else board.legal_moves)
        empties = board.empty.bit_count()
        max_depth = max(1, min(max_depth, empties))
        self.history //= 8
        self.killers[:] = -1
        thought = Thought(move=moves[0], score=0, depth=0, pv=(moves[0],))
        budget = self.params.tss_root
        if deadline:  # about a third of the time at a few million threat nodes a second
            budget = min(budget, max(2000, int((deadline - started) * TSS_RATE / 3)))
        win = (self.root_threat_win(board, budget, started + (deadline - started) / 3
                                    if deadline else 0.0)
               if self.params.tss_root else None)
        thought.tss_nodes += self.last_tss_nodes if self.params.tss_root else 0
        if win is not None:
            thought.move, thought.pv = win[0], win
            thought.score, thought.proved = WIN - len(win), True
            if len(win) <= 3:
                thought.elapsed = time.perf_counter() - started
                return thought
            # look briefly for a faster win with quiet moves than the threat sequence
            max_depth = min(max_depth, len(win) - 2)
            left = (deadline - started) if deadline else 2.0
            deadline = started + 0.1 * left
        elif deadline:
            deadline = started + share * (deadline - started)
        previous = None
        for depth in range(1, max_depth + 1):
            alpha, beta = -INF, INF
            if previous is not None and abs(previous) < MATE_BOUND and depth >= 4:
                alpha, beta = previous - 40, previous + 40
            while True:
                value, scores, line, stats = self.search_depth(
                    board, depth, moves, alpha, beta, deadline, stop
                )
                thought.nodes += int(stats[NODES])
                thought.evaluations += int(stats[EVALS])
                thought.tss_nodes += int(stats[TSS_NODES])
                aborted = bool(stats[ABORTED])
                if aborted or alpha < value < beta or (alpha == -INF and beta == INF):
                    break
                alpha, beta = -INF, INF  # the aspiration window failed: search again
            if aborted:
                # a move that beat the previous best in the unfinished iteration is taken
                done = [i for i in range(len(moves)) if scores[i] > -INF - 1]
                if done and done[0] == 0:
                    i_best = max(done, key=lambda i: scores[i])
                    if i_best > 0 and scores[i_best] > scores[0]:
                        thought.move, thought.score = moves[i_best], int(scores[i_best])
                        thought.pv = (moves[i_best],)
                        thought.iterations.append(
                            Iteration(depth, moves[i_best], int(scores[i_best]), thought.pv,
                                      False)
                        )
                break
            best_move = line[0] if line else moves[0]
            thought.move, thought.score, thought.pv, thought.depth = best_move, value, line, depth
            ranked = sorted(range(len(moves)), key=lambda i: -scores[i])
            thought.ranking = [best_move] + [moves[i] for i in ranked if moves[i] != best_move]
            thought.scores = {moves[i]: int(scores[i]) for i in range(len(moves))}
            thought.scores[best_move] = value
            thought.iterations.append(Iteration(depth, best_move, value, line, True))
            previous = value
            if best_move in moves:
                moves.remove(best_move)
            moves.insert(0, best_move)
            if abs(value) > MATE_BOUND:
                thought.proved = True
                if WIN - abs(value) <= depth + 1:
                    break  # a full-width search this deep sees every faster end
            if deadline and time.perf_counter() > (
                    started + (deadline - started) * self.params.iterate / 100):
                break  # the next iteration would not finish in time
        if win is not None and thought.score < WIN - len(win):
            thought.move, thought.pv = win[0], win
            thought.score, thought.proved = WIN - len(win), True
        thought.elapsed = time.perf_counter() - started
        return thought


def mate_plies(score: int) -> int | None:
    """Plies to the end for a proved win (positive score) or loss (negative); else None."""
    if abs(score) > MATE_BOUND:
        return WIN - abs(score)
    return None


def warm_up() -> float:
    """Compile (or load from cache) the master's kernels; returns the seconds it took."""
    started = time.perf_counter()
    master = Master(Board("3x3").geometry, tt_bits=8)
    master.think(Board("3x3", [4]), max_depth=2)
    master.think(Board("3x3", [4, 0]), max_depth=2)
    return time.perf_counter() - started


__all__ = ["Master", "SearchParams", "Thought", "mate_plies", "warm_up", "wary_weights",
           "completion", "pop"]
