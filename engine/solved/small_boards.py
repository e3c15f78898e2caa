"""The small boards solved: exact tables shipped in ``engine/data/`` and exact search below them.

Each table holds every position reachable from the empty board (the game not over before
it) up to the board's symmetries, ply by ply down to its ``depth``, with the result for the
side to move and the exact plies to the end (:mod:`engine.kernels.small_search` says how both are
counted and computed). 3x3 and 4x4 are complete; 3x3x3 is shipped to its ``depth`` and
answered below it by the exact alpha-beta search, which needs no table (3x3x3 has no draw).
``bench/small_boards.py --tables`` writes the files.

A file is xz holding a JSON header (variant, depth, counts by ply, a SHA-256 of the arrays)
and then the sorted keys as differences, byte plane by byte plane (the planes of small
differences are mostly zeros and compress to little), then one result byte per key.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import time
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from engine.kernels.small_search import (
    BUILD_TT_BITS,
    DRAW_CODE,
    LOSS_CODE,
    PLIES_MASK,
    WIN_CODE,
    ExactSearch,
    back_up_level,
    canonical_key,
    expand_level,
    rules_for,
    unfinished,
)
from engine.rules.board import Board
from engine.rules.geometry import variant

TABLED = ("3x3", "4x4", "3x3x3")
NO_DRAWS = ("3x3x3",)  # boards whose exact search needs no table: every full board has a line
VERDICTS = {WIN_CODE: "win", DRAW_CODE: "draw", LOSS_CODE: "loss"}
FORMAT = 1


@dataclass(frozen=True, eq=False)
class SmallTable:
    """One board's table: sorted canonical keys and their result bytes."""

    variant: str
    depth: int  # every reachable position of at most this many stones is in the table
    complete: bool  # no position of the board has more (the deepest level is all finished)
    counts: tuple[int, ...]  # positions by ply, up to symmetry
    keys: np.ndarray  # uint64, sorted
    values: np.ndarray  # uint8, ``code << 6 | plies``

    def value(self, key: int) -> int | None:
        """The result byte of a canonical key, or None when the table does not hold it."""
        index = int(np.searchsorted(self.keys, np.uint64(key)))
        if index < len(self.keys) and int(self.keys[index]) == key:
            return int(self.values[index])
        return None


def table_path(name: str) -> Path:
    return Path(str(resources.files("engine") / "data" / f"small_{name}.xz"))


def checksum(keys: np.ndarray, values: np.ndarray) -> str:
    return hashlib.sha256(keys.astype("<u8").tobytes() + values.tobytes()).hexdigest()


def encode(name: str, levels: list[np.ndarray], values: list[np.ndarray],
           complete: bool) -> bytes:
    """The file of a table built level by level (``levels[p]``: sorted keys of ply p)."""
    keys = np.concatenate(levels)
    results = np.concatenate(values)
    order = np.argsort(keys, kind="stable")
    keys, results = keys[order], results[order]
    header = {"format": FORMAT, "variant": name, "depth": len(levels) - 1,
              "complete": complete, "counts": [len(level) for level in levels],
              "positions": len(keys), "sha256": checksum(keys, results),
              "key": "x << cells | o, the least over the board's symmetries",
              "value": "code << 6 | plies; code 0 loss, 1 draw, 2 win for the side to move"}
    differences = np.diff(keys, prepend=np.uint64(0)).astype("<u8")
    planes = np.ascontiguousarray(differences.view(np.uint8).reshape(-1, 8).T)
    text = json.dumps(header).encode()
    payload = len(text).to_bytes(4, "little") + text + planes.tobytes() + results.tobytes()
    return lzma.compress(payload, preset=9 | lzma.PRESET_EXTREME)


