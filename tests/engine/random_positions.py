"""Random positions for the engine tests."""

from __future__ import annotations

import random

from engine import Board


def random_position(rng: random.Random, plies: tuple[int, int],
                    variant: str = "4x4x4") -> Board | None:
    """A position after ``randrange(*plies)`` random moves, or None if the game ended."""
    board = Board(variant)
    for _ in range(rng.randrange(*plies)):
        board.push(rng.choice(board.legal_moves))
        if board.outcome() is not None:
            return None
    return board
