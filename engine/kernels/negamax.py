"""The search kernel: negamax with optional alpha-beta, compiled by numba.

One kernel serves every searching player through its options, on a cell array with per-line
stone counts kept by push and pop; the open-line histogram the evaluators read is kept by each
search a ply at a time (``tally_child``). Its frame stacks and root loop serve the other searches
too. docs/engine.md, "The search kernel", says how and why."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit, objmode

from engine.rules.board import Board
from engine.rules.geometry import Geometry

WIN = 1_000_000_000
INF = 2_000_000_000
NOT_SEARCHED = -INF - 1
MAX_PLY = 130  # more than the cells of any board the kernel plays (5x5x5 has 125)
POLL_MASK = 2047

# slots of the stats array
NODES, EVALS, INTERIOR, CHILDREN, ABORTED = 0, 1, 2, 3, 4
STATS_SIZE = 5

# steps of the iterative search
ENTER, NEXT, RETURN = 0, 1, 2

# evaluator kinds
EVAL_LINEAR = 0  # sum over k of mine[k] * hist[root, k] - theirs[k] * hist[other, k]
EVAL_ABSOLUTE = 1  # +1/-1/0 by who has more of the longest open lines (Rubinoff)


@dataclass(frozen=True, eq=False)
class Tables:
    """The geometry as numpy arrays for the kernels; one per board, cached.

    The tables are unsigned: numba wraps a negative index around (a compare and a select on
    every access through a signed integer), and a value read from an unsigned array is known
    not to be negative, so every ``counts[side, cell_lines[cell, i]]`` goes without it.
    """

    n: int
    size: int
    n_lines: int
    line_cells: np.ndarray  # uint16[L, n]
    cell_lines: np.ndarray  # uint16[C, max degree], padded with PAD
    cell_degree: np.ndarray  # uint16[C]

    def empty_board(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cells, counts, hist)`` of a position, all zero, for it to fill."""
        return (np.zeros(self.size, dtype=np.uint8), np.zeros((2, self.n_lines), dtype=np.uint8),
                np.zeros((2, self.n + 1), dtype=np.int32))


PAD = np.iinfo(np.uint16).max  # cell_lines past a cell's degree


@cache
def tables_for(geometry: Geometry) -> Tables:
    degree = max(len(t) for t in geometry.lines_through)
    cell_lines = np.full((geometry.size, degree), PAD, dtype=np.uint16)
    for cell, through in enumerate(geometry.lines_through):
        cell_lines[cell, : len(through)] = through
    return Tables(
        n=geometry.n,
        size=geometry.size,
        n_lines=len(geometry.lines),
        line_cells=np.array(geometry.lines, dtype=np.uint16),
        cell_lines=cell_lines,
        cell_degree=np.array([len(t) for t in geometry.lines_through], dtype=np.uint16),
    )


@dataclass
class State:
    """A position in the kernel's form; searches change it and restore it."""

    cells: np.ndarray  # uint8[C]: 0 empty, 1 X, 2 O
    counts: np.ndarray  # uint8[2, L]: stones of each side on each line (unsigned: see Tables)
    hist: np.ndarray  # int32[2, n + 1]: open lines by stone count, per side
    side: int  # side to move

    @classmethod
    def from_board(cls, board: Board) -> State:
        t = tables_for(board.geometry)
        cells, counts, hist = t.empty_board()
        side = 0
        for cell in board.moves:
            push_counts(cell, side, cells, counts, t.cell_lines, t.cell_degree, t.n)
            side ^= 1
        histogram(counts, t.n, hist)
        return cls(cells, counts, hist, side)


