"""Depth-first proof-number search for "can this side force a win?", compiled by numba.

df-pn over a transposition table of keys canonical under the board's symmetries, with the
game's exact shortcuts and a threat-space search at every node and no heuristic pruning, so a
proved root is a proof; ``engine.kernels.solver.Solver`` keeps its tables between calls.
docs/engine.md, "Depth-first proof-number search"."""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.kernels.negamax import frame_stacks, stopped
from engine.kernels.threats import (
    MAX_THREATS,
    NO_RUNTIME,
    all_open_lines,
    code_of,
    open_lines,
    pop,
    prefetch,
    push,
    threat_search,
    through,
    win_cells,
)

PN_INF = 1 << 40
EPSILON_NUM, EPSILON_DEN = 5, 4  # 1 + epsilon = 1.25

# stats slots
S_NODES, S_EVALS, S_TSS_NODES, S_ABORTED, S_MAX_DEPTH, S_ROOT_PN, S_ROOT_DN = 0, 1, 2, 3, 4, 5, 6
S_REPLAYS = 7
STATS_SIZE = 8

_ENTER, _LOOP, _UP = 0, 1, 2
# a child not in the table: not yet looked at; refuted by the replay of the attacker's threat
# win; unvisited, on a line of n-2 (1, 1) or not (2 for the number its side minimises)
_UNKNOWN, _REFUTED, _KEEN, _DULL = 0, 1, 2, 3


@njit(cache=True, inline="always")
def lookup(keys, pn, dn, key):
    """``(slot, found)`` for ``key`` in its two-slot bucket."""
    base = np.int64(key & np.uint64(keys.shape[0] - 2))
    if keys[base] == key:
        return base, True
    if keys[base + 1] == key:
        return base + 1, True
    return base, False


@njit(cache=True, inline="always")
def _store(keys, pn, dn, work, key, p, d, w):
    """Store over the same key, else over the entry that cost less (solved ones are kept)."""
    base = np.int64(key & np.uint64(keys.shape[0] - 2))
    if keys[base] == key:
        slot = base
    elif keys[base + 1] == key:
        slot = base + 1
    else:
        a_solved = pn[base] == 0 or dn[base] == 0
        b_solved = pn[base + 1] == 0 or dn[base + 1] == 0
        if a_solved != b_solved:
            slot = base + 1 if a_solved else base
        else:
            slot = base if work[base] <= work[base + 1] else base + 1
    keys[slot] = key
    pn[slot] = p
    dn[slot] = d
    work[slot] = w


@njit(cache=True, inline="always")
def child_key(sym_keys, syms, zob, side, cell, plain, canonical):
    """The key of the position after ``side`` plays ``cell``."""
    if not canonical:
        return plain ^ zob[side, cell]
    best = sym_keys[0] ^ zob[side, syms[0, cell]]
    for s in range(1, syms.shape[0]):
        k = sym_keys[s] ^ zob[side, syms[s, cell]]
        if k < best:
            best = k
    return best


@njit(cache=True, inline="always")
def _child_key_at(symk, d, syms, zob, side, cell, plain, canonical):
    """:func:`child_key` with the keys of the images in ``symk[d]``, read in place: a row
    sliced at every child costs an atomic reference count up and down."""
    if not canonical:
        return plain ^ zob[side, cell]
    best = symk[d, 0] ^ zob[side, syms[0, cell]]
    for s in range(1, syms.shape[0]):
        k = symk[d, s] ^ zob[side, syms[s, cell]]
        if k < best:
            best = k
    return best


