"""A proof-number solver for "can this side force a win?": df-pn with its tables kept.

:class:`Solver` holds the transposition table of :func:`engine.kernels.dfpn.dfpn` (the search itself
and how it proves) and the threat search's between calls. :meth:`Solver.prove` answers for one
position; :meth:`Solver.winning_move` reads the proving move of a proved position from the
table (re-proving it if the entry was overwritten), which is what building an opening book
needs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from engine.kernels.dfpn import S_NODES, S_TSS_NODES, STATS_SIZE, child_key, dfpn, lookup
from engine.kernels.negamax import tables_for
from engine.kernels.threats import (
    MAX_THREATS,
    Position,
    ThreatTable,
    both_wins,
    make_scratch,
    pop,
    push,
    threat_search,
    zobrist,
)
from engine.rules.board import Board
from engine.rules.geometry import Cell, Geometry

THREAT_NODES = 20_000  # threat-search nodes to find a leaf's win again (df-pn's own: 500)


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
        self.scratch = make_scratch(self.t.size, self.t.n)
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
        started = time.perf_counter()
        pos = Position.from_board(board)
        plain, sym_keys = self.keys_of(board)
        stats = np.zeros(STATS_SIZE, dtype=np.int64)
        tab = self.table
        t = self.t
        p, d = dfpn(
            pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
            t.cell_degree, t.n, pos.side, pos.side if attacker is None else attacker,
            plain, sym_keys, self.syms, self.zob, self.sym_plies, board.ply,
            tab.keys, tab.pn, tab.dn, tab.work,
            self.threats.keys, self.scratch, self.path,
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
        slot, found = lookup(tab.keys, tab.pn, tab.dn, np.uint64(key))
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

    def proof_plies(self, board: Board, attacker: int, deadline: float = 0.0) -> int | None:
        """An upper bound on the plies to ``attacker``'s win from ``board``, which
        :meth:`prove` proved, read off the proof df-pn left in the table: at the attacker's
        nodes one proved child (the forced block where the defender threatens), at the
        defender's every reply (the block alone where the attacker threatens: any other
        reply loses in two plies), each leaf a line completed, a double threat, or a
        continuous-threat win found again. None where the tree is not all in the table
        (an entry overwritten, a leaf the threat search does not find again within its
        budget) or ``deadline`` (``time.perf_counter``; 0: none) passes first: df-pn knows
        that the position is won, not in how many plies."""
        if board.outcome() is not None:
            return None
        walk = _ProofWalk(self, attacker, deadline, board)
        plain, sym_keys = self.keys_of(board)
        try:
            return walk.plies(plain, sym_keys)
        except _NoBound:
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


@njit(cache=True)
def _proved_children(cells, side, plain, sym_keys, syms, zob, canonical, keys, pn, dn):
    """The empty cells (in cell order) and, for each, whether the table holds the position
    after ``side`` plays it as proved (pn 0): one call for a node's children."""
    size = cells.shape[0]
    moves = np.empty(size, dtype=np.int64)
    proved = np.zeros(size, dtype=np.bool_)
    count = 0
    for c in range(size):
        if cells[c] == 0:
            key = child_key(sym_keys, syms, zob, side, c, plain, canonical)
            slot, found = lookup(keys, pn, dn, key)
            moves[count] = c
            proved[count] = found and pn[slot] == 0 and dn[slot] != 0
            count += 1
    return moves[:count], proved[:count]


class _NoBound(Exception):
    """The proof's tree is not all in the table below a position, or the walk ran out of
    time (:class:`_Timeout`)."""


class _Timeout(_NoBound):
    """The walk's deadline passed."""


