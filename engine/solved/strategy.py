"""X's proved strategy on 4x4x4: Patashnik's rules and the completed dictionary.

The strategy (:mod:`engine.solved.proof` proves it) is: (1) complete a line if X can; (2) else block
O's single three; (3) else the move of Patashnik's dictionary (:mod:`engine.solved.dictionary`);
(4) else the move of the *completed dictionary*, the moves our forced-win searches found
wherever the dictionary is silent. :func:`strategy_move` plays it with no search.

The completed dictionary ships as ``engine/data/qubic.strategy.xz``: canonical positions (X's
and O's bitboards, the least image under the 192 symmetries) and X's move in that frame,
sorted, the 64-bit columns stored byte by byte so that xz packs them to about a byte an entry;
then the plies to X's win from each X-to-move position of the first :data:`HEIGHT_PLIES`
plies. :meth:`Strategy.dumps` writes the same as text in the dictionary's own notation.
"""

from __future__ import annotations

import lzma
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
from numba import njit

from engine.rules.board import Board
from engine.rules.geometry import Bitboard, Cell, Geometry, variant
from engine.solved import dictionary

Key = tuple[Bitboard, Bitboard]
VARIANT = "4x4x4"
HEIGHT_PLIES = 8  # the file keeps the heights of X positions up to this ply
MAGIC = b"qubic-strategy 1\n"


class StrategyFileError(ValueError):
    """A strategy file that cannot be read: not xz, cut short, not a strategy, or with a move
    that is no cell of the board. Raised in place of the decoder's own error (LZMAError and
    the like), so that a caller reports the file, not a traceback."""


def strategy_path() -> Path:
    """Where the completed dictionary lives in the package."""
    return Path(str(resources.files("engine") / "data" / "qubic.strategy.xz"))


class PackedEntries(Mapping[Key, Cell]):
    """Sorted arrays of canonical positions and moves, read like a dict (a few MB where a
    dict of a million positions would take hundreds)."""

    def __init__(self, xs: np.ndarray, os: np.ndarray, moves: np.ndarray) -> None:
        order = np.lexsort((os, xs))
        self.xs, self.os, self.moves = xs[order], os[order], moves[order]

    def get(self, key: Key, default: Cell | None = None) -> Cell | None:  # type: ignore[override]
        x, o = np.uint64(key[0]), np.uint64(key[1])
        low = int(np.searchsorted(self.xs, x, "left"))
        high = int(np.searchsorted(self.xs, x, "right"))
        if low == high:
            return default
        at = low + int(np.searchsorted(self.os[low:high], o))
        if at < high and self.os[at] == o:
            return int(self.moves[at])
        return default

    def __getitem__(self, key: Key) -> Cell:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.get(key) is not None

    def __iter__(self) -> Iterator[Key]:
        return zip(map(int, self.xs), map(int, self.os), strict=True)

    def __len__(self) -> int:
        return len(self.moves)


