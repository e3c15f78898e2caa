"""Board rules: moves, outcomes, dead draws, copies and text; with property tests."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Board, GameOver, IllegalMove, NotationError, O, Termination, X, variant


def test_first_move_is_x_and_turns_alternate() -> None:
    board = Board()
    assert board.turn == X
    board.push(0)
    assert board.turn == O and board.piece_at(0) == X
    board.push(1)
    assert board.turn == X and board.piece_at(1) == O


def test_occupied_cell_and_bad_cell_are_illegal() -> None:
    board = Board.from_notation("4x4x4", "1a1")
    with pytest.raises(IllegalMove, match="1a1 is already taken"):
        board.push(0)
    with pytest.raises(IllegalMove, match="not a cell"):
        board.push(64)
    with pytest.raises(IllegalMove):
        board.push(-1)
    assert not board.is_legal(0) and board.is_legal(1) and not board.is_legal(64)


def test_a_row_wins_with_its_line() -> None:
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1 2c1 1d1")
    outcome = board.outcome()
    assert outcome is not None
    assert outcome.termination is Termination.LINE
    assert outcome.winner == X and outcome.result == "1-0"
    assert outcome.line == (0, 1, 2, 3)
    assert board.legal_moves == []
    with pytest.raises(GameOver, match="X has won with 1a1 1b1 1c1 1d1"):
        board.push(10)


def test_space_diagonal_wins_for_o() -> None:
    board = Board.from_notation("4x4x4", "1b1 1a1 1c1 2b2 1a3 3c3 2a4 4d4")
    outcome = board.outcome()
    assert outcome is not None and outcome.winner == O
    assert set(outcome.line or ()) == {0, 21, 42, 63}


def test_full_board_without_line_is_a_draw() -> None:
    # 3x3: X b2 a1? a classic drawn game
    board = Board.from_notation("3x3", "b2 a1 c1 a3 a2 c2 b3 b1 c3")
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is None
    assert outcome.termination is Termination.FULL


def test_dead_draw_when_every_line_holds_both_marks() -> None:
    # 3x3 with b2 still empty: every line already holds an X and an O.
    board = Board.from_notation("3x3", "b1 a3 c3 a1 c1 b3 a2 c2")
    outcome = board.outcome()
    assert outcome is not None and outcome.termination is Termination.DEAD
    assert outcome.winner is None and outcome.result == "1/2-1/2"
    board.pop()
    assert board.outcome() is None  # one move earlier X could still take a2-b2-c2


def test_dead_draw_counts_the_moves_each_side_has_left() -> None:
    # O to move, b1 and b3 empty: X's open b-file needs both, but X gets only one more move.
    board = Board.from_notation("3x3", "a3 a2 b2 c3 a1 c1 c2")
    assert board.turn == O
    assert not board.can_still_win(X) and not board.can_still_win(O)
    outcome = board.outcome()
    assert outcome is not None and outcome.termination is Termination.DEAD
    board.pop()
    assert board.outcome() is None


def test_notation_round_trip_and_repr() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2 4d4 3c3")
    assert board.notation() == "1a1 2b2 4d4 3c3"
    assert eval(repr(board), {"Board": Board}) == board
    assert "level 4" in str(board)


def test_from_notation_names_the_illegal_move() -> None:
    with pytest.raises(IllegalMove, match="move 3: 1a1 is already taken"):
        Board.from_notation("4x4x4", "1a1 2b2 1a1")
    with pytest.raises(NotationError, match="move 2"):
        Board.from_notation("4x4x4", "1a1 9z9")


def test_copy_is_independent() -> None:
    board = Board.from_notation("4x4x4", "1a1")
    other = board.copy()
    other.push(5)
    assert board.ply == 1 and other.ply == 2


def random_game(name: str, rng: random.Random) -> Board:
    board = Board(name)
    while board.outcome() is None:
        board.push(rng.choice(board.legal_moves))
    return board


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["3x3", "4x4", "3x3x3", "4x4x4", "5x5x5"]), st.randoms(use_true_random=False)
)
def test_a_whole_game_pops_back_and_replays(name: str, rng: random.Random) -> None:
    board = random_game(name, rng)
    moves, final = list(board.moves), (list(board.stones), board.outcome())
    while board.moves:
        board.pop()
    assert board.stones == [0, 0] and board.outcome() is None and board.ply == 0
    for cell in moves:
        board.push(cell)
    assert (list(board.stones), board.outcome()) == final
    assert Board.from_notation(name, board.notation()) == board


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["3x3", "4x4", "3x3x3", "4x4x4"]), st.randoms(use_true_random=False))
def test_push_then_pop_restores_every_position(name: str, rng: random.Random) -> None:
    board = Board(name)
    while board.outcome() is None:
        before = (list(board.stones), board.turn, board.outcome(), list(board.legal_moves))
        cell = rng.choice(board.legal_moves)
        board.push(cell)
        assert board.pop() == cell
        assert (list(board.stones), board.turn, board.outcome(), list(board.legal_moves)) == before
        board.push(cell)


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 191))
def test_outcome_is_invariant_under_every_symmetry(rng: random.Random, which: int) -> None:
    g = variant("4x4x4")
    board = random_game("4x4x4", rng)
    symmetry = g.symmetries[which]
    image = Board("4x4x4", [symmetry[c] for c in board.moves])
    a, b = board.outcome(), image.outcome()
    assert a is not None and b is not None
    assert (a.termination, a.winner) == (b.termination, b.winner)
    assert a.line is not None and b.line is not None
    # a move may complete two lines at once, so compare what each line is, not which one
    image_of_line = sum(1 << symmetry[c] for c in a.line)
    assert image_of_line in g.line_masks
    winner_stones = image.stones[b.winner] if b.winner is not None else 0
    assert image_of_line & winner_stones == image_of_line


def naive_winner(n: int, d: int, grid: dict[tuple[int, ...], int]) -> int | None:
    """Who has n in a row, found by walking from every cell in every direction: shares no
    code with engine.rules.geometry (no line tables, no bitboards)."""
    import itertools

    for start in itertools.product(range(n), repeat=d):
        side = grid.get(start)
        if side is None:
            continue
        for step in itertools.product((-1, 0, 1), repeat=d):
            if not any(step):
                continue
            cells = [tuple(s + k * t for s, t in zip(start, step, strict=True)) for k in range(n)]
            if all(0 <= c < n for cell in cells for c in cell) and all(
                grid.get(cell) == side for cell in cells
            ):
                return side
    return None


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(3, 2), (4, 2), (3, 3), (4, 3)]), st.randoms(use_true_random=False))
def test_outcomes_agree_with_an_independent_implementation(
    size: tuple[int, int], rng: random.Random
) -> None:
    n, d = size
    board = Board("x".join([str(n)] * d))
    grid: dict[tuple[int, ...], int] = {}
    while True:
        outcome = board.outcome()
        winner = naive_winner(n, d, grid)
        if outcome is not None and outcome.termination is Termination.LINE:
            assert winner == outcome.winner
            break
        assert winner is None
        if outcome is not None:  # a full board or a dead draw: nobody has a line
            break
        cell = rng.choice(board.legal_moves)
        grid[board.geometry.coords(cell)] = board.turn
        board.push(cell)
