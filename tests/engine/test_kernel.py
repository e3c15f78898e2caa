"""The numba search kernel against counts and a plain reference minimax."""

import random

import numpy as np
import pytest

from engine import Board
from engine.kernels import negamax as kernel
from engine.kernels.perft import count_sequences

W4 = np.array([0, 1, 10, 100, 0], dtype=np.int64)
W3 = np.array([0, 1, 10, 0], dtype=np.int64)


@pytest.mark.parametrize(("depth", "count"), [(1, 64), (2, 4032), (3, 249_984), (4, 15_249_024)])
def test_perft_from_the_empty_cube(depth: int, count: int) -> None:
    assert count_sequences(Board("4x4x4"), depth) == count


def test_perft_counts_every_game_of_noughts_and_crosses() -> None:
    # 255,168 distinct games of 3x3 tic-tac-toe: sequences stop when a line is made.
    assert count_sequences(Board("3x3"), 9) == 255_168


def test_perft_over_the_threat_searchs_push_and_pop_counts_the_same() -> None:
    assert count_sequences(Board("4x4x4"), 3, threats=True) == 249_984
    assert count_sequences(Board("3x3"), 9, threats=True) == 255_168


def test_state_histogram_matches_a_direct_count() -> None:
    rng = random.Random(5)
    board = Board("4x4x4")
    while board.ply < 20 and board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    state = kernel.State.from_board(board)
    g = board.geometry
    for side in (0, 1):
        mine, theirs = board.stones[side], board.stones[1 - side]
        expected = [0] * 5
        for mask in g.line_masks:
            if not mask & theirs:
                expected[(mask & mine).bit_count()] += 1
        assert list(state.hist[side]) == expected
    assert state.side == board.turn


def reference_value(board: Board, depth: int, root: int, w: np.ndarray) -> int:
    """Plain minimax on the Board class, scored as the kernel scores."""
    outcome = board.outcome()
    if board.winning_line is not None:
        return -(kernel.WIN - board.ply)  # the side to move has lost
    if not board.empty or (outcome is not None and depth == 0):
        return 0
    if depth == 0:
        g = board.geometry
        me, other = board.stones[root], board.stones[1 - root]
        total = 0
        for mask in g.line_masks:
            if not mask & other:
                total += w[(mask & me).bit_count()]
            if not mask & me:
                total -= w[(mask & other).bit_count()]
        return total if board.turn == root else -total
    best = -kernel.INF
    for cell in board.legal_moves:
        board.push(cell)
        best = max(best, -reference_value(board, depth - 1, root, w))
        board.pop()
    return best


@pytest.mark.parametrize("seed", range(6))
def test_kernel_agrees_with_reference_minimax(seed: int) -> None:
    rng = random.Random(seed)
    name = ["3x3", "4x4", "3x3x3"][seed % 3]
    board = Board(name)
    for _ in range(rng.randrange(1, 4)):
        board.push(rng.choice(board.legal_moves))
    if board.outcome() is not None:
        return
    w = W3 if board.geometry.n == 3 else W4
    depth = 3 if name != "3x3x3" else 2
    start = board.ply
    for alphabeta in (False, True):
        result = kernel.search(board, depth, alphabeta=alphabeta, w_mine=w, w_theirs=w)
        # the kernel counts plies from the root; the reference from the game's start
        expected = reference_value(board, depth, board.turn, w)
        got = int(result.scores[result.best])
        if abs(expected) > kernel.WIN // 2:
            expected = int(np.sign(expected)) * (abs(expected) + start)
        assert got == expected


def test_alphabeta_finds_the_minimax_value_with_fewer_nodes() -> None:
    rng = random.Random(11)
    for _ in range(4):
        board = Board("4x4x4")
        for _ in range(6):
            board.push(rng.choice(board.legal_moves))
        full = kernel.search(board, 3, alphabeta=False, w_mine=W4, w_theirs=W4)
        pruned = kernel.search(board, 3, alphabeta=True, w_mine=W4, w_theirs=W4)
        assert full.scores.max() == pruned.scores.max()
        # every move that ties the best is scored exactly under alpha-beta too
        assert set(full.moves[full.scores == full.scores.max()]) == set(
            pruned.moves[pruned.scores == pruned.scores.max()]
        )
        assert pruned.nodes < full.nodes / 3
        assert full.children / full.interior > pruned.children / pruned.interior


