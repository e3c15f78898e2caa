"""A shallow AND/OR proof search: does the side to move force a win within a few free moves?

``forced_win`` returns the plies of a win it proves, or None; it follows the game's rules
only, and its leaves are threat-search wins or positions of the shipped proof, so a win it
returns is a proof. The fast path of ``engine.solved.truth`` off the proof's tree. docs/engine.md,
"The probe", has its rules at each node."""

from __future__ import annotations

import time
from functools import cache

import numpy as np
from numba import njit

from engine.kernels.negamax import tables_for
from engine.kernels.threats import (
    MAX_THREATS,
    O_UNIT,
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
from engine.rules.geometry import Cell
from engine.solved.proof import strategy_height
from engine.solved.strategy import VARIANT, proved_position

LEAF_NODES = 5_000  # threat-search nodes at a leaf
HARD_REPLIES = 2  # defender replies no leaf settles that a node above depth 0 follows
HEIGHT_SECONDS = 0.01  # to replay the proof's plies below a leaf (most take microseconds)
PROVED_BY_PROOF = -1  # plies of a win the proof's tables vouch for (height not replayed)


class OutOfTime(Exception):
    """The probe's deadline passed: no answer."""


@njit(cache=True)
def _ordered(side, cells, lines, line_cells, n, mine_weights, their_weights, threes_first):
    """The empty cells, best first (see :meth:`_Probe.ordered`), compiled."""
    size = cells.shape[0]
    empty = np.empty(size, dtype=np.int64)
    value = np.empty(size, dtype=np.int64)
    # per cell, the weights of the open lines through it (one pass over the lines), and
    # whether one of them holds n-2 of the side to move's stones
    weight = np.zeros(size, dtype=np.int64)
    two = np.zeros(size, dtype=np.bool_)
    for line in range(lines.shape[0]):
        code = lines[line]
        stones = (code % O_UNIT, code // O_UNIT)
        mine, theirs = (stones[1], stones[0]) if side else (stones[0], stones[1])
        w = 0
        if theirs == 0 and mine < n:
            w += mine_weights[mine]
        if mine == 0 and theirs < n:
            w += their_weights[theirs]
        for j in range(n):
            c = line_cells[line, j]
            weight[c] += w
            if theirs == 0 and mine == n - 2:
                two[c] = True
    count = 0
    for c in range(size):
        if cells[c] == 0:
            v = weight[c]
            if threes_first and two[c]:
                v += 1 << 40
            empty[count] = c
            value[count] = -v
            count += 1
    order = np.argsort(value[:count], kind="mergesort")  # stable: cell order among ties
    return empty[:count][order]


class _Probe:
    """One question's search: the position in the threat search's form, its stones as
    bitboards and its moves (the Board itself is made only where the proof's replay needs
    one), the deadline, and the positions proved or failed so far. Each step from Python is
    one compiled call (a move, both sides' win cells, the move order, a leaf's threat search):
    the probe spends its time in those calls' overhead, not in their work."""

    def __init__(self, board: Board, deadline: float, leaf_nodes: int, hard_replies: int,
                 table: ThreatTable) -> None:
        self.geometry = board.geometry
        self.moves = list(board.moves)
        self.root_ply = board.ply
        self.ply = board.ply
        self.turn = board.turn
        self.x, self.o = board.stones
        self.completed = [False]  # per ply from the root: whether its move completed a line
        self.t = tables_for(board.geometry)
        self.pos = Position.from_board(board)
        self.key = self.pos.key  # as a Python int: cheaper to update than a numpy scalar
        self.zob = zobrist(self.t.size)
        self.zob_int = [[int(k) for k in row] for row in self.zob]
        self.scratch = make_scratch(self.t.size, self.t.n)
        self.path = np.zeros(2 * MAX_THREATS + 4, dtype=np.int32)
        self.stats = np.zeros(1, dtype=np.int64)
        self.table = table
        self.deadline = deadline
        self.leaf_nodes = leaf_nodes
        self.hard_replies = hard_replies
        self.proof = board.geometry.name == VARIANT and board.turn == 0  # X attacks
        n = self.t.n
        self.mine_weights = np.array([4**k for k in range(n)], dtype=np.int64)
        self.their_weights = np.array([3**k for k in range(n)], dtype=np.int64)
        # keyed by the stones themselves, not a hash: a collision could not fake a proof
        self.won: dict[tuple[int, int], int] = {}  # plies (or PROVED_BY_PROOF)
        self.failed: dict[tuple[int, int], int] = {}  # the deepest search that failed
        self.nodes = 0
        self.move: Cell | None = None  # the root's winning move

    @property
    def stones(self) -> tuple[int, int]:
        return self.x, self.o

    @property
    def at_root(self) -> bool:
        return self.ply == self.root_ply

    @property
    def last_completed(self) -> bool:
        """Whether the last move completed a line (the game is over)."""
        return self.completed[-1]

    def push(self, cell: Cell) -> None:
        side = self.turn
        t, p = self.t, self.pos
        self.completed.append(bool(push(cell, side, p.cells, p.lines, p.sums, p.deltas,
                                        t.line_cells, t.cell_lines, t.cell_degree, t.n)))
        if side == 0:
            self.x |= 1 << cell
        else:
            self.o |= 1 << cell
        self.moves.append(cell)
        self.key ^= self.zob_int[side][cell]
        self.turn = side ^ 1
        self.ply += 1

    def pop(self) -> None:
        cell = self.moves.pop()
        self.completed.pop()
        side = self.turn ^ 1
        t, p = self.t, self.pos
        pop(cell, side, p.cells, p.lines, p.sums, p.deltas, t.line_cells, t.cell_lines,
            t.cell_degree, t.n)
        if side == 0:
            self.x &= ~(1 << cell)
        else:
            self.o &= ~(1 << cell)
        self.key ^= self.zob_int[side][cell]
        self.turn = side
        self.ply -= 1

    def then(self, cell: Cell, search) -> int | None:
        """``search()`` after ``cell``, one ply more for the move (the position restored)."""
        self.push(cell)
        try:
            result = search()
        finally:
            self.pop()
        if result is None:
            return None
        return PROVED_BY_PROOF if result == PROVED_BY_PROOF else result + 1

    def tick(self) -> None:
        self.nodes += 1
        if self.deadline and (self.nodes & 15) == 0 and time.perf_counter() > self.deadline:
            raise OutOfTime

    def wins(self) -> tuple[int, int, int, int]:
        """``(count, first, their count, their first)``: the empty cells that complete a line
        of the side to move, and of the other side."""
        p, t = self.pos, self.t
        mine, first, theirs, block = both_wins(self.turn, p.cells, p.lines, p.sums,
                                                t.line_cells, t.cell_lines, t.cell_degree, t.n)
        return int(mine), int(first), int(theirs), int(block)

    def ordered(self, threes_first: bool) -> list[Cell]:
        """The empty cells, best first for the side to move: by the open lines through them
        weighted by their stones (:func:`engine.rules.board.line_value`), those that make a three
        first if ``threes_first``."""
        return _ordered(self.turn, self.pos.cells, self.pos.lines, self.t.line_cells, self.t.n,
                        self.mine_weights, self.their_weights, threes_first).tolist()

    def leaf(self) -> int | None:
        """Plies of the side to move's win proved by a leaf check, or None."""
        t, p = self.t, self.pos
        self.stats[0] = 0
        plies = threat_search(
            p.cells, p.lines, p.sums, p.deltas, t.line_cells, t.cell_lines, t.cell_degree,
            t.n, self.turn, np.uint64(self.key), self.zob, MAX_THREATS, self.leaf_nodes,
            self.table.keys, self.path, self.stats, self.scratch,
        )
        if plies > 0:
            if self.at_root:
                self.move = int(self.path[0])
            return int(plies)
        if self.proof and proved_position(self.x, self.o, self.ply):  # lines checked above
            height = strategy_height(Board(self.geometry, self.moves), HEIGHT_SECONDS)
            return PROVED_BY_PROOF if height is None else height
        return None


def forced_win(board: Board, depth: int = 3, deadline: float = 0.0, *, shallowest: int = 1,
               leaf_nodes: int = LEAF_NODES, hard_replies: int | None = None,
               hint: Cell | None = None) -> tuple[bool, int | None, Cell | None]:
    """``(proved, plies, move)``: whether the side to move forces a win with at most ``depth``
    moves of its own before a leaf proves it (see the module's docstring), the plies of that
    win when every leaf's are known, and its first move (None where the root itself is a
    leaf of the proof's). ``deadline`` (``time.perf_counter``; 0: none) ends the search
    unproved; ``hint`` is tried first at the root. The depths from ``shallowest``
    up are tried in turn, so the first proof found is a shallow one."""
    if board.outcome() is not None:
        return False, None, None
    probe = _Probe(board, deadline, leaf_nodes,
                   HARD_REPLIES if hard_replies is None else hard_replies, _threat_table())
    plies = None
    try:
        for limit in range(shallowest, depth + 1):
            plies = _attack(probe, limit, hint)
            if plies is not None:
                break
    except OutOfTime:
        return False, None, None
    if plies is None:
        return False, None, None
    return True, None if plies == PROVED_BY_PROOF else plies, probe.move


def _attack(probe: _Probe, depth: int, hint: Cell | None = None) -> int | None:
    """Plies of the attacker's (to move) proved win, PROVED_BY_PROOF, or None."""
    probe.tick()
    key = probe.stones
    if key in probe.won:
        return probe.won[key]
    if probe.failed.get(key, -1) >= depth:
        return None
    result: int | None
    count, win, threats, block = probe.wins()
    if count:
        result = 1
        if probe.at_root:
            probe.move = win
    else:
        if threats > 1:
            result = None
        elif threats == 1:  # the block is the only move that does not lose at once
            result = probe.then(block, lambda: _defend(probe, depth))
            if result is not None and probe.at_root:
                probe.move = block
        else:
            result = probe.leaf()
            if result is None and depth > 0:
                result = _try_moves(probe, depth, hint)
    if result is None:
        probe.failed[key] = max(depth, probe.failed.get(key, -1))
    else:
        probe.won[key] = result
    return result


def _try_moves(probe: _Probe, depth: int, hint: Cell | None) -> int | None:
    """The attacker's moves in turn, those that make a three first (the defender has one
    reply to them), then by the lines they hold; the hint before all."""
    moves = probe.ordered(threes_first=True)
    if hint is not None and hint in moves:
        moves.remove(hint)
        moves.insert(0, hint)
    for cell in moves:
        result = probe.then(cell, lambda: _defend(probe, depth - 1))
        if result is not None:
            if probe.at_root:
                probe.move = cell
            return result
    return None


def _defend(probe: _Probe, depth: int) -> int | None:
    """Plies of the attacker's proved win with the defender to move, or None. The replies
    the leaves settle are looked at first; above ``hard_replies`` others (none at depth 0)
    the node is given up, so a wrong attacker's move costs little."""
    probe.tick()
    if probe.last_completed:  # the attacker's last move completed a line
        return 0
    mine, _, threats, block = probe.wins()  # the defender's, then the attacker's
    if mine:
        return None
    if threats > 1:
        return 2
    if threats == 1:  # every other move lets the attacker complete the line: two plies
        result = probe.then(block, lambda: _attack(probe, depth))
        return None if result is None else _longest([result, 2])
    replies = probe.ordered(threes_first=False)
    if not replies:
        return None  # a full board: a draw
    found: list[int] = []
    hard: list[Cell] = []
    for reply in replies:
        leaf = probe.then(reply, lambda: _settled(probe))
        if leaf is None:
            hard.append(reply)
            if len(hard) > (probe.hard_replies if depth > 0 else 0):
                return None
        else:
            found.append(leaf)
    for reply in hard:
        result = probe.then(reply, lambda: _attack(probe, depth))
        if result is None:
            return None
        found.append(result)
    return _longest(found)


def _settled(probe: _Probe) -> int | None:
    """A known or leaf-proved win of the attacker (to move) after a reply, or None."""
    probe.tick()
    key = probe.stones
    if key in probe.won:
        return probe.won[key]
    mine, _, theirs, _ = probe.wins()
    if mine:
        return 1
    if theirs:
        return None  # the defender threatens: not a leaf
    result = probe.leaf()
    if result is not None:
        probe.won[key] = result
    return result


def _longest(plies: list[int]) -> int:
    """The most plies among wins; PROVED_BY_PROOF (unknown) if any is the proof's."""
    return PROVED_BY_PROOF if PROVED_BY_PROOF in plies else max(plies)


@cache
def _threat_table() -> ThreatTable:
    return ThreatTable(18)


def warm_up() -> float:
    """Compile (or load) the threat search's kernels as the probe calls them from Python (on
    its own arrays), so the first question off the proof's tree compiles nothing; returns the
    seconds it took."""
    started = time.perf_counter()
    forced_win(Board("4x4x4", [0, 21, 3, 42, 12]), 1)
    return time.perf_counter() - started
