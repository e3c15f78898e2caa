"""The truth of a position: verdicts against the forced-win suite and the proof, draws where
they are proved, never a verdict that is not proved."""

from __future__ import annotations

import json

import pytest
from engine_helpers import FORCED_WINS

from engine import Board, parse_cell
from engine.solved import proof
from engine.solved.truth import BOOK, DRAW, LOSS, SEARCH, UNKNOWN, WIN, solve

SUITE = json.loads((FORCED_WINS / "suite.json").read_text())


@pytest.mark.parametrize("entry", SUITE, ids=lambda e: f"{e['plies']}-{e['moves'][-8:]}")
def test_forced_win_suite(entry: dict) -> None:
    """A position with a forced win in exactly ``plies``: never a loss or a draw, never
    fewer plies than that, and each of the suite's winning moves never rated otherwise."""
    board = Board.from_notation("4x4x4", entry["moves"])
    verdict = solve(board, budget_s=0.3, moves=False)
    assert verdict.verdict in (WIN, UNKNOWN)
    assert verdict.plies is None or verdict.plies >= entry["plies"]
    for move in entry["winning"][:1]:
        board.push(parse_cell(move, board.geometry))
        after = solve(board, budget_s=0.2, moves=False)
        board.pop()
        assert after.verdict in (LOSS, UNKNOWN)
        assert after.plies is None or after.plies + 1 >= entry["plies"]


def test_most_of_the_suite_is_proved() -> None:
    proved = sum(solve(Board.from_notation("4x4x4", e["moves"]), budget_s=0.3,
                       moves=False).verdict == WIN for e in SUITE)
    assert proved >= len(SUITE) * 3 // 4


def test_the_empty_board_is_won_by_the_book_at_once() -> None:
    verdict = solve(Board("4x4x4"), budget_s=0.0)
    assert verdict.verdict == WIN and verdict.proved_by == BOOK
    assert verdict.plies == proof.shipped_strategy().heights[(0, 0)]
    best = verdict.moves[0]
    assert best.move == 0 and best.verdict == LOSS and best.proved_by == BOOK


def test_example_position_gets_a_real_verdict() -> None:
    """Off the proof (X's 4a4 is not the strategy's 4a1): O's 59 replies are proved won for X
    by the proof, the threat search or the probe (engine/solved/probe.py; df-pn alone needed about
    10 s here), so O's loss follows; solve returns once the moves are settled, well within
    a generous budget (what is not settled in it is 'unknown', never a guess)."""
    board = Board.from_notation("4x4x4", "1a1 1d4 4a4 3b3 1a4")
    verdict = solve(board, budget_s=120.0)
    assert verdict.verdict == LOSS  # O to move: X wins
    assert all(m.verdict == WIN for m in verdict.moves)


def test_draws_where_they_are_proved() -> None:
    verdict = solve(Board("3x3"), budget_s=5.0)  # returns as soon as all is settled
    assert verdict.verdict == DRAW and all(m.verdict == DRAW for m in verdict.moves)


def test_3x3x3_only_the_centre_wins() -> None:
    verdict = solve(Board("3x3x3"), budget_s=5.0)
    assert verdict.verdict == WIN
    assert [m.move for m in verdict.moves if m.verdict == LOSS] == [13]
    assert all(m.verdict == WIN for m in verdict.moves[1:])


def test_finished_game() -> None:
    board = Board.from_notation("3x3", "a1 b1 a2 b2 a3")
    verdict = solve(board)
    assert (verdict.verdict, verdict.plies, verdict.moves) == (LOSS, 0, ())


def test_json_shape() -> None:
    board = Board.from_notation("3x3", "b2")
    data = solve(board).to_json(board.geometry)
    assert set(data) == {"verdict", "plies", "proved_by", "moves"}
    assert data["proved_by"] in (BOOK, SEARCH)
    assert len(data["moves"]) == 8
    assert set(data["moves"][0]) == {"move", "cell", "verdict", "plies", "proved_by"}
    assert data["moves"][0]["move"] in {"a1", "c1", "a3", "c3", "b1", "a2", "c2", "b3"}


def test_small_boards_come_from_the_table() -> None:
    board = Board.from_notation("3x3", "a1 b2 c3")
    verdict = solve(board, budget_s=0.0, moves=False)
    # a dead draw ends the game: O's longest draw after a1 b2 c3 leaves the ninth cell empty
    assert verdict.proved_by == BOOK and verdict.verdict == DRAW and verdict.plies == 5
    assert solve(Board("4x4"), budget_s=0.0, moves=False).verdict == DRAW