def test_win_in_one_and_win_in_three_are_proved() -> None:
    # X to move with 1a1 1b1 1c1: wins at 1d1 on ply 1.
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1 3c3")
    result = kernel.search(board, 2, w_mine=W4, w_theirs=W4)
    assert result.moves[result.best] == 3
    assert kernel.mate_plies(int(result.scores[result.best])) == 1
    # 3x3: O threatens a1-a2-a3; X's block at a1 also makes two threats of its own
    # (a1-b1-c1 and a1-b2-c3), so X wins on ply 3 whatever O does.
    fork = Board.from_notation("3x3", "b2 a2 c1 a3")
    result = kernel.search(fork, 3, w_mine=W3, w_theirs=W3)
    assert result.moves[result.best] == 0
    assert kernel.mate_plies(int(result.scores[result.best])) == 3
    assert result.pv[0] == 0 and len(result.pv) == 3
    # one ply short of the horizon, the win is not proved
    shallow = kernel.search(fork, 2, w_mine=W3, w_theirs=W3)
    assert kernel.mate_plies(int(shallow.scores[shallow.best])) is None


def test_an_expired_deadline_aborts_and_says_so() -> None:
    board = Board("4x4x4")
    result = kernel.search(
        board, 6, w_mine=W4, w_theirs=W4, deadline=kernel.now() - 1.0
    )
    assert result.aborted
    assert result.nodes <= kernel.POLL_MASK + 2


def test_a_raised_stop_flag_aborts() -> None:
    stop = np.ones(1, dtype=np.int8)
    result = kernel.search(Board("4x4x4"), 6, w_mine=W4, w_theirs=W4, stop=stop)
    assert result.aborted and result.nodes <= kernel.POLL_MASK + 2


def test_search_leaves_the_board_untouched_and_reports_a_legal_pv() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2")
    before = board.copy()
    result = kernel.search(board, 4, w_mine=W4, w_theirs=W4)
    assert board == before
    replay = board.copy()
    for cell in result.pv:
        replay.push(cell)  # raises if the principal variation were illegal
    assert len(result.pv) == 4


def test_five_by_five_by_five_has_more_cells_than_a_word() -> None:
    board = Board.from_notation("5x5x5", "3c3 5e5")
    w = np.array([0, 1, 10, 100, 1000, 0], dtype=np.int64)
    result = kernel.search(board, 2, w_mine=w, w_theirs=w)
    assert 0 <= result.moves[result.best] < 125
    assert count_sequences(Board("5x5x5"), 2) == 125 * 124


def test_tally_keeps_the_histogram_in_step_with_push_and_pop() -> None:
    # push and pop change only the counts; the searches move the histogram with tally, and
    # it must stay the direct count of the counts, a win included, all the way back
    rng = random.Random(3)
    board = Board("4x4x4")
    t = kernel.tables_for(board.geometry)
    state = kernel.State.from_board(board)
    start = state.hist.copy()
    direct = np.empty_like(state.hist)
    while board.outcome() is None:
        cell, side = rng.choice(board.legal_moves), board.turn
        kernel.tally(cell, side, state.counts, state.hist, t.cell_lines, t.cell_degree, 1)
        won = kernel.push_counts(cell, side, state.cells, state.counts, t.cell_lines,
                           t.cell_degree, t.n)
        board.push(cell)
        kernel.histogram(state.counts, t.n, direct)
        assert (state.hist == direct).all()
        assert won == (board.winning_line is not None)
    assert state.hist[1 - board.turn, t.n] >= 1 or not board.winning_line
    while board.moves:
        cell = board.moves[-1]
        board.pop()
        kernel.pop_counts(cell, board.turn, state.cells, state.counts, t.cell_lines, t.cell_degree)
        kernel.tally(cell, board.turn, state.counts, state.hist, t.cell_lines, t.cell_degree,
                     -1)
    assert (state.hist == start).all() and not state.counts.any() and not state.cells.any()


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_search_takes_back_every_stone_it_plays(depth: int) -> None:
    # a leaf's move is never made, so the moves into leaves must not be taken back either
    board = Board.from_notation("4x4x4", "1a1 2b2 1a2 3c3")
    t = kernel.tables_for(board.geometry)
    state = kernel.State.from_board(board)
    before = (state.cells.copy(), state.counts.copy(), state.hist.copy())
    moves = np.array(board.legal_moves, dtype=np.int32)
    stats = np.zeros(kernel.STATS_SIZE, dtype=np.int64)
    pv = np.zeros((kernel.MAX_PLY, kernel.MAX_PLY), dtype=np.int32)
    pv_len = np.zeros(kernel.MAX_PLY, dtype=np.int32)
    kernel.search_root(
        state.cells, state.counts, state.hist, t.cell_lines, t.cell_degree, t.n,
        state.side, depth, True, moves, kernel.EVAL_LINEAR, W4, W4,
        0.0, np.zeros(1, dtype=np.int8), stats, pv, pv_len, np.zeros(len(moves), np.int64),
    )
    assert stats[kernel.NODES] >= len(moves)
    for was, now in zip(before, (state.cells, state.counts, state.hist), strict=True):
        assert (was == now).all()
