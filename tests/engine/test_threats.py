"""Threat-space search against the separate exhaustive solver, and its position arrays
(the lines' codes and counters, and what is counted from them on demand)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import ShortWins, random_positions

from engine import Board
from engine.kernels.negamax import tables_for
from engine.kernels.threats import (
    FIELD,
    MAX_THREATS,
    O_UNIT,
    Position,
    ThreatTable,
    all_open_lines,
    code_of,
    code_weights,
    make_scratch,
    open_lines,
    pop,
    push,
    threat_search,
    threat_win,
    through,
    weigh_cells,
    win_cells,
    zobrist,
)
from engine.rules.geometry import variant


def direct_cellk(board: Board) -> np.ndarray:
    g = board.geometry
    out = np.zeros((2, g.n, g.size), dtype=np.int8)
    for side in (0, 1):
        mine, theirs = board.stones[side], board.stones[1 - side]
        for mask, line in zip(g.line_masks, g.lines, strict=True):
            k = (mask & mine).bit_count()
            if not mask & theirs and k < g.n:
                for cell in line:
                    out[side, k, cell] += 1
    return out


def direct_wins(board: Board, side: int) -> tuple[int, int]:
    g = board.geometry
    mine, theirs = board.stones[side], board.stones[1 - side]
    cells = {(m & ~mine).bit_length() - 1 for m in g.line_masks
             if not m & theirs and (m & ~mine).bit_count() == 1 and m & mine}
    return len(cells), min(cells, default=-1)


def assert_arrays_match(pos: Position, board: Board) -> None:
    """The lines' codes, the counters, the on-demand ``cellk`` and the win cells, all
    against a count from the board's bitboards."""
    g = board.geometry
    t = tables_for(g)
    x, o = board.stones
    codes = [(m & x).bit_count() + O_UNIT * (m & o).bit_count() for m in g.line_masks]
    assert list(pos.lines) == codes
    cellk = direct_cellk(board)
    for side in (0, 1):
        hist = cellk[side].astype(np.int64) @ np.ones(g.size, dtype=np.int64) // g.n
        for k in range(max(0, g.n - 5), g.n):
            assert open_lines(side, k, pos.sums, g.n) == hist[k]
        assert all_open_lines(side, pos.sums) == hist.sum()
        for k in range(g.n):
            code = code_of(side, k)
            assert [through(c, code, pos.lines, t.cell_lines, t.cell_degree)
                    for c in range(g.size)] == list(cellk[side, k])
        assert tuple(int(v) for v in win_cells(
            side, pos.cells, pos.lines, pos.sums, t.line_cells, t.cell_lines, t.cell_degree,
            g.n)) == direct_wins(board, side)
    weights = np.zeros(g.size, dtype=np.int64)
    table = code_weights(g.n, ((2, 0, 100), (2, 1, 10), (g.n, 1, 1)))
    weigh_cells(weights, pos.lines, t.line_cells, g.n, table, 0)
    assert list(weights) == list(100 * cellk[0, g.n - 2].astype(np.int64)
                                 + 10 * cellk[1, g.n - 2] + cellk[0, 0])


@pytest.mark.parametrize("name", ["4x4x4", "3x3x3", "4x4", "5x5x5"])
def test_position_arrays_match_a_direct_count_after_push_and_pop(name: str) -> None:
    for board in random_positions(name, 5, seed=len(name), plies=(0, 20)):
        pos = Position.from_board(board)
        assert_arrays_match(pos, board)
        t = tables_for(board.geometry)
        before = (pos.cells.copy(), pos.lines.copy(), pos.sums.copy())
        for cell in board.legal_moves[:6]:
            push(cell, pos.side, pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells,
                 t.cell_lines, t.cell_degree, t.n)
            if board.is_legal(cell):
                board.push(cell)
                if board.winning_line is None:
                    assert_arrays_match(pos, board)
                board.pop()
            pop(cell, pos.side, pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells,
                t.cell_lines, t.cell_degree, t.n)
        after = (pos.cells, pos.lines, pos.sums)
        assert all((a == b).all() for a, b in zip(before, after, strict=True))


def test_the_counters_hold_the_largest_boards_lines() -> None:
    """A 10-bit counter holds every line of the largest board (9x9x9: 301)."""
    g = variant("9x9x9")
    assert len(g.lines) < 1 << FIELD
    pos = Position.from_board(Board("9x9x9"))
    assert all_open_lines(0, pos.sums) == all_open_lines(1, pos.sums) == len(g.lines)
    assert open_lines(0, 4, pos.sums, g.n) == 0


def replay_is_forced(board: Board, path: tuple[int, ...]) -> None:
    """Each defender move of ``path`` is the block of the attacker's only win cell, and the
    attacker completes a line with the last move."""
    board = board.copy()
    g = board.geometry
    attacker = board.turn
    for i, cell in enumerate(path):
        board.push(cell)
        if i == len(path) - 1:
            assert board.winning_line is not None
        elif board.turn != attacker:
            wins = {
                (m & ~board.stones[attacker]).bit_length() - 1 for m in g.line_masks
                if not m & board.stones[1 - attacker]
                and (m & ~board.stones[attacker]).bit_count() == 1
            }
            assert path[i + 1] in wins or len(wins) >= 2


