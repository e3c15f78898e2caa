"""The board: stones of both sides as bitboards, the move stack, and the outcome.

``X`` (side 0) moves first, ``O`` (side 1) second. A ``Board`` is mutable like a python-chess
board: ``push``/``pop`` moves, ``legal_moves`` lists the empty cells while the game is on, and
``outcome()`` says whether and how it ended.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from engine.errors import GameOver, IllegalMove
from engine.rules.geometry import Bitboard, Cell, Geometry, cells_of, variant
from engine.rules.notation import format_cell, format_moves, parse_moves

X, O = 0, 1
SIDE_NAMES = ("X", "O")


class Termination(enum.Enum):
    """How a game ended."""

    LINE = "line"  # a side completed a line
    FULL = "full"  # every cell filled with no line
    DEAD = "dead"  # no line can be completed any more by either side (a dead draw)


@dataclass(frozen=True)
class Outcome:
    """The end of a game: ``winner`` is ``X``, ``O`` or ``None`` for a draw."""

    termination: Termination
    winner: int | None = None
    line: tuple[Cell, ...] | None = None

    @property
    def result(self) -> str:
        """``"1-0"`` (X won), ``"0-1"`` (O won) or ``"1/2-1/2"``."""
        return {X: "1-0", O: "0-1", None: "1/2-1/2"}[self.winner]


class Board:
    """A position with its move history on one variant (``"4x4x4"`` by default)."""

    def __init__(self, variant_name: str | Geometry = "4x4x4", moves: Iterable[Cell] = ()) -> None:
        self.geometry: Geometry = variant(variant_name)
        self.stones: list[Bitboard] = [0, 0]
        self.moves: list[Cell] = []
        self._wins: list[tuple[Cell, ...] | None] = []
        for cell in moves:
            self.push(cell)

    @classmethod
    def from_notation(cls, variant_name: str | Geometry, text: str) -> Board:
        """The board after the moves written in ``text`` (e.g. ``"1a1 2b2"``), each checked."""
        geometry = variant(variant_name)
        board = cls(geometry)
        for number, cell in enumerate(parse_moves(text, geometry), start=1):
            try:
                board.push(cell)
            except IllegalMove as error:
                raise type(error)(f"move {number}: {error}") from None
        return board

    # -- state ------------------------------------------------------------------------------

    @property
    def turn(self) -> int:
        """The side to move: ``X`` (0) or ``O`` (1)."""
        return len(self.moves) & 1

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return len(self.moves)

    @property
    def occupied(self) -> Bitboard:
        return self.stones[X] | self.stones[O]

    @property
    def empty(self) -> Bitboard:
        return self.geometry.full_mask & ~self.occupied

    def piece_at(self, cell: Cell) -> int | None:
        """``X``, ``O`` or ``None`` for an empty cell."""
        bit = 1 << cell
        if self.stones[X] & bit:
            return X
        if self.stones[O] & bit:
            return O
        return None

    @property
    def winning_line(self) -> tuple[Cell, ...] | None:
        return self._wins[-1] if self._wins else None

    def is_game_over(self) -> bool:
        return self.outcome() is not None

    @property
    def legal_moves(self) -> list[Cell]:
        """The cells the side to move may play, ascending; empty once the game is over."""
        if self.winning_line is not None or not self.empty:
            return []
        return list(cells_of(self.empty))

    def is_legal(self, cell: Cell) -> bool:
        stones, wins = self.stones, self._wins
        return (
            isinstance(cell, int)
            and 0 <= cell < self.geometry.size
            and not ((stones[X] | stones[O]) >> cell) & 1
            and (not wins or wins[-1] is None)
        )

    # -- moves ------------------------------------------------------------------------------

    def push(self, cell: Cell) -> None:
        """Play ``cell`` for the side to move; raises ``IllegalMove`` if it may not."""
        # Each field read once into a local: a room plays every move of every game through here.
        moves, wins, stones, geometry = self.moves, self._wins, self.stones, self.geometry
        if wins and wins[-1] is not None:
            raise GameOver(
                f"the game is over: {SIDE_NAMES[(len(moves) & 1) ^ 1]} has won with "
                f"{format_moves(wins[-1], geometry)}"
            )
        if not isinstance(cell, int) or not 0 <= cell < geometry.size:
            raise IllegalMove(f"{cell!r} is not a cell of {geometry.name}")
        occupied = stones[X] | stones[O]
        if (occupied >> cell) & 1:
            raise IllegalMove(f"{format_cell(cell, geometry)} is already taken")
        if occupied == geometry.full_mask:
            raise GameOver("the game is over: the board is full")
        side = len(moves) & 1
        mine = stones[side] = stones[side] | 1 << cell
        moves.append(cell)
        line_masks = geometry.line_masks
        for index in geometry.lines_through[cell]:  # the line it completed, if any
            mask = line_masks[index]
            if mine & mask == mask:
                wins.append(geometry.lines[index])
                return
        wins.append(None)

    def pop(self) -> Cell:
        """Take back the last move and return its cell."""
        cell = self.moves.pop()
        self._wins.pop()
        self.stones[len(self.moves) & 1] &= ~(1 << cell)
        return cell

    # -- outcome ----------------------------------------------------------------------------

    def outcome(self) -> Outcome | None:
        """How the game ended, or ``None`` while either side can still complete a line."""
        wins, stones, geometry = self._wins, self.stones, self.geometry
        line = wins[-1] if wins else None
        if line is not None:
            return Outcome(Termination.LINE, winner=(len(self.moves) & 1) ^ 1, line=line)
        empty = geometry.full_mask & ~(stones[X] | stones[O])
        if not empty:
            return Outcome(Termination.FULL)
        if not self._can_win(X, empty) and not self._can_win(O, empty):
            return Outcome(Termination.DEAD)
        return None

    def can_still_win(self, side: int) -> bool:
        """Whether some line is free of the other side and ``side`` has moves enough to fill it."""
        return self._can_win(side, self.empty)

    def _can_win(self, side: int, empty: Bitboard) -> bool:
        empties = empty.bit_count()
        moves_left = (empties + 1) // 2 if side == len(self.moves) & 1 else empties // 2
        mine, theirs = self.stones[side], self.stones[side ^ 1]
        n = self.geometry.n
        for mask in self.geometry.line_masks:
            if not mask & theirs and n - (mask & mine).bit_count() <= moves_left:
                return True
        return False

    # -- copies and text --------------------------------------------------------------------

    def copy(self) -> Board:
        other = Board.__new__(Board)
        other.geometry = self.geometry
        other.stones = list(self.stones)
        other.moves = list(self.moves)
        other._wins = list(self._wins)
        return other

    def notation(self) -> str:
        """The moves so far in notation: ``Board.from_notation(v, b.notation()) == b``."""
        return format_moves(self.moves, self.geometry)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Board)
            and other.geometry is self.geometry
            and other.moves == self.moves
        )

    def __hash__(self) -> int:
        return hash((self.geometry.name, tuple(self.moves)))

    def __repr__(self) -> str:
        return f"Board.from_notation({self.geometry.name!r}, {self.notation()!r})"

    def __str__(self) -> str:
        """The layers side by side, level 1 first; row 1 at the bottom as on a chess diagram."""
        return "\n".join(diagram_lines(self))


def line_value(board: Board, cell: Cell) -> int:
    """Lines through ``cell`` still open to either side, weighted by their stones: the order
    in which the master's root and the truth's probe try moves."""
    g = board.geometry
    me, them = board.stones[board.turn], board.stones[board.turn ^ 1]
    value = 0
    for index in g.lines_through[cell]:
        mask = g.line_masks[index]
        if not mask & them:
            value += 4 ** (mask & me).bit_count()
        if not mask & me:
            value += 3 ** (mask & them).bit_count()
    return value


def diagram_lines(board: Board) -> list[str]:
    """Text rows drawing the board: each layer a grid labelled by level, columns and rows."""
    g = board.geometry
    n = g.n
    layers = n if g.d == 3 else 1
    letters = " ".join(chr(ord("a") + x) for x in range(n))
    width = 2 * n + 1  # "4 . . . ." : row label, space, n cells with spaces between
    header = []
    for z in range(layers):
        label = f"level {z + 1}" if g.d == 3 else g.name
        header.append(label.center(width))
    rows = ["   ".join(header).rstrip()]
    for y in reversed(range(n)):
        parts = []
        for z in range(layers):
            cells = []
            for x in range(n):
                piece = board.piece_at(g.cell_at([x, y, z][: g.d]))
                cells.append("." if piece is None else SIDE_NAMES[piece])
            parts.append(f"{y + 1} " + " ".join(cells))
        rows.append("   ".join(parts))
    rows.append("   ".join(("  " + letters).ljust(width) for _ in range(layers)))
    return [row.rstrip() for row in rows]
