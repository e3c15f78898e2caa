"""The master's search: principal-variation alpha-beta with threat-space search, numba-compiled.

``pvs`` searches from the root to a fixed depth (``engine.kernels.deepening.Master`` deepens it
under a deadline), with no forward pruning, so a mate score at the root is a proof; ``SearchParams``
are its knobs. docs/engine.md, "The master's search", has what each node does in order."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from engine.kernels.negamax import INF, WIN, board_full, frame_stacks, stopped, take_pv
from engine.kernels.threats import (
    MAX_THREATS,
    code_weights,
    open_lines,
    pop,
    push,
    sort_by,
    threat_search,
    weigh_cells,
    win_cells,
)

MATE_BOUND = WIN - 200  # scores beyond this are proved wins or losses
POLL_MASK = 1023

# stats slots
NODES, EVALS, TSS_NODES, TSS_WINS, TT_HITS, ABORTED, DEPTH_MAX = 0, 1, 2, 3, 4, 5, 6
STATS_SIZE = 8

# transposition table flags
EXACT, LOWER, UPPER = 1, 2, 3

# params slots
P_TSS_INTERIOR, P_TSS_LEAF, P_THREATS_INTERIOR, P_THREATS_LEAF, P_NOISE, P_SALT, P_USE_TT = (
    0, 1, 2, 3, 4, 5, 6,
)
P_EXTEND = 7  # threat extensions allowed on one path
PARAMS_SIZE = 8

# evaluation weights, from the side to move's point of view: open lines holding n-2, n-3,
# n-4, n-5 stones (mine, then theirs); then per side fork cells (an empty cell on two or more
# lines of n-2: a double threat in one move), threat cells (on one such line) and a bonus
# when a side has two or more fork cells; then the tempo of having the move.
E_LINES, E_LINES_O = 0, 4
E_FORK, E_THREAT, E_FORKS2, E_FORK_O, E_THREAT_O, E_FORKS2_O, E_TEMPO = 8, 9, 10, 11, 12, 13, 14
EVAL_SIZE = 15
DEFAULT_EVAL = np.array(
    [12, 3, 1, 0,  14, 3, 1, 0,  60, 6, 0,  100, 10, 300,  20], dtype=np.int64
)

# the move order: per line through a cell, open and holding n-2 stones of the mover's 64, of
# the other side's 24; n-3: 4 and 3 (``(stones below n, whose, weight)``)
ORDER_TERMS = ((2, 0, 64), (2, 1, 24), (3, 0, 4), (3, 1, 3))
# the evaluation's threat cells: a cell's open lines of n-2, the mover's in bits 8 up
THREAT_TERMS = ((2, 0, 1 << 8), (2, 1, 1))

THEIR_TERMS = (E_LINES_O, E_LINES_O + 1, E_LINES_O + 2, E_LINES_O + 3, E_FORK_O, E_THREAT_O,
               E_FORKS2_O)

_ENTER, _NEXT, _UP = 0, 1, 2


def wary_weights(percent: int) -> np.ndarray:
    """The evaluation weights with the terms of the side not to move (its lines, threats and
    forks: what its last move made) at ``percent``: above 100, every leaf rates the side that
    has just moved higher than the default does, whichever side that is."""
    weights = DEFAULT_EVAL.copy()
    for term in THEIR_TERMS:
        weights[term] = DEFAULT_EVAL[term] * percent // 100
    return weights


@njit(cache=True, inline="always")
def _evaluate(side, cells, lines, sums, line_cells, n, ew, noise, salt, key, per_cell,
              threes):
    """The static value for ``side`` (to move) of a position with no win cell on the board;
    ``per_cell`` is scratch, ``threes`` :data:`THREAT_TERMS`' weights by code."""
    other = 1 - side
    forks_me = 0
    forks_them = 0
    threats_me = 0
    threats_them = 0
    if open_lines(side, n - 2, sums, n) > 0 or open_lines(other, n - 2, sums, n) > 0:
        weigh_cells(per_cell, lines, line_cells, n, threes, side)
        for c in range(cells.shape[0]):
            if cells[c] == 0:
                a = per_cell[c] >> 8
                b = per_cell[c] & 255
                if a >= 2:
                    forks_me += 1
                if a >= 1:
                    threats_me += 1
                if b >= 2:
                    forks_them += 1
                if b >= 1:
                    threats_them += 1
    value = ew[E_TEMPO]
    for i in range(4):
        k = n - 2 - i
        if k >= 0:
            value += (ew[E_LINES + i] * open_lines(side, k, sums, n)
                      - ew[E_LINES_O + i] * open_lines(other, k, sums, n))
    value += ew[E_FORK] * forks_me + ew[E_THREAT] * threats_me
    value -= ew[E_FORK_O] * forks_them + ew[E_THREAT_O] * threats_them
    if forks_me >= 2:
        value += ew[E_FORKS2]
    if forks_them >= 2:
        value -= ew[E_FORKS2_O]
    if noise > 0:
        h = (key ^ salt) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
        value += np.int64(h % np.uint64(2 * noise + 1)) - noise
    return value


