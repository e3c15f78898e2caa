"""The alpha-beta sparring partner: the rules every player keeps, proofs, seeds and depth."""

import numpy as np

from engine import Board
from engine.kernels.negamax import WIN
from engine.players import Limit, make_player
from tests.engine.test_mcts import BLOCK, DOUBLE_THREAT, WIN_NOW, cell


def test_registry_knows_it_and_its_options_round_trip() -> None:
    player = make_player("alphabeta:depth=5,time=0.5")
    assert player.settings == {"depth": 5, "time": 0.5}
    assert make_player(player.spec).settings == player.settings


def test_it_takes_a_free_win_and_blocks_a_three() -> None:
    player = make_player("alphabeta")
    win = player.decide(Board.from_notation("4x4x4", WIN_NOW), Limit(depth=3))
    assert win.move == cell("1d1") and win.forced is not None and win.forced.plies == 1
    assert player.decide(Board.from_notation("4x4x4", BLOCK), Limit(depth=3)).move == cell("4a4")


def test_it_proves_the_double_threat() -> None:
    decision = make_player("alphabeta").decide(Board.from_notation("4x4x4", DOUBLE_THREAT),
                                               Limit(depth=3))
    assert decision.move == cell("1a1")
    assert decision.forced is not None and (decision.forced.result, decision.forced.plies) == (
        "win", 3)
    assert decision.score == WIN - 3


def test_a_depth_limit_is_kept_and_the_same_seed_replays() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2 4d4")
    first = make_player("alphabeta", seed=5).decide(board, Limit(depth=3))
    again = make_player("alphabeta", seed=5).decide(board, Limit(depth=3))
    assert first.depth == 3 and first.nodes > 0
    assert (first.move, first.score, first.pv, first.nodes) == (
        again.move, again.score, again.pv, again.nodes)
    assert make_player("alphabeta:depth=2").decide(board, Limit(depth=4)).depth == 2
    assert board.notation() == "1a1 2b2 4d4" and first.pv[0] == first.move


def test_a_stop_flag_answers_with_a_legal_move() -> None:
    board = Board.from_notation("4x4x4", "1a1")
    decision = make_player("alphabeta").decide(board, Limit(stop=np.ones(1, dtype=np.int8)))
    assert board.is_legal(decision.move)


def test_it_never_loses_3x3_as_x_against_itself() -> None:
    board = Board("3x3")
    player = make_player("alphabeta")
    while board.outcome() is None:
        board.push(player.decide(board, Limit(depth=9)).move)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner != 1
