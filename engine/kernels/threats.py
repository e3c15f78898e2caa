"""Threat-space search: forced wins by continuous threats, compiled by numba.

A *three* of side s is a line holding n-1 stones of s and none of the other side; its empty
cell is a *win cell* of s. A continuous-threat win for the attacker is a sequence of moves,
each making a three whose win cell the defender must take at once, that ends in a double
threat (two win cells: the defender blocks one, the attacker completes the other). Every
defender move in it is forced, so a sequence found is a proof: the defender's only other
replies lose on the spot. When a forced block itself makes a three for the defender, the
attacker's next move must take that win cell, and the sequence goes on only if that block is
itself a threat; two defender win cells end the line of attack.

The position carries, beside the kernel's cells, per-line counts and open-line histogram,
``cellk[s, k, c]``: how many lines through cell c are free of the other side and hold exactly
k stones of s. Win cells, threat moves and the move-ordering features all read it in O(1).
The search is iterative (numba's cache is not safe with recursive functions) and keeps a
table of positions proved not to be won within a given number of threats.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit

from engine.kernels.negamax import now, tables_for
from engine.rules.board import Board
from engine.rules.geometry import Cell, Geometry

TSS_TABLE_BITS = 18
MAX_THREATS = 32  # attacker moves in one sequence: more than half of any board's cells

_ENTER, _NEXT, _UP = 0, 1, 2
_FAIL, _KNOWN, _ABORT = -1, -2, -3  # frame outcomes other than a win (plies > 0)


class ThreatScratch(NamedTuple):
    """Per-frame arrays of the threat search, reused between calls."""

    cand: np.ndarray  # int32[F, C]: candidate threat moves per frame
    n_cand: np.ndarray  # int32[F]
    nxt: np.ndarray  # int32[F]: the next candidate to try
    keys: np.ndarray  # uint64[F]: the position's key at each frame
    played: np.ndarray  # int32[F, 2]: the threat and its forced reply


@cache
def zobrist(size: int) -> np.ndarray:
    """Random 64-bit keys per (side, cell); row 2 salts a key by the side it is searched for."""
    rng = np.random.default_rng(20260 + size)
    return rng.integers(1, 2**63 - 1, size=(3, size), dtype=np.int64).astype(np.uint64)


@dataclass
class Position:
    """A position in the threat/master kernels' form; searches change it and restore it."""

    cells: np.ndarray  # uint8[C]: 0 empty, 1 X, 2 O
    counts: np.ndarray  # uint8[2, L] (unsigned, as engine.kernels.negamax.Tables says why)
    hist: np.ndarray  # int32[2, n + 1]
    cellk: np.ndarray  # int8[2, n, C]
    key: int  # Zobrist key (uint64 as int)
    side: int

    @classmethod
    def from_board(cls, board: Board) -> Position:
        t = tables_for(board.geometry)
        cells, counts, hist = t.empty_board()
        hist[0, 0] = hist[1, 0] = t.n_lines
        cellk = np.zeros((2, t.n, t.size), dtype=np.int8)
        cellk[0, 0] = cellk[1, 0] = t.cell_degree
        moves = np.array(board.moves, dtype=np.int64)
        key = _play(moves, cells, counts, hist, cellk, t.line_cells, t.cell_lines,
                    t.cell_degree, t.n, zobrist(t.size))
        return cls(cells, counts, hist, cellk, int(key), len(moves) & 1)


@njit(cache=True, inline="always")
def push(cell, side, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n):
    """Place a stone of ``side``; returns True when it completes a line."""
    cells[cell] = side + 1
    other = 1 - side
    won = False
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        mine = counts[side, line]
        theirs = counts[other, line]
        if theirs == 0:
            hist[side, mine] -= 1
            hist[side, mine + 1] += 1
            if mine + 1 == n:
                won = True
                for j in range(n):
                    cellk[side, mine, line_cells[line, j]] -= 1
            else:
                for j in range(n):
                    c = line_cells[line, j]
                    cellk[side, mine, c] -= 1
                    cellk[side, mine + 1, c] += 1
        if mine == 0:
            hist[other, theirs] -= 1
            for j in range(n):
                cellk[other, theirs, line_cells[line, j]] -= 1
        counts[side, line] = mine + 1
    return won


