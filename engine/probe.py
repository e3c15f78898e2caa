"""A shallow AND/OR proof search: does the side to move force a win within a few free moves?

``forced_win`` returns the plies of a win it proves, or None; it follows the game's rules
only, and its leaves are threat-search wins or positions of the shipped proof, so a win it
returns is a proof. The fast path of ``engine.truth`` off the proof's tree. docs/engine.md,
"The probe", has its rules at each node."""

from __future__ import annotations

import time
from functools import cache

import numpy as np

from engine.board import Board
from engine.geometry import Cell
from engine.kernel import tables_for
from engine.proof import strategy_height
from engine.strategy import VARIANT, in_the_strategy
from engine.threats import (
    MAX_THREATS,
    Position,
    ThreatTable,
    make_scratch,
    pop,
    push,
    threat_search,
    win_cells,
    zobrist,
)

LEAF_NODES = 5_000  # threat-search nodes at a leaf
HARD_REPLIES = 2  # defender replies no leaf settles that a node above depth 0 follows
HEIGHT_SECONDS = 0.01  # to replay the proof's plies below a leaf (most take microseconds)
PROVED_BY_PROOF = -1  # plies of a win the proof's tables vouch for (height not replayed)


class OutOfTime(Exception):
    """The probe's deadline passed: no answer."""


class _Probe:
    """One question's search: the board and its mirror in the threat search's form (moved
    together), the deadline, and the positions proved or failed so far."""

    def __init__(self, board: Board, deadline: float, leaf_nodes: int, hard_replies: int,
                 table: ThreatTable) -> None:
        self.board = board
        self.root_ply = board.ply
        self.t = tables_for(board.geometry)
        self.pos = Position.from_board(board)
        self.key = np.uint64(self.pos.key)
        self.zob = zobrist(self.t.size)
        self.scratch = make_scratch(self.t.size)
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

    def push(self, cell: Cell) -> None:
        side = self.board.turn
        self.board.push(cell)
        t, p = self.t, self.pos
        push(cell, side, p.cells, p.counts, p.hist, p.cellk, t.line_cells, t.cell_lines,
             t.cell_degree, t.n)
        self.key ^= self.zob[side, cell]

    def pop(self) -> None:
        cell = self.board.pop()
        side = self.board.turn
        t, p = self.t, self.pos
        pop(cell, side, p.cells, p.counts, p.hist, p.cellk, t.line_cells, t.cell_lines,
            t.cell_degree, t.n)
        self.key ^= self.zob[side, cell]

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

    def wins(self, side: int) -> tuple[int, int]:
        """``(count, first)`` of the empty cells that complete a line of ``side``."""
        count, first = win_cells(side, self.pos.cells, self.pos.cellk, self.t.n)
        return int(count), int(first)

    def ordered(self, threes_first: bool) -> list[Cell]:
        """The empty cells, best first for the side to move: by the open lines through them
        weighted by their stones (:func:`engine.board.line_value`), those that make a three
        first if ``threes_first``."""
        side = self.board.turn
        k = self.pos.cellk
        n = self.t.n
        value = self.mine_weights @ k[side] + self.their_weights @ k[side ^ 1]  # int64
        if threes_first:
            value = value + (k[side, n - 2] > 0) * (1 << 40)
        empty = np.flatnonzero(self.pos.cells == 0)
        return empty[np.argsort(-value[empty], kind="stable")].tolist()

    def leaf(self) -> int | None:
        """Plies of the side to move's win proved by a leaf check, or None."""
        t, p = self.t, self.pos
        self.stats[0] = 0
        plies = threat_search(
            p.cells, p.counts, p.hist, p.cellk, t.line_cells, t.cell_lines, t.cell_degree,
            t.n, self.board.turn, self.key, self.zob, MAX_THREATS, self.leaf_nodes,
            self.table.keys, self.table.depth, self.path, self.stats, self.scratch,
        )
        if plies > 0:
            if self.board.ply == self.root_ply:
                self.move = int(self.path[0])
            return int(plies)
        if self.proof and in_the_strategy(self.board):  # the lines checked on its arrays
            height = strategy_height(self.board, HEIGHT_SECONDS)
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
    x, o = probe.board.stones
    key = (x, o)
    if key in probe.won:
        return probe.won[key]
    if probe.failed.get(key, -1) >= depth:
        return None
    side = probe.board.turn
    result: int | None
    count, win = probe.wins(side)
    if count:
        result = 1
        if probe.board.ply == probe.root_ply:
            probe.move = win
    else:
        threats, block = probe.wins(side ^ 1)
        if threats > 1:
            result = None
        elif threats == 1:  # the block is the only move that does not lose at once
            result = probe.then(block, lambda: _defend(probe, depth))
            if result is not None and probe.board.ply == probe.root_ply:
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
            if probe.board.ply == probe.root_ply:
                probe.move = cell
            return result
    return None


def _defend(probe: _Probe, depth: int) -> int | None:
    """Plies of the attacker's proved win with the defender to move, or None. The replies
    the leaves settle are looked at first; above ``hard_replies`` others (none at depth 0)
    the node is given up, so a wrong attacker's move costs little."""
    probe.tick()
    board = probe.board
    if board.winning_line is not None:  # the attacker's last move completed a line
        return 0
    side = board.turn  # the defender
    if probe.wins(side)[0]:
        return None
    threats, block = probe.wins(side ^ 1)
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
    x, o = probe.board.stones
    key = (x, o)
    if key in probe.won:
        return probe.won[key]
    side = probe.board.turn
    if probe.wins(side)[0]:
        return 1
    if probe.wins(side ^ 1)[0]:
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
