"""The engine's exceptions.

    QubicError                      root of everything the engine raises on purpose
     ├── NotationError (ValueError)  text that is not a cell, a move list or a variant
     ├── IllegalMove (ValueError)    a move the rules do not allow in this position
     │    └── GameOver               any move once the game has ended
     └── UnknownPlayer (ValueError)  a player spec that names no player or a bad option

Each is also a ``ValueError`` so that ordinary ``except ValueError`` catches bad input.
"""

from __future__ import annotations


class QubicError(Exception):
    """Root of the engine's exceptions."""


class NotationError(QubicError, ValueError):
    """Text that does not parse as a cell, a move list or a variant name."""


class IllegalMove(QubicError, ValueError):
    """A move the rules do not allow in the current position."""


class GameOver(IllegalMove):
    """A move was attempted after the game had ended."""


class UnknownPlayer(QubicError, ValueError):
    """A player spec names no registered player, or gives it a bad option."""
