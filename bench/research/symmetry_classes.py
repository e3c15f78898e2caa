"""Count positions up to symmetry after each ply of 4x4x4 Qubic (1, 2, 35, 757, 20851, ...).

    .venv/bin/python bench/research/symmetry_classes.py [--plies 4] [--variant 4x4x4]

Each level holds one representative per class. The children of the representatives are
canonicalised with numpy, all the symmetries at once: a position is the sorted cells of X and
the sorted cells of O, read as one number in base (cells); its canonical key is the least key
over the group. Every class at ply k+1 has a member that is a child of a representative at
ply k (map any member's parent onto its representative), so this reaches all of them. Won
positions are counted too (none exist before ply 7 on 4x4x4).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.rules.geometry import Geometry, variant

CHUNK = 4096  # children canonicalised per numpy batch


def _keys(xs: np.ndarray, os_: np.ndarray, base: int) -> np.ndarray:
    """Keys of positions given by sorted X cells and sorted O cells along the last axis."""
    digits = np.concatenate([xs, os_], axis=-1)
    key = np.zeros(digits.shape[:-1], dtype=np.int64)
    for i in range(digits.shape[-1]):
        key = key * base + digits[..., i]
    return key


def _decode(keys: np.ndarray, stones: int, base: int) -> np.ndarray:
    """The cells (X's then O's) of each key."""
    out = np.empty((keys.shape[0], stones), dtype=np.int64)
    rest = keys.copy()
    for i in reversed(range(stones)):
        out[:, i] = rest % base
        rest //= base
    return out


def canonical_keys(xs: np.ndarray, os_: np.ndarray, perms: np.ndarray, base: int) -> np.ndarray:
    """The least key over the symmetry group of each position (rows of ``xs``, ``os_``)."""
    mapped_x = np.sort(perms[:, xs], axis=-1)  # (S, N, nx)
    mapped_o = np.sort(perms[:, os_], axis=-1)
    return _keys(mapped_x, mapped_o, base).min(axis=0)


def classes_after(geometry: Geometry, plies: int) -> list[int]:
    """The number of classes after 0, 1, ..., ``plies`` plies."""
    size = geometry.size
    if size ** plies >= 2**63:
        raise ValueError(f"{plies} plies do not fit a 64-bit key on {geometry.name}")
    perms = np.array(geometry.symmetries, dtype=np.int64)
    cells = np.zeros((1, 0), dtype=np.int64)  # one representative: the empty board
    counts = [1]
    for ply in range(plies):
        nx, no = (ply + 1) // 2, ply // 2  # stones of X and O before this move
        xs, os_ = cells[:, :nx], cells[:, nx:]
        occupied = np.zeros((cells.shape[0], size), dtype=bool)
        np.put_along_axis(occupied, cells, True, axis=1)
        parent, move = np.nonzero(~occupied)
        if ply % 2 == 0:
            child_x = np.sort(np.concatenate([xs[parent], move[:, None]], axis=1), axis=1)
            child_o = os_[parent]
        else:
            child_x = xs[parent]
            child_o = np.sort(np.concatenate([os_[parent], move[:, None]], axis=1), axis=1)
        keys = np.concatenate([
            canonical_keys(child_x[i:i + CHUNK], child_o[i:i + CHUNK], perms, size)
            for i in range(0, len(parent), CHUNK)
        ])
        unique = np.unique(keys)
        counts.append(len(unique))
        cells = _decode(unique, nx + no + 1, size)  # X's cells, then O's
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=4)
    parser.add_argument("--variant", default="4x4x4")
    args = parser.parse_args()
    geometry = variant(args.variant)
    started = time.perf_counter()
    symmetries = len(geometry.symmetries)
    counts = classes_after(geometry, args.plies)
    elapsed = time.perf_counter() - started
    print(f"positions of {geometry.name} up to its {symmetries} symmetries, by ply:")
    for ply, count in enumerate(counts):
        print(f"  after {ply} plies: {count:,}")
    print(f"({elapsed:.2f} s including building the symmetry group)")


if __name__ == "__main__":
    main()
