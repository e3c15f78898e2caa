"""Positions to ask an engine about: short random games that have not ended."""

from __future__ import annotations

import random

from engine import Board


def random_positions(count: int, rng: random.Random, fewest: int,
                     most: int) -> list[tuple[int, ...]]:
    """``count`` positions of 4x4x4, each ``fewest`` to ``most`` random moves from the start
    with no line made (a game that ends on the way is drawn again)."""
    found: list[tuple[int, ...]] = []
    while len(found) < count:
        board = Board("4x4x4")
        for _ in range(rng.randint(fewest, most)):
            board.push(rng.choice(board.legal_moves))
            if board.outcome() is not None:
                break
        else:
            found.append(tuple(board.moves))
    return found
