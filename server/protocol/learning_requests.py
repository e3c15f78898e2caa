"""Client -> server: the puzzles and the review of a finished game (the learning side of the
site)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.protocol.field_types import CellIndex, GameId, PuzzleMode
from server.protocol.request_base import _Request


class ReviewGame(_Request, tag="review"):
    """Ask for a finished game's review (the reply is ``review``, once it is computed)."""

    game: GameId


class PuzzleNext(_Request, tag="puzzle_next"):
    """A puzzle near your puzzle rating that you have not finished (reply: ``puzzle``)."""


class PuzzleDaily(_Request, tag="puzzle_daily"):
    """The puzzle of the day: the same for everyone on a UTC day (reply: ``puzzle``)."""


class PuzzleStreak(_Request, tag="puzzle_streak"):
    """A streak's puzzle: ``new`` starts a streak from 0 (the easiest puzzles first),
    otherwise the puzzle for the streak going on (reply: ``puzzle``)."""

    new: bool = True


PuzzleId = Annotated[int, msgspec.Meta(ge=1, le=2**53 - 1)]


class PuzzleAttempt(_Request, tag="puzzle_attempt"):
    """Your moves so far in a puzzle (yours only: the replies are the puzzle's); the reply
    ``puzzle_result`` judges the last."""

    puzzle: PuzzleId
    moves: Annotated[list[CellIndex], msgspec.Meta(min_length=1, max_length=8)]
    mode: PuzzleMode = "next"


class PuzzleHistory(_Request, tag="puzzle_history"):
    """Your latest finished puzzles, newest first (reply: ``puzzle_history``)."""

    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20


PuzzleRequest = PuzzleNext | PuzzleDaily | PuzzleStreak | PuzzleAttempt | PuzzleHistory
"""The puzzles' requests (``server.node.puzzles`` answers them)."""