@njit(cache=True)
def pvs(
    cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n,
    side, key, zob, depth, alpha, beta, root_moves, root_scores,
    tt_keys, tt_score, tt_depth, tt_flag, tt_move,
    tss_keys, tss_scratch, tss_path,
    history, killers, params, ew,
    deadline, stop, stats, pv, pv_len,
):
    """The value for ``side`` of the position searched ``depth`` plies deep within
    ``(alpha, beta)``; ``root_scores[i]`` gets the value (or bound) of ``root_moves[i]`` and
    ``pv[0, :pv_len[0]]`` the principal variation. Returns 0 with ``stats[ABORTED]`` set when
    the deadline or the stop flag came first (the position arrays are then left dirty)."""
    size = cells.shape[0]
    frames = size + 2
    moves, n_moves, idx, lo, hi, best = frame_stacks(frames, size, alpha, beta)
    order = np.empty(size, dtype=np.int64)
    lo0 = np.zeros(frames, dtype=np.int64)
    best_move = np.zeros(frames, dtype=np.int32)
    dep = np.zeros(frames, dtype=np.int32)
    ext = np.zeros(frames, dtype=np.int32)
    forced = np.zeros(frames, dtype=np.int8)
    probe = np.zeros(frames, dtype=np.int8)  # the current child is a null-window probe
    keys = np.zeros(frames, dtype=np.uint64)
    tmask = tt_keys.shape[0] - 2
    tss_nodes = stats[TSS_NODES:TSS_NODES + 1]  # the threat searches count into stats
    noise = params[P_NOISE]
    salt = np.uint64(params[P_SALT])
    use_tt = params[P_USE_TT] != 0
    per_cell = np.zeros(size, dtype=np.int64)  # the evaluation's and move order's, by cell
    threes = code_weights(n, THREAT_TERMS)
    move_weights = code_weights(n, ORDER_TERMS)

    k = 0
    dep[0] = depth
    keys[0] = key
    to_move = side
    mode = _ENTER
    value = 0
    for i in range(root_moves.shape[0]):
        root_scores[i] = -INF - 1
    while True:
        if mode == _ENTER:
            stats[NODES] += 1
            if (stats[NODES] & POLL_MASK) == 0 and stopped(stop, deadline):
                stats[ABORTED] = 1
            if stats[ABORTED] != 0:
                return 0
            if k > stats[DEPTH_MAX]:
                stats[DEPTH_MAX] = k
            pv_len[k] = k
            s = to_move
            o = 1 - s
            mode = _UP
            if open_lines(s, n - 1, sums, n) > 0:
                _, c = win_cells(s, cells, lines, sums, line_cells, cell_lines, cell_degree, n)
                pv[k, k] = c
                pv_len[k] = k + 1
                value = WIN - (k + 1)
            else:
                count, threat = win_cells(o, cells, lines, sums, line_cells, cell_lines,
                                          cell_degree, n)
                if count >= 2:
                    value = -(WIN - (k + 2))
                elif board_full(cells):
                    value = 0
                elif k > 0 and WIN - (k + 1) <= lo[k]:
                    value = WIN - (k + 1)  # no win here can be faster than alpha
                else:
                    hit = False
                    tt_best = -1
                    slot = np.int64(keys[k] & np.uint64(tmask))
                    if use_tt:
                        if tt_keys[slot] != keys[k]:
                            slot += 1
                        if tt_keys[slot] == keys[k]:
                            stats[TT_HITS] += 1
                            tt_best = tt_move[slot]
                            v = np.int64(tt_score[slot])
                            if v > MATE_BOUND:
                                v -= k
                            elif v < -MATE_BOUND:
                                v += k
                            f = tt_flag[slot]
                            if tt_depth[slot] < dep[k]:
                                # too shallow, but a proved win is a lower bound at any
                                # depth and a proved loss an upper bound
                                if v > MATE_BOUND and f != UPPER:
                                    f = LOWER
                                elif v < -MATE_BOUND and f != LOWER:
                                    f = UPPER
                                else:
                                    f = 0
                            if k > 0 and f != 0 and (
                                f == EXACT or (f == LOWER and v >= hi[k])
                                or (f == UPPER and v <= lo[k])
                            ):
                                value = v
                                hit = True
                                if tt_best >= 0:
                                    pv[k, k] = tt_best
                                    pv_len[k] = k + 1
                    if not hit:
                        idx[k] = 0
                        best[k] = -INF
                        best_move[k] = -1
                        lo0[k] = lo[k]
                        if count == 1:
                            moves[k, 0] = threat
                            n_moves[k] = 1
                            forced[k] = 1
                            mode = _NEXT
                        else:
                            forced[k] = 0
                            plies = 0
                            interior = dep[k] > 0
                            budget = params[P_TSS_INTERIOR] if interior else params[P_TSS_LEAF]
                            if k > 0 and budget > 0 and open_lines(s, n - 2, sums, n) > 0:
                                threats = (params[P_THREATS_INTERIOR] if interior
                                           else params[P_THREATS_LEAF])
                                plies = threat_search(
                                    cells, lines, sums, deltas, line_cells, cell_lines,
                                    cell_degree, n, s, keys[k], zob, threats, budget,
                                    tss_keys, tss_path, tss_nodes, tss_scratch,
                                    deadline,
                                )
                            tss_value = -INF
                            if plies > 0:
                                stats[TSS_WINS] += 1
                                tss_value = WIN - (k + plies)
                                for i in range(plies):
                                    if k + i < frames:
                                        pv[k, k + i] = tss_path[i]
                                pv_len[k] = min(k + plies, frames)
                                _store(tt_keys, tt_score, tt_depth, tt_flag, tt_move, keys[k], k,
                                       tss_value, 0, LOWER, tss_path[0], use_tt)
                            if plies == 0 and dep[k] <= 0 and ext[k] < params[P_EXTEND] and (
                                params[P_TSS_LEAF] > 0 and open_lines(o, n - 2, sums, n) > 0
                            ) and threat_search(
                                cells, lines, sums, deltas, line_cells, cell_lines,
                                cell_degree, n, o, keys[k], zob, params[P_THREATS_LEAF],
                                params[P_TSS_LEAF], tss_keys, tss_path, tss_nodes,
                                tss_scratch, deadline,
                            ) > 0:
                                # a leaf where the opponent, were it to move, has a threat
                                # win: search one more ply (every move) to meet it
                                dep[k] = 1
                                ext[k] += 1
                            if plies > 0 and (dep[k] <= 0 or tss_value >= hi[k]):
                                # a proved win: at least this good, so a cutoff (or at a
                                # leaf, the value); otherwise the search looks for a faster one
                                value = tss_value
                            elif dep[k] <= 0:
                                stats[EVALS] += 1
                                value = _evaluate(s, cells, lines, sums, line_cells, n, ew,
                                                  noise, salt, keys[k], per_cell, threes)
                            else:
                                count = 0
                                if k == 0:
                                    for i in range(root_moves.shape[0]):
                                        moves[0, i] = root_moves[i]
                                    count = root_moves.shape[0]
                                else:
                                    weigh_cells(per_cell, lines, line_cells, n,
                                                move_weights, s)
                                    for c in range(size):
                                        if cells[c] == 0:
                                            moves[k, count] = c
                                            sc = per_cell[c] + history[s, c]
                                            if c == tt_best:
                                                sc += 1 << 40
                                            elif c == killers[k, 0]:
                                                sc += 1 << 30
                                            elif c == killers[k, 1]:
                                                sc += 1 << 29
                                            order[count] = sc
                                            count += 1
                                    sort_by(moves, k, order, count)
                                n_moves[k] = count
                                mode = _NEXT
                                if plies > 0:
                                    best[k] = tss_value
                                    best_move[k] = tss_path[0]
                                    if tss_value > lo[k]:
                                        lo[k] = tss_value
        if mode == _NEXT:
            s = to_move
            if idx[k] >= n_moves[k]:
                value = best[k]
                flag = EXACT if best[k] > lo0[k] else UPPER
                _store(tt_keys, tt_score, tt_depth, tt_flag, tt_move, keys[k], k, value,
                       dep[k], flag, best_move[k], use_tt)
                mode = _UP
            else:
                c = moves[k, idx[k]]
                idx[k] += 1
                push(c, s, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
                keys[k + 1] = keys[k] ^ zob[s, c]
                dep[k + 1] = dep[k] - (1 - forced[k])
                ext[k + 1] = ext[k]
                if idx[k] == 1 or hi[k] - lo[k] <= 1:
                    lo[k + 1] = -hi[k]
                    hi[k + 1] = -lo[k]
                    probe[k] = 0
                else:
                    lo[k + 1] = -lo[k] - 1
                    hi[k + 1] = -lo[k]
                    probe[k] = 1
                k += 1
                to_move = 1 - to_move
                mode = _ENTER
                continue
        # mode == _UP: frame k has finished with ``value``
        if k == 0:
            return value
        k -= 1
        to_move = 1 - to_move
        s = to_move
        c = moves[k, idx[k] - 1]
        pop(c, s, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        if stats[ABORTED] != 0:
            return 0
        score = -value
        if probe[k] == 1 and lo[k] < score < hi[k]:
            probe[k] = 0  # the probe failed high: search it again with the full window
            push(c, s, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
            lo[k + 1] = -hi[k]
            hi[k + 1] = -lo[k]
            k += 1
            to_move = 1 - to_move
            mode = _ENTER
            continue
        if k == 0:
            root_scores[idx[0] - 1] = score
        mode = _NEXT
        if score > best[k]:
            best[k] = score
            best_move[k] = c
            take_pv(pv, pv_len, k, c)
            if score > lo[k]:
                lo[k] = score
                if lo[k] >= hi[k]:
                    if forced[k] == 0:
                        if killers[k, 0] != c:
                            killers[k, 1] = killers[k, 0]
                            killers[k, 0] = c
                        history[s, c] += dep[k] * dep[k]
                    _store(tt_keys, tt_score, tt_depth, tt_flag, tt_move, keys[k], k, score,
                           dep[k], LOWER, c, use_tt)
                    value = score
                    mode = _UP


@njit(cache=True, inline="always")
def _store(tt_keys, tt_score, tt_depth, tt_flag, tt_move, key, ply, score, depth, flag,
           move, use_tt):
    """Store the score of the node at ``ply`` (a mate score counted from that node, not from
    the root) in the two-slot bucket of ``key``: over the same key, else over the shallower
    of the two."""
    if not use_tt:
        return
    if score > MATE_BOUND:
        score += ply
    elif score < -MATE_BOUND:
        score -= ply
    base = np.int64(key & np.uint64(tt_keys.shape[0] - 2))
    if tt_keys[base] == key:
        slot = base
    elif tt_keys[base + 1] == key:
        slot = base + 1
    elif tt_depth[base] <= tt_depth[base + 1]:
        slot = base
    else:
        slot = base + 1
    if tt_keys[slot] == key and tt_depth[slot] > depth and flag != EXACT and (
        abs(score) < MATE_BOUND
    ):
        return  # keep a deeper result for the same position
    tt_keys[slot] = key
    tt_score[slot] = score
    tt_depth[slot] = min(depth, 127)
    tt_flag[slot] = flag
    tt_move[slot] = move


@dataclass
class SearchParams:
    """The master's knobs: threat-search budgets, evaluation weights and noise."""

    tss_interior: int = 4000  # nodes of threat search at an interior node (0: none)
    tss_leaf: int = 300  # nodes of threat search at a leaf (0: none)
    threats_interior: int = MAX_THREATS
    threats_leaf: int = 12
    tss_root: int = 2_000_000  # nodes of threat search for the root before the main search
    noise: int = 0  # amplitude of pseudo-random noise added to every evaluation
    salt: int = 0
    tt: bool = True
    extensions: int = 2  # threat extensions on one path (see pvs)
    iterate: int = 50  # percent of the time after which no new iteration starts
    weights: np.ndarray = field(default_factory=lambda: DEFAULT_EVAL.copy())

    def array(self) -> np.ndarray:
        out = np.zeros(PARAMS_SIZE, dtype=np.int64)
        out[P_TSS_INTERIOR] = self.tss_interior
        out[P_TSS_LEAF] = self.tss_leaf
        out[P_THREATS_INTERIOR] = min(self.threats_interior, MAX_THREATS)
        out[P_THREATS_LEAF] = min(self.threats_leaf, MAX_THREATS)
        out[P_NOISE] = self.noise
        out[P_SALT] = self.salt & (2**62 - 1)
        out[P_USE_TT] = int(self.tt)
        out[P_EXTEND] = self.extensions
        return out
