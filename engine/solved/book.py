"""The opening book: moves for positions the master should not think about.

Positions are stored canonical under the board's symmetries with the move in the same frame,
one text file per variant in ``engine/data`` (``win``, ``hold`` and ``practical`` entries,
written by ``bench/research/build_book.py``). docs/engine.md, "The opening book", has the kinds
and the file's format."""

from __future__ import annotations

from functools import cache
from importlib import resources
from itertools import zip_longest
from pathlib import Path

from engine.rules.board import Board
from engine.rules.geometry import Bitboard, Cell, Geometry, variant

Key = tuple[Bitboard, Bitboard]
WIN, HOLD, PRACTICAL = "win", "hold", "practical"


def data_path(geometry: Geometry) -> Path:
    """Where the book of a variant lives in the package."""
    return Path(str(resources.files("engine") / "data" / f"book_{geometry.name}.txt"))


def canonical_frame(board: Board) -> tuple[Key, tuple[int, ...]]:
    """The canonical image of the position and a symmetry that maps the board onto it."""
    g = board.geometry
    x, o = board.stones
    sym = g.symmetries[g.canonical_symmetry(x, o)]
    return (g.transform(x, sym), g.transform(o, sym)), sym


def board_of(geometry: Geometry, key: Key) -> Board:
    """A board holding the stones of ``key`` (X's and O's bitboards), in cell order."""
    x, o = key
    cells_x = [c for c in range(x.bit_length()) if x >> c & 1]
    cells_o = [c for c in range(o.bit_length()) if o >> c & 1]
    moves = [c for pair in zip_longest(cells_x, cells_o) for c in pair if c is not None]
    return Board(geometry, moves)


class Book:
    """Canonical positions and their moves for one variant."""

    def __init__(self, geometry: Geometry, entries: dict[Key, Cell] | None = None,
                 kinds: dict[Key, str] | None = None) -> None:
        self.geometry = geometry
        self.entries: dict[Key, Cell] = dict(entries or {})
        self.kinds: dict[Key, str] = dict(kinds or {})  # only the entries that are not WIN
        self.max_ply = max((x.bit_count() + o.bit_count() for x, o in self.entries), default=-1)

    def __len__(self) -> int:
        return len(self.entries)

    def move(self, board: Board) -> Cell | None:
        """The book's move for ``board``, or None when the position is not in the book."""
        if not self.entries or board.ply > self.max_ply:
            return None
        key, sym = canonical_frame(board)
        cell = self.entries.get(key)
        if cell is None:
            return None
        original = sym.index(cell)
        return original if board.is_legal(original) else None

    def kind(self, board: Board) -> str | None:
        """``WIN`` or ``HOLD`` for a position in the book, else None."""
        key, _ = canonical_frame(board)
        return self.kinds.get(key, WIN) if key in self.entries else None

    def positions(self, side: int) -> list[Board]:
        """The book's positions with ``side`` to move (in the canonical frame), as boards,
        fewest stones first."""
        keys = sorted(self.entries, key=lambda k: k[0].bit_count() + k[1].bit_count())
        return [board_of(self.geometry, (x, o)) for x, o in keys
                if x.bit_count() - o.bit_count() == side]

    def add(self, board: Board, cell: Cell, kind: str = WIN) -> None:
        """Record ``cell`` as the move for ``board`` (stored in the canonical frame)."""
        key, sym = canonical_frame(board)
        self.entries[key] = sym[cell]
        if kind == WIN:
            self.kinds.pop(key, None)
        else:
            self.kinds[key] = kind
        self.max_ply = max(self.max_ply, board.ply)

    def dumps(self) -> str:
        holds = len(self.kinds)
        practical = sum(kind == PRACTICAL for kind in self.kinds.values())
        lines = [f"# opening book for {self.geometry.name}: canonical X and O stones (hex), "
                 "the move in that frame, 'hold' or 'practical' for a defence (else a proved "
                 "win)",
                 f"# {len(self.entries)} positions: {len(self.entries) - holds} proved wins, "
                 f"{holds} defences ({practical} practical)"]
        for (x, o), cell in sorted(self.entries.items(), key=lambda e: (
                e[0][0].bit_count() + e[0][1].bit_count(), e[0])):
            kind = self.kinds.get((x, o), WIN)
            lines.append(f"{x:x} {o:x} {cell}" + ("" if kind == WIN else f" {kind}"))
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, geometry: Geometry, text: str) -> Book:
        entries: dict[Key, Cell] = {}
        kinds: dict[Key, str] = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            x, o, cell, *rest = line.split()
            key = (int(x, 16), int(o, 16))
            entries[key] = int(cell)
            if rest and rest[0] != WIN:
                kinds[key] = rest[0]
        return cls(geometry, entries, kinds)

    def save(self, path: Path | None = None) -> Path:
        path = path or data_path(self.geometry)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.dumps())
        return path


@cache
def book_for(name: str) -> Book:
    """The shipped book of a variant (empty when there is none)."""
    geometry = variant(name)
    path = data_path(geometry)
    if not path.exists():
        return Book(geometry)
    return Book.loads(geometry, path.read_text())


@cache
def book_at(path: str, name: str) -> Book:
    """A book file for variant ``name`` other than the shipped one (a candidate being
    measured)."""
    return Book.loads(variant(name), Path(path).read_text())
