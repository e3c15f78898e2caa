"""Text for cells and games.

A cell is written ``<level><column letter><row>`` with level and row counted from 1: on
4x4x4 cell 0 is ``1a1`` and cell 63 is ``4d4``. 2-D boards drop the level (``a1``). A game
is its moves separated by white space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from engine.errors import NotationError
from engine.geometry import Cell, Geometry

_CELL_2D = re.compile(r"^([a-z])([1-9])$")
_CELL_3D = re.compile(r"^([1-9])([a-z])([1-9])$")


def format_cell(cell: Cell, geometry: Geometry) -> str:
    """The notation of a cell, e.g. ``format_cell(0, geometry(4, 3)) == "1a1"``."""
    if not 0 <= cell < geometry.size:
        raise NotationError(f"{cell} is not a cell of {geometry.name} (0-{geometry.size - 1})")
    if geometry.d not in (2, 3):
        raise NotationError(f"{geometry.name} has no notation (only 2-D and 3-D boards do)")
    return _cell_names(geometry)[cell]  # every move is written: a table, not arithmetic


@cache
def _cell_names(geometry: Geometry) -> tuple[str, ...]:
    names = []
    for cell in range(geometry.size):
        x, y, *rest = geometry.coords(cell)
        text = f"{chr(ord('a') + x)}{y + 1}"
        names.append(f"{rest[0] + 1}{text}" if geometry.d == 3 else text)
    return tuple(names)


def parse_cell(text: str, geometry: Geometry) -> Cell:
    """The cell written as ``text`` (``"2b3"`` on a cube, ``"b3"`` on a square board)."""
    raw = text
    text = text.strip().lower()
    n = geometry.n
    last_column = chr(ord("a") + n - 1)
    if geometry.d == 3:
        match = _CELL_3D.match(text)
        if match is None:
            raise NotationError(
                f"{raw!r} is not a cell of {geometry.name}: write level, column, row "
                f"like 1a1 or {n}{last_column}{n}"
            )
        level, column, row = int(match[1]), match[2], int(match[3])
    elif geometry.d == 2:
        match = _CELL_2D.match(text)
        if match is None:
            raise NotationError(
                f"{raw!r} is not a cell of {geometry.name}: write column, row like a1 "
                f"or {last_column}{n}"
            )
        level, column, row = 1, match[1], int(match[2])
    else:
        raise NotationError(f"{geometry.name} has no notation (only 2-D and 3-D boards do)")
    x = ord(column) - ord("a")
    problems = []
    if not 1 <= level <= n:
        problems.append(f"level must be 1-{n}")
    if not 0 <= x < n:
        problems.append(f"column must be a-{last_column}")
    if not 1 <= row <= n:
        problems.append(f"row must be 1-{n}")
    if problems:
        raise NotationError(f"{raw!r} is not a cell of {geometry.name}: {', '.join(problems)}")
    coords = [x, row - 1] + ([level - 1] if geometry.d == 3 else [])
    return geometry.cell_at(coords)


def parse_moves(text: str, geometry: Geometry) -> list[Cell]:
    """The cells of a game written as moves separated by white space (no legality check)."""
    cells = []
    for number, word in enumerate(text.split(), start=1):
        try:
            cells.append(parse_cell(word, geometry))
        except NotationError as error:
            raise NotationError(f"move {number}: {error}") from None
    return cells


def format_moves(cells: Iterable[Cell], geometry: Geometry) -> str:
    """A game's moves in notation, separated by single spaces."""
    return " ".join(format_cell(cell, geometry) for cell in cells)