@njit(cache=True)
def now() -> float:
    """Seconds on the monotonic clock that ``time.perf_counter`` reads."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True, inline="always")
def push_counts(cell, side, cells, counts, cell_lines, cell_degree, n):
    """Place a stone of ``side``; returns True when it completes a line.

    Only the cell and the line counts change: what an evaluator reads off them (the open-line
    histogram) is its own business, kept by :func:`tally` in the searches that evaluate, so
    making and unmaking a move costs what it costs a plain C program.
    """
    cells[cell] = side + 1
    won = False
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        mine = counts[side, line] + 1
        counts[side, line] = mine
        if mine == n:
            won = True
    return won


@njit(cache=True, inline="always")
def pop_counts(cell, side, cells, counts, cell_lines, cell_degree):
    """Take back a stone of ``side`` placed by ``push_counts``."""
    cells[cell] = 0
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        counts[side, line] -= 1


@njit(cache=True, inline="always")
def tally(cell, side, counts, hist, cell_lines, cell_degree, sign):
    """Move the open-line histogram ``hist`` by a stone of ``side`` at ``cell`` (``sign`` 1)
    or take that stone out of it (``sign`` -1); ``counts`` are read without that stone, so
    call it before :func:`push_counts` and after :func:`pop_counts`."""
    other = 1 - side
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        mine = counts[side, line]
        theirs = counts[other, line]
        if theirs == 0:
            hist[side, mine] -= sign
            hist[side, mine + 1] += sign
        if mine == 0:
            hist[other, theirs] -= sign


@njit(cache=True, inline="always")
def tally_child(cell, side, counts, hist, child, cell_lines, cell_degree):
    """Write to ``child`` the histogram ``hist`` becomes with a stone of ``side`` at ``cell``
    (``counts`` without it): a search keeps one histogram a ply and never undoes one."""
    for s in range(2):
        for k in range(hist.shape[1]):
            child[s, k] = hist[s, k]
    tally(cell, side, counts, child, cell_lines, cell_degree, 1)


@njit(cache=True, inline="always")
def empty_cells(cells, out):
    """Write the empty cells to ``out`` in cell order; returns how many there are."""
    count = 0
    for cell in range(cells.shape[0]):
        if cells[cell] == 0:
            out[count] = cell
            count += 1
    return count


@njit(cache=True)
def completing_cells(side, cells, counts, line_cells, n, out):
    """The distinct empty cells completing a line of ``side``, written to ``out``; their count."""
    other = 1 - side
    found = 0
    for line in range(counts.shape[1]):
        if counts[side, line] == n - 1 and counts[other, line] == 0:
            for i in range(n):
                cell = line_cells[line, i]
                if cells[cell] == 0:
                    seen = False
                    for j in range(found):
                        if out[j] == cell:
                            seen = True
                    if not seen:
                        out[found] = cell
                        found += 1
    return found


@njit(cache=True, inline="always")
def board_full(cells):
    """Whether no cell is empty (a draw, when no line was made)."""
    for cell in range(cells.shape[0]):  # noqa: SIM110 (numba: no all() over a generator)
        if cells[cell] == 0:
            return False
    return True


@njit(cache=True)
def histogram(counts, n, hist):
    """Fill ``hist[s, k]`` with the lines holding k stones of side s and none of the other."""
    hist[:, :] = 0
    for line in range(counts.shape[1]):
        x = counts[0, line]
        o = counts[1, line]
        if o == 0:
            hist[0, x] += 1
        if x == 0:
            hist[1, o] += 1


@njit(cache=True, inline="always")
def take_pv(pv, pv_len, here, cell):
    """Make ``cell`` then the child's principal variation the line of the node at ``here``
    (row ``here`` of ``pv`` holds the line from that node, up to ``pv_len[here]``)."""
    pv[here, here] = cell
    for i in range(here + 1, pv_len[here + 1]):
        pv[here, i] = pv[here + 1, i]
    pv_len[here] = max(pv_len[here + 1], here + 1)


@njit(cache=True)
def evaluate(hist, root, kind, w_mine, w_theirs, n):
    """The static value of a position for the root player (not the side to move)."""
    other = 1 - root
    if kind == EVAL_ABSOLUTE:
        for k in range(n - 1, 0, -1):
            if hist[root, k] > hist[other, k]:
                return w_mine[k]
            if hist[root, k] < hist[other, k]:
                return -w_theirs[k]
        return 0
    total = 0
    for k in range(n):
        total += w_mine[k] * hist[root, k] - w_theirs[k] * hist[other, k]
    return total


@njit(cache=True)
def stopped(stop, deadline):
    """Whether a search is to stop: its stop flag is raised or its deadline (a :func:`now`
    value; 0: none) has passed."""
    return stop[0] != 0 or (deadline > 0.0 and now() > deadline)


@njit(cache=True)
def abort_if_stopped(stats, stop, deadline):
    """Set the stats' ABORTED slot when the search is to stop (see :func:`stopped`)."""
    if stopped(stop, deadline):
        stats[ABORTED] = 1


@njit(cache=True, inline="always")
def frame_stacks(frames, size, alpha, beta):
    """The explicit stacks of an iterative search, one entry a frame: its moves, how many,
    the next to try, its two bounds ``lo`` and ``hi`` (frame 0's are ``alpha`` and ``beta``:
    alpha-beta's window, df-pn's proof and disproof thresholds) and the best value found.
    All zeros but frame 0's bounds, so that no search can read memory left from before."""
    moves = np.zeros((frames, size), dtype=np.int32)
    n_moves = np.zeros(frames, dtype=np.int32)
    next_move = np.zeros(frames, dtype=np.int32)
    lo = np.zeros(frames, dtype=np.int64)
    hi = np.zeros(frames, dtype=np.int64)
    best = np.zeros(frames, dtype=np.int64)
    lo[0] = alpha
    hi[0] = beta
    return moves, n_moves, next_move, lo, hi, best


