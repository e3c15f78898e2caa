"""A proof-number solver for "can this side force a win?", compiled by numba.

Depth-first proof-number search (df-pn, Nagai 2002, with the 1+epsilon trick of Pawlewicz
and Lew) over a transposition table. The attacker's nodes are OR nodes, the defender's AND
nodes. Every node first gets the game's exact shortcuts (a win cell for the side to move; two
win cells of the other side; a single win cell of the other side makes its block the only
move) and then a threat-space search (:mod:`engine.threats`) for the side to move: a
continuous-threat win of the attacker proves an attacker node, one of the defender disproves
a defender node. Only moves are searched otherwise; nothing is pruned by heuristics, so a
proved root is a proof.

Keys are Zobrist keys made canonical under the board's symmetries (the least of the keys of
the position's images, kept incrementally) for the first ``sym_plies`` stones: transpositions
by symmetry are what the opening is full of. The search is iterative with explicit frames
(numba's cache is not safe with recursive functions) and stops at a node budget, a deadline
or a stop flag.

:func:`prove` answers for one position; :func:`winning_move` reads the proving move of a
proved position from the table (re-proving it if the entry was overwritten), which is what
building an opening book needs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.board import Board
from engine.geometry import Cell, Geometry
from engine.kernel import board_full, empty_cells, frame_stacks, stopped, tables_for
from engine.threats import (
    MAX_THREATS,
    ThreatTable,
    make_scratch,
    pop,
    push,
    threat_search,
    win_cells,
    zobrist,
)

PN_INF = 1 << 40
EPSILON_NUM, EPSILON_DEN = 5, 4  # 1 + epsilon = 1.25

# stats slots
S_NODES, S_EVALS, S_TSS_NODES, S_ABORTED, S_MAX_DEPTH, S_ROOT_PN, S_ROOT_DN = 0, 1, 2, 3, 4, 5, 6
S_REPLAYS = 7
STATS_SIZE = 8

_ENTER, _LOOP, _UP = 0, 1, 2


@dataclass
class SolverTables:
    """The solver's transposition table: keys, proof and disproof numbers, work done."""

    keys: np.ndarray  # uint64[N]
    pn: np.ndarray  # int64[N]
    dn: np.ndarray  # int64[N]
    work: np.ndarray  # int64[N]: nodes spent below the entry (for replacement)

    @classmethod
    def create(cls, bits: int) -> SolverTables:
        size = 1 << bits
        return cls(np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int64),
                   np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))


@njit(cache=True, inline="always")
def _lookup(keys, pn, dn, key):  # type: ignore[no-untyped-def]
    """``(slot, found)`` for ``key`` in its two-slot bucket."""
    base = np.int64(key & np.uint64(keys.shape[0] - 2))
    if keys[base] == key:
        return base, True
    if keys[base + 1] == key:
        return base + 1, True
    return base, False


@njit(cache=True, inline="always")
def _store(keys, pn, dn, work, key, p, d, w):  # type: ignore[no-untyped-def]
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
def _child_key(sym_keys, syms, zob, side, cell, plain, canonical):  # type: ignore[no-untyped-def]
    """The key of the position after ``side`` plays ``cell``."""
    if not canonical:
        return plain ^ zob[side, cell]
    best = sym_keys[0] ^ zob[side, syms[0, cell]]
    for s in range(1, syms.shape[0]):
        k = sym_keys[s] ^ zob[side, syms[s, cell]]
        if k < best:
            best = k
    return best


