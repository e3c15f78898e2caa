"""The proof that X wins 4x4x4 Qubic: Patashnik's strategy, completed and checked.

X plays the strategy of Patashnik's proof (Mathematics Magazine 53(4), 1980): (1) win if it
can; (2) else block O's three-in-a-row (two of them and the line is lost: a gap); (3) else
the dictionary's move (:mod:`engine.solved.dictionary`); (4) else a forced win found by our
threat-space search (:mod:`engine.kernels.threats`), or by df-pn (:mod:`engine.kernels.solver`)
where the threat search finds none. Every legal O reply is followed, up to symmetry (replies and
positions deduplicated by canonical form), until each line ends in X's win. Allis and Schoo
solved Qubic again in 1992 with the proof-number and threat-space searches used here.

The moves of step 4 make the *completed dictionary* (:class:`Strategy`), shipped as
``engine/data/qubic.strategy`` in the dictionary's own text form: with it, steps 1-4 need no
search, and :func:`prove` with ``verify=True`` replays the whole tree from it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from engine.kernels.negamax import tables_for
from engine.kernels.solver import Solver
from engine.kernels.threats import (
    MAX_THREATS,
    Position,
    ThreatTable,
    make_scratch,
    threat_search,
    zobrist,
)
from engine.rules.board import Board
from engine.rules.geometry import Bitboard, Cell, cells_of, variant
from engine.rules.notation import format_moves
from engine.solved import dictionary
from engine.solved.strategy import (
    HEIGHT_PLIES,
    VARIANT,
    Key,
    Strategy,
    StrategyFileError,
    illegal,
    least_image,
    shipped_strategy,
)

Task = tuple[list[Cell], bool, Path | None]  # a subtree's root, verify or not, the file
Imap = Callable[[Callable[[Task], Any], list[Task]], Iterable[Any]]
WALK_CACHE = 400_000  # heights kept between strategy_height calls
TSS_BUDGET = 2_000_000  # threat-search nodes per position before df-pn is tried
DFPN_NODES = 2_000_000  # df-pn nodes per child tried
DEEPENING = (*range(1, 9), MAX_THREATS)  # threat-search depths tried in turn


@dataclass
class Gap:
    """A position where the strategy has no winning move, in the engine's notation."""

    moves: str
    reason: str


