"""A plain alpha-beta player: a sparring partner of the textbook family, outside the master's.

Negamax with alpha-beta (no threat search, no transposition table, no book), deepened
iteratively until its time runs out, over a line-count evaluation: every open line is worth
``WEIGHTS[k]`` for k stones of one side, the side to move's counted plus and the other's
minus. Moves are ordered by the lines through the cell (open lines of either side, weighted by
their stones) plus a history score raised at every cutoff; at the root by the scores of the
previous iteration. Two rules any Qubic program has: a side that can complete a line wins
(scored at once, one ply on), and a side facing one must block it (the blocks are its only
moves).

The search runs in one numba kernel (``@njit(cache=True)``) over the search kernel's
incremental line counts, iterative on explicit stacks as :mod:`engine.kernels.negamax` is (numba's
cache does not handle recursion); it polls its deadline and a stop flag.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from engine.kernels.negamax import (
    ABORTED,
    CHILDREN,
    ENTER,
    EVALS,
    INF,
    INTERIOR,
    MAX_PLY,
    NEXT,
    NODES,
    RETURN,
    STATS_SIZE,
    WIN,
    State,
    abort_if_stopped,
    completing_cells,
    frame_hists,
    frame_stacks,
    mate_plies,
    pop_counts,
    push_counts,
    search_moves,
    tables_for,
    take_pv,
    tally_child,
)
from engine.players.base import Decision, Forced, Limit, Option, Player, parse_float, parse_int
from engine.players.mcts import warm_up as mcts_warm_up
from engine.rules.board import Board

SAFETY = 0.01  # seconds kept back from a time limit for the answer to travel
POLL_MASK = 1023
# open lines by stones: 0, 1, 2, 3, ... of the side (the last, n - 1, only at depth 0, where
# the side not to move has it: the one to move must block it)
WEIGHTS = (0, 1, 8, 48, 200, 800, 3200, 12800, 51200)
ORDER_WEIGHTS = (1, 4, 16, 256, 1024, 4096, 16384, 65536, 262144)


@njit(cache=True, inline="always")
def _evaluate(side, hist, weights, n):
    """The line count for ``side``, to move."""
    other = 1 - side
    value = 0
    for k in range(1, n):
        value += weights[k] * (hist[side, k] - hist[other, k])
    return value


@njit(cache=True)
def _generate(side, cells, counts, hist, cell_lines, cell_degree, line_cells, n,
              order_weights, history, moves, keys):
    """The moves of ``side`` in search order, written to ``moves``; returns their count.
    Facing a line one stone short, the blocks are the only moves."""
    other = 1 - side
    if hist[other, n - 1] > 0:
        return completing_cells(other, cells, counts, line_cells, n, moves)
    count = 0
    for cell in range(cells.shape[0]):
        if cells[cell] != 0:
            continue
        key = history[side, cell]
        for i in range(cell_degree[cell]):
            line = cell_lines[cell, i]
            mine = counts[side, line]
            theirs = counts[other, line]
            if theirs == 0:
                key += order_weights[mine]
            if mine == 0:
                key += order_weights[theirs]
        j = count  # insertion sort, highest key first
        while j > 0 and keys[j - 1] < key:
            keys[j] = keys[j - 1]
            moves[j] = moves[j - 1]
            j -= 1
        keys[j] = key
        moves[j] = cell
        count += 1
    return count


@njit(cache=True)
def negamax(
    cells, counts, hist, cell_lines, cell_degree, n, side, depth, alpha, beta, ply, deadline,
    stop, stats, pv, pv_len,
    line_cells, weights, order_weights, history,
):
    """The value for ``side`` (to move) of the position searched ``depth`` plies deep with
    alpha-beta in the window (alpha, beta); frame k is the node at ply ``ply + k``, its
    histogram ``hists[k]`` (``hist`` at frame 0), and a leaf's move is never made: its
    histogram is all a leaf reads (as in :func:`engine.kernels.negamax.negamax`, whose frame stacks
    it takes). What is this player's own is the order of the moves (with the forced blocks
    and the history) and the win seen a ply early; the steps that make and take back moves
    are written out here as in the kernel's (shared helpers made this search about 25%
    slower). The arguments up to ``pv_len`` are the kernel's negamax's:
    :func:`engine.kernels.negamax.search_moves` passes them."""
    size = cells.shape[0]
    moves, n_moves, next_move, lo, hi, best = frame_stacks(depth + 1, size, alpha, beta)
    hists = frame_hists(hist, depth + 1)
    keys = np.empty(size, dtype=np.int64)
    k = 0
    to_move = side
    step = ENTER
    value = 0
    while True:
        if step == ENTER:
            here = ply + k
            stats[NODES] += 1
            if (stats[NODES] & POLL_MASK) == 0:
                abort_if_stopped(stats, stop, deadline)
            if stats[ABORTED] != 0:
                return 0
            pv_len[here] = here
            step = RETURN
            if hists[k, to_move, n - 1] > 0:
                value = WIN - (here + 1)  # it completes a line next ply
            elif k == depth:
                stats[EVALS] += 1
                value = _evaluate(to_move, hists[k], weights, n)
            else:
                count = _generate(to_move, cells, counts, hists[k], cell_lines, cell_degree,
                                  line_cells, n, order_weights, history, moves[k], keys)
                n_moves[k] = count
                next_move[k] = 0
                best[k] = -INF
                if count == 0:
                    value = 0  # a full board: a draw
                else:
                    stats[INTERIOR] += 1
                    step = NEXT
        if step == NEXT:
            # no move completes a line: a side that could has been scored at ENTER
            cell = moves[k, next_move[k]]
            next_move[k] += 1
            stats[CHILDREN] += 1
            tally_child(cell, to_move, counts, hists[k], hists[k + 1], cell_lines, cell_degree)
            if k + 1 < depth:
                push_counts(cell, to_move, cells, counts, cell_lines, cell_degree, n)
            k += 1
            to_move = 1 - to_move
            lo[k] = -hi[k - 1]
            hi[k] = -lo[k - 1]
            step = ENTER
            continue
        # RETURN: frame k has finished with ``value``; hand it to its parent
        if k == 0:
            return value
        k -= 1
        to_move = 1 - to_move
        here = ply + k
        cell = moves[k, next_move[k] - 1]
        if k + 1 < depth:
            pop_counts(cell, to_move, cells, counts, cell_lines, cell_degree)
        if stats[ABORTED] != 0:
            return 0
        child = -value
        if child > best[k]:
            best[k] = child
            take_pv(pv, pv_len, here, cell)
            if child > lo[k]:
                lo[k] = child
        if lo[k] >= hi[k]:
            left = depth - k
            history[to_move, cell] += left * left
            value = best[k]
            step = RETURN
        elif next_move[k] == n_moves[k]:
            value = best[k]
            step = RETURN
        else:
            step = NEXT


@njit(cache=True)
def search_root(
    cells, counts, hist, cell_lines, cell_degree, line_cells, n,
    side, depth, root_moves, weights, order_weights, history,
    deadline, stop, stats, pv, pv_len, scores,
):
    """Search every root move ``depth`` plies deep, in order, each with alpha at the best so
    far (:func:`engine.kernels.negamax.search_moves` over this player's :func:`negamax`); returns
    the index of the best (-1 if the first was not finished). ``scores[i]`` is the score of move
    i (an upper bound for moves that did not beat the best). No root move wins at once: the
    player plays a free win without searching."""
    return search_moves(
        cells, counts, hist, cell_lines, cell_degree, n, side, depth, root_moves,
        True, False, deadline, stop, stats, pv, pv_len, scores,
        negamax, (line_cells, weights, order_weights, history),
    )


class AlphaBetaPlayer(Player):
    """Iterative-deepening alpha-beta with a line-count evaluation and move ordering.

    With a time limit it deepens until the time runs out (or ``depth``, or a proved result)
    and plays the best move of the deepest search, or of the unfinished one if that found a
    better move; with only a depth it searches that deep. A proved win or loss (a mate score:
    the search is full-width, so it is a proof) is reported in ``Decision.forced``.
    """

    name = "alphabeta"
    summary = "iterative-deepening alpha-beta, line-count evaluation, move ordering"
    options = {
        "depth": Option(parse_int(1, 64), 64, "maximum depth"),
        "time": Option(parse_float(0.01, 3600.0), 1.0, "seconds a move if the limit has none"),
    }

    def _decide(self, board: Board, limit: Limit) -> Decision:
        started = limit.start()
        g = board.geometry
        t = tables_for(g)
        state = State.from_board(board)
        line_cells = np.array(g.lines, dtype=np.int32)
        weights = np.array(WEIGHTS[: t.n + 1], dtype=np.int64)
        order_weights = np.array(ORDER_WEIGHTS[: t.n + 1], dtype=np.int64)
        history = np.zeros((2, t.size), dtype=np.int64)
        moves = np.empty(t.size, dtype=np.int32)
        keys = np.empty(t.size, dtype=np.int64)
        if state.hist[state.side, t.n - 1] > 0:  # a free win
            completing_cells(state.side, state.cells, state.counts, line_cells, t.n, moves)
            move = int(moves[0])
            return Decision(move=move, score=WIN - 1, depth=1, pv=(move,),
                            forced=Forced("win", 1), elapsed=time.perf_counter() - started)
        count = _generate(state.side, state.cells, state.counts, state.hist, t.cell_lines,
                          t.cell_degree, line_cells, t.n, order_weights, history, moves, keys)
        order = [int(m) for m in moves[:count]]
        # seeded tie-break: equal static keys in a random order
        rank = {m: i for i, m in enumerate(order)}
        rng = self.rng(board)
        shuffled = order[:]
        rng.shuffle(shuffled)
        root = sorted(shuffled, key=lambda m: -int(keys[rank[m]]))
        seconds = limit.time
        if seconds is None and limit.depth is None:
            seconds = float(self.settings["time"])
        deadline = started + max(seconds - SAFETY, 0.001) if seconds else 0.0
        max_depth = min(limit.depth or 64, int(self.settings["depth"]),
                        board.empty.bit_count())
        depths = range(1, max_depth + 1) if deadline or limit.stop is not None else (max_depth,)
        stop = limit.stop if limit.stop is not None else np.zeros(1, dtype=np.int8)
        stats = np.zeros(STATS_SIZE, dtype=np.int64)
        pv = np.zeros((MAX_PLY, MAX_PLY), dtype=np.int32)
        pv_len = np.zeros(MAX_PLY, dtype=np.int32)
        move, score, reached = root[0], None, 0
        line: tuple[int, ...] = (move,)
        for depth in depths:
            root_moves = np.array(root, dtype=np.int32)
            scores = np.empty(len(root), dtype=np.int64)
            found = search_root(
                state.cells, state.counts, state.hist, t.cell_lines, t.cell_degree,
                line_cells, t.n, state.side, depth, root_moves, weights, order_weights,
                history, deadline, stop, stats, pv, pv_len, scores,
            )
            if found >= 0:  # after an abort: the best of the moves it finished, the old best first
                move, score = int(root_moves[found]), int(scores[found])
                line = tuple(int(c) for c in pv[0, : pv_len[0]])
            if stats[ABORTED]:
                break
            reached = depth
            if mate_plies(score or 0) is not None:
                break  # proved: deeper does not change it
            ranked = sorted(range(len(root)), key=lambda i: -int(scores[i]))
            root = [root[i] for i in ranked]
        plies = mate_plies(score) if score is not None and reached else None
        forced = Forced("win" if (score or 0) > 0 else "loss", plies) if plies else None
        interior = int(stats[INTERIOR])
        return Decision(
            move=move, score=score, depth=reached, nodes=int(stats[NODES]),
            evaluations=int(stats[EVALS]), pv=line, elapsed=time.perf_counter() - started,
            forced=forced, branching=int(stats[CHILDREN]) / interior if interior else None,
        )


def warm_up() -> float:
    """Compile (or load from cache) this kernel and the MCTS player's (the other sparring
    partner, whose win-cell scan it shares); returns the seconds it took."""
    started = time.perf_counter()
    AlphaBetaPlayer().decide(Board("3x3", [4]), Limit(depth=3))
    mcts_warm_up()
    return time.perf_counter() - started


__all__ = ["AlphaBetaPlayer", "warm_up"]
