"""Patashnik's dictionary: the 2,929 strategic first-player moves of 4x4x4 Qubic.

It ships unchanged as ``engine/data/qubic.dictionary`` under its own terms (its moves
unchanged, its source credited); this module reads it into a ``Book`` indexed by canonical
form, its cell numbers being the engine's. docs/engine.md, "Patashnik's dictionary", has its
history and format."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path

from engine.errors import NotationError
from engine.rules.board import Board
from engine.rules.geometry import Bitboard, Cell, variant
from engine.solved.book import Book, board_of

VARIANT = "4x4x4"
SEPARATOR = "-----"
_TOKEN = re.compile(r"x|o|\d+")


def data_path() -> Path:
    """Where the dictionary lives in the package."""
    return Path(str(resources.files("engine") / "data" / "qubic.dictionary"))


def parse_position(text: str, size: int = 64) -> tuple[Bitboard, Bitboard]:
    """X's and O's bitboards of a position string such as ``"xo1x8x8o41o"``.

    Stones and run lengths of empty cells are read in cell order; the cells after the last
    stone are empty. Raises :class:`~engine.errors.NotationError` for anything else.
    """
    x = o = 0
    cell = 0
    at = 0
    for match in _TOKEN.finditer(text):
        if match.start() != at:
            raise NotationError(f"{text!r}: unexpected {text[at:match.start()]!r}")
        at = match.end()
        token = match.group()
        if token == "x":
            x |= 1 << cell
            cell += 1
        elif token == "o":
            o |= 1 << cell
            cell += 1
        else:
            cell += int(token)
        if cell > size:
            raise NotationError(f"{text!r}: more than {size} cells")
    if at != len(text):
        raise NotationError(f"{text!r}: unexpected {text[at:]!r}")
    return x, o


def format_position(x: Bitboard, o: Bitboard) -> str:
    """The dictionary's string of a position (the inverse of :func:`parse_position`)."""
    out: list[str] = []
    run = 0
    last = max(x.bit_length(), o.bit_length())
    for cell in range(last):
        if (x | o) >> cell & 1:
            if run:
                out.append(str(run))
                run = 0
            out.append("x" if x >> cell & 1 else "o")
        else:
            run += 1
    return "".join(out)


def entries(text: str) -> Iterator[tuple[Bitboard, Bitboard, Cell]]:
    """``(x, o, move)`` for every line of a dictionary file after its header."""
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith(SEPARATOR)), 0)
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        position, _, move = line.rpartition(" ")
        try:
            x, o = parse_position(position.strip())
            cell = int(move)
        except (NotationError, ValueError) as error:
            raise NotationError(f"dictionary line {number}: {error}") from None
        yield x, o, cell


def load(text: str) -> Book:
    """A book of the dictionary's entries, keyed by canonical position (first entry wins
    where two lines are images of each other)."""
    book = Book(variant(VARIANT))
    for x, o, cell in entries(text):
        board = board_of(book.geometry, (x, o))
        if book.move(board) is None:
            book.add(board, cell)
    return book


@cache
def dictionary() -> Book:
    """Patashnik's dictionary as shipped, indexed by canonical position."""
    return load(data_path().read_text())


def move(board: Board) -> Cell | None:
    """The dictionary's strategic move for X in ``board``, or None when it is not there."""
    if board.geometry.name != VARIANT or board.turn != 0:
        return None
    return dictionary().move(board)