@njit(cache=True)
def _play(moves, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n, zob):
    """Push ``moves`` (X first) in one call from Python; returns their Zobrist key (the
    proof makes a position for each of its threat searches: a call a move cost it 9%)."""
    key = np.uint64(0)
    side = 0
    for i in range(moves.shape[0]):
        push(moves[i], side, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
        key ^= zob[side, moves[i]]
        side ^= 1
    return key


@njit(cache=True, inline="always")
def pop(cell, side, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n):
    """Take back a stone of ``side`` placed by :func:`push`."""
    cells[cell] = 0
    other = 1 - side
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        mine = counts[side, line] - 1
        theirs = counts[other, line]
        counts[side, line] = mine
        if theirs == 0:
            hist[side, mine + 1] -= 1
            hist[side, mine] += 1
            if mine + 1 == n:
                for j in range(n):
                    cellk[side, mine, line_cells[line, j]] += 1
            else:
                for j in range(n):
                    c = line_cells[line, j]
                    cellk[side, mine + 1, c] -= 1
                    cellk[side, mine, c] += 1
        if mine == 0:
            hist[other, theirs] += 1
            for j in range(n):
                cellk[other, theirs, line_cells[line, j]] += 1


@njit(cache=True, inline="always")
def win_cells(side, cells, cellk, n):
    """``(count, first)``: how many empty cells complete a line for ``side``, and the first."""
    count = 0
    first = -1
    for c in range(cells.shape[0]):
        if cells[c] == 0 and cellk[side, n - 1, c] > 0:
            if count == 0:
                first = c
            count += 1
    return count, first


@njit(cache=True)
def both_wins(side, cells, cellk, n):
    """:func:`win_cells` of ``side`` and of the other side, in one call from Python:
    ``(count, first, their count, their first)``."""
    mine, first = win_cells(side, cells, cellk, n)
    theirs, block = win_cells(1 - side, cells, cellk, n)
    return mine, first, theirs, block


@njit(cache=True, inline="always")
def completion(cell, side, cells, counts, line_cells, cell_lines, cell_degree, n):
    """The win cell of a three of ``side`` through ``cell`` (just played), or -1."""
    other = 1 - side
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        if counts[side, line] == n - 1 and counts[other, line] == 0:
            for j in range(n):
                c = line_cells[line, j]
                if cells[c] == 0:
                    return c
    return -1


@njit(cache=True)
def threat_search(
    cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n,
    attacker, key, zob, max_threats, budget, tt_keys, tt_depth, path, stats, scratch,
    deadline=0.0,
):
    """Plies to a forced win of ``attacker`` (to move) by continuous threats, or 0.

    ``path`` receives the moves of the win (attacker, forced reply, ..., winning move).
    ``budget`` caps the nodes visited (0: no cap); ``stats[0]`` counts them. ``scratch`` holds
    the per-frame arrays (see :func:`make_scratch`), allocated once by the caller. A search
    still running at ``deadline`` (a :func:`engine.kernels.negamax.now` value; 0: none) gives up.
    ``tt_keys`` and ``tt_depth`` remember positions with no win within that many threats; the
    table may be shared between calls and between both attackers (keys are salted by the
    attacker).
    """
    size = cells.shape[0]
    defender = 1 - attacker
    cand = scratch.cand
    n_cand = scratch.n_cand
    nxt = scratch.nxt
    keys = scratch.keys
    played = scratch.played
    mask = tt_keys.shape[0] - 1
    salt = zob[2, attacker]
    nodes = 0
    k = 0
    keys[0] = key
    mode = _ENTER
    out = _FAIL
    while True:
        if mode == _ENTER:
            nodes += 1
            stats[0] += 1
            mode = _UP
            remaining = max_threats - k
            salted = keys[k] ^ salt
            slot = salted & mask
            if (budget > 0 and nodes > budget) or (
                deadline > 0.0 and (nodes & 1023) == 0 and now() > deadline
            ):
                out = _ABORT
            elif hist[attacker, n - 1] > 0:
                _, c = win_cells(attacker, cells, cellk, n)
                path[2 * k] = c
                out = 2 * k + 1
            elif remaining == 0:
                out = _FAIL  # no win with no more threats
            elif tt_keys[slot] == salted and tt_depth[slot] >= remaining:
                out = _KNOWN
            else:
                d_count, d_first = win_cells(defender, cells, cellk, n)
                count = 0
                if d_count == 1:
                    if cellk[attacker, n - 2, d_first] > 0:
                        cand[k, 0] = d_first
                        count = 1
                elif d_count == 0:
                    for c in range(size):
                        if cells[c] == 0 and cellk[attacker, n - 2, c] > 0:
                            cand[k, count] = c
                            count += 1
                n_cand[k] = count
                nxt[k] = 0
                out = _FAIL
                for i in range(count):
                    c = cand[k, i]
                    if cellk[attacker, n - 2, c] >= 2:
                        out = _double_threat(k, c, attacker, cells, counts, hist, cellk,
                                             line_cells, cell_lines, cell_degree, n, path)
                        break
                if out == _FAIL and count > 0:
                    if count > 1:
                        _order(cand[k], count, attacker, cellk, n)
                    mode = _NEXT
        if mode == _NEXT:
            if nxt[k] >= n_cand[k]:
                out = _FAIL
                mode = _UP
            else:
                c = cand[k, nxt[k]]
                nxt[k] += 1
                push(c, attacker, cells, counts, hist, cellk, line_cells, cell_lines,
                     cell_degree, n)
                w = completion(c, attacker, cells, counts, line_cells, cell_lines,
                               cell_degree, n)
                push(w, defender, cells, counts, hist, cellk, line_cells, cell_lines,
                     cell_degree, n)
                played[k, 0] = c
                played[k, 1] = w
                path[2 * k] = c
                path[2 * k + 1] = w
                keys[k + 1] = keys[k] ^ zob[attacker, c] ^ zob[defender, w]
                k += 1
                mode = _ENTER
                continue
        # mode == _UP: frame k is finished with ``out``
        if out == _FAIL:
            salted = keys[k] ^ salt
            slot = salted & mask
            tt_keys[slot] = salted
            tt_depth[slot] = max_threats - k
        if k == 0:
            return out if out > 0 else 0
        k -= 1
        pop(played[k, 1], defender, cells, counts, hist, cellk, line_cells, cell_lines,
            cell_degree, n)
        pop(played[k, 0], attacker, cells, counts, hist, cellk, line_cells, cell_lines,
            cell_degree, n)
        if out == _FAIL or out == _KNOWN:  # noqa: SIM109 (numba: no tuple membership)
            mode = _NEXT  # that threat failed: try the frame's next one


@njit(cache=True, inline="always")
def _double_threat(k, c, attacker, cells, counts, hist, cellk, line_cells, cell_lines,
                   cell_degree, n, path):
    """Record the win by the double threat at ``c`` in ``path``; returns its plies."""
    push(c, attacker, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
    first = -1
    second = -1
    for x in range(cells.shape[0]):
        if cells[x] == 0 and cellk[attacker, n - 1, x] > 0:
            if first < 0:
                first = x
            elif second < 0:
                second = x
    pop(c, attacker, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
    path[2 * k] = c
    path[2 * k + 1] = first
    path[2 * k + 2] = second
    return 2 * k + 3


@njit(cache=True, inline="always")
def sort_by(moves, order, count):
    """Insertion sort of ``moves[:count]`` by ``order`` descending (``order`` moves along)."""
    for i in range(1, count):
        m = moves[i]
        s = order[i]
        j = i - 1
        while j >= 0 and order[j] < s:
            moves[j + 1] = moves[j]
            order[j + 1] = order[j]
            j -= 1
        moves[j + 1] = m
        order[j + 1] = s


@njit(cache=True, inline="always")
def _order(moves, count, side, cellk, n):
    """Sort threat moves: those that open most new lines of n-2 (future threats) first."""
    scores = np.empty(count, dtype=np.int32)
    for i in range(count):
        c = moves[i]
        s = 0
        if n >= 3:
            s = 4 * cellk[side, n - 3, c]
        s += 16 * cellk[side, n - 2, c] + cellk[1 - side, n - 2, c]
        scores[i] = s
    sort_by(moves, scores, count)


def make_scratch(size: int) -> ThreatScratch:
    """Frame arrays for :func:`threat_search` on a board of ``size`` cells."""
    frames = MAX_THREATS + 1
    return ThreatScratch(
        np.empty((frames, size), dtype=np.int32),
        np.zeros(frames, dtype=np.int32),
        np.zeros(frames, dtype=np.int32),
        np.zeros(frames, dtype=np.uint64),
        np.zeros((frames, 2), dtype=np.int32),
    )


class ThreatTable:
    """The table of positions with no threat win, kept between searches."""

    def __init__(self, bits: int = TSS_TABLE_BITS) -> None:
        self.keys = np.zeros(1 << bits, dtype=np.uint64)
        self.depth = np.zeros(1 << bits, dtype=np.int8)

    def clear(self) -> None:
        self.keys[:] = 0
        self.depth[:] = 0


def threat_win(
    board: Board,
    side: int | None = None,
    *,
    max_threats: int = MAX_THREATS,
    budget: int = 0,
    table: ThreatTable | None = None,
) -> tuple[Cell, ...] | None:
    """A forced win of ``side`` (the side to move by default) by continuous threats.

    The moves of the win from ``side``'s first move to the completed line, or None. For the
    side not to move it answers "would win if it were to move" (a threat to be met).
    """
    if board.outcome() is not None:
        return None
    g: Geometry = board.geometry
    t = tables_for(g)
    pos = Position.from_board(board)
    attacker = pos.side if side is None else side
    table = table or ThreatTable(14)
    path = np.full(2 * MAX_THREATS + 4, -1, dtype=np.int32)
    stats = np.zeros(1, dtype=np.int64)
    plies = threat_search(
        pos.cells, pos.counts, pos.hist, pos.cellk, t.line_cells, t.cell_lines,
        t.cell_degree, t.n, attacker, np.uint64(pos.key), zobrist(t.size),
        min(max_threats, MAX_THREATS), budget, table.keys, table.depth, path, stats,
        make_scratch(t.size),
    )
    if plies <= 0:
        return None
    return tuple(int(c) for c in path[:plies])
