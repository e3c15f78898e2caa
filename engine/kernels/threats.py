"""Threat-space search: forced wins by continuous threats, compiled by numba.

A *three* of side s is a line holding n-1 stones of s and none of the other side; its empty
cell is a *win cell* of s. A continuous-threat win for the attacker is a sequence of moves,
each making a three whose win cell the defender must take at once, that ends in a double
threat (two win cells: the defender blocks one, the attacker completes the other). Every
defender move in it is forced, so a sequence found is a proof: the defender's only other
replies lose on the spot. When a forced block itself makes a three for the defender, the
attacker's next move must take that win cell, and the sequence goes on only if that block is
itself a threat; two defender win cells end the line of attack.

The position is the cells, a byte a line (its X stones in the low four bits, its O stones in
the high four: the line's *code*) and, per side, one 64-bit word of counters (``sums``): 10-bit
fields holding how many open lines (none of the other side's stones) hold exactly k stones of
that side, for the five k from n-5 to n-1, and how many open lines that side has at all.
Push and pop add a constant to the code of each line through the cell and a delta, read from
a table by the line's new code, to each side's word: no more work a line than a plain C
perft's count, and no branch. What the searches ask of the lines through a cell (``cellk``
before: how many lines through c are open for s and hold k of its stones) is counted when it
is read, from the 4-7 codes through the cell, or for every cell at once in one pass over the
lines. The search is iterative (numba's cache is not safe with recursive functions) and keeps
a table of positions proved not to be won within a given number of threats.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, overload

from engine.kernels.negamax import now, tables_for
from engine.rules.board import Board
from engine.rules.geometry import Cell, Geometry

TSS_TABLE_BITS = 18
MAX_THREATS = 32  # attacker moves in one sequence: more than half of any board's cells

O_UNIT = 16  # a line's code: X stones + O_UNIT * O stones (n is at most 9)
FIELD = 10  # bits of a counter in ``sums`` (more than the 301 lines of 9x9x9)
FIELD_MASK = (1 << FIELD) - 1
FIELDS_BELOW = 5  # counters of open lines by stones: k = n-5 .. n-1
OPEN_FIELD = 5  # the counter of all open lines

_ENTER, _NEXT, _UP = 0, 1, 2
# The options of the searches called once a node or more (the threat search from df-pn and the
# master, df-pn's replay): compiled without numba's runtime (``_nrt``), as they allocate
# nothing. With it every call counted a reference up and down, atomically, for each of the ~25
# arrays it is handed (each field of the scratch tuple too): ~130 ns a call, 15% of the proof's
# costliest df-pn call. A function compiled so must not allocate an array.
NO_RUNTIME: dict[str, Any] = {"cache": True, "_nrt": False}
_DEPTH_BITS = np.uint64(63)  # a threat table entry's low bits: threats searched (MAX_THREATS)
_KEY_BITS = ~_DEPTH_BITS
_FAIL, _KNOWN, _ABORT = -1, -2, -3  # frame outcomes other than a win (plies > 0)


class ThreatScratch(NamedTuple):
    """Per-frame arrays of the threat search, reused between calls."""

    cand: np.ndarray  # int32[F, C]: candidate threat moves per frame
    n_cand: np.ndarray  # int32[F]
    nxt: np.ndarray  # int32[F]: the next candidate to try
    keys: np.ndarray  # uint64[F]: the position's key at each frame
    played: np.ndarray  # int32[F, 2]: the threat and its forced reply
    marks: np.ndarray  # int32[C]: a frame's lines of n-2 by cell
    scores: np.ndarray  # int64[C]: a frame's move order
    order_weights: np.ndarray  # int64[2, 256]: by attacker and line code, see _order
    replies: np.ndarray  # int32[F, C]: a frame's forced reply to each threat, by its cell


def prefetch(array: np.ndarray, index: int) -> None:
    """Ask the processor to bring the cache line of ``array[index]`` in, without waiting for
    it (LLVM's ``llvm.prefetch``; no effect on any result). The searches' tables are 8-32 MB:
    a probe is a miss to memory, which a prefetch issued some work earlier overlaps. In plain
    Python (``NUMBA_DISABLE_JIT=1``, the server's quick path) it does nothing."""


@intrinsic
def _llvm_prefetch(typingctx, array, index):
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        data = context.make_array(array_type)(context, builder, args[0]).data
        at = builder.gep(data, [context.cast(builder, args[1], index_type, types.intp)])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0")
        # a read, kept in every level of cache, of data
        builder.call(fn, [builder.bitcast(at, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(array, index), codegen


@overload(prefetch, inline="always")
def _prefetch_compiled(array, index):
    if isinstance(array, types.Array) and isinstance(index, types.Integer):
        def impl(array, index):
            _llvm_prefetch(array, index)
        return impl
    return None


def lowest_bit(bits: Any) -> int:
    """The index of the lowest set bit of ``bits`` (not 0): LLVM's count of trailing zeros
    when compiled, an int's bits in plain Python (``NUMBA_DISABLE_JIT=1``)."""
    value = int(bits)
    return (value & -value).bit_length() - 1


@overload(lowest_bit)
def _lowest_bit_compiled(bits):
    if isinstance(bits, types.Integer):
        def impl(bits):
            return trailing_zeros(bits)
        return impl
    return None


@cache
def zobrist(size: int) -> np.ndarray:
    """Random 64-bit keys per (side, cell); row 2 salts a key by the side it is searched for."""
    rng = np.random.default_rng(20260 + size)
    return rng.integers(1, 2**63 - 1, size=(3, size), dtype=np.int64).astype(np.uint64)


def _line_sums(code: int, n: int) -> tuple[int, int]:
    """What a line of ``code`` adds to each side's word of counters."""
    stones = (code % O_UNIT, code // O_UNIT)
    out = [0, 0]
    for side in (0, 1):
        mine, theirs = stones[side], stones[1 - side]
        if theirs == 0 and mine < n:
            field = mine - (n - FIELDS_BELOW)
            if field >= 0:
                out[side] += 1 << (FIELD * field)
            out[side] += 1 << (FIELD * OPEN_FIELD)
    return out[0], out[1]


@cache
def sum_deltas(n: int) -> np.ndarray:
    """``int64[2, 256, 2]``: for a stone of side m that makes a line's code v, what each
    side's word of counters gains (``[m, v, side]``); pop takes the same away."""
    out = np.zeros((2, 256, 2), dtype=np.int64)
    for mover in (0, 1):
        unit = O_UNIT if mover else 1
        for code in range(256):
            x, o = code % O_UNIT, code // O_UNIT
            if x > n or o > n or (o if mover else x) == 0:
                continue
            after = _line_sums(code, n)
            before = _line_sums(code - unit, n)
            for side in (0, 1):
                out[mover, code, side] = after[side] - before[side]
    return out


def empty_sums(n: int, n_lines: int) -> np.ndarray:
    """Each side's word of counters on the empty board."""
    x, o = _line_sums(0, n)
    return np.array([x * n_lines, o * n_lines], dtype=np.int64)


@dataclass
class Position:
    """A position in the threat/master kernels' form; searches change it and restore it."""

    cells: np.ndarray  # uint8[C]: 0 empty, 1 X, 2 O
    lines: np.ndarray  # uint8[L]: each line's code (X stones + O_UNIT * O stones)
    sums: np.ndarray  # int64[2]: each side's counters of open lines (see the module)
    deltas: np.ndarray  # int64[2, 256, 2]: :func:`sum_deltas` of the board's n
    key: int  # Zobrist key (uint64 as int)
    side: int

    @classmethod
    def from_board(cls, board: Board) -> Position:
        t = tables_for(board.geometry)
        cells = np.zeros(t.size, dtype=np.uint8)
        lines = np.zeros(t.n_lines, dtype=np.uint8)
        sums = empty_sums(t.n, t.n_lines)
        deltas = sum_deltas(t.n)
        moves = np.array(board.moves, dtype=np.int64)
        key = _play(moves, cells, lines, sums, deltas, t.line_cells, t.cell_lines,
                    t.cell_degree, t.n, zobrist(t.size))
        return cls(cells, lines, sums, deltas, int(key), len(moves) & 1)


@njit(cache=True, inline="always")
def push(cell, side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n):
    """Place a stone of ``side``; returns True when it completes a line."""
    cells[cell] = side + 1
    unit = 1 + (O_UNIT - 1) * side
    full = n * unit
    x = sums[0]
    o = sums[1]
    won = False
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        code = lines[line] + unit
        lines[line] = code
        x += deltas[side, code, 0]
        o += deltas[side, code, 1]
        if code == full:
            won = True
    sums[0] = x
    sums[1] = o
    return won


@njit(cache=True)
def _play(moves, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n, zob):
    """Push ``moves`` (X first) in one call from Python; returns their Zobrist key (the
    proof makes a position for each of its threat searches: a call a move cost it 9%)."""
    key = np.uint64(0)
    side = 0
    for i in range(moves.shape[0]):
        push(moves[i], side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        key ^= zob[side, moves[i]]
        side ^= 1
    return key


@njit(cache=True, inline="always")
def pop(cell, side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n):
    """Take back a stone of ``side`` placed by :func:`push`."""
    cells[cell] = 0
    unit = 1 + (O_UNIT - 1) * side
    x = sums[0]
    o = sums[1]
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        code = lines[line]
        x -= deltas[side, code, 0]
        o -= deltas[side, code, 1]
        lines[line] = code - unit
    sums[0] = x
    sums[1] = o


@njit(cache=True, inline="always")
def open_lines(side, k, sums, n):
    """The open lines of ``side`` holding exactly ``k`` of its stones (n-5 <= k < n): what
    the open-line histogram held at ``[side, k]``."""
    return (sums[side] >> (FIELD * (k - n + FIELDS_BELOW))) & FIELD_MASK


@njit(cache=True, inline="always")
def all_open_lines(side, sums):
    """The lines with none of the other side's stones that ``side`` has not completed."""
    return (sums[side] >> (FIELD * OPEN_FIELD)) & FIELD_MASK


@njit(cache=True, inline="always")
def code_of(side, k):
    """The code of an open line of ``side`` holding ``k`` of its stones."""
    return k * (1 + (O_UNIT - 1) * side)


@njit(cache=True, inline="always")
def through(cell, code, lines, cell_lines, cell_degree):
    """How many lines through ``cell`` have ``code`` (``cellk[side, k, cell]`` before, with
    the code of :func:`code_of`)."""
    count = 0
    for i in range(cell_degree[cell]):
        if lines[cell_lines[cell, i]] == code:
            count += 1
    return count


@njit(cache=True, inline="always")
def _empty_of(line, cells, line_cells, n):
    """The first empty cell of ``line``, or -1."""
    for j in range(n):
        c = line_cells[line, j]
        if cells[c] == 0:
            return np.int64(c)
    return np.int64(-1)


@njit(cache=True, inline="always")
def _seen_before(cell, line, code, lines, cell_lines, cell_degree):
    """Whether a line before ``line`` through ``cell`` has ``code`` (so that the win cell
    ``cell`` was counted already)."""
    for i in range(cell_degree[cell]):
        other = cell_lines[cell, i]
        if other < line and lines[other] == code:
            return True
    return False


@njit(cache=True, inline="always")
def win_cells(side, cells, lines, sums, line_cells, cell_lines, cell_degree, n):
    """``(count, first)``: how many empty cells complete a line for ``side``, and the first."""
    count = 0
    first = np.int64(-1)
    left = open_lines(side, n - 1, sums, n)  # the lines of n-1 still to find
    three = code_of(side, n - 1)
    line = 0
    while left > 0:
        if lines[line] == three:
            left -= 1
            c = _empty_of(line, cells, line_cells, n)
            if not _seen_before(c, line, three, lines, cell_lines, cell_degree):
                count += 1
                if first < 0 or c < first:
                    first = c
        line += 1
    return count, first


@njit(cache=True, inline="always")
def two_wins(side, cells, lines, line_cells, cell_lines, cell_degree, n):
    """The two lowest win cells of ``side`` (-1 where there are fewer)."""
    first = np.int64(-1)
    second = np.int64(-1)
    three = code_of(side, n - 1)
    for line in range(lines.shape[0]):
        if lines[line] == three:
            c = _empty_of(line, cells, line_cells, n)
            if c == first or c == second:  # noqa: SIM109 (numba: no tuple membership)
                continue
            if first < 0 or c < first:
                second = first
                first = c
            elif second < 0 or c < second:
                second = c
    return first, second


@njit(cache=True)
def both_wins(side, cells, lines, sums, line_cells, cell_lines, cell_degree, n):
    """:func:`win_cells` of ``side`` and of the other side, in one call from Python:
    ``(count, first, their count, their first)``."""
    mine, first = win_cells(side, cells, lines, sums, line_cells, cell_lines, cell_degree, n)
    theirs, block = win_cells(1 - side, cells, lines, sums, line_cells, cell_lines,
                              cell_degree, n)
    return mine, first, theirs, block


@njit(cache=True, inline="always")
def completion(cell, side, cells, lines, line_cells, cell_lines, cell_degree, n):
    """The win cell of a three of ``side`` through ``cell`` (just played), or -1."""
    three = code_of(side, n - 1)
    for i in range(cell_degree[cell]):
        line = cell_lines[cell, i]
        if lines[line] == three:
            return _empty_of(line, cells, line_cells, n)
    return np.int64(-1)


@njit(cache=True, inline="always")
def weigh_cells(out, lines, line_cells, n, weights, side):
    """``out[c]``: the sum of ``weights[side, code]`` over the lines through c, for every cell
    in one pass over the lines. (Rows are indexed here, not sliced by the caller: a slice in
    a search's loop costs an atomic reference count up and down.)"""
    out[:] = 0
    for line in range(lines.shape[0]):
        w = weights[side, lines[line]]
        if w != 0:
            for j in range(n):
                out[line_cells[line, j]] += w


@njit(cache=True)
def code_weights(n, terms):
    """``int64[2, 256]``: by side s and line code, the sum of the weights of the ``terms``
    ``(below, whose, weight)`` the code is: an open line holding n - below stones of s
    (``whose`` 0) or of the other side (1)."""
    out = np.zeros((2, 256), dtype=np.int64)
    for side in range(2):
        for below, whose, weight in terms:
            k = n - below
            if k >= 0:
                out[side, code_of(side ^ whose, k)] += weight
    return out


@njit(**NO_RUNTIME)
def threat_search(
    cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n,
    attacker, key, zob, max_threats, budget, tt_keys, path, stats, scratch,
    deadline=0.0, lean=False,
):
    """Plies to a forced win of ``attacker`` (to move) by continuous threats, or 0.

    ``path`` receives the moves of the win (attacker, forced reply, ..., winning move).
    ``budget`` caps the nodes visited (0: no cap); ``stats[0]`` counts them. ``scratch`` holds
    the per-frame arrays (see :func:`make_scratch`), allocated once by the caller. A search
    still running at ``deadline`` (a :func:`engine.kernels.negamax.now` value; 0: none) gives up.
    ``tt_keys`` remembers positions with no win within that many threats, the number in the
    six low bits of the key (which the slot holds already: one cache line read a node, not
    two); the table may be shared between calls and between both attackers (keys are salted
    by the attacker).

    The last threat's children (``max_threats`` of them played) cannot win: a threat that
    made two threes is found as a double threat before them, so each leaves the attacker no
    three once blocked. They are counted and remembered with no threats left (as if entered:
    the same nodes, table and answers as a walk into each), not played; with ``lean`` they
    are neither counted nor remembered (such an entry never cuts): the same wins, in fewer
    nodes and table writes, so a budget runs out later.
    """
    defender = 1 - attacker
    cand = scratch.cand
    n_cand = scratch.n_cand
    nxt = scratch.nxt
    keys = scratch.keys
    played = scratch.played
    marks = scratch.marks
    scores = scratch.scores
    order_by = scratch.order_weights
    replies = scratch.replies
    mask = tt_keys.shape[0] - 1
    salt = zob[2, attacker]
    two = code_of(attacker, n - 2)
    n_lines = lines.shape[0]
    small = cells.shape[0] <= 64 and n_lines <= 128  # cells and lines as bits
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
            elif open_lines(attacker, n - 1, sums, n) > 0:
                _, c = win_cells(attacker, cells, lines, sums, line_cells, cell_lines,
                                 cell_degree, n)
                path[2 * k] = c
                out = 2 * k + 1
            elif remaining == 0:
                out = _FAIL  # no win with no more threats
            elif (tt_keys[slot] & _KEY_BITS) == (salted & _KEY_BITS) and (
                np.int64(tt_keys[slot] & _DEPTH_BITS) >= remaining
            ):
                out = _KNOWN
            else:
                d_count, d_first = win_cells(defender, cells, lines, sums, line_cells,
                                             cell_lines, cell_degree, n)
                count = 0
                out = _FAIL
                if d_count == 1:
                    threes = through(d_first, two, lines, cell_lines, cell_degree)
                    if threes > 0:
                        cand[k, 0] = d_first
                        count = 1
                        if threes >= 2:
                            out = _double_threat(k, d_first, attacker, cells, lines, sums,
                                                 deltas, line_cells, cell_lines, cell_degree,
                                                 n, path)
                elif d_count == 0 and open_lines(attacker, n - 2, sums, n) > 0 and small:
                    # the lines of n-2 as bits, from a pass over the codes with no branch
                    # (vectorised), then the empty cells of each as bits: on one, on two (a
                    # double threat: the lowest), the candidates in cell order
                    low = np.uint64(0)
                    high = np.uint64(0)
                    for line in range(min(n_lines, 64)):
                        low |= np.uint64(lines[line] == two) << np.uint64(line)
                    for line in range(64, n_lines):
                        high |= np.uint64(lines[line] == two) << np.uint64(line - 64)
                    once = np.uint64(0)
                    twice = np.uint64(0)
                    for half in range(2):
                        bits = low if half == 0 else high
                        while bits != 0:
                            line = np.int64(lowest_bit(bits)) + 64 * half
                            bits &= bits - np.uint64(1)
                            for j in range(n):
                                c = line_cells[line, j]
                                if cells[c] == 0:
                                    bit = np.uint64(1) << np.uint64(c)
                                    twice |= once & bit
                                    once |= bit
                    if twice != 0:
                        out = _double_threat(k, np.int64(lowest_bit(twice)), attacker,
                                             cells, lines, sums, deltas, line_cells,
                                             cell_lines, cell_degree, n, path)
                    while once != 0:
                        cand[k, count] = lowest_bit(once)
                        count += 1
                        once &= once - np.uint64(1)
                elif d_count == 0 and open_lines(attacker, n - 2, sums, n) > 0:
                    # (boards of more than 64 cells or 128 lines) one pass over the lines, up
                    # to the last of n-2 (the counters say how many): per empty cell its
                    # lines of n-2, the cells kept in cell order
                    marks[:] = 0
                    left = open_lines(attacker, n - 2, sums, n)
                    line = 0
                    while left > 0:
                        if lines[line] == two:
                            left -= 1
                            for j in range(n):
                                c = line_cells[line, j]
                                if cells[c] == 0:
                                    if marks[c] == 0:
                                        i = count
                                        while i > 0 and cand[k, i - 1] > c:
                                            cand[k, i] = cand[k, i - 1]
                                            i -= 1
                                        cand[k, i] = c
                                        count += 1
                                    marks[c] += 1
                        line += 1
                    for i in range(count):
                        c = cand[k, i]
                        if marks[c] >= 2:
                            out = _double_threat(k, c, attacker, cells, lines, sums, deltas,
                                                 line_cells, cell_lines, cell_degree, n, path)
                            break
                if out == _FAIL and count > 1 and not (lean and remaining == 1):
                    for i in range(count):  # their probes' misses overlap the sort
                        c = cand[k, i]
                        replies[k, c] = _prefetch_child(c, k, keys, attacker, salt, mask,
                                                        tt_keys, zob, cells, lines, line_cells,
                                                        cell_lines, cell_degree, n)
                    _order(cand, k, count, order_by, attacker, lines, cell_lines, cell_degree,
                           scores)
                if out == _FAIL and count > 0 and remaining == 1:
                    # the last threat: no child wins (see above); each counted and remembered
                    # as a walk into it would have, in the same order, unless ``lean``
                    for i in range(count if not lean else 0):
                        nodes += 1
                        stats[0] += 1
                        if (budget > 0 and nodes > budget) or (
                            deadline > 0.0 and (nodes & 1023) == 0 and now() > deadline
                        ):
                            out = _ABORT
                            break
                        c = cand[k, i]
                        w = _reply_before(c, attacker, cells, lines, line_cells, cell_lines,
                                          cell_degree, n)
                        child = keys[k] ^ zob[attacker, c] ^ zob[defender, w] ^ salt
                        tt_keys[child & mask] = child & _KEY_BITS  # no threats left
                    count = 0
                n_cand[k] = count
                nxt[k] = 0
                if out == _FAIL and count > 0:
                    mode = _NEXT
        if mode == _NEXT:
            if nxt[k] >= n_cand[k]:
                out = _FAIL
                mode = _UP
            else:
                c = cand[k, nxt[k]]
                nxt[k] += 1
                # the child's key and slot before the threat is played (its forced reply
                # found as :func:`completion` would after it): a child the table knows to
                # fail is counted as entered (entering it would find it there, as it holds
                # no three of the attacker: see the double threats above) and not played
                if n_cand[k] > 1:  # found as its slot was prefetched
                    w = np.int64(replies[k, c])
                else:
                    w = _reply_before(c, attacker, cells, lines, line_cells, cell_lines,
                                      cell_degree, n)
                child = keys[k] ^ zob[attacker, c] ^ zob[defender, w]
                salted = child ^ salt
                slot = salted & mask
                if (tt_keys[slot] & _KEY_BITS) == (salted & _KEY_BITS) and (
                    np.int64(tt_keys[slot] & _DEPTH_BITS) >= max_threats - k - 1
                ):
                    nodes += 1
                    stats[0] += 1
                    if (budget > 0 and nodes > budget) or (
                        deadline > 0.0 and (nodes & 1023) == 0 and now() > deadline
                    ):
                        out = _ABORT
                        mode = _UP
                    else:
                        continue
                if mode == _NEXT:
                    push(c, attacker, cells, lines, sums, deltas, line_cells, cell_lines,
                         cell_degree, n)
                    push(w, defender, cells, lines, sums, deltas, line_cells, cell_lines,
                         cell_degree, n)
                    played[k, 0] = c
                    played[k, 1] = w
                    path[2 * k] = c
                    path[2 * k + 1] = w
                    keys[k + 1] = child
                    k += 1
                    mode = _ENTER
                    continue
        # mode == _UP: frame k is finished with ``out``
        if out == _FAIL:
            salted = keys[k] ^ salt
            slot = salted & mask
            tt_keys[slot] = (salted & _KEY_BITS) | np.uint64(max_threats - k)
        if k == 0:
            return out if out > 0 else 0
        k -= 1
        pop(played[k, 1], defender, cells, lines, sums, deltas, line_cells, cell_lines,
            cell_degree, n)
        pop(played[k, 0], attacker, cells, lines, sums, deltas, line_cells, cell_lines,
            cell_degree, n)
        if out == _FAIL or out == _KNOWN:  # noqa: SIM109 (numba: no tuple membership)
            mode = _NEXT  # that threat failed: try the frame's next one


@njit(cache=True, inline="always")
def _reply_before(c, attacker, cells, lines, line_cells, cell_lines, cell_degree, n):
    """The defender's forced reply to the threat ``c`` of ``attacker``, found before ``c`` is
    played: what :func:`completion` answers after it (the first line through ``c`` of n-2
    attacker stones and no defender's, its first empty cell but ``c``)."""
    two = code_of(attacker, n - 2)
    for i in range(cell_degree[c]):
        line = cell_lines[c, i]
        if lines[line] == two:
            for j in range(n):
                e = line_cells[line, j]
                if e != c and cells[e] == 0:
                    return np.int64(e)
    return np.int64(-1)


@njit(cache=True, inline="always")
def _prefetch_child(c, k, keys, attacker, salt, mask, tt_keys, zob, cells, lines, line_cells,
                    cell_lines, cell_degree, n):
    """Prefetch the threat table's slot of the position after the threat ``c`` of frame ``k``
    and its forced reply, so that its probe does not wait on memory; returns the reply."""
    w = _reply_before(c, attacker, cells, lines, line_cells, cell_lines, cell_degree, n)
    if w >= 0:
        child = keys[k] ^ zob[attacker, c] ^ zob[1 - attacker, w]
        prefetch(tt_keys, np.int64((child ^ salt) & mask))
    return w


@njit(cache=True, inline="always")
def _double_threat(k, c, attacker, cells, lines, sums, deltas, line_cells, cell_lines,
                   cell_degree, n, path):
    """Record the win by the double threat at ``c`` in ``path``; returns its plies."""
    push(c, attacker, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
    first, second = two_wins(attacker, cells, lines, line_cells, cell_lines, cell_degree, n)
    pop(c, attacker, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
    path[2 * k] = c
    path[2 * k + 1] = first
    path[2 * k + 2] = second
    return 2 * k + 3


@njit(cache=True, inline="always")
def sort_by(moves, row, order, count):
    """Insertion sort of ``moves[row, :count]`` by ``order`` descending (``order`` moves
    along)."""
    for i in range(1, count):
        m = moves[row, i]
        s = order[i]
        j = i - 1
        while j >= 0 and order[j] < s:
            moves[row, j + 1] = moves[row, j]
            order[j + 1] = order[j]
            j -= 1
        moves[row, j + 1] = m
        order[j + 1] = s


@njit(cache=True, inline="always")
def _order(moves, row, count, weights, side, lines, cell_lines, cell_degree, scores):
    """Sort threat moves (``moves[row, :count]``): those that open most new lines of n-2
    (future threats) first: ``weights[side]`` by line code (:func:`order_weights`), summed
    over the lines through a move."""
    for i in range(count):
        c = moves[row, i]
        s = 0
        for j in range(cell_degree[c]):
            s += weights[side, lines[cell_lines[c, j]]]
        scores[i] = s
    sort_by(moves, row, scores, count)


def order_weights(n: int) -> np.ndarray:
    """By attacker and line code, a threat move's order for a line of that code through it:
    16 a line of n-2 of the attacker's (a threat more to come), 4 one of n-3, 1 one of n-2 of
    the defender's."""
    return code_weights(n, ((2, 0, 16), (3, 0, 4), (2, 1, 1)))


def make_scratch(size: int, n: int) -> ThreatScratch:
    """Frame arrays for :func:`threat_search` on a board of ``size`` cells, lines of ``n``."""
    frames = MAX_THREATS + 1
    return ThreatScratch(
        np.empty((frames, size), dtype=np.int32),
        np.zeros(frames, dtype=np.int32),
        np.zeros(frames, dtype=np.int32),
        np.zeros(frames, dtype=np.uint64),
        np.zeros((frames, 2), dtype=np.int32),
        np.zeros(size, dtype=np.int32),
        np.zeros(size, dtype=np.int64),
        order_weights(n),
        np.zeros((frames, size), dtype=np.int32),
    )


class ThreatTable:
    """The table of positions with no threat win, kept between searches (see
    :func:`threat_search`: an entry is a key with its threats in the low bits, which the
    slot's index, ``bits`` of them, holds already)."""

    def __init__(self, bits: int = TSS_TABLE_BITS) -> None:
        if bits < 6:
            raise ValueError("a threat table needs 6 bits of index at least (its entries' depth)")
        self.keys = np.zeros(1 << bits, dtype=np.uint64)

    def clear(self) -> None:
        self.keys[:] = 0


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
        pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
        t.cell_degree, t.n, attacker, np.uint64(pos.key), zobrist(t.size),
        min(max_threats, MAX_THREATS), budget, table.keys, path, stats,
        make_scratch(t.size, t.n),
    )
    if plies <= 0:
        return None
    return tuple(int(c) for c in path[:plies])
