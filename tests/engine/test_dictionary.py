"""Patashnik's dictionary: the file is shipped unchanged, parsed right, and its cell numbering
is the engine's (the proof built on it, tests/engine/test_proof.py, is the final check)."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine import Board
from engine.errors import NotationError
from engine.rules.geometry import variant
from engine.solved import dictionary as dic

G = variant("4x4x4")
ENTRIES = list(dic.entries(dic.data_path().read_text()))
SHA256 = "38d9b7820fd97269968e6eea32c6448712d0551e66c1f2ed1ce47f74f3069499"


def threes(mine: int, theirs: int) -> int:
    """Lines holding three of ``mine`` and none of ``theirs``."""
    return sum(1 for m in G.line_masks if (mine & m).bit_count() == 3 and not theirs & m)


def test_file_is_patashniks_unchanged() -> None:
    text = dic.data_path().read_bytes()
    assert hashlib.sha256(text).hexdigest() == SHA256
    body = text.split(b"-----------------------------------------\n", 1)[1]
    assert len(body) == 52040  # as its header says
    assert len(ENTRIES) == 2929


def test_header_example() -> None:
    x, o = dic.parse_position("xo1x8x8o41o")
    assert cells(x) == [0, 3, 12]
    assert cells(o) == [1, 21, 63]
    assert dic.format_position(x, o) == "xo1x8x8o41o"


def cells(bits: int) -> list[int]:
    return [c for c in range(64) if bits >> c & 1]


@pytest.mark.parametrize("text", ["xz", "x 3", "x70o", "-1x"])
def test_bad_positions(text: str) -> None:
    with pytest.raises(NotationError):
        dic.parse_position(text)


def test_every_entry_is_a_position_of_the_strategy() -> None:
    """Equal stones, no line complete, the move on an empty cell, and (the strategy applies
    win and block first) no three of either side: under a wrong cell mapping the lines
    differ and hundreds of entries show a three."""
    for x, o, move in ENTRIES:
        assert not x & o and x.bit_count() == o.bit_count()
        assert not (x | o) >> move & 1 and 0 <= move < 64
        assert threes(x, o) == 0 and threes(o, x) == 0
        assert all((x & m) != m and (o & m) != m for m in G.line_masks)


def test_a_wrong_mapping_would_show() -> None:
    swap = list(range(64))
    swap[1], swap[5] = 5, 1  # not an automorphism of the board
    moved = [(sum(1 << swap[c] for c in cells(x)), sum(1 << swap[c] for c in cells(o)))
             for x, o, _ in ENTRIES]
    assert sum(threes(x, o) + threes(o, x) > 0 for x, o in moved) > 100


def test_lookup_under_every_symmetry() -> None:
    rng = random.Random(7)
    for x, o, move in rng.sample(ENTRIES, 40):
        for sym in rng.sample(G.symmetries, 6):
            image = Board("4x4x4")
            xs = [sym[c] for c in cells(x)]
            os_ = [sym[c] for c in cells(o)]
            for a, b in zip(xs, os_, strict=True):
                image.push(a)
                image.push(b)
            found = dic.move(image)
            assert found is not None
            # the move may differ from the entry's image only by a symmetry of the position
            stab = [s for s in G.symmetries
                    if G.transform(image.stones[0], s) == image.stones[0]
                    and G.transform(image.stones[1], s) == image.stones[1]]
            assert sym[move] in {s[found] for s in stab}


def test_first_move_and_absent_positions() -> None:
    assert dic.move(Board("4x4x4")) == 0
    assert dic.move(Board("4x4x4", [0])) is None  # O to move
    assert dic.move(Board("4x4")) is None
