"""Exact minimax on the small boards (3x3, 4x4, 3x3x3), compiled by numba.

Positions are integer keys (``x << size | o``), canonical as their least image; a result is
one byte, the verdict and the exact plies to the end. Two ways to the same numbers, each
checking the other: by levels (``expand_level``, ``back_up_level``) and by an exact alpha-beta
search (``exact_value``). docs/engine.md, "The small boards' exact search"."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from engine.kernels.negamax import frame_stacks
from engine.rules.geometry import Geometry

LOSS_CODE, DRAW_CODE, WIN_CODE = 0, 1, 2
PLIES_MASK = 63
NOT_TERMINAL = 255
MATE = 1000  # a win at ply p (from the searched root) scores MATE - p
INF = 30000
NO_SCORE = -INF - 1  # no move searched yet at a frame
EXACT, LOWER, UPPER = 0, 1, 2
TT_BITS = 18  # 256 K entries, 2.8 MB: past 3x3x3's table a question takes tens of nodes
BUILD_TT_BITS = 22  # 4 M entries, 44 MB: for a whole ply of the table at once


@dataclass(frozen=True, eq=False)
class Rules:
    """A board's lines and symmetries as arrays for the kernels; one per board, cached."""

    size: int
    n: int
    lines: np.ndarray  # uint64[L]: the line masks
    images: np.ndarray  # uint64[chunks, 256, S]: a byte of a bitboard under each symmetry
    order: np.ndarray  # int64[C]: cells by the lines through them, most first (move order)


@cache
def rules_for(geometry: Geometry) -> Rules:
    images = geometry._byte_images  # noqa: SLF001 (the geometry's own symmetry tables)
    if images is None:
        raise ValueError(f"{geometry.name} has more than 64 cells")
    degree = [len(t) for t in geometry.lines_through]
    order = sorted(range(geometry.size), key=lambda c: (-degree[c], c))
    return Rules(geometry.size, geometry.n, np.array(geometry.line_masks, dtype=np.uint64),
                 images, np.array(order, dtype=np.int64))