@njit(cache=True)
def _replay_holds(  # type: ignore[no-untyped-def]
    move, defender, attacker, path, plen, stack, cells, counts, hist, cellk, line_cells,
    cell_lines, cell_degree, n,
):
    """Whether the attacker's threat win ``path`` still wins after the defender plays
    ``move`` (a cell off the path): the attacker replays its threats, the defender blocks
    each, and the defender never gets a win cell of its own on the attacker's turn."""
    push(move, defender, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
    stack[0] = move
    top = 1
    holds = False
    i = 0
    while i < plen:
        if hist[attacker, n - 1] > 0:
            holds = True
            break
        count, _ = win_cells(defender, cells, cellk, n)
        a = path[i]
        if count > 0 or cells[a] != 0:
            break
        push(a, attacker, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
        stack[top] = a
        top += 1
        threats, w = win_cells(attacker, cells, cellk, n)
        if threats >= 2:
            holds = True
            break
        if threats == 0:
            break
        push(w, defender, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
        stack[top] = w
        top += 1
        i += 2
    while top > 0:
        top -= 1
        side = defender if top == 0 or top % 2 == 0 else attacker
        pop(stack[top], side, cells, counts, hist, cellk, line_cells, cell_lines,
            cell_degree, n)
    return holds


@njit(cache=True)
def dfpn(  # type: ignore[no-untyped-def]
    cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n,
    side, attacker, plain_key, sym_keys, syms, zob, sym_plies, stones,
    keys, pn, dn, work,
    tss_keys, tss_depth, tss_scratch, tss_path, tss_budget, tss_threats,
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
    tss_nodes = stats[S_TSS_NODES:S_TSS_NODES + 1]  # the threat searches count into stats

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
            slot, found = _lookup(keys, pn, dn, key)
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
                if hist[s, n - 1] > 0:
                    p, q = (0, PN_INF) if is_or else (PN_INF, 0)
                else:
                    count, threat = win_cells(o, cells, cellk, n)
                    open_lines = 0
                    for k in range(n):
                        open_lines += hist[attacker, k]
                    if count >= 2:
                        p, q = (PN_INF, 0) if is_or else (0, PN_INF)
                    elif open_lines == 0 or board_full(cells):
                        p, q = PN_INF, 0  # a draw: the attacker has not won
                    elif count <= 1 and hist[s, n - 2] > 0:
                        stats[S_EVALS] += 1
                        if threat_search(
                            cells, counts, hist, cellk, line_cells, cell_lines, cell_degree,
                            n, s, fplain[d], zob, tss_threats, tss_budget, tss_keys,
                            tss_depth, tss_path, tss_nodes, tss_scratch, deadline,
                        ) > 0:
                            p, q = (0, PN_INF) if is_or else (PN_INF, 0)
                if p >= 0:
                    _store(keys, pn, dn, work, key, p, q, 1)
                    mode = _UP
            if mode == _LOOP:
                # generate the moves: the block when forced, else every empty cell
                s = to_move
                count, threat = win_cells(1 - s, cells, cellk, n)
                if count == 1:
                    moves[d, 0] = threat
                    n_moves[d] = 1
                else:
                    n_moves[d] = empty_cells(cells, moves[d])
                # at a defender node, the attacker's threat win as if it were to move: every
                # defender move off its path that leaves it intact is refuted by it
                plen[d] = 0
                if use_replay and s != attacker and count == 0 and hist[attacker, n - 2] > 0:
                    plen[d] = threat_search(
                        cells, counts, hist, cellk, line_cells, cell_lines, cell_degree,
                        n, attacker, fplain[d], zob, tss_threats, tss_budget, tss_keys,
                        tss_depth, tss_path, tss_nodes, tss_scratch, deadline,
                    )
                    for i in range(plen[d]):
                        tpath[d, i] = tss_path[i]
        if mode == _LOOP:
            s = to_move
            is_or = s == attacker
            canonical = stones + d + 1 < sym_plies
            sum_n = np.int64(0)
            best_n = PN_INF + 1
            second_n = PN_INF + 1
            best_i = -1
            best_other = np.int64(0)
            # OR node: the proof number is the least child's, the disproof number the sum;
            # AND node: the other way round. "n" is the number minimised, "other" summed.
            for i in range(n_moves[d]):
                c = moves[d, i]
                ck = _child_key(symk[d], syms, zob, s, c, fplain[d], canonical)
                cslot, cfound = _lookup(keys, pn, dn, ck)
                on_path = False
                for j in range(plen[d]):
                    if tpath[d, j] == c:
                        on_path = True
                if cfound:
                    cp = pn[cslot]
                    cd = dn[cslot]
                elif plen[d] > 0 and not on_path and _replay_holds(
                    c, s, attacker, tpath[d], plen[d], replay, cells, counts, hist, cellk,
                    line_cells, cell_lines, cell_degree, n,
                ):
                    stats[S_REPLAYS] += 1
                    cp = np.int64(0)
                    cd = PN_INF
                    _store(keys, pn, dn, work, ck, cp, cd, 1)
                else:
                    # unvisited: threats and blocks of the other side's lines of n-2 are
                    # the promising moves for either side
                    cp = np.int64(1)
                    cd = np.int64(1)
                    keen = cellk[s, n - 2, c] > 0 or cellk[1 - s, n - 2, c] > 0
                    if not keen:
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
                push(c, s, cells, counts, hist, cellk, line_cells, cell_lines, cell_degree, n)
                fplain[d + 1] = fplain[d] ^ zob[s, c]
                for t in range(nsym):
                    symk[d + 1, t] = symk[d, t] ^ zob[s, syms[t, c]]
                fkey[d + 1] = _child_key(symk[d], syms, zob, s, c, fplain[d], canonical)
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
        pop(played[d], to_move, cells, counts, hist, cellk, line_cells, cell_lines,
            cell_degree, n)
        mode = _LOOP
    # unwind an aborted search so the position arrays are as they were
    while d > 0:
        d -= 1
        to_move = 1 - to_move
        pop(played[d], to_move, cells, counts, hist, cellk, line_cells, cell_lines,
            cell_degree, n)
    slot, found = _lookup(keys, pn, dn, fkey[0])
    if found and (pn[slot] == 0 or dn[slot] == 0):
        return pn[slot], dn[slot]
    if stats[S_ROOT_PN] > 0 or stats[S_ROOT_DN] > 0:
        return stats[S_ROOT_PN], stats[S_ROOT_DN]
    if found:
        return pn[slot], dn[slot]
    return np.int64(1), np.int64(1)


@dataclass(frozen=True)
class Proof:
    """What :meth:`Solver.prove` found: proved, disproved, or neither within its budget."""

    pn: int
    dn: int
    nodes: int
    tss_nodes: int
    seconds: float

    @property
    def proved(self) -> bool:
        return self.pn == 0 and self.dn != 0  # (0, 0) is no result (an empty table slot)

    @property
    def disproved(self) -> bool:
        return self.dn == 0 and self.pn != 0


class Solver:
    """df-pn for one board, its tables kept between calls."""

    def __init__(self, geometry: Geometry, tt_bits: int = 22, sym_plies: int = 12,
                 tss_budget: int = 500, tss_threats: int = MAX_THREATS,
                 replay: bool = True) -> None:
        self.geometry = geometry
        self.t = tables_for(geometry)
        self.table = SolverTables.create(tt_bits)
        self.threats = ThreatTable(20)
        self.scratch = make_scratch(self.t.size)
        self.path = np.zeros(2 * MAX_THREATS + 4, dtype=np.int32)
        self.syms = np.array(geometry.symmetries, dtype=np.int32)
        self.zob = zobrist(self.t.size)
        self.sym_plies = sym_plies
        self.tss_budget = tss_budget
        self.tss_threats = tss_threats
        self.replay = replay

    def keys_of(self, board: Board) -> tuple[np.uint64, np.ndarray]:
        """The plain Zobrist key and the keys of every symmetric image."""
        plain = np.uint64(0)
        sym_keys = np.zeros(len(self.syms), dtype=np.uint64)
        for ply, cell in enumerate(board.moves):
            side = ply & 1
            plain ^= self.zob[side, cell]
            sym_keys ^= self.zob[side, self.syms[:, cell]]
        return plain, sym_keys

    def prove(self, board: Board, attacker: int | None = None, *, nodes: int = 0,
              seconds: float = 0.0, stop: np.ndarray | None = None) -> Proof:
        """Whether ``attacker`` (the side to move by default) forces a win from ``board``."""
        from engine.threats import Position

        started = time.perf_counter()
        pos = Position.from_board(board)
        plain, sym_keys = self.keys_of(board)
        stats = np.zeros(STATS_SIZE, dtype=np.int64)
        tab = self.table
        t = self.t
        p, d = dfpn(
            pos.cells, pos.counts, pos.hist, pos.cellk, t.line_cells, t.cell_lines,
            t.cell_degree, t.n, pos.side, pos.side if attacker is None else attacker,
            plain, sym_keys, self.syms, self.zob, self.sym_plies, board.ply,
            tab.keys, tab.pn, tab.dn, tab.work,
            self.threats.keys, self.threats.depth, self.scratch, self.path,
            self.tss_budget, self.tss_threats,
            nodes, started + seconds if seconds else 0.0,
            stop if stop is not None else np.zeros(1, dtype=np.int8), stats, self.replay,
        )
        return Proof(int(p), int(d), int(stats[S_NODES]), int(stats[S_TSS_NODES]),
                     time.perf_counter() - started)

    def losing_ply(self, moves: Sequence[Cell], side: int, seconds: float) -> int | None:
        """For a game (``moves`` from the empty board) that ``side`` lost: the index of the
        first move of ``side`` after which the opponent's win is proved within ``seconds``,
        found walking back from the end until a proof fails; None when not even the last
        move is proved to lose."""
        board = Board(self.geometry, list(moves))
        blunder = None
        for ply in range(len(moves) - 1, -1, -1):
            while board.ply > ply + 1:
                board.pop()
            if ply % 2 != side or board.outcome() is not None:
                continue
            if not self.prove(board, attacker=side ^ 1, seconds=seconds).proved:
                break
            blunder = ply
        return blunder

    def status(self, board: Board) -> tuple[int, int] | None:
        """``(pn, dn)`` of ``board`` from the table, or None if it is not there."""
        plain, sym_keys = self.keys_of(board)
        key = sym_keys.min() if board.ply < self.sym_plies else plain
        tab = self.table
        slot, found = _lookup(tab.keys, tab.pn, tab.dn, np.uint64(key))
        return (int(tab.pn[slot]), int(tab.dn[slot])) if found else None

    def proved_child(self, board: Board) -> Cell | None:
        """A move of the side to move whose position the table holds as proved, or None."""
        for cell in board.legal_moves:
            board.push(cell)
            entry = self.status(board)
            board.pop()
            if entry is not None and entry[0] == 0:
                return cell
        return None

    def winning_move(self, board: Board, attacker: int | None = None,
                     nodes: int = 1_000_000) -> Cell | None:
        """A move of the side to move (the attacker) whose position is proved, from the table
        or, when no child is recorded as proved, by proving the children in turn."""
        attacker = board.turn if attacker is None else attacker
        found = self.proved_child(board)
        if found is not None:
            return found
        for cell in board.legal_moves:
            board.push(cell)
            won = board.winning_line is not None
            proof = None if won else self.prove(board, attacker, nodes=nodes)
            board.pop()
            if won or (proof is not None and proof.proved):
                return cell
        return None


def warm_up() -> float:
    """Compile (or load) the solver, and the table lookup the master's proved move is read
    with; returns the seconds it took."""
    started = time.perf_counter()
    solver = Solver(Board("3x3").geometry, tt_bits=8, sym_plies=3)
    board = Board("3x3", [4])
    solver.prove(board, nodes=200)
    solver.proved_child(board)
    return time.perf_counter() - started
