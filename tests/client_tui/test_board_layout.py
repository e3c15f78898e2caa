"""The board's drawing geometry: every cell can be hit where it is drawn, and it fits."""

from __future__ import annotations

import pytest

from client_tui.widgets.board import STYLES, BoardLayout, choose_layout
from engine import variant


@pytest.mark.parametrize("name", ["4x4x4", "3x3x3", "4x4"])
@pytest.mark.parametrize("style", STYLES)
def test_each_cell_is_hit_where_it_is_drawn(name: str, style: tuple) -> None:
    g = variant(name)
    layout = BoardLayout.for_geometry(g, *style)
    for cell in range(g.size):
        x, y, *rest = g.coords(cell)
        z = rest[0] if rest else 0
        column, line = layout.cell_box(x, y, z)
        for dx in range(layout.cell_w):
            for dy in range(layout.cell_h):
                assert layout.hit(column + dx, line + dy) == (x, y, z)
        assert column >= 0 and column + layout.cell_w <= layout.width
        assert line >= 1 and line + layout.cell_h <= layout.height - 1


def test_labels_and_grid_lines_hit_nothing() -> None:
    layout = BoardLayout.for_geometry(variant("4x4x4"), 3, 1, True, 3)
    assert layout.hit(0, 2) is None  # a row label
    assert layout.hit(2, 2) is None  # the grid's left line
    assert layout.hit(5, 1) is None  # the top line
    assert layout.hit(layout.layer_width + 1, 3) is None  # the gap between layers


def test_the_largest_style_that_fits_is_chosen() -> None:
    g = variant("4x4x4")
    assert choose_layout(g, 78, 11).width <= 78  # an 80-column terminal
    small = choose_layout(g, 78, 11)
    big = choose_layout(g, 118, 19)
    assert big.grid and not small.grid
    assert choose_layout(variant("4x4"), 78, 11).grid
    assert choose_layout(g, 10, 3) == BoardLayout.for_geometry(g, *STYLES[-1])
