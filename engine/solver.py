"""A proof-number solver for "can this side force a win?": df-pn with its tables kept.

:class:`Solver` holds the transposition table of :func:`engine.dfpn.dfpn` (the search itself
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

from engine.board import Board
from engine.dfpn import S_NODES, S_TSS_NODES, STATS_SIZE, dfpn, lookup
from engine.geometry import Cell, Geometry
from engine.kernel import tables_for
from engine.threats import MAX_THREATS, ThreatTable, make_scratch, zobrist


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