class _ProofWalk:
    """One :meth:`Solver.proof_plies` walk: the position in the threat search's form (moved
    with the walk), the solver's tables read, positions memoised."""

    def __init__(self, solver: Solver, attacker: int, deadline: float, board: Board) -> None:
        self.solver = solver
        self.attacker = attacker
        self.deadline = deadline
        self.t = solver.t
        self.pos = Position.from_board(board)
        self.turn = board.turn
        self.ply = board.ply
        self.x, self.o = board.stones
        self.memo: dict[tuple[int, int], int] = {}
        self.unbounded: set[tuple[int, int]] = set()  # positions the walk failed below
        self.visits = 0
        self.stats = np.zeros(1, dtype=np.int64)

    def push(self, cell: Cell) -> bool:
        """Play ``cell`` for the side to move; True when it completes a line."""
        t, p = self.t, self.pos
        won = bool(push(cell, self.turn, p.cells, p.lines, p.sums, p.deltas, t.line_cells,
                        t.cell_lines, t.cell_degree, t.n))
        if self.turn == 0:
            self.x |= 1 << cell
        else:
            self.o |= 1 << cell
        self.turn ^= 1
        self.ply += 1
        return won

    def pop(self, cell: Cell) -> None:
        t, p = self.t, self.pos
        self.turn ^= 1
        self.ply -= 1
        pop(cell, self.turn, p.cells, p.lines, p.sums, p.deltas, t.line_cells, t.cell_lines,
            t.cell_degree, t.n)
        if self.turn == 0:
            self.x &= ~(1 << cell)
        else:
            self.o &= ~(1 << cell)

    def children(self, plain: np.uint64, sym_keys: np.ndarray
                 ) -> tuple[list[Cell], list[bool]]:
        """The empty cells and whether the table holds each child as proved."""
        s = self.solver
        tab = s.table
        moves, proved = _proved_children(
            self.pos.cells, self.turn, np.uint64(plain), sym_keys, s.syms, s.zob,
            self.ply + 1 < s.sym_plies, tab.keys, tab.pn, tab.dn)
        return moves.tolist(), proved.tolist()

    def child(self, cell: Cell, plain: np.uint64, sym_keys: np.ndarray
              ) -> tuple[np.uint64, np.ndarray]:
        s = self.solver
        return plain ^ s.zob[self.turn, cell], sym_keys ^ s.zob[self.turn, s.syms[:, cell]]

    def plies(self, plain: np.uint64, sym_keys: np.ndarray, won: bool = False) -> int:
        """Plies to the attacker's win from the position (its keys given; ``won``: the last
        move completed a line), or _NoBound."""
        self.visits += 1
        if self.deadline and not self.visits & 15 and time.perf_counter() > self.deadline:
            raise _Timeout
        if won:
            if self.turn != self.attacker:  # the attacker's last move completed it
                return 0
            raise _NoBound
        key = (self.x, self.o)
        found = self.memo.get(key)
        if found is not None:
            return found
        if key in self.unbounded:
            raise _NoBound
        try:
            result = self._node(plain, sym_keys)
        except _Timeout:
            raise
        except _NoBound:
            self.unbounded.add(key)
            raise
        self.memo[key] = result
        return result

    def _node(self, plain: np.uint64, sym_keys: np.ndarray) -> int:
        p, t = self.pos, self.t
        own, _, other, block = both_wins(self.turn, p.cells, p.lines, p.sums, t.line_cells,
                                         t.cell_lines, t.cell_degree, t.n)
        if self.turn == self.attacker:
            if own:
                return 1
            if other > 1:
                raise _NoBound
            return self._or_node(int(block) if other else -1, plain, sym_keys)
        if own:
            raise _NoBound
        if other > 1:
            return 2  # a block, then the other line completed
        moves, proved = self.children(plain, sym_keys)
        if not moves:
            raise _NoBound  # a full board
        if other:  # the block, or a loss in two plies
            i = moves.index(int(block))
            return max(2, self._then(int(block), proved[i], plain, sym_keys) + 1)
        return max(self._then(cell, known, plain, sym_keys) + 1
                   for cell, known in zip(moves, proved, strict=True))

    def _then(self, cell: Cell, known: bool, plain: np.uint64, sym_keys: np.ndarray) -> int:
        """Plies after the defender's ``cell`` (``known``: proved in the table): the table's
        proof below it, else the attacker's continuous-threat win there (df-pn's replay of
        one proves it so)."""
        child_plain, child_syms = self.child(cell, plain, sym_keys)
        won = self.push(cell)
        try:
            if won:
                return self.plies(child_plain, child_syms, won)
            if known:
                try:
                    return self.plies(child_plain, child_syms)
                except _Timeout:
                    raise
                except _NoBound:
                    pass  # proved by a threat win df-pn found there: find it again
            return self._leaf(child_plain, THREAT_NODES)
        finally:
            self.pop(cell)

    def _or_node(self, block: Cell, plain: np.uint64, sym_keys: np.ndarray) -> int:
        """The attacker to move (``block``: the defender's win cell, or -1): the
        continuous-threat win df-pn's first visit proves most of these with, else a proved
        child (the block, where the defender threatens), else a longer threat search."""
        try:
            return self._leaf(plain, self.solver.tss_budget)
        except _NoBound:
            pass
        moves, proved = self.children(plain, sym_keys)
        for cell, known in zip(moves, proved, strict=True):
            if not known or (block >= 0 and cell != block):
                continue
            child_plain, child_syms = self.child(cell, plain, sym_keys)
            won = self.push(cell)
            try:
                return 1 if won else self.plies(child_plain, child_syms) + 1
            except _Timeout:
                raise
            except _NoBound:
                continue  # another proved child may be in the table in full
            finally:
                self.pop(cell)
        return self._leaf(plain, THREAT_NODES)

    def _leaf(self, plain: np.uint64, budget: int) -> int:
        """The attacker's continuous-threat win, if to move, within ``budget`` nodes."""
        if self.turn != self.attacker:
            raise _NoBound
        t, p, s = self.t, self.pos, self.solver
        plies = threat_search(
            p.cells, p.lines, p.sums, p.deltas, t.line_cells, t.cell_lines, t.cell_degree,
            t.n, self.attacker, np.uint64(plain), s.zob, MAX_THREATS, budget,
            s.threats.keys, s.path, self.stats, s.scratch,
        )
        if plies <= 0:
            raise _NoBound
        return int(plies)


def warm_up() -> float:
    """Compile (or load) the solver, and the table lookup the master's proved move is read
    with; returns the seconds it took."""
    started = time.perf_counter()
    solver = Solver(Board("3x3").geometry, tt_bits=8, sym_plies=3)
    board = Board("3x3", [4])
    solver.prove(board, nodes=200)
    solver.proved_child(board)
    solver.proof_plies(board, attacker=0)  # the walk's compiled steps
    return time.perf_counter() - started
