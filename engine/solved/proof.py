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
from numba import njit, types
from numba.typed import Dict

from engine.kernels.dfpn import STATS_SIZE, dfpn, lookup
from engine.kernels.negamax import tables_for
from engine.kernels.small_search import popcount
from engine.kernels.solver import Solver, SolverTables
from engine.kernels.threats import (
    MAX_THREATS,
    ThreatTable,
    empty_sums,
    make_scratch,
    pop,
    push,
    sum_deltas,
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
    PackedEntries,
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


@njit(cache=True)
def _deepening_search(moves, sums0, deltas, line_cells, cell_lines, cell_degree, n, zob,
                      depths, budget, tt_keys, path, stats, scratch):
    """:func:`threat_search` for X after ``moves``, to each number of threats of ``depths``
    in turn until one finds a win (the shortest sequence first: a smaller tree); its plies,
    or 0. The position is built here: one compiled call a position, where building it and
    each search's call from Python cost the proof more than the searches themselves."""
    cells = np.zeros(cell_lines.shape[0], dtype=np.uint8)
    lines = np.zeros(line_cells.shape[0], dtype=np.uint8)
    sums = sums0.copy()
    key = np.uint64(0)
    for i in range(moves.shape[0]):
        push(moves[i], i & 1, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
             n)
        key ^= zob[i & 1, moves[i]]
    for threats in depths:
        plies = threat_search(cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
                              n, 0, key, zob, threats, budget, tt_keys, path, stats, scratch,
                              0.0, True)
        if plies > 0:
            return plies
    return 0


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
        t = tables_for(self.geometry)
        self._empty_sums = empty_sums(t.n, t.n_lines)
        self._deltas = sum_deltas(t.n)
        self.fail_fast = False  # stop at the first gap (and do not list it): a yes/no walk
        self.deadline = 0.0  # a perf_counter() time after which the walk raises Exhausted
        self.limit = 0  # X positions to expand before giving up (raising Exhausted); 0: none
        self.split_ply: int | None = None  # X positions from this ply on are left to workers
        self.frontier: list[list[Cell]] = []

    @property
    def _depths(self) -> np.ndarray:
        return np.array(self.deepening, dtype=np.int64)

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
        self._stats[0] = 0
        plies = _deepening_search(
            np.array(board.moves, dtype=np.int64), self._empty_sums, self._deltas,
            t.line_cells, t.cell_lines, t.cell_degree, t.n, zobrist(t.size),
            self._depths, TSS_BUDGET, self._threats.keys, self._path, self._stats,
            self._scratch)
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

    def replay(self, board: Board) -> int | None:
        """:meth:`prove` for a verifying prover that knows no heights yet and has no limit,
        deadline, split or fail-fast set (what ``qubic prove --verify`` runs), the whole walk
        compiled: the same tally, gaps and longest line; afterwards :attr:`heights` holds
        only those of the positions of at most :data:`HEIGHT_PLIES` plies."""
        if not self.verify:
            return self.prove(board)
        return self._compiled(board)

    def search(self, board: Board) -> int | None:
        """:meth:`prove` for a searching prover (what ``qubic prove`` runs), under the same
        conditions as :meth:`replay`, the whole walk compiled with its threat searches and
        df-pn's: the same tally, gaps, longest line and strategy entries (found in the same
        order); :attr:`heights` as after :meth:`replay`."""
        if self.verify:
            return self.prove(board)
        return self._compiled(board)

    def _compiled(self, board: Board) -> int | None:
        if self.unreadable or self.heights or self.fail_fast or (
                self.deadline or self.limit or self.split_ply is not None):
            return self.prove(board)
        g = self.geometry
        x, o = board.stones
        inverse = np.zeros((len(g.symmetries), g.size), dtype=np.int64)
        for s, image in enumerate(g.symmetries):
            inverse[s, list(image)] = np.arange(g.size)
        forward = np.array(g.symmetries, dtype=np.int64)
        counts = np.zeros(_COUNTS, dtype=np.int64)
        found = np.zeros((1024 if not self.verify else 1, 3), dtype=np.uint64)
        dfpn_at = np.zeros((1, 1 + g.size), dtype=np.int64)
        height, heights, gaps, found, dfpn_at = _walk(
            np.uint64(x), np.uint64(o), self._mask_array, self._tables, inverse, forward,
            _book_arrays(), _sorted_entries(self.strategy.entries), counts,
            np.zeros(g.size, dtype=np.int64), np.zeros((16, 3 + g.size), dtype=np.int64),
            HEIGHT_PLIES, not self.verify, self._search_arrays(), found, dfpn_at)
        t = self.tally
        t.x_positions += int(counts[0])
        t.o_replies += int(counts[1])
        t.o_lost_at_once += int(counts[2])
        t.wins += int(counts[3])
        t.blocks += int(counts[4])
        t.book_moves += int(counts[5])
        t.stored_moves += int(counts[6])
        t.threat_searches += int(counts[7])
        t.dfpn_searches += int(counts[8])
        t.nodes += int(counts[9])
        for row in dfpn_at.tolist():
            t.dfpn_positions.append(format_moves([*board.moves, *row[1:1 + row[0]]], g))
        if not self.verify:
            entries = self.strategy.entries
            assert isinstance(entries, dict)  # a strategy being searched for
            for cx, co, cell in found.tolist():
                entries[(cx, co)] = cell
        for row in gaps.tolist():
            plies, why, cell = row[:3]
            reason = (_GAP_REASONS[why] if why != _ILLEGAL
                      else f"the completed dictionary's move (cell {cell}) is not legal here")
            t.gaps.append(Gap(format_moves([*board.moves, *row[3:3 + plies]], g), reason))
        none = int(np.iinfo(np.uint64).max)
        self.heights = {(int(a), int(b)): None if h == none else int(h)
                        for a, b, h in heights.tolist()}
        if height < 0:
            return None
        t.longest = max(t.longest, board.ply + int(height))
        return int(height)

    def _search_arrays(self) -> tuple[Any, ...]:
        """What the compiled walk's step 4 searches with: the position's arrays, the threat
        search's (this prover's table) and df-pn's (:meth:`_dfpn_move`'s solver's tables)."""
        t = tables_for(self.geometry)
        threats = (np.zeros(t.size, dtype=np.uint8), np.zeros(t.n_lines, dtype=np.uint8),
                   self._empty_sums.copy(), self._empty_sums, self._deltas, t.line_cells,
                   t.cell_lines, t.cell_degree, t.n, zobrist(t.size), self._depths,
                   self._threats.keys, self._path, self._stats, self._scratch)
        if self.verify:  # no search: tables of the right types, unused
            tab = SolverTables.create(1)
            keys, scratch, path = np.zeros(2, dtype=np.uint64), self._scratch, self._path
        else:
            if self._solver is None:
                self._solver = Solver(self.geometry, tt_bits=20, sym_plies=0)
            tab = self._solver.table
            keys, scratch, path = (self._solver.threats.keys, self._solver.scratch,
                                   self._solver.path)
        syms = np.array(self.geometry.symmetries, dtype=np.int32)
        df = (tab.keys, tab.pn, tab.dn, tab.work, keys, scratch, path, syms,
              np.zeros(len(syms), dtype=np.uint64), np.zeros(STATS_SIZE, dtype=np.int64),
              np.zeros(1, dtype=np.int8))
        return threats, df

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
    if verify:
        prover.replay(board)
    else:
        prover.search(board)
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


# -- the walk (the replay and the search), compiled ------------------------------------------

_NONE = -1  # a height: no proof (a gap below, or the position being expanded)
_TWO_THREES, _ILLEGAL, _MISSING, _NO_WIN = 1, 2, 3, 4  # why a gap (see :meth:`Prover.x_move`)
_GAP_REASONS = {_TWO_THREES: "O has two threes", _MISSING: "not in the completed dictionary",
                _NO_WIN: "no forced win found"}
_X_NODE, _O_NODE, _O_NEXT, _X_DONE, _O_DONE = 0, 1, 2, 3, 4
_KEY_TYPE = types.UniTuple(types.uint64, 2)
# the compiled walk's tally: Tally's x_positions to stored_moves, threat and df-pn searches, nodes
_COUNTS = 10


@cache
def _book_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Patashnik's dictionary as :func:`_sorted_entries` arrays."""
    return _sorted_entries(dictionary.dictionary().entries)


def _sorted_entries(entries: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A position -> move mapping as arrays sorted by (x, o), for :func:`_find`."""
    if isinstance(entries, PackedEntries):
        return entries.xs, entries.os, entries.moves.astype(np.int64)
    items = sorted(entries.items())
    xs = np.array([key[0] for key, _ in items], dtype=np.uint64)
    os = np.array([key[1] for key, _ in items], dtype=np.uint64)
    return xs, os, np.array([cell for _, cell in items], dtype=np.int64)


@njit(cache=True)
def _find(xs, os, x, o):
    """The index of (x, o) in arrays sorted by (x, o), or -1."""
    low = 0
    high = xs.shape[0]
    while low < high:  # the first entry not below (x, o)
        mid = (low + high) // 2
        if xs[mid] < x or (xs[mid] == x and os[mid] < o):
            low = mid + 1
        else:
            high = mid
    if low < xs.shape[0] and xs[low] == x and os[low] == o:
        return np.int64(low)
    return np.int64(-1)


@njit(cache=True)
def _place(x, o, threats):
    """Set the threat search's position (``threats``' first arrays) to X's ``x`` and O's
    ``o``; returns its Zobrist key (the same as the moves' in any order)."""
    cells, lines, sums, sums0, deltas, line_cells, cell_lines, cell_degree, n, zob = threats[:10]
    cells[:] = 0
    lines[:] = 0
    sums[:] = sums0
    key = np.uint64(0)
    one = np.uint64(1)
    for c in range(cells.shape[0]):
        for side, stones in ((0, x), (1, o)):
            if (stones >> np.uint64(c)) & one:
                push(c, side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
                     n)
                key ^= zob[side, c]
    return key


@njit(cache=True)
def _threat_move(x, o, threats, counts):
    """:meth:`Prover._threat_move` compiled: X's first move of the shortest continuous-threat
    win found (the depths of :attr:`Prover.deepening` in turn), or -1."""
    (cells, lines, sums, _, deltas, line_cells, cell_lines, cell_degree, n, zob, depths,
     tt_keys, path, stats, scratch) = threats
    counts[7] += 1
    key = _place(x, o, threats)
    stats[0] = 0
    plies = 0
    for depth in depths:
        plies = threat_search(cells, lines, sums, deltas, line_cells, cell_lines, cell_degree,
                              n, 0, key, zob, depth, TSS_BUDGET, tt_keys, path, stats, scratch,
                              0.0, True)
        if plies > 0:
            break
    counts[9] += stats[0]
    return np.int64(path[0]) if plies > 0 else np.int64(-1)


@njit(cache=True)
def _dfpn_move(x, o, stones, threats, df):
    """:meth:`Prover._dfpn_move` compiled (``Solver.winning_move`` for X with
    ``sym_plies=0`` and the solver's defaults, 500 nodes a threat search of up to
    :data:`MAX_THREATS` threats and the replay: a child the table holds as proved, else the
    first child df-pn proves within :data:`DFPN_NODES`), or -1. The position is ``threats``'
    (see :func:`_place`)."""
    (cells, lines, sums, _, deltas, line_cells, cell_lines, cell_degree, n, zob) = threats[:10]
    keys, pn, dn, work, tss_keys, scratch, path, syms, sym_keys, stats, stop = df
    key = _place(x, o, threats)
    for c in range(cells.shape[0]):
        if cells[c] == 0:
            slot, found = lookup(keys, pn, dn, key ^ zob[0, c])
            if found and pn[slot] == 0:
                return np.int64(c)
    for c in range(cells.shape[0]):
        if cells[c] != 0:
            continue
        won = push(c, 0, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        p = np.int64(1)
        d = np.int64(1)
        if not won:
            stats[:] = 0
            p, d = dfpn(cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n,
                        1, 0, key ^ zob[0, c], sym_keys, syms, zob, 0, stones + 1,
                        keys, pn, dn, work, tss_keys, scratch, path, 500, MAX_THREATS,
                        DFPN_NODES, 0.0, stop, stats, True)
        pop(c, 0, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)
        if won or (p == 0 and d != 0):
            return np.int64(c)
    return np.int64(-1)


@njit(cache=True)
def _walk(x, o, masks, tables, inverse, forward, book, stored, counts, path, gaps, keep,
          search, searching, learnt, dfpn_at):
    """:meth:`Prover._x_node` from X's ``x`` and O's ``o``, every step of the walk compiled
    (one call for the whole walk): the same moves, counts, heights and gaps in the same order.
    ``book`` and ``stored`` are :func:`_sorted_entries` arrays; ``inverse[s, c]`` the cell
    that symmetry s maps onto c, ``forward[s, c]`` the cell c maps onto. Without ``search``
    (a replay) a position missing from both is a gap; with it, step 4 runs the threat search
    and df-pn (``searching``: :meth:`Prover._search_arrays`), and each move found is a row
    ``(canonical x, o, canonical move)`` of ``learnt``, each df-pn search a row ``(plies,
    moves...)`` of ``dfpn_at`` (both grown as needed). Returns the height (or -1), the heights
    found (canonical x, o, height), the gaps as rows of ``(plies, reason, cell, moves...)``
    (``path`` holds the walk's moves; ``gaps`` is grown as needed), ``learnt`` and ``dfpn_at``.
    Of the heights, only those of positions of at most ``keep`` plies are returned (-1 as the
    largest uint64)."""
    tss, df = searching
    n_found = 0
    n_dfpn = 0
    one = np.uint64(1)
    full = ~np.uint64(0)
    heights = Dict.empty(key_type=_KEY_TYPE, value_type=types.int64)
    kx = np.zeros(65, dtype=np.uint64)  # an X frame's canonical position
    ko = np.zeros(65, dtype=np.uint64)
    left = np.zeros(65, dtype=np.uint64)  # an O frame's replies still to follow
    threat = np.zeros(65, dtype=np.bool_)
    longest = np.zeros(65, dtype=np.int64)
    failed = np.zeros(65, dtype=np.bool_)
    seen_x = np.zeros((65, 64), dtype=np.uint64)  # an O frame's replies' positions so far
    seen_o = np.zeros((65, 64), dtype=np.uint64)
    n_seen = np.zeros(65, dtype=np.int64)
    n_gaps = 0
    have_image = False  # the X position entered next has its least image below
    image_x, image_o, image_sym = np.uint64(0), np.uint64(0), 0
    i = 0  # the walk's plies
    ret = np.int64(0)
    mode = _X_NODE
    while True:
        if mode == _X_NODE:  # X to move
            mode = _X_DONE
            if _win_cells(x, o, masks) != 0:
                counts[3] += 1
                ret = 1
                continue
            if have_image:  # found by the O frame above, deduplicating its replies
                cx, co, sym = image_x, image_o, image_sym
                have_image = False
            else:
                cx, co, sym = least_image(tables, x, o)
            if (cx, co) in heights:
                ret = heights[(cx, co)]
                continue
            heights[(cx, co)] = _NONE
            counts[0] += 1
            blocks = _win_cells(o, x, masks)
            cell = np.int64(-1)
            why = 0
            if blocks != 0:
                if popcount(blocks) > 1:
                    why = _TWO_THREES
                else:
                    cell = np.int64(0)
                    while (blocks >> np.uint64(cell)) & one == 0:
                        cell += 1
                    counts[4] += 1
            else:
                at = _find(book[0], book[1], cx, co)
                if at >= 0:
                    cell = np.int64(inverse[sym, book[2][at]])
                    counts[5] += 1
                else:
                    at = _find(stored[0], stored[1], cx, co)
                    if at < 0 and search:
                        cell = _threat_move(x, o, tss, counts)
                        if cell < 0:
                            counts[8] += 1
                            if n_dfpn == dfpn_at.shape[0]:
                                bigger = np.zeros((2 * n_dfpn, dfpn_at.shape[1]),
                                                  dtype=np.int64)
                                bigger[:n_dfpn] = dfpn_at
                                dfpn_at = bigger
                            dfpn_at[n_dfpn, 0] = i
                            for j in range(i):
                                dfpn_at[n_dfpn, 1 + j] = path[j]
                            n_dfpn += 1
                            cell = _dfpn_move(x, o, 2 * popcount(x), tss, df)
                        if cell < 0:
                            why = _NO_WIN
                        else:
                            if n_found == learnt.shape[0]:
                                grown = np.zeros((2 * n_found, 3), dtype=np.uint64)
                                grown[:n_found] = learnt
                                learnt = grown
                            learnt[n_found, 0] = cx
                            learnt[n_found, 1] = co
                            learnt[n_found, 2] = forward[sym, cell]
                            n_found += 1
                    elif at < 0:
                        why = _MISSING
                    else:
                        found = stored[2][at]
                        if found < 0 or found >= 64 or (cx | co) >> np.uint64(found) & one:
                            why = _ILLEGAL
                            cell = found
                        else:
                            cell = np.int64(inverse[sym, found])
                            counts[6] += 1
            if why != 0:
                if n_gaps == gaps.shape[0]:
                    bigger = np.zeros((2 * gaps.shape[0], gaps.shape[1]), dtype=np.int64)
                    bigger[:n_gaps] = gaps
                    gaps = bigger
                gaps[n_gaps, 0] = i
                gaps[n_gaps, 1] = why
                gaps[n_gaps, 2] = cell
                for j in range(i):
                    gaps[n_gaps, 3 + j] = path[j]
                n_gaps += 1
                ret = _NONE
                continue
            kx[i] = cx
            ko[i] = co
            path[i] = cell
            x |= one << np.uint64(cell)
            i += 1
            mode = _O_NODE
        if mode == _O_NODE:  # O to move after X's move at ply i - 1
            mode = _O_DONE
            complete = False
            for m in masks:
                if x & m == m:
                    complete = True
            if complete:
                ret = 0
            else:
                threats = _win_cells(x, o, masks)
                empty = ~(x | o) & full
                if popcount(threats) >= 2:
                    counts[2] += popcount(empty)
                    ret = 2
                else:
                    replies = threats if threats != 0 else empty
                    counts[2] += popcount(empty) - popcount(replies)
                    left[i] = replies
                    threat[i] = threats != 0
                    longest[i] = 2 if threats != 0 else 0
                    failed[i] = False
                    n_seen[i] = 0
                    mode = _O_NEXT
        if mode == _O_NEXT:
            if left[i] == 0:
                ret = _NONE if failed[i] else longest[i]
                mode = _O_DONE
            else:
                reply = np.int64(0)
                while (left[i] >> np.uint64(reply)) & one == 0:
                    reply += 1
                bit = one << np.uint64(reply)
                left[i] ^= bit
                have_image = False
                if not threat[i]:  # one reply when X threatens: nothing to deduplicate
                    rx, ro, rsym = least_image(tables, x, o | bit)
                    again = False
                    for j in range(n_seen[i]):
                        if seen_x[i, j] == rx and seen_o[i, j] == ro:
                            again = True
                            break
                    if again:
                        continue
                    seen_x[i, n_seen[i]] = rx
                    seen_o[i, n_seen[i]] = ro
                    n_seen[i] += 1
                    have_image = True
                    image_x, image_o, image_sym = rx, ro, rsym
                counts[1] += 1
                if _win_cells(o, x, masks) & bit != 0:  # O completes a line: no proof
                    failed[i] = True
                    continue
                path[i] = reply
                o |= bit
                i += 1
                mode = _X_NODE
                continue
        if mode == _O_DONE:  # the O frame at ply i is done with ``ret``: back to its X frame
            i -= 1
            x ^= one << np.uint64(path[i])
            ret = _NONE if ret == _NONE else ret + 1
            heights[(kx[i], ko[i])] = ret
            mode = _X_DONE
        # mode == _X_DONE: the X position at ply i is done with ``ret``
        if i == 0:
            break
        i -= 1
        o ^= one << np.uint64(path[i])
        if ret == _NONE:
            failed[i] = True
        elif ret + 1 > longest[i]:
            longest[i] = ret + 1
        mode = _O_NEXT
    k = 0
    for key in heights:
        if 2 * popcount(key[0]) <= keep:
            k += 1
    out = np.zeros((k, 3), dtype=np.uint64)
    k = 0
    for key, h in heights.items():
        if 2 * popcount(key[0]) <= keep:
            out[k, 0] = key[0]
            out[k, 1] = key[1]
            out[k, 2] = np.uint64(h) if h >= 0 else full
            k += 1
    return ret, out, gaps[:n_gaps], learnt[:n_found], dfpn_at[:n_dfpn]
