"""Qubic's game engine, in parts: ``rules``, ``kernels`` (numba searches), ``solved`` (the proof
and the truth), ``players`` and ``puzzles`` (docs/engine.md, "Where each part lives").

Pure: no asyncio, no sockets, no files. ``import engine`` is cheap: its names load on first
use (numpy with the board, the numba search kernel with ``engine.players`` or
``engine.kernels.negamax``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.errors import GameOver, IllegalMove, NotationError, QubicError, UnknownPlayer
    from engine.rules.board import SIDE_NAMES, Board, O, Outcome, Termination, X
    from engine.rules.geometry import Bitboard, Cell, Geometry, cells_of, variant
    from engine.rules.notation import format_cell, format_moves, parse_cell, parse_moves

_HOMES = {
    "O": "rules.board", "SIDE_NAMES": "rules.board", "X": "rules.board",
    "Board": "rules.board", "Outcome": "rules.board", "Termination": "rules.board",
    "GameOver": "errors", "IllegalMove": "errors", "NotationError": "errors",
    "QubicError": "errors", "UnknownPlayer": "errors",
    "Bitboard": "rules.geometry", "Cell": "rules.geometry", "Geometry": "rules.geometry",
    "cells_of": "rules.geometry", "variant": "rules.geometry",
    "format_cell": "rules.notation", "format_moves": "rules.notation",
    "parse_cell": "rules.notation", "parse_moves": "rules.notation",
}


def __getattr__(name: str) -> Any:
    """``from engine import Board`` loads ``engine.rules.board`` (and numpy) only then, so that a
    part needing only ``engine.levels`` or ``engine.errors`` starts without them."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"engine.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "O",
    "SIDE_NAMES",
    "X",
    "Bitboard",
    "Board",
    "Cell",
    "GameOver",
    "Geometry",
    "IllegalMove",
    "NotationError",
    "Outcome",
    "QubicError",
    "Termination",
    "UnknownPlayer",
    "cells_of",
    "format_cell",
    "format_moves",
    "parse_cell",
    "parse_moves",
    "variant",
]