@njit(**NO_RUNTIME)  # (no allocation: see NO_RUNTIME)
def _replay_holds(
    move, defender, attacker, path, row, plen, stack, cells, lines, sums, deltas, line_cells,
    cell_lines, cell_degree, n,
):
    """Whether the attacker's threat win ``path[row]`` still wins after the defender plays
    ``move`` (a cell off the path): the attacker replays its threats, the defender blocks
    each, and the defender never gets a win cell of its own on the attacker's turn."""
    push(move, defender, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
    stack[0] = move
    top = 1
    holds = False
    i = 0
    while i < plen:
        if open_lines(attacker, n - 1, sums, n) > 0:
            holds = True
            break
        count, _ = win_cells(defender, cells, lines, sums, line_cells, cell_lines, cell_degree,
                             n)
        a = path[row, i]
        if count > 0 or cells[a] != 0:
            break
        push(a, attacker, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        stack[top] = a
        top += 1
        threats, w = win_cells(attacker, cells, lines, sums, line_cells, cell_lines,
                               cell_degree, n)
        if threats >= 2:
            holds = True
            break
        if threats == 0:
            break
        push(w, defender, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        stack[top] = w
        top += 1
        i += 2
    while top > 0:
        top -= 1
        side = defender if top == 0 or top % 2 == 0 else attacker
        pop(stack[top], side, cells, lines, sums, deltas, line_cells, cell_lines,
            cell_degree, n)
    return holds


@njit(cache=True)
def dfpn(
    cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n,
    side, attacker, plain_key, sym_keys, syms, zob, sym_plies, stones,
    keys, pn, dn, work,
    tss_keys, tss_scratch, tss_path, tss_budget, tss_threats,
    node_budget, deadline, stop, stats, use_replay,
):
    """Run df-pn from the position until it is proved or disproved for ``attacker`` or a
    budget runs out; returns ``(pn, dn)`` of the root (pn 0: the attacker wins)."""
    size = cells.shape[0]
    nsym = syms.shape[0]
    frames = size + 2
    # a frame's thresholds: its proof and disproof numbers must stay below them
    moves, n_moves, _, th_pn, th_dn, _ = frame_stacks(frames, size, PN_INF - 1, PN_INF - 1)
    fkey = np.zeros(frames, dtype=np.uint64)
    fplain = np.zeros(frames, dtype=np.uint64)
    played = np.zeros(frames, dtype=np.int32)
    start_nodes = np.zeros(frames, dtype=np.int64)
    symk = np.zeros((frames, nsym), dtype=np.uint64)
    tpath = np.zeros((frames, 2 * MAX_THREATS + 4), dtype=np.int32)
    plen = np.zeros(frames, dtype=np.int32)
    replay = np.zeros(2 * MAX_THREATS + 8, dtype=np.int32)
    tss_nodes = np.zeros(1, dtype=np.int64)  # the threat searches' nodes, into stats at the end
    ckey = np.zeros((frames, size), dtype=np.uint64)  # a frame's children's keys, by move
    fresh = np.zeros((frames, size), dtype=np.int8)  # a child's fate off the table, by move
    half = np.uint64(keys.shape[0] - 2)  # a key's bucket: key & half (see lookup)
    tss_mask = np.uint64(tss_keys.shape[0] - 1)

    canonical0 = stones < sym_plies
    root_key = plain_key
    if canonical0:
        root_key = sym_keys[0]
        for s in range(1, nsym):
            if sym_keys[s] < root_key:
                root_key = sym_keys[s]
    for s in range(nsym):
        symk[0, s] = sym_keys[s]
    fkey[0] = root_key
    fplain[0] = plain_key
    d = 0
    to_move = side
    mode = _ENTER
    while True:
        if mode == _ENTER:
            stats[S_NODES] += 1
            start_nodes[d] = stats[S_NODES]
            if d > stats[S_MAX_DEPTH]:
                stats[S_MAX_DEPTH] = d
            if (stats[S_NODES] & 255) == 0 and (
                stopped(stop, deadline) or (node_budget > 0 and stats[S_NODES] > node_budget)
            ):
                stats[S_ABORTED] = 1
            if stats[S_ABORTED] != 0:
                break
            key = fkey[d]
            slot, found = lookup(keys, pn, dn, key)
            mode = _LOOP
            if found and (pn[slot] >= th_pn[d] or dn[slot] >= th_dn[d]):
                mode = _UP
            elif not found:
                # first visit: the exact shortcuts, then the threat search
                s = to_move
                o = 1 - s
                is_or = s == attacker
                p = np.int64(-1)
                q = np.int64(-1)
                if open_lines(s, n - 1, sums, n) > 0:
                    p, q = (0, PN_INF) if is_or else (PN_INF, 0)
                else:
                    count, threat = win_cells(o, cells, lines, sums, line_cells, cell_lines,
                                              cell_degree, n)
                    attackable = all_open_lines(attacker, sums)
                    empties = size - stones - d  # (cells are only filled by the pushes)
                    if count >= 2:
                        p, q = (PN_INF, 0) if is_or else (0, PN_INF)
                    elif empties == 0 or attackable == 0:
                        p, q = PN_INF, 0  # a draw: the attacker has not won
                    elif count <= 1 and open_lines(s, n - 2, sums, n) > 0:
                        stats[S_EVALS] += 1
                        if threat_search(
                            cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
                            n, s, fplain[d], zob, tss_threats, tss_budget, tss_keys,
                            tss_path, tss_nodes, tss_scratch, deadline,
                        ) > 0:
                            p, q = (0, PN_INF) if is_or else (PN_INF, 0)
                if p >= 0:
                    _store(keys, pn, dn, work, key, p, q, 1)
                    mode = _UP
            if mode == _LOOP:
                # generate the moves: the block when forced, else every empty cell
                s = to_move
                count, threat = win_cells(1 - s, cells, lines, sums, line_cells, cell_lines,
                                          cell_degree, n)
                if count == 1:
                    moves[d, 0] = threat
                    n_moves[d] = 1
                else:
                    m = 0
                    for c in range(size):
                        if cells[c] == 0:
                            moves[d, m] = c
                            m += 1
                    n_moves[d] = m
                canonical = stones + d + 1 < sym_plies
                for i in range(n_moves[d]):
                    ckey[d, i] = _child_key_at(symk, d, syms, zob, s, moves[d, i], fplain[d],
                                               canonical)
                    fresh[d, i] = _UNKNOWN
                # at a defender node, the attacker's threat win as if it were to move: every
                # defender move off its path that leaves it intact is refuted by it
                plen[d] = 0
                if use_replay and s != attacker and count == 0 and (
                    open_lines(attacker, n - 2, sums, n) > 0
                ):
                    plies = threat_search(
                        cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
                        n, attacker, fplain[d], zob, tss_threats, tss_budget, tss_keys,
                        tss_path, tss_nodes, tss_scratch, deadline,
                    )
                    if plies > 0:
                        plen[d] = plies
                        for i in range(plies):
                            tpath[d, i] = tss_path[i]
        if mode == _LOOP:
            s = to_move
            is_or = s == attacker
            sum_n = np.int64(0)
            best_n = PN_INF + 1
            second_n = PN_INF + 1
            best_i = -1
            best_other = np.int64(0)
            # the children's table slots asked for at once: their misses overlap, where one
            # look-up after another waited on memory for each
            for i in range(n_moves[d]):
                base = np.int64(ckey[d, i] & half)
                prefetch(keys, base)
                prefetch(pn, base)
                prefetch(dn, base)
            # OR node: the proof number is the least child's, the disproof number the sum;
            # AND node: the other way round. "n" is the number minimised, "other" summed.
            for i in range(n_moves[d]):
                c = moves[d, i]
                ck = ckey[d, i]
                cslot, cfound = lookup(keys, pn, dn, ck)
                if cfound:
                    cp = pn[cslot]
                    cd = dn[cslot]
                else:
                    # what a child not in the table is, found once a frame (the position
                    # and the frame's path do not change while the frame lives)
                    fate = fresh[d, i]
                    if fate == _UNKNOWN:
                        on_path = False
                        for j in range(plen[d]):
                            if tpath[d, j] == c:
                                on_path = True
                        if plen[d] > 0 and not on_path and _replay_holds(
                            c, s, attacker, tpath, d, plen[d], replay, cells, lines, sums,
                            deltas, line_cells, cell_lines, cell_degree, n,
                        ):
                            fate = _REFUTED
                        # unvisited: threats and blocks of the other side's lines of n-2
                        # are the promising moves for either side
                        elif (through(c, code_of(s, n - 2), lines, cell_lines, cell_degree) > 0
                              or through(c, code_of(1 - s, n - 2), lines, cell_lines,
                                         cell_degree) > 0):
                            fate = _KEEN
                        else:
                            fate = _DULL
                        fresh[d, i] = fate
                    if fate == _REFUTED:
                        stats[S_REPLAYS] += 1
                        cp = np.int64(0)
                        cd = PN_INF
                        _store(keys, pn, dn, work, ck, cp, cd, 1)
                    else:
                        cp = np.int64(1)
                        cd = np.int64(1)
                        if fate == _DULL:
                            if is_or:
                                cp = 2
                            else:
                                cd = 2
                nval = cp if is_or else cd
                oval = cd if is_or else cp
                sum_n += oval
                if sum_n > PN_INF:
                    sum_n = PN_INF
                if nval < best_n:
                    second_n = best_n
                    best_n = nval
                    best_i = i
                    best_other = oval
                elif nval < second_n:
                    second_n = nval
            if is_or:
                node_pn, node_dn = best_n, sum_n
            else:
                node_pn, node_dn = sum_n, best_n
            if node_pn > PN_INF:
                node_pn = PN_INF
            if node_dn > PN_INF:
                node_dn = PN_INF
            if d == 0:
                stats[S_ROOT_PN] = node_pn
                stats[S_ROOT_DN] = node_dn
            if node_pn == 0 or node_dn == 0 or node_pn >= th_pn[d] or node_dn >= th_dn[d]:
                _store(keys, pn, dn, work, fkey[d], node_pn, node_dn,
                       stats[S_NODES] - start_nodes[d] + 1)
                mode = _UP
            else:
                # thresholds of the chosen child
                if is_or:
                    limit = th_pn[d]
                    grow = (second_n * EPSILON_NUM + EPSILON_DEN - 1) // EPSILON_DEN
                    child_n = min(limit, max(second_n + 1, grow))
                    child_other = th_dn[d] - node_dn + best_other
                    tp, td = child_n, child_other
                else:
                    limit = th_dn[d]
                    grow = (second_n * EPSILON_NUM + EPSILON_DEN - 1) // EPSILON_DEN
                    child_n = min(limit, max(second_n + 1, grow))
                    child_other = th_pn[d] - node_pn + best_other
                    tp, td = child_other, child_n
                c = moves[d, best_i]
                played[d] = c
                push(c, s, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
                fplain[d + 1] = fplain[d] ^ zob[s, c]
                for t in range(nsym):
                    symk[d + 1, t] = symk[d, t] ^ zob[s, syms[t, c]]
                fkey[d + 1] = ckey[d, best_i]
                # the child's threat searches' first probes: for the side to move there, and
                # for the attacker (the replay) where that is the other side
                prefetch(tss_keys, np.int64((fplain[d + 1] ^ zob[2, 1 - s]) & tss_mask))
                if 1 - s != attacker:
                    prefetch(tss_keys, np.int64((fplain[d + 1] ^ zob[2, attacker]) & tss_mask))
                th_pn[d + 1] = min(tp, PN_INF - 1)
                th_dn[d + 1] = min(td, PN_INF - 1)
                d += 1
                to_move = 1 - to_move
                mode = _ENTER
                continue
        # mode == _UP
        if d == 0:
            break
        d -= 1
        to_move = 1 - to_move
        pop(played[d], to_move, cells, lines, sums, deltas, line_cells, cell_lines,
            cell_degree, n)
        mode = _LOOP
    stats[S_TSS_NODES] += tss_nodes[0]
    # unwind an aborted search so the position arrays are as they were
    while d > 0:
        d -= 1
        to_move = 1 - to_move
        pop(played[d], to_move, cells, lines, sums, deltas, line_cells, cell_lines,
            cell_degree, n)
    slot, found = lookup(keys, pn, dn, fkey[0])
    if found and (pn[slot] == 0 or dn[slot] == 0):
        return pn[slot], dn[slot]
    if stats[S_ROOT_PN] > 0 or stats[S_ROOT_DN] > 0:
        return stats[S_ROOT_PN], stats[S_ROOT_DN]
    if found:
        return pn[slot], dn[slot]
    return np.int64(1), np.int64(1)