class Strategy:
    """The completed dictionary: X's step-4 moves keyed by canonical position, and the plies
    to X's win from the early X-to-move positions (so a verdict there needs no long replay)."""

    def __init__(self, geometry: Geometry, entries: Mapping[Key, Cell] | None = None,
                 heights: Mapping[Key, int] | None = None) -> None:
        self.geometry = geometry
        self.entries: Mapping[Key, Cell] = entries if entries is not None else {}
        self.heights: dict[Key, int] = dict(heights or {})

    def __len__(self) -> int:
        return len(self.entries)

    def move(self, board: Board) -> Cell | None:
        """The stored move for ``board`` mapped back to its frame, or None (also where the
        stored move is not legal: see :func:`illegal`)."""
        if not self.entries:
            return None
        g = self.geometry
        if g._byte_images is not None:  # noqa: SLF001 (compiled: the master asks each move)
            cx, co, found = least_image(g._byte_images, *map(np.uint64, board.stones))  # noqa: SLF001
            x, o, index = int(cx), int(co), int(found)
        else:
            x, o, index = g.least_image(*board.stones)
        cell = self.entries.get((x, o))
        if cell is None or illegal(cell, (x, o), self.geometry.size):
            return None
        return self.geometry.symmetries[index].index(cell)

    def to_bytes(self) -> bytes:
        """The file's contents (see the module docstring)."""
        parts = [MAGIC]
        for table in (self.entries, self.heights):
            keys = sorted(table)
            xs = np.array([k[0] for k in keys], dtype="<u8")
            os = np.array([k[1] for k in keys], dtype="<u8")
            values = np.array([table[k] for k in keys], dtype=np.uint8)
            parts += [np.uint32(len(keys)).tobytes(), _shuffle(xs), _shuffle(os),
                      values.tobytes()]
        return lzma.compress(b"".join(parts), preset=9 | lzma.PRESET_EXTREME)

    @classmethod
    def from_bytes(cls, data: bytes) -> Strategy:
        """The strategy in ``data`` (see :meth:`to_bytes`); :class:`StrategyFileError` when
        it is not one. The moves are not checked against their positions here: the replay
        that reads one (:meth:`move`, :class:`engine.solved.proof.Prover`) reports an illegal one
        where it stands."""
        try:
            raw = lzma.decompress(data)
        except lzma.LZMAError as error:
            raise StrategyFileError(f"not an xz file ({error})") from error
        if not raw.startswith(MAGIC):
            raise StrategyFileError("not a qubic strategy file")
        at = len(MAGIC)
        tables = []
        for _ in range(2):
            if at + 4 > len(raw):
                raise StrategyFileError("cut short")
            count = int(np.frombuffer(raw, dtype="<u4", count=1, offset=at)[0])
            at += 4
            if at + 17 * count > len(raw):
                raise StrategyFileError("cut short")
            xs = _unshuffle(raw[at:at + 8 * count], count)
            os = _unshuffle(raw[at + 8 * count:at + 16 * count], count)
            values = np.frombuffer(raw, dtype=np.uint8, count=count, offset=at + 16 * count)
            at += 17 * count
            tables.append((xs, os, values))
        if at != len(raw):
            raise StrategyFileError(f"{len(raw) - at} bytes after the tables")
        (xs, os, moves), (hx, ho, plies) = tables
        heights = {(int(a), int(b)): int(p) for a, b, p in zip(hx, ho, plies, strict=True)}
        return cls(variant(VARIANT), PackedEntries(xs, os, moves.copy()), heights)

    def save(self, path: Path | None = None) -> Path:
        path = path or strategy_path()
        path.write_bytes(self.to_bytes())
        return path

    @classmethod
    def load(cls, path: Path) -> Strategy:
        return cls.from_bytes(path.read_bytes())

    def dumps(self) -> str:
        """The strategy as text in the dictionary's notation: ``position move`` lines, then
        ``position =plies`` lines."""
        lines = ["# the completed dictionary for 4x4x4 Qubic: canonical positions, X's move "
                 "(then '=plies': the plies to X's win)",
                 f"# {len(self.entries)} moves, {len(self.heights)} heights"]
        lines += [f"{dictionary.format_position(x, o)} {cell}"
                  for (x, o), cell in sorted(self.entries.items())]
        lines += [f"{dictionary.format_position(x, o)} ={plies}"
                  for (x, o), plies in sorted(self.heights.items())]
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str) -> Strategy:
        entries: dict[Key, Cell] = {}
        heights: dict[Key, int] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                position, _, value = line.rpartition(" ")
                key = dictionary.parse_position(position)
                if value.startswith("="):
                    heights[key] = int(value[1:])
                else:
                    entries[key] = int(value)
        return cls(variant(VARIANT), entries, heights)


def illegal(cell: Cell, key: Key, size: int) -> bool:
    """Whether ``cell``, stored for the canonical position ``key``, is no legal move there:
    no cell of the board, or one already taken (a broken file, not the proof's move)."""
    return not 0 <= cell < size or bool((key[0] | key[1]) >> cell & 1)


@njit(cache=True)
def least_image(tables, x, o):
    """The canonical image of (x, o) and the first symmetry giving it, from the geometry's
    byte tables (:meth:`Geometry.least_image`, compiled)."""
    best = 0
    best_x = np.uint64(0xFFFFFFFFFFFFFFFF)
    best_o = np.uint64(0xFFFFFFFFFFFFFFFF)
    for s in range(tables.shape[2]):
        ix = np.uint64(0)
        io = np.uint64(0)
        for k in range(tables.shape[0]):
            ix |= tables[k, (x >> np.uint64(8 * k)) & np.uint64(0xFF), s]
        if ix > best_x:
            continue
        for k in range(tables.shape[0]):
            io |= tables[k, (o >> np.uint64(8 * k)) & np.uint64(0xFF), s]
        if ix < best_x or io < best_o:
            best, best_x, best_o = s, ix, io
    return best_x, best_o, best


