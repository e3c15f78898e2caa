"""The exact "win within k" search against a plain full-width search, the puzzles made from
positions, and the shipped set solved again."""

from __future__ import annotations

import random
from functools import cache

import pytest

from engine import Board, variant
from engine.puzzles.mate import (
    SURVIVE,
    WIN,
    Mate,
    NotAPuzzle,
    Puzzle,
    Step,
    check_puzzle,
    load_puzzles,
    survive_puzzle,
    win_puzzle,
)


def naive_within(name: str, a: int, d: int, k: int) -> bool:
    """Whether the side to move (``a``) forces a win within ``k`` of its moves: every move,
    every reply, no pruning at all."""
    geometry = variant(name)
    masks = geometry.line_masks
    full = geometry.full_mask

    def done(stones: int) -> bool:
        return any(stones & m == m for m in masks)

    @cache
    def within(a: int, d: int, k: int) -> bool:
        if k == 0:
            return False
        for c in range(geometry.size):
            if (a | d) >> c & 1:
                continue
            a2 = a | 1 << c
            if done(a2):
                return True
            if k == 1 or full & ~(a2 | d) == 0:
                continue
            if all(not done(d | 1 << r) and within(a2, d | 1 << r, k - 1)
                   for r in range(geometry.size) if not (a2 | d) >> r & 1):
                return True
        return False

    return within(a, d, k)


def random_positions(name: str, count: int, stones: tuple[int, int], seed: int
                     ) -> list[Board]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        board = Board(name)
        for _ in range(rng.randint(*stones)):
            board.push(rng.choice(board.legal_moves))
            if board.is_game_over():
                break
        if not board.is_game_over():
            found.append(board)
    return found


@pytest.mark.parametrize(("name", "stones", "most"), [("4x4", (5, 9), 3), ("3x3x3", (3, 6), 3)])
def test_the_exact_search_agrees_with_a_full_width_search(name: str, stones: tuple[int, int],
                                                         most: int) -> None:
    agreed = wins = 0
    for board in random_positions(name, 40, stones, seed=len(name)):
        a, d = board.stones[board.turn], board.stones[board.turn ^ 1]
        for k in range(1, most + 1):
            mine = Mate(board.geometry).within(a, d, k)
            assert mine == naive_within(name, a, d, k), (board.notation(), k)
            agreed += 1
            wins += mine
    assert 0 < wins < agreed  # both answers were met


FORK = "1c1 4d4 1d1 4c4 1a3 4b3 1a4 4d2"


def test_a_fork_is_a_win_in_two_and_every_forking_move_is_accepted() -> None:
    # X holds 1c1 1d1 (row 1 of level 1) and 1a3 1a4 (column a of level 1): 1a1, where they
    # meet, makes two threes at once
    board = Board.from_notation("4x4x4", FORK)
    puzzle = win_puzzle(board)
    assert puzzle.kind == WIN and puzzle.moves == 2 and 0 in puzzle.first_moves
    mate = Mate(board.geometry)
    x, o = board.stones
    assert puzzle.first_moves == mate.winning_moves(x, o, 2)
    for cell in puzzle.first_moves:  # each accepted move leaves a win in 1 after the reply
        reply, step = puzzle.solution.accepted[cell]
        assert reply is not None and step is not None
        after = Board(board.geometry, [*board.moves, cell, reply])
        assert set(step.accepted) == set(Mate(after.geometry).winning_moves(
            after.stones[0], after.stones[1], 1))


def test_a_position_without_a_short_win_is_no_puzzle() -> None:
    with pytest.raises(NotAPuzzle, match="no win"):
        win_puzzle(Board.from_notation("4x4x4", "1a1 2b2"), most=3)


def test_survive_finds_the_only_move() -> None:
    # X threatens the fork at 1a1 (FORK without O's last move): the moves that stop it are
    # the survivors, each checked against the search
    board = Board.from_notation("4x4x4", FORK.rsplit(" ", 1)[0])
    puzzle = survive_puzzle(board, most_survivors=64)
    assert 0 in puzzle.first_moves
    assert puzzle.kind == SURVIVE
    mate = Mate(board.geometry)
    x, o = board.stones
    for cell in range(64):
        if (x | o) >> cell & 1:
            continue
        survives = not mate.within(x, o | 1 << cell, puzzle.horizon)
        assert survives == (cell in puzzle.first_moves)


def test_a_puzzle_round_trips_through_json() -> None:
    puzzle = win_puzzle(Board.from_notation("4x4x4", FORK))
    again = Puzzle.from_json(puzzle.to_json())
    assert again == puzzle and Step.from_json(puzzle.solution.to_json()) == puzzle.solution


def test_check_puzzle_catches_a_wrong_solution() -> None:
    puzzle = win_puzzle(Board.from_notation("4x4x4", FORK))
    assert check_puzzle(puzzle) == []
    first = puzzle.first_moves[0]
    puzzle.solution.accepted.pop(first)
    assert check_puzzle(puzzle) == ["the solution differs from the solver's"]


SHIPPED = load_puzzles()


def test_the_shipped_set_spans_the_kinds() -> None:
    kinds = {(p.kind, p.moves) for p in SHIPPED}
    assert {(WIN, 2), (WIN, 3), (WIN, 4), (SURVIVE, 1)} <= kinds
    assert len(SHIPPED) >= 30


@pytest.mark.parametrize("index", range(0, len(SHIPPED), 6))
def test_a_sample_of_the_shipped_set_is_solved_again(index: int) -> None:
    """Every sixth puzzle here (``qubic puzzles check`` solves them all: docs/benchmarks.md)."""
    assert check_puzzle(SHIPPED[index]) == []


WINS = [p for p in SHIPPED if p.kind == WIN]


@pytest.mark.parametrize("index", range(0, len(WINS), 8))
def test_the_truth_agrees_with_a_sample_of_the_shipped_wins(index: int) -> None:
    """The engine's other solver (``engine.solved.truth``: the proof, threat search, df-pn) never
    contradicts a shipped "win in N", nor claims a win in fewer plies."""
    from engine.solved.truth import LOSS, solve
    from engine.solved.truth import WIN as TRUTH_WIN

    puzzle = WINS[index]
    verdict = solve(Board(puzzle.variant, puzzle.position), 0.5, moves=False)
    assert verdict.verdict != LOSS and verdict.verdict != "draw"
    if verdict.verdict == TRUTH_WIN and verdict.plies is not None:
        assert verdict.plies >= 2 * puzzle.moves - 1
