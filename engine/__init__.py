"""Qubic's game engine: rules for n^d boards, notation, computer players and search.

Pure: no asyncio, no sockets, no files. ``import engine`` is cheap; the numba search kernel
loads only with ``engine.players`` (or ``engine.kernel``).
"""

from engine.board import SIDE_NAMES, Board, O, Outcome, Termination, X
from engine.errors import GameOver, IllegalMove, NotationError, QubicError, UnknownPlayer
from engine.geometry import Bitboard, Cell, Geometry, cells_of, geometry, variant
from engine.notation import format_cell, format_moves, parse_cell, parse_moves

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
    "geometry",
    "parse_cell",
    "parse_moves",
    "variant",
]
