"""Shared pieces of the engine tests: random positions, and the short-win labeller of
``forced_wins/solver.py`` (separate from the engine's search, loaded from its file)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

from engine import Board

FORCED_WINS = Path(__file__).with_name("forced_wins")


def _labeller() -> type:
    spec = importlib.util.spec_from_file_location("forced_wins_solver",
                                                  FORCED_WINS / "solver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Solver  # type: ignore[no-any-return]


ShortWins = _labeller()


def random_position(rng: random.Random, plies: tuple[int, int],
                    variant: str = "4x4x4") -> Board | None:
    """A position after ``randrange(*plies)`` random moves, or None if the game ended."""
    board = Board(variant)
    for _ in range(rng.randrange(*plies)):
        board.push(rng.choice(board.legal_moves))
        if board.outcome() is not None:
            return None
    return board


def random_positions(variant: str, count: int, seed: int, plies: tuple[int, int]) -> list[Board]:
    """``count`` unfinished positions from :func:`random_position`, seeded ``seed``."""
    rng = random.Random(seed)
    out: list[Board] = []
    while len(out) < count:
        board = random_position(rng, plies, variant)
        if board is not None:
            out.append(board)
    return out