@pytest.mark.parametrize(("name", "plies", "least"), [("4x4x4", (6, 30), 10),
                                                      ("3x3x3", (2, 8), 10), ("4x4", (3, 9), 3)])
def test_every_threat_win_is_proved_by_the_solver(
    name: str, plies: tuple[int, int], least: int
) -> None:
    solver = ShortWins(name)
    wins = 0
    for board in random_positions(name, 80, seed=7, plies=plies):
        path = threat_win(board)
        me, them = board.stones[board.turn], board.stones[1 - board.turn]
        if path is None:
            # every win within 3 plies is a double threat: the threat search sees them all
            assert not solver.wins_within(me, them, 3), board.notation()
            continue
        wins += 1
        assert len(path) % 2 == 1
        replay_is_forced(board, path)
        assert solver.wins_within(me, them, len(path)), (board.notation(), path)
    assert wins >= least


def test_a_lean_search_finds_the_same_wins_in_fewer_nodes() -> None:
    """``lean`` leaves out the last threat's children (none can win): the same answer and
    path at every number of threats, the proof's deepening's 1..8 and 32, with a table shared
    between the searches as the proof shares it; fewer nodes in all."""
    t = tables_for(variant("4x4x4"))
    found = {False: [], True: []}
    nodes = {False: 0, True: 0}
    for lean in (False, True):
        table = ThreatTable(16)
        scratch = make_scratch(t.size, t.n)
        stats = np.zeros(1, dtype=np.int64)
        for board in random_positions("4x4x4", 60, seed=11, plies=(8, 24)):
            pos = Position.from_board(board)
            for threats in (*range(1, 9), MAX_THREATS):
                path = np.full(2 * MAX_THREATS + 4, -1, dtype=np.int32)
                plies = threat_search(
                    pos.cells, pos.lines, pos.sums, pos.deltas, t.line_cells, t.cell_lines,
                    t.cell_degree, t.n, pos.side, np.uint64(pos.key), zobrist(t.size),
                    threats, 0, table.keys, path, stats, scratch, 0.0, lean)
                found[lean].append((plies, tuple(path[:plies])))
        nodes[lean] = int(stats[0])
    assert found[True] == found[False]
    assert sum(1 for plies, _ in found[True] if plies) >= 60  # wins at some depths
    assert nodes[True] < nodes[False] * 0.8


PLAIN = r"""
import json, sys
sys.path.insert(0, "tests/engine")
from engine_helpers import random_positions
import engine.kernels.threats as threats
wins = [threats.threat_win(board, max_threats=4)
        for board in random_positions("4x4x4", 30, seed=5, plies=(8, 24))]
print(json.dumps({"jit": type(threats.threat_search).__name__ != "function",
                  "wins": [None if win is None else list(win) for win in wins]}))
"""


def test_the_threat_search_runs_as_plain_python() -> None:
    """With numba compiling nothing (``NUMBA_DISABLE_JIT=1``, the server's quick path) the
    search finds the wins it finds compiled (its lowest set bit is LLVM's count of trailing
    zeros only when compiled)."""
    env = os.environ | {"NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", PLAIN], cwd=Path(__file__).resolve().parents[2],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["jit"] is False
    compiled = [threat_win(board, max_threats=4)
                for board in random_positions("4x4x4", 30, seed=5, plies=(8, 24))]
    assert report["wins"] == [None if win is None else list(win) for win in compiled]
    assert sum(win is not None for win in compiled) >= 10


def test_threat_search_for_the_side_not_to_move_is_a_threat_to_meet() -> None:
    # X holds 1a1 1b1 1c1 and 1a2 1a3: two lines one stone from done; O (to move) has
    # nothing. For X, as if X were to move, the search reports the completion.
    board = Board.from_notation("4x4x4", "1a1 4d4 1b1 2c3 1c1 3b1 1a2 4a2 1a3")
    g = board.geometry
    assert board.turn == 1
    path = threat_win(board, side=0)
    assert path is not None and len(path) == 1
    assert path[0] in {g.cell_at([3, 0, 0]), g.cell_at([0, 3, 0])}
    assert threat_win(board) is None


def test_a_counter_threat_from_a_forced_block_must_be_answered() -> None:
    checked = 0
    for board in random_positions("4x4x4", 200, seed=11, plies=(10, 26)):
        path = threat_win(board)
        if path is None or len(path) < 5:
            continue
        # when a forced block made a three for the defender, the attacker's next move is
        # its block: the path must never leave a defender's win cell open on its turn
        replay = board.copy()
        attacker = replay.turn
        g = replay.geometry
        for i, cell in enumerate(path[:-1]):
            replay.push(cell)
            if replay.turn == attacker and i + 1 < len(path) - 1:
                defender_wins = {
                    (m & ~replay.stones[1 - attacker]).bit_length() - 1 for m in g.line_masks
                    if not m & replay.stones[attacker]
                    and (m & ~replay.stones[1 - attacker]).bit_count() == 1
                }
                assert defender_wins <= {path[i + 1]}
                checked += bool(defender_wins)
    assert checked >= 1