@njit(cache=True, inline="always")
def popcount(v: np.uint64) -> int:
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((v * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def canonical_key(x: np.uint64, o: np.uint64, size: int, images: np.ndarray) -> np.uint64:
    """The least key of the position's images under the board's symmetries."""
    chunks = images.shape[0]
    best = np.uint64(0xFFFFFFFFFFFFFFFF)
    shift = np.uint64(size)
    for s in range(images.shape[2]):
        xi = np.uint64(0)
        oi = np.uint64(0)
        for k in range(chunks):
            xi |= images[k, (x >> np.uint64(8 * k)) & np.uint64(255), s]
            oi |= images[k, (o >> np.uint64(8 * k)) & np.uint64(255), s]
        key = (xi << shift) | oi
        if key < best:
            best = key
    return best


@njit(cache=True)
def _can_still_win(mine: np.uint64, theirs: np.uint64, moves_left: int, n: int,
                   lines: np.ndarray) -> bool:
    for i in range(lines.shape[0]):
        mask = lines[i]
        if mask & theirs == 0 and n - popcount(mask & mine) <= moves_left:
            return True
    return False


@njit(cache=True)
def terminal_value(x: np.uint64, o: np.uint64, size: int, n: int, lines: np.ndarray) -> int:
    """The result byte of a finished position for the side to move, or NOT_TERMINAL."""
    x_to_move = popcount(x) == popcount(o)
    mover = x if x_to_move else o
    last = o if x_to_move else x
    for i in range(lines.shape[0]):
        if last & lines[i] == lines[i]:
            return LOSS_CODE << 6
    empties = size - popcount(x | o)
    if empties == 0:
        return DRAW_CODE << 6
    if not _can_still_win(mover, last, (empties + 1) // 2, n, lines) and not _can_still_win(
            last, mover, empties // 2, n, lines):
        return DRAW_CODE << 6
    return NOT_TERMINAL


@njit(cache=True)
def unfinished(keys: np.ndarray, size: int, n: int, lines: np.ndarray) -> int:
    """How many positions of ``keys`` the game goes on from."""
    full = np.uint64((1 << size) - 1)
    count = 0
    for i in range(keys.shape[0]):
        x = keys[i] >> np.uint64(size)
        if terminal_value(x, keys[i] & full, size, n, lines) == NOT_TERMINAL:
            count += 1
    return count


@njit(cache=True)
def expand_level(keys: np.ndarray, size: int, n: int, lines: np.ndarray,
                 images: np.ndarray) -> np.ndarray:
    """The sorted canonical keys of every position one ply after an unfinished one of
    ``keys`` (canonical keys of one ply)."""
    full = np.uint64((1 << size) - 1)
    shift = np.uint64(size)
    out = np.empty(keys.shape[0] * size, dtype=np.uint64)
    count = 0
    for i in range(keys.shape[0]):
        x = keys[i] >> shift
        o = keys[i] & full
        if terminal_value(x, o, size, n, lines) != NOT_TERMINAL:
            continue
        x_to_move = popcount(x) == popcount(o)
        empty = full & ~(x | o)
        for cell in range(size):
            bit = np.uint64(1) << np.uint64(cell)
            if empty & bit:
                if x_to_move:
                    out[count] = canonical_key(x | bit, o, size, images)
                else:
                    out[count] = canonical_key(x, o | bit, size, images)
                count += 1
    return np.unique(out[:count])


@njit(cache=True)
def _rank(parent_value: int) -> int:
    """Order of the mover's results: fastest win first, then the longest draw, then the
    slowest loss."""
    code = parent_value >> 6
    plies = parent_value & PLIES_MASK
    if code == WIN_CODE:
        return 200 - plies
    if code == DRAW_CODE:
        return 100 + plies
    return plies


@njit(cache=True)
def from_child(child_value: int) -> int:
    """The mover's result through a move, from the result of the position after it."""
    code = child_value >> 6
    plies = (child_value & PLIES_MASK) + 1
    return ((WIN_CODE if code == LOSS_CODE else LOSS_CODE if code == WIN_CODE else DRAW_CODE)
            << 6) | plies


@njit(cache=True)
def back_up_level(keys: np.ndarray, next_keys: np.ndarray, next_values: np.ndarray,
                  size: int, n: int, lines: np.ndarray, images: np.ndarray) -> np.ndarray:
    """The result of every position of ``keys`` from those of the next ply (minimax)."""
    full = np.uint64((1 << size) - 1)
    shift = np.uint64(size)
    values = np.empty(keys.shape[0], dtype=np.uint8)
    for i in range(keys.shape[0]):
        x = keys[i] >> shift
        o = keys[i] & full
        done = terminal_value(x, o, size, n, lines)
        if done != NOT_TERMINAL:
            values[i] = done
            continue
        x_to_move = popcount(x) == popcount(o)
        empty = full & ~(x | o)
        best = -1
        best_rank = -1
        for cell in range(size):
            bit = np.uint64(1) << np.uint64(cell)
            if empty & bit:
                if x_to_move:
                    child = canonical_key(x | bit, o, size, images)
                else:
                    child = canonical_key(x, o | bit, size, images)
                j = np.searchsorted(next_keys, child)
                if j >= next_keys.shape[0] or next_keys[j] != child:
                    raise ValueError("a child is missing from the next level")
                mine = from_child(next_values[j])
                if _rank(mine) > best_rank:
                    best_rank = _rank(mine)
                    best = mine
        values[i] = best
    return values


@njit(cache=True)
def _threats(mine: np.uint64, theirs: np.uint64, n: int, lines: np.ndarray) -> np.uint64:
    """The empty cells that would complete a line of ``mine``."""
    out = np.uint64(0)
    for i in range(lines.shape[0]):
        mask = lines[i]
        if mask & theirs == 0 and popcount(mask & mine) == n - 1:
            out |= mask & ~mine
    return out


@njit(cache=True)
def _slot(key: np.uint64, bits: int) -> int:
    return int((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits))


@njit(cache=True)
def _negamax(me: np.uint64, them: np.uint64, empties: int, size: int, n: int,
             lines: np.ndarray, order: np.ndarray, tt_keys: np.ndarray, tt_scores: np.ndarray,
             tt_flags: np.ndarray, tt_bits: int, stats: np.ndarray) -> int:
    """The exact score of an unfinished position of a board without draws for ``me`` to
    move: alpha-beta with a full window at the root, fail-soft, iterative (numba cannot
    cache a recursive function), one frame per ply."""
    depth = empties + 1
    # a frame's window, best score and next move on the kernel's stacks; its moves are a
    # bitboard here, with its stones, the opponent's and its key: rows of one array
    _, _, f_next, f_alpha, f_beta, f_best = frame_stacks(depth, 0, -INF, INF)
    f_alpha0 = np.zeros(depth, dtype=np.int64)  # alpha as the frame began
    bitboards = np.zeros((4, depth), dtype=np.uint64)
    f_me, f_them, f_moves, f_key = bitboards[0], bitboards[1], bitboards[2], bitboards[3]
    full = np.uint64((1 << size) - 1)
    f_me[0], f_them[0] = me, them
    ply = 0
    result = 0
    while True:  # a new node at ``ply``: settle it at once, or start on its moves
        stats[0] += 1
        me, them = f_me[ply], f_them[ply]
        alpha, beta = f_alpha[ply], f_beta[ply]
        theirs = _threats(them, me, n, lines)
        key = (me << np.uint64(size)) | them | (np.uint64(1) << np.uint64(63))
        slot = _slot(key, tt_bits)
        settled = True
        if _threats(me, them, n, lines) != np.uint64(0):
            result = MATE - (ply + 1)
        elif popcount(theirs) > 1:  # one blocked, the other completed
            result = -(MATE - (ply + 2))
        elif MATE - (ply + 3) <= alpha:  # no faster win is left: fails low
            result = MATE - (ply + 3)
        elif tt_keys[slot] == key and (
                tt_flags[slot] == EXACT
                or (tt_flags[slot] == LOWER and _from_tt(tt_scores[slot], ply) >= beta)
                or (tt_flags[slot] == UPPER and _from_tt(tt_scores[slot], ply) <= alpha)):
            result = _from_tt(tt_scores[slot], ply)
        else:
            settled = False
            f_moves[ply] = theirs if theirs != np.uint64(0) else full & ~(me | them)
            f_key[ply] = key
            f_alpha0[ply] = alpha
            f_best[ply] = -INF
            f_next[ply] = 0
        if settled:
            if ply == 0:
                return result
            ply -= 1
            score = -result
        else:
            score = NO_SCORE
        # at ``ply``: take in the score of the move just searched, then search the next move
        while True:
            if score != NO_SCORE:
                if score > f_best[ply]:
                    f_best[ply] = score
                    if score > f_alpha[ply]:
                        f_alpha[ply] = score
                if f_alpha[ply] >= f_beta[ply]:
                    f_next[ply] = size  # a cut: no more moves
            cell = -1
            while f_next[ply] < size:
                candidate = order[f_next[ply]]
                f_next[ply] += 1
                if f_moves[ply] >> np.uint64(candidate) & np.uint64(1):
                    cell = candidate
                    break
            if cell < 0:  # every move searched (or a cut): store and return to the parent
                best = f_best[ply]
                slot = _slot(f_key[ply], tt_bits)
                tt_keys[slot] = f_key[ply]
                tt_scores[slot] = best + ply if best > 0 else best - ply
                tt_flags[slot] = (UPPER if best <= f_alpha0[ply] else
                                  LOWER if best >= f_beta[ply] else EXACT)
                if ply == 0:
                    return best
                score = -best
                ply -= 1
                continue
            bit = np.uint64(1) << np.uint64(cell)
            if empties - ply == 1:
                score = 0  # a full board without a line: not on the boards searched
                continue
            f_me[ply + 1] = f_them[ply]
            f_them[ply + 1] = f_me[ply] | bit
            f_alpha[ply + 1] = -f_beta[ply]
            f_beta[ply + 1] = -f_alpha[ply]
            ply += 1
            break


@njit(cache=True, inline="always")
def _from_tt(stored: int, ply: int) -> int:
    return stored - ply if stored > 0 else stored + ply


@njit(cache=True)
def exact_value(x: np.uint64, o: np.uint64, size: int, n: int, lines: np.ndarray,
                order: np.ndarray, tt_keys: np.ndarray, tt_scores: np.ndarray,
                tt_flags: np.ndarray, tt_bits: int, stats: np.ndarray) -> int:
    """The result byte of a position of a board without draws, by a full-window search."""
    done = terminal_value(x, o, size, n, lines)
    if done != NOT_TERMINAL:
        return done
    x_to_move = popcount(x) == popcount(o)
    me = x if x_to_move else o
    them = o if x_to_move else x
    empties = size - popcount(x | o)
    score = _negamax(me, them, empties, size, n, lines, order, tt_keys, tt_scores, tt_flags,
                     tt_bits, stats)
    if score > 0:
        return WIN_CODE << 6 | (MATE - score)
    return LOSS_CODE << 6 | (MATE + score)


@njit(cache=True)
def exact_values(keys: np.ndarray, size: int, n: int, lines: np.ndarray, order: np.ndarray,
                 tt_keys: np.ndarray, tt_scores: np.ndarray, tt_flags: np.ndarray,
                 tt_bits: int, stats: np.ndarray) -> np.ndarray:
    """:func:`exact_value` of every key (one transposition table for all)."""
    full = np.uint64((1 << size) - 1)
    shift = np.uint64(size)
    values = np.empty(keys.shape[0], dtype=np.uint8)
    for i in range(keys.shape[0]):
        values[i] = exact_value(keys[i] >> shift, keys[i] & full, size, n, lines, order,
                                tt_keys, tt_scores, tt_flags, tt_bits, stats)
    return values


class ExactSearch:
    """:func:`exact_value` for one board with its own transposition table, kept between calls
    (its entries are exact facts about positions, valid for every later question)."""

    def __init__(self, geometry: Geometry, tt_bits: int = TT_BITS) -> None:
        self.rules = rules_for(geometry)
        self.tt_bits = tt_bits
        self.tt_keys = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_scores = np.zeros(1 << tt_bits, dtype=np.int16)
        self.tt_flags = np.zeros(1 << tt_bits, dtype=np.int8)
        self.stats = np.zeros(1, dtype=np.int64)  # nodes

    def value(self, x: int, o: int) -> int:
        r = self.rules
        return int(exact_value(np.uint64(x), np.uint64(o), r.size, r.n, r.lines, r.order,
                               self.tt_keys, self.tt_scores, self.tt_flags, self.tt_bits,
                               self.stats))

    def values(self, keys: np.ndarray) -> np.ndarray:
        r = self.rules
        return exact_values(keys, r.size, r.n, r.lines, r.order, self.tt_keys, self.tt_scores,
                            self.tt_flags, self.tt_bits, self.stats)