@njit(cache=True, inline="always")
def frame_hists(hist, frames):
    """One open-line histogram a frame, frame 0's a copy of ``hist``."""
    hists = np.zeros((frames, 2, hist.shape[1]), dtype=np.int32)
    hists[0] = hist
    return hists


@njit(cache=True)
def negamax(
    cells, counts, hist, cell_lines, cell_degree, n,
    side, depth, alpha, beta, ply,
    deadline, stop, stats, pv, pv_len,
    alphabeta, root, kind, w_mine, w_theirs,
):
    """The value of the position for ``side`` searched ``depth`` plies deep.

    Iterative, with one frame per ply on explicit stacks (:func:`frame_stacks`): numba's
    cache cannot be trusted with recursive functions (numba issues 6061 and 6713), and
    per-ply move lists are what move ordering needs anyway. Frame k is the node at ply
    ``ply + k``; ``hist`` is the histogram of frame 0, and frame k's is ``hists[k]``, made
    from its parent's by :func:`tally_child`. A leaf's move is never made: its histogram is
    all a leaf reads, and it says whether the move won.

    The NEXT and RETURN steps are written here in full, as the alphabeta player writes its
    own: moved into shared ``@njit`` helpers (inlined or not), with even the order of the
    abort check and the cutoff test changed, LLVM made this loop 2-4x slower.
    The arguments after ``pv_len`` are this search's own (:func:`search_moves` passes them).
    """
    size = cells.shape[0]
    hists = frame_hists(hist, depth + 1)
    moves, n_moves, next_move, lo, hi, best = frame_stacks(depth + 1, size, alpha, beta)
    k = 0
    to_move = side
    step = ENTER
    value = 0  # the value of the frame just finished, from its own side's point of view
    while True:
        if step == ENTER:
            here = ply + k
            stats[NODES] += 1
            if (stats[NODES] & POLL_MASK) == 0:
                abort_if_stopped(stats, stop, deadline)
            pv_len[here] = here
            if stats[ABORTED] != 0:
                return 0
            step = NEXT
            if k == depth:
                stats[EVALS] += 1
                value = evaluate(hists[k], root, kind, w_mine, w_theirs, n)
                if to_move != root:
                    value = -value
                step = RETURN
            else:
                count = empty_cells(cells, moves[k])
                n_moves[k] = count
                next_move[k] = 0
                best[k] = -INF
                if count == 0:
                    value = 0  # a full board: a draw
                    step = RETURN
                else:
                    stats[INTERIOR] += 1
        if step == NEXT:
            cell = moves[k, next_move[k]]
            next_move[k] += 1
            stats[CHILDREN] += 1
            tally_child(cell, to_move, counts, hists[k], hists[k + 1], cell_lines, cell_degree)
            if k + 1 == depth:
                won = hists[k + 1, to_move, n] > hists[k, to_move, n]
            else:
                won = push_counts(cell, to_move, cells, counts, cell_lines, cell_degree, n)
            k += 1
            to_move = 1 - to_move
            if won:
                stats[NODES] += 1
                pv_len[ply + k] = ply + k
                value = -(WIN - (ply + k))  # the side now to move has lost
                step = RETURN
            else:
                lo[k] = -hi[k - 1]
                hi[k] = -lo[k - 1]
                step = ENTER
                continue
        # step == RETURN: frame k has finished with ``value``; hand it to its parent
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
        cutoff = False
        if child > best[k]:
            best[k] = child
            take_pv(pv, pv_len, here, cell)
            if alphabeta:
                if child > lo[k]:
                    lo[k] = child
                cutoff = lo[k] >= hi[k]
        if cutoff or next_move[k] == n_moves[k]:
            value = best[k]
            step = RETURN
        else:
            step = NEXT


