"""decide_move: the one search every computer move runs, in the local pool's processes (the
embedded server's and each ``qubic worker``'s). Pure: no event loop, no process."""

import numpy as np

from engine import Board
from server.computer.decide import decide_move
from server.computer.moves import ComputerJob


def test_the_job_is_played_from_its_position_by_its_player() -> None:
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1")
    decision = decide_move(ComputerJob("4x4x4", tuple(board.moves), "bogenschutz", time=2.0))
    assert decision.move == 3  # O blocks 1d1


def test_a_seeded_job_is_decided_the_same_way_twice() -> None:
    job = ComputerJob("4x4x4", (0, 21), "random", seed=7, time=None)
    assert decide_move(job).move == decide_move(job).move


def test_a_raised_stop_flag_makes_the_search_answer_with_what_it_has() -> None:
    stop = np.ones(1, dtype=np.int8)
    job = ComputerJob("4x4x4", (0, 21), "bogenschutz:depth=8", time=600.0)
    decision = decide_move(job, stop)
    assert decision.move not in job.moves
