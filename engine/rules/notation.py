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
from engine.rules.geometry import Cell, Geometry

# Per dimension: the pattern of a cell's text and the order its parts are named in an error.
_CELL_TEXT: dict[int, tuple[re.Pattern[str], str]] = {
    3: (re.compile(r"^(?P<level>[1-9])(?P<column>[a-z])(?P<row>[1-9])$"), "level, column, row"),
    2: (re.compile(r"^(?P<column>[a-z])(?P<row>[1-9])$"), "column, row"),
}


def format_cell(cell: Cell, geometry: Geometry) -> str:
    """The notation of a cell, e.g. ``format_cell(0, geometry(4, 3)) == "1a1"``."""
    if not 0 <= cell < geometry.size:
        raise NotationError(f"{cell} is not a cell of {geometry.name} (0-{geometry.size - 1})")
    if geometry.d not in _CELL_TEXT:
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
    if geometry.d not in _CELL_TEXT:
        raise NotationError(f"{geometry.name} has no notation (only 2-D and 3-D boards do)")
    pattern, parts = _CELL_TEXT[geometry.d]
    match = pattern.match(text.strip().lower())
    if match is None:
        names = _cell_names(geometry)
        raise NotationError(
            f"{text!r} is not a cell of {geometry.name}: write {parts} like {names[0]} "
            f"or {names[-1]}"
        )
    n = geometry.n
    last_column = chr(ord("a") + n - 1)
    found = match.groupdict()  # a square board's cells have no level: 1
    level, column, row = int(found.get("level", 1)), found["column"], int(found["row"])
    x = ord(column) - ord("a")
    problems = []
    if not 1 <= level <= n:
        problems.append(f"level must be 1-{n}")
    if not 0 <= x < n:
        problems.append(f"column must be a-{last_column}")
    if not 1 <= row <= n:
        problems.append(f"row must be 1-{n}")
    if problems:
        raise NotationError(f"{text!r} is not a cell of {geometry.name}: {', '.join(problems)}")
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