@njit(cache=True, inline="always")
def search_moves(
    cells, counts, hist, cell_lines, cell_degree, n, side, depth, root_moves, prune, keep_ties,
    deadline, stop, stats, pv, pv_len, scores, child_search, own,
):
    """Score every root move ``depth`` plies deep; returns the index of the best.

    Each move's position is searched by ``child_search``, a negamax taking this kernel's
    arguments and then ``own``, its own (the kernel's :func:`negamax` and the alphabeta
    player's). With ``prune`` each move is searched with alpha at the best so far, or with
    ``keep_ties`` one below it, so a move that ties the best gets its exact score and the
    caller can choose among the ties. ``scores[i]`` is NOT_SEARCHED for moves not reached
    before an abort; ``pv[0]`` holds the principal variation of the best move. Inlined into
    each caller, where ``child_search`` is fixed: numba's cache keeps no function that takes
    another as an argument.
    """
    best = -INF
    best_index = -1
    child_hist = np.empty_like(hist)
    scores[:] = NOT_SEARCHED
    stats[INTERIOR] += 1
    for i in range(root_moves.shape[0]):
        cell = root_moves[i]
        stats[CHILDREN] += 1
        tally_child(cell, side, counts, hist, child_hist, cell_lines, cell_degree)
        if push_counts(cell, side, cells, counts, cell_lines, cell_degree, n):
            stats[NODES] += 1
            pv_len[1] = 1
            value = WIN - 1
        else:
            alpha = -INF
            if prune and best > -INF:
                alpha = best - 1 if keep_ties else best
            value = -child_search(cells, counts, child_hist, cell_lines, cell_degree, n,
                                  1 - side, depth - 1, -INF, -alpha, 1,
                                  deadline, stop, stats, pv, pv_len, *own)
        pop_counts(cell, side, cells, counts, cell_lines, cell_degree)
        if stats[ABORTED] != 0:
            break
        scores[i] = value
        if value > best:
            best = value
            best_index = i
            take_pv(pv, pv_len, 0, cell)
    return best_index


@njit(cache=True)
def search_root(
    cells, counts, hist, cell_lines, cell_degree, n,
    side, depth, alphabeta, root_moves,
    kind, w_mine, w_theirs,
    deadline, stop, stats, pv, pv_len, scores,
):
    """:func:`search_moves` over :func:`negamax`, ties kept (with alpha-beta)."""
    return search_moves(
        cells, counts, hist, cell_lines, cell_degree, n, side, depth, root_moves,
        alphabeta, True, deadline, stop, stats, pv, pv_len, scores,
        negamax, (alphabeta, side, kind, w_mine, w_theirs),
    )


@dataclass(frozen=True)
class RootResult:
    """What one fixed-depth search of the root found."""

    moves: np.ndarray  # the root moves, in the order searched
    scores: np.ndarray  # their scores (NOT_SEARCHED where an abort came first)
    best: int  # index of the best move, -1 if none was searched
    pv: tuple[int, ...]
    nodes: int
    evaluations: int
    interior: int
    children: int
    aborted: bool


def search(
    board: Board,
    depth: int,
    *,
    alphabeta: bool = True,
    kind: int = EVAL_LINEAR,
    w_mine: np.ndarray,
    w_theirs: np.ndarray,
    deadline: float = 0.0,
    stop: np.ndarray | None = None,
    root_moves: list[int] | None = None,
) -> RootResult:
    """Search ``board`` ``depth`` plies deep for the side to move (see :func:`search_root`)."""
    t = tables_for(board.geometry)
    state = State.from_board(board)
    moves = np.array(board.legal_moves if root_moves is None else root_moves, dtype=np.int32)
    stats = np.zeros(STATS_SIZE, dtype=np.int64)
    pv = np.zeros((MAX_PLY, MAX_PLY), dtype=np.int32)
    pv_len = np.zeros(MAX_PLY, dtype=np.int32)
    scores = np.zeros(len(moves), dtype=np.int64)
    if stop is None:
        stop = np.zeros(1, dtype=np.int8)
    best = search_root(
        state.cells, state.counts, state.hist, t.cell_lines, t.cell_degree, t.n,
        state.side, depth, alphabeta, moves,
        kind, w_mine.astype(np.int64), w_theirs.astype(np.int64),
        deadline, stop, stats, pv, pv_len, scores,
    )
    line = tuple(int(c) for c in pv[0, : pv_len[0]]) if best >= 0 else ()
    return RootResult(
        moves=moves,
        scores=scores,
        best=int(best),
        pv=line,
        nodes=int(stats[NODES]),
        evaluations=int(stats[EVALS]),
        interior=int(stats[INTERIOR]),
        children=int(stats[CHILDREN]),
        aborted=bool(stats[ABORTED]),
    )


def mate_plies(score: int) -> int | None:
    """Plies to the end for a proved win (positive score) or loss (negative); else None."""
    if abs(score) >= WIN - MAX_PLY and abs(score) <= WIN:
        return WIN - abs(score)
    return None


def warm_up() -> float:
    """Compile (or load from cache) every kernel function; returns the seconds it took."""
    started = time.perf_counter()
    board = Board("3x3", [4])
    weights = np.ones(4, dtype=np.int64)
    search(board, 2, w_mine=weights, w_theirs=weights)
    search(board, 2, alphabeta=False, kind=EVAL_ABSOLUTE, w_mine=weights, w_theirs=weights)
    return time.perf_counter() - started