def decode(blob: bytes) -> SmallTable:
    payload = lzma.decompress(blob)
    size = int.from_bytes(payload[:4], "little")
    header = json.loads(payload[4:4 + size])
    count = header["positions"]
    start = 4 + size
    planes = np.frombuffer(payload, dtype=np.uint8, count=8 * count, offset=start)
    differences = np.ascontiguousarray(planes.reshape(8, count).T).view("<u8").reshape(count)
    keys = np.cumsum(differences, dtype=np.uint64)
    values = np.frombuffer(payload, dtype=np.uint8, count=count, offset=start + 8 * count)
    if checksum(keys, values) != header["sha256"]:
        raise ValueError(f"the table of {header['variant']} is corrupt (checksum)")
    return SmallTable(header["variant"], header["depth"], header["complete"],
                      tuple(header["counts"]), keys, values.copy())


@cache
def table(name: str) -> SmallTable | None:
    """The shipped table of a board, read once per process; None for other boards."""
    path = table_path(name)
    if name not in TABLED or not path.exists():
        return None
    return decode(path.read_bytes())


@cache
def _exact_search(name: str) -> ExactSearch:
    return ExactSearch(variant(name))


def result(board: Board) -> tuple[str, int, bool] | None:
    """``(verdict, plies, from_table)`` of a small board's position for the side to move:
    from its table, or, below the table on a board without draws, by the exact search; None
    for other boards."""
    found = table(board.geometry.name)
    if found is None:
        return None
    x, o = board.stones
    rules = rules_for(board.geometry)
    if x.bit_count() + o.bit_count() <= found.depth:
        value = found.value(int(canonical_key(np.uint64(x), np.uint64(o), rules.size,
                                              rules.images)))
        if value is None:  # unreachable: the game was over before it
            return None
        return VERDICTS[value >> 6], value & PLIES_MASK, True
    if found.complete or board.geometry.name not in NO_DRAWS:
        return None
    value = _exact_search(board.geometry.name).value(x, o)
    return VERDICTS[value >> 6], value & PLIES_MASK, False


def warm_up() -> float:
    """Compile (or load) the look-up's and the exact search's kernels, which a question about
    a small board needs (the tables themselves are read on the first question); returns the
    seconds it took."""
    started = time.perf_counter()
    rules = rules_for(variant("3x3x3"))
    canonical_key(np.uint64(1), np.uint64(2), rules.size, rules.images)
    ExactSearch(variant("3x3x3"), tt_bits=8).value(1 << 13, 1)
    return time.perf_counter() - started


def build_levels(name: str, depth: int) -> tuple[list[np.ndarray], bool]:
    """The sorted canonical keys of every reachable position, ply by ply to ``depth``, and
    whether that is all of them (every position of the last level finished)."""
    levels = [np.zeros(1, dtype=np.uint64)]
    while len(levels) <= depth:
        found = next_level(name, levels[-1])
        if not len(found):
            break
        levels.append(found)
    rules = rules_for(variant(name))
    return levels, unfinished(levels[-1], rules.size, rules.n, rules.lines) == 0


def next_level(name: str, keys: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
    """The sorted canonical keys one ply after the unfinished positions of ``keys``, a chunk
    of them at a time (each position has up to a cell's worth of children)."""
    rules = rules_for(variant(name))
    parts = [expand_level(keys[start:start + chunk], rules.size, rules.n, rules.lines,
                          rules.images) for start in range(0, len(keys), chunk)]
    return np.unique(np.concatenate(parts)) if len(parts) > 1 else parts[0]


def solve_levels(name: str, levels: list[np.ndarray], complete: bool) -> list[np.ndarray]:
    """The result of every position of ``levels``: the deepest level as finished positions
    when ``complete``, else by the exact search; the others backed up from it (minimax)."""
    rules = rules_for(variant(name))
    if complete:
        deepest = back_up_level(levels[-1], np.zeros(0, dtype=np.uint64),
                                np.zeros(0, dtype=np.uint8), rules.size, rules.n,
                                rules.lines, rules.images)
    elif name in NO_DRAWS:
        deepest = ExactSearch(variant(name), BUILD_TT_BITS).values(levels[-1])
    else:
        raise ValueError(f"{name} has draws: its exact search needs every level")
    values = [deepest]
    for ply in range(len(levels) - 2, -1, -1):
        values.insert(0, back_up_level(levels[ply], levels[ply + 1], values[0], rules.size,
                                       rules.n, rules.lines, rules.images))
    return values
