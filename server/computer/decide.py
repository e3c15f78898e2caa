"""Decide one computer move: the one search every computer player runs, wherever it runs.

The local pool's worker processes call :func:`decide_move` for every job, and ``qubic
worker`` (the fleet's worker side) searches through that same pool, so an embedded server
and a cluster choose a move from a position the same way: the board rebuilt from the job's
moves, the player made from its spec and seed, the job's time and depth as the limit.
Pure: it blocks for the search, so it runs in a worker process, never on the event loop.
"""

from __future__ import annotations

import numpy as np

from engine.players import Decision, Limit, make_player
from engine.rules.board import Board
from server.computer.moves import ComputerJob


def decide_move(job: ComputerJob, stop: np.ndarray | None = None) -> Decision:
    """The move ``job``'s player makes in ``job``'s position, within its time and depth.

    ``stop`` is a one-byte array another process may set to make the search answer at once
    with what it has (see ``engine.players.Limit``).
    """
    board = Board(job.variant, job.moves)
    player = make_player(job.spec, seed=job.seed)
    return player.decide(board, Limit(time=job.time, depth=job.depth, stop=stop))
