"""Lines, automorphisms and positions counted up to symmetry."""

import random

import pytest

from engine import Board, variant
from engine.errors import NotationError
from engine.rules.geometry import geometry

SIZES = [(3, 2), (4, 2), (5, 2), (3, 3), (4, 3), (5, 3)]


@pytest.mark.parametrize(("n", "d"), SIZES)
def test_line_count_matches_formula(n: int, d: int) -> None:
    g = geometry(n, d)
    assert len(g.lines) == ((n + 2) ** d - n**d) // 2
    assert len(set(g.line_masks)) == len(g.lines)


@pytest.mark.parametrize(("name", "count"), [("3x3", 8), ("4x4", 10), ("5x5", 12),
                                             ("3x3x3", 49), ("4x4x4", 76), ("5x5x5", 109)])
def test_named_line_counts(name: str, count: int) -> None:
    assert len(variant(name).lines) == count


@pytest.mark.parametrize(("n", "d"), SIZES)
def test_every_line_is_straight(n: int, d: int) -> None:
    g = geometry(n, d)
    for line in g.lines:
        coords = [g.coords(c) for c in line]
        steps = {tuple(b - a for a, b in zip(p, q, strict=True))
                 for p, q in zip(coords, coords[1:], strict=False)}
        assert len(steps) == 1
        (step,) = steps
        assert all(s in (-1, 0, 1) for s in step) and any(step)


def test_lines_through_cells_4x4x4() -> None:
    g = geometry(4, 3)
    degrees = sorted(len(t) for t in g.lines_through)
    # 8 corners and 8 inner cells lie on 7 lines; the other 48 on 4.
    assert degrees == [4] * 48 + [7] * 16
    assert sum(degrees) == 76 * 4


def test_symmetry_group_sizes() -> None:
    assert len(geometry(4, 3).symmetries) == 192
    assert len(geometry(3, 3).symmetries) == 48
    assert len(geometry(3, 2).symmetries) == 8


def test_symmetries_of_4x4x4_map_lines_onto_lines_and_form_a_group() -> None:
    g = geometry(4, 3)
    masks = set(g.line_masks)
    syms = set(g.symmetries)
    assert g.symmetries[0] == tuple(range(64))
    for s in g.symmetries:
        assert sorted(s) == list(range(64))
        assert {g.transform(m, s) for m in masks} == masks
    some = g.symmetries[:12]
    for a in some:
        for b in some:
            assert tuple(a[b[c]] for c in range(64)) in syms


def test_value_permutation_1032_is_an_automorphism() -> None:
    g = geometry(4, 3)
    p = (1, 0, 3, 2)
    image = tuple(g.cell_at([p[v] for v in g.coords(c)]) for c in range(64))
    assert image in set(g.symmetries)


def _classes_after(plies: int) -> int:
    g = geometry(4, 3)
    frontier = {g.canonical(0, 0)}
    for ply in range(plies):
        side = ply & 1
        following = set()
        for stones in frontier:
            occupied = stones[0] | stones[1]
            for cell in range(64):
                if not occupied >> cell & 1:
                    nxt = list(stones)
                    nxt[side] |= 1 << cell
                    following.add(g.canonical(nxt[0], nxt[1]))
        frontier = following
    return len(frontier)


def test_positions_up_to_symmetry_after_0_to_3_plies() -> None:
    assert [_classes_after(k) for k in range(4)] == [1, 2, 35, 757]


def test_canonical_is_equal_for_symmetric_positions() -> None:
    g = geometry(4, 3)
    board = Board.from_notation("4x4x4", "1a1 2b3 4d4")
    for s in g.symmetries[::17]:
        moved = [g.transform(b, s) for b in board.stones]
        assert g.canonical(*moved) == g.canonical(*board.stones)


@pytest.mark.parametrize("name", ["4x4x4", "3x3x3", "4x4", "5x5x5"])
def test_canonical_symmetry_is_the_first_that_gives_the_least_image(name: str) -> None:
    g = variant(name)
    rng = random.Random(name)
    for _ in range(60):
        cells = rng.sample(range(g.size), rng.randrange(0, min(24, g.size)))
        x, o = sum(1 << c for c in cells[::2]), sum(1 << c for c in cells[1::2])
        images = [(g.transform(x, s), g.transform(o, s)) for s in g.symmetries]
        assert g.canonical_symmetry(x, o) == images.index(min(images))
        assert g.canonical(x, o) == min(images)


@pytest.mark.parametrize("bad", ["4x4x5", "4", "2x2", "10x10", "4x4x4x4", "cube", ""])
def test_bad_variant_names_are_refused(bad: str) -> None:
    with pytest.raises(NotationError):
        variant(bad)