def _shuffle(column: np.ndarray) -> bytes:
    """A uint64 column byte by byte: all the first bytes, then all the second, ..."""
    return column.view(np.uint8).reshape(len(column), 8).T.tobytes()


def _unshuffle(data: bytes, count: int) -> np.ndarray:
    planes = np.frombuffer(data, dtype=np.uint8).reshape(8, count)
    return np.ascontiguousarray(planes.T).view("<u8").reshape(count).astype(np.uint64)


@cache
def shipped_strategy() -> Strategy:
    """The completed dictionary shipped with the engine (empty if it is missing)."""
    path = strategy_path()
    return Strategy.load(path) if path.exists() else Strategy(variant(VARIANT))


def win_cells(mine: Bitboard, theirs: Bitboard, masks: Iterable[Bitboard]) -> Bitboard:
    """The empty cells that complete a line of ``mine`` (lines free of ``theirs``)."""
    out = 0
    for m in masks:
        if not theirs & m and (mine & m).bit_count() == 3:
            out |= m & ~mine
    return out


def strategy_move(board: Board) -> Cell | None:
    """X's move by the proved strategy, with no search, where the strategy covers the position:
    a line to complete, the block of O's single three, the dictionary's move or the completed
    dictionary's; None elsewhere (O to move, another board, or a position off the proof)."""
    if board.geometry.name != VARIANT or board.turn != 0 or board.outcome() is not None:
        return None
    x, o = board.stones
    masks = board.geometry.line_masks
    wins = win_cells(x, o, masks)
    if wins:
        return (wins & -wins).bit_length() - 1
    blocks = win_cells(o, x, masks)
    if blocks:
        return blocks.bit_length() - 1 if blocks.bit_count() == 1 else None
    cell = dictionary.move(board)
    return cell if cell is not None else shipped_strategy().move(board)


def x_proved(board: Board) -> bool:
    """X to move wins by the proof: a line to complete, a position of the dictionary or of
    the completed dictionary (the proof proved each of them), or the block of O's single
    three into such a position."""
    x, o = board.stones
    masks = board.geometry.line_masks
    if win_cells(x, o, masks):
        return True
    blocks = win_cells(o, x, masks)
    if blocks:
        if blocks.bit_count() > 1:
            return False
        board.push(blocks.bit_length() - 1)
        try:
            return o_proved(board)
        finally:
            board.pop()
    return in_the_strategy(board)


def in_the_strategy(board: Board) -> bool:
    """X to move in a position of the dictionary or of the completed dictionary, each of
    which the proof proved (:func:`x_proved` without its checks of the lines)."""
    if board.geometry.name != VARIANT or board.turn != 0:
        return False
    x, o = board.stones
    return proved_position(x, o, board.ply)


def proved_position(x: Bitboard, o: Bitboard, ply: int) -> bool:
    """:func:`in_the_strategy` of the 4x4x4 position with X's stones ``x`` and O's ``o``
    (``ply`` of them, X to move): the canonical position is found once, compiled (the probe
    asks at every leaf off the proof's tree); a stored move that is not legal there does not
    count."""
    g = variant(VARIANT)
    cx, co, _ = least_image(g._byte_images, np.uint64(x), np.uint64(o))  # noqa: SLF001
    key = (int(cx), int(co))
    book = dictionary.dictionary()
    cell = book.entries.get(key) if ply <= book.max_ply else None
    if cell is None:
        cell = shipped_strategy().entries.get(key)
    return cell is not None and not illegal(cell, key, g.size)


def o_proved(board: Board) -> bool:
    """O to move loses by the proof: after every reply X's position is proved."""
    if board.winning_line is not None:
        return board.turn == 1
    x, o = board.stones
    if win_cells(o, x, board.geometry.line_masks):
        return False
    for reply in board.legal_moves:
        board.push(reply)
        try:
            if board.winning_line is not None or not x_proved(board):
                return False
        finally:
            board.pop()
    return True
