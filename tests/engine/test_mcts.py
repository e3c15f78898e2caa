"""The MCTS sparring partner: the rules every player keeps, seeded replays, and its limits."""

from dataclasses import replace

import numpy as np

from engine import Board, parse_cell
from engine.players import Limit, make_player

WIN_NOW = "1a1 4d4 1b1 4c4 1c1 3d4"  # X completes 1a1-1d1
BLOCK = "1a1 4d4 1b1 4c4 2b2 4b4"  # X has no three; O's 4b4 4c4 4d4 needs 4a4
DOUBLE_THREAT = "1a2 4d4 1a3 4c3 1b1 3b4 1c1 2d3"  # X's 1a1 makes two threes at once


def cell(text: str) -> int:
    return parse_cell(text, Board("4x4x4").geometry)


def test_registry_knows_it_and_its_options_round_trip() -> None:
    player = make_player("mcts:c=0.7,iterations=300", seed=3)
    assert player.settings == {"time": 1.0, "iterations": 300, "c": 0.7}
    assert make_player(player.spec).settings == player.settings


def test_it_takes_a_free_win_and_blocks_a_three() -> None:
    player = make_player("mcts:iterations=200")
    win = player.decide(Board.from_notation("4x4x4", WIN_NOW))
    assert win.move == cell("1d1")
    assert win.forced is not None and win.forced.result == "win"
    assert player.decide(Board.from_notation("4x4x4", BLOCK)).move == cell("4a4")


def test_it_finds_the_double_threat() -> None:
    decision = make_player("mcts:iterations=4000", seed=1).decide(
        Board.from_notation("4x4x4", DOUBLE_THREAT))
    assert decision.move == cell("1a1")
    assert decision.score is not None and decision.score > 500


def test_the_same_seed_replays_and_the_iterations_are_kept() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2")
    first = make_player("mcts:iterations=1500", seed=11).decide(board)
    again = make_player("mcts:iterations=1500", seed=11).decide(board)
    assert replace(first, elapsed=0.0) == replace(again, elapsed=0.0)
    assert first.nodes == 1500
    assert board.notation() == "1a1 2b2"  # the board is left as it was
    assert first.pv and first.pv[0] == first.move and board.is_legal(first.move)


def test_a_depth_only_limit_runs_the_default_iterations_and_a_stop_answers_at_once() -> None:
    from engine.players.mcts import DEFAULT_ITERATIONS

    board = Board.from_notation("4x4x4", "1a1")
    assert make_player("mcts").decide(board, Limit(depth=3)).nodes == DEFAULT_ITERATIONS
    stopped = make_player("mcts").decide(board, Limit(time=30, stop=np.ones(1, dtype=np.int8)))
    assert stopped.nodes == 0 and board.is_legal(stopped.move)


def test_it_plays_small_boards_to_the_end() -> None:
    board = Board("3x3")
    players = make_player("mcts:iterations=300", seed=1), make_player("mcts:iterations=300")
    while board.outcome() is None:
        board.push(players[board.turn].decide(board).move)
    assert board.outcome() is not None