@dataclass
class Tally:
    """What a proof run counted."""

    x_positions: int = 0  # X-to-move positions expanded, distinct up to symmetry
    o_replies: int = 0  # O replies followed to a new X position, distinct up to symmetry
    o_lost_at_once: int = 0  # O replies after which X completes a line at once
    wins: int = 0  # X positions with a line to complete
    blocks: int = 0
    book_moves: int = 0  # dictionary moves used
    stored_moves: int = 0  # completed-dictionary moves used (verify)
    threat_searches: int = 0
    dfpn_searches: int = 0
    nodes: int = 0  # threat-search and df-pn nodes
    longest: int = 0  # plies from the start position to X's win, in the longest line
    seconds: float = 0.0
    gaps: list[Gap] = field(default_factory=list)
    dfpn_positions: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("x_positions", "o_replies", "o_lost_at_once", "wins", "blocks",
                     "book_moves", "stored_moves", "threat_searches", "dfpn_searches",
                     "nodes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.longest = max(self.longest, other.longest)
        self.gaps += other.gaps
        self.dfpn_positions += other.dfpn_positions


class Exhausted(Exception):
    """A walk with a limit on its positions reached it."""


@njit(cache=True)
def _win_cells(mine, theirs, masks):
    """:func:`win_cells` compiled: the proof calls it twice a position."""
    out = np.uint64(0)
    for m in masks:
        if theirs & m == 0:
            left = m & ~mine
            if left != 0 and left & (left - np.uint64(1)) == 0:
                out |= left
    return out


class Prover:
    """Walks the strategy's tree from a position, searching (or, verifying, only reading the
    completed dictionary) for step-4 moves."""

    def __init__(self, verify: bool = False, strategy: Strategy | None = None,
                 strategy_file: Path | None = None) -> None:
        self.geometry = variant(VARIANT)
        self.masks = self.geometry.line_masks
        self._mask_array = np.array(self.masks, dtype=np.uint64)
        self._tables = self.geometry._byte_images
        self.book = dictionary.dictionary()
        self.verify = verify
        self.unreadable = ""  # why the strategy file could not be read ("": it could)
        if strategy is None and (verify or strategy_file is not None):
            try:
                strategy = (Strategy.load(strategy_file) if strategy_file is not None
                            else shipped_strategy())
            except (StrategyFileError, OSError) as error:
                self.unreadable = f"the completed dictionary cannot be read: {error}"
        self.strategy = strategy if strategy is not None else Strategy(self.geometry)
        self.heights: dict[Key, int | None] = {}  # canonical X position -> plies to the win
        self.tally = Tally()
        self._threats = ThreatTable(20)
        self._scratch = make_scratch(self.geometry.size, self.geometry.n)
        self._path = np.full(2 * MAX_THREATS + 4, -1, dtype=np.int32)
        self._stats = np.zeros(1, dtype=np.int64)
        self._solver: Solver | None = None
        self.deepening: tuple[int, ...] = DEEPENING
        self.fail_fast = False  # stop at the first gap (and do not list it): a yes/no walk
        self.deadline = 0.0  # a perf_counter() time after which the walk raises Exhausted
        self.limit = 0  # X positions to expand before giving up (raising Exhausted); 0: none
        self.split_ply: int | None = None  # X positions from this ply on are left to workers
        self.frontier: list[list[Cell]] = []

    def wins(self, mine: Bitboard, theirs: Bitboard) -> Bitboard:
        """:func:`win_cells` on this board, compiled."""
        return int(_win_cells(np.uint64(mine), np.uint64(theirs), self._mask_array))

    def least_image(self, x: Bitboard, o: Bitboard) -> tuple[Bitboard, Bitboard, int]:
        """:meth:`Geometry.least_image`, compiled."""
        cx, co, index = least_image(self._tables, np.uint64(x), np.uint64(o))
        return int(cx), int(co), int(index)

    # -- the strategy -----------------------------------------------------------------------

    def x_move(self, board: Board, key: Key, symmetry: int) -> tuple[Cell | None, str]:
        """X's move by the strategy's steps 2-4 (no line to complete) and which step gave it;
        ``key`` is the canonical position, the image of ``board`` by ``symmetry``."""
        x, o = board.stones
        blocks = self.wins(o, x)
        if blocks:
            if blocks.bit_count() > 1:
                return None, "O has two threes"
            return blocks.bit_length() - 1, "block"
        cell = self.book.entries.get(key)
        if cell is not None:
            return self.geometry.symmetries[symmetry].index(cell), "book"
        cell = self.strategy.entries.get(key)
        if cell is not None:
            if illegal(cell, key, self.geometry.size):
                return None, f"the completed dictionary's move (cell {cell}) is not legal here"
            return self.geometry.symmetries[symmetry].index(cell), "stored"
        if self.verify:
            return None, "not in the completed dictionary"
        cell = self._threat_move(board)
        if cell is None:
            cell = self._dfpn_move(board)
            if cell is None:
                return None, "no forced win found"
        found = self.strategy.entries
        assert isinstance(found, dict)  # a strategy being searched for, not a shipped one
        found[key] = self.geometry.symmetries[symmetry][cell]
        return cell, "search"

    def _threat_move(self, board: Board) -> Cell | None:
        self.tally.threat_searches += 1
        t = tables_for(self.geometry)
        pos = Position.from_board(board)
        self._stats[0] = 0
        plies = 0
        for threats in self.deepening:  # the shortest sequence first: a smaller tree
            plies = threat_search(
                pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
                t.cell_degree, t.n, 0, np.uint64(pos.key), zobrist(t.size), threats,
                TSS_BUDGET, self._threats.keys, self._path, self._stats,
                self._scratch)
            if plies > 0:
                break
        self.tally.nodes += int(self._stats[0])
        return int(self._path[0]) if plies > 0 else None

    def _dfpn_move(self, board: Board) -> Cell | None:
        self.tally.dfpn_searches += 1
        self.tally.dfpn_positions.append(format_moves(board.moves, self.geometry))
        if self._solver is None:
            self._solver = Solver(self.geometry, tt_bits=20, sym_plies=0)
        return self._solver.winning_move(board, attacker=0, nodes=DFPN_NODES)

    # -- the walk ---------------------------------------------------------------------------

    def prove(self, board: Board) -> int | None:
        """Plies from ``board`` (X to move) to X's win along the strategy's longest line,
        or None when some line has a gap (recorded in the tally). A strategy file that
        could not be read is one gap, at ``board``."""
        if self.unreadable:
            if not self.fail_fast:
                self.tally.gaps.append(Gap(format_moves(board.moves, self.geometry),
                                           self.unreadable))
            return None
        height = self._x_node(board)
        if height is not None:
            self.tally.longest = max(self.tally.longest, board.ply + height)
        return height

    def shallow_heights(self, plies: int = HEIGHT_PLIES) -> dict[Key, int]:
        """The proved heights of the X positions of at most ``plies`` stones."""
        return {k: h for k, h in self.heights.items()
                if h is not None and 2 * k[0].bit_count() <= plies}

    def o_height(self, board: Board) -> int | None:
        """Plies from ``board`` (O to move) to X's win along the strategy's longest line, or
        None when O can win at once or some line has a gap."""
        x, o = board.stones
        if board.winning_line is None and self.wins(o, x):
            return None
        return self._o_node(board)

    def _x_node(self, board: Board) -> int | None:
        x, o = board.stones
        if self.wins(x, o):
            self.tally.wins += 1
            return 1
        cx, co, symmetry = self.least_image(x, o)
        key = (cx, co)
        if key in self.heights:
            return self.heights[key]
        if self.limit and self.tally.x_positions >= self.limit:
            raise Exhausted
        if self.deadline and not self.tally.x_positions & 63 and (
                time.perf_counter() > self.deadline):
            raise Exhausted
        try:
            return self._expand(board, key, symmetry)
        except Exhausted:
            self.heights.pop(key, None)  # unfinished: not a gap
            raise

    def _expand(self, board: Board, key: Key, symmetry: int) -> int | None:
        g = self.geometry
        if self.split_ply is not None and board.ply >= self.split_ply:
            self.frontier.append(list(board.moves))
            self.heights[key] = 0
            return 0  # proved by a worker; the longest line is taken from its tally
        self.heights[key] = None  # a position cannot recur below itself; guards re-entry
        self.tally.x_positions += 1
        cell, how = self.x_move(board, key, symmetry)
        if cell is None:
            if not self.fail_fast:
                self.tally.gaps.append(Gap(format_moves(board.moves, g), how))
            return None
        if how == "block":
            self.tally.blocks += 1
        elif how == "book":
            self.tally.book_moves += 1
        elif how == "stored":
            self.tally.stored_moves += 1
        board.push(cell)
        try:
            height = self._o_node(board)
        finally:
            board.pop()
        self.heights[key] = None if height is None else height + 1
        return self.heights[key]

    def _o_node(self, board: Board) -> int | None:
        """O to move after X's strategic move: the longest of O's replies, or None."""
        x, o = board.stones
        if board.winning_line is not None:
            return 0
        threats = self.wins(x, o)
        empty = board.empty
        if threats.bit_count() >= 2:
            self.tally.o_lost_at_once += empty.bit_count()
            return 2
        replies = threats if threats else empty
        self.tally.o_lost_at_once += empty.bit_count() - replies.bit_count()
        longest = 2 if threats else 0
        seen: set[Key] = set()
        failed = False
        for reply in cells_of(replies):
            if not threats:  # one reply when X threatens: nothing to deduplicate
                key = self.least_image(x, o | 1 << reply)[:2]
                if key in seen:
                    continue
                seen.add(key)
            self.tally.o_replies += 1
            board.push(reply)
            try:
                height = self._x_node(board) if board.winning_line is None else None
            finally:
                board.pop()
            if height is None:
                if self.fail_fast:
                    return None
                failed = True  # go on: list every gap
                continue
            longest = max(longest, height + 1)
        return None if failed else longest


def prove(moves: Iterable[Cell] = (), *, verify: bool = False,
          strategy: Strategy | None = None, strategy_file: Path | None = None
          ) -> tuple[Tally, Strategy]:
    """Prove (or, with ``verify``, replay from the shipped completed dictionary, or the one in
    ``strategy_file``) that X wins from the position after ``moves`` (X to move); returns the
    tally and the strategy: its step-4 moves and its early positions' heights. A broken file
    is reported as gaps (an unreadable file, an illegal stored move), never raised."""
    started = time.perf_counter()
    prover = Prover(verify=verify, strategy=strategy, strategy_file=strategy_file)
    board = _start(moves)
    prover.prove(board)
    prover.tally.seconds = time.perf_counter() - started
    found = Strategy(prover.geometry, prover.strategy.entries, prover.shallow_heights())
    return prover.tally, found


def prove_parallel(moves: Iterable[Cell] = (), *, imap: Imap, verify: bool = False,
                   split_ply: int | None = None, strategy_file: Path | None = None
                   ) -> tuple[Tally, Strategy]:
    """:func:`prove` with the subtrees below ``split_ply`` (by default four plies below the
    start) handed to ``imap`` (a process pool's ``imap_unordered``: the engine starts no
    processes itself) as calls of :func:`prove_task`. Positions that two subtrees share are
    counted in each (the strategy's entries are merged, so they count once)."""
    started = time.perf_counter()
    board = _start(moves)
    top = Prover(verify=verify, strategy_file=strategy_file)
    top.split_ply = board.ply + 4 if split_ply is None else split_ply
    top.prove(board)
    tally = top.tally
    if top.unreadable:  # one gap, at the start: no worker would read the file either
        tally.seconds = time.perf_counter() - started
        return tally, top.strategy
    strategy = Strategy(top.geometry, top.strategy.entries if verify
                        else dict(top.strategy.entries))
    frontier: dict[Key, int | None] = {}
    tasks = [(task, verify, strategy_file) for task in top.frontier]
    for part, entries, heights in imap(prove_task, tasks):
        tally.add(part)
        strategy.entries.update(entries)  # type: ignore[attr-defined]
        strategy.heights.update(heights)
    for task, _, _ in tasks:  # a failed subtree has no height: the walk below finds it None
        key = top.geometry.canonical(*Board(VARIANT, task).stones)
        frontier[key] = strategy.heights.get(key)
    # the top of the tree again, the subtrees' heights known: its own heights and the longest
    again = Prover(verify=True, strategy=Strategy(top.geometry, strategy.entries))
    again.heights.update(frontier)
    again.prove(_start(moves))
    tally.longest = max(tally.longest, again.tally.longest)
    strategy.heights.update(again.shallow_heights())
    tally.seconds = time.perf_counter() - started
    return tally, strategy


def prove_task(task: Task) -> tuple[Tally, dict[Key, Cell], dict[Key, int]]:
    """One subtree of :func:`prove_parallel`: its tally, step-4 moves and early heights."""
    moves, verify, strategy_file = task
    tally, strategy = prove(moves, verify=verify, strategy_file=strategy_file)
    return tally, {} if verify else dict(strategy.entries), strategy.heights


def _start(moves: Iterable[Cell]) -> Board:
    board = Board(VARIANT, list(moves))
    if board.turn != 0 or board.outcome() is not None:
        raise ValueError("the proof starts from a position with X to move")
    return board


def report(tally: Tally, strategy: Strategy, *, start: str = "", verify: bool = False
           ) -> dict[str, object]:
    """The counts of a run as plain data (``qubic prove --json``)."""
    return {
        "proved": not tally.gaps,
        "start": start,
        "mode": "verify" if verify else "search",
        "x_positions": tally.x_positions,
        "o_replies": tally.o_replies,
        "o_replies_lost_at_once": tally.o_lost_at_once,
        "blocks": tally.blocks,
        "dictionary_moves": tally.book_moves,
        "stored_moves": tally.stored_moves,
        "threat_searches": tally.threat_searches,
        "dfpn_searches": tally.dfpn_searches,
        "dfpn_positions": tally.dfpn_positions,
        "nodes": tally.nodes,
        "longest_plies": tally.longest,
        "strategy_entries": len(strategy),
        "seconds": round(tally.seconds, 2),
        "gaps": [{"moves": gap.moves, "reason": gap.reason} for gap in tally.gaps],
    }


def format_report(data: dict[str, object]) -> list[str]:
    """The report as lines of text."""
    rows = [
        ("X positions", "x_positions"), ("O replies followed", "o_replies"),
        ("O replies lost at once", "o_replies_lost_at_once"), ("blocks", "blocks"),
        ("dictionary moves", "dictionary_moves"), ("stored moves", "stored_moves"),
        ("threat searches", "threat_searches"), ("df-pn searches", "dfpn_searches"),
        ("search nodes", "nodes"), ("longest line", "longest_plies"),
        ("strategy entries", "strategy_entries"), ("seconds", "seconds"),
    ]
    start = data["start"] or "the empty board"
    lines = [f"{data['mode']} from {start}"]
    for label, key in rows:
        value = data[key]
        lines.append(f"  {label:<24} {value:,}" if isinstance(value, int)
                     else f"  {label:<24} {value}")
    for moves in data["dfpn_positions"]:  # type: ignore[attr-defined]
        lines.append(f"  df-pn needed at: {moves}")
    gaps = data["gaps"]
    assert isinstance(gaps, list)
    if not gaps:
        lines.append("proved: X wins every line" if data["mode"] == "search"
                     else "verified: X wins every line")
    else:
        lines.append(f"NOT proved: {len(gaps)} gaps")
        lines += [f"  gap: {gap['moves']} ({gap['reason']})" for gap in gaps]
    return lines



class _Walker:
    """Replays of the shipped strategy, their heights kept between calls."""

    def __init__(self) -> None:
        self.prover = Prover(verify=True)
        self.prover.fail_fast = True
        self.shipped = dict(self.prover.strategy.heights)
        self.prover.heights.update(self.shipped)

    def height(self, board: Board, seconds: float, positions: int = 0) -> int | None:
        prover = self.prover
        prover.limit = positions
        if len(prover.heights) > WALK_CACHE:
            prover.heights.clear()
            prover.heights.update(self.shipped)
        prover.tally = Tally()
        prover.deadline = time.perf_counter() + seconds
        board = board.copy()
        try:
            return prover.prove(board) if board.turn == 0 else prover.o_height(board)
        except Exhausted:
            return None


@cache
def _walker() -> _Walker:
    return _Walker()


def strategy_height(board: Board, seconds: float = 0.1, positions: int = 0) -> int | None:
    """Plies to X's win from ``board`` (either side to move) when X plays the shipped strategy
    and O resists longest, found by replaying it with no search; None when the position is
    off the proof (the strategy loses a line or is silent somewhere) or the replay takes more
    than ``seconds`` or (unless 0) expands more than ``positions`` X positions not yet known
    (the heights of positions up to ply 8 are shipped, so early positions are instant)."""
    if board.geometry.name != VARIANT or board.outcome() is not None:
        return None
    return _walker().height(board, seconds, positions)


def proof_prover() -> Prover:
    """The prover :func:`strategy_height` replays with (its compiled look-ups, the shipped
    tables and the heights it has found), for callers that ask the proof many small questions
    (:mod:`engine.players.resistance`); its ``tally`` counts the last replay's work."""
    return _walker().prover


def warm_up() -> float:
    """Compile (or load) the proof's kernels and read the dictionary and the shipped
    strategy, which the master's first move as X needs; returns the seconds it took."""
    started = time.perf_counter()
    strategy_height(Board(VARIANT, [0, 3]), 1.0)
    return time.perf_counter() - started
