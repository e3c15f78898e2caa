"""Cell and game notation as DESIGN.md writes it."""

import pytest

from engine import NotationError, format_cell, format_moves, parse_cell, parse_moves, variant

CUBE = variant("4x4x4")
SQUARE = variant("4x4")


def test_corner_cells_of_the_cube() -> None:
    assert format_cell(0, CUBE) == "1a1"
    assert format_cell(63, CUBE) == "4d4"
    assert parse_cell("1a1", CUBE) == 0
    assert parse_cell("4d4", CUBE) == 63


def test_index_is_x_plus_ny_plus_nnz() -> None:
    # 2b3: level 2 (z=1), column b (x=1), row 3 (y=2)
    assert parse_cell("2b3", CUBE) == 1 + 4 * 2 + 16 * 1
    assert format_cell(3, CUBE) == "1d1"
    assert format_cell(4, CUBE) == "1a2"
    assert format_cell(16, CUBE) == "2a1"


def test_two_dimensional_boards_drop_the_level() -> None:
    assert format_cell(0, SQUARE) == "a1"
    assert format_cell(15, SQUARE) == "d4"
    assert parse_cell("c2", SQUARE) == 2 + 4


@pytest.mark.parametrize("name", ["3x3", "4x4", "5x5", "3x3x3", "4x4x4", "5x5x5"])
def test_every_cell_round_trips(name: str) -> None:
    g = variant(name)
    texts = [format_cell(c, g) for c in range(g.size)]
    assert len(set(texts)) == g.size
    assert [parse_cell(t, g) for t in texts] == list(range(g.size))


def test_parse_is_forgiving_about_case_and_spaces_only() -> None:
    assert parse_cell(" 2B3 ", CUBE) == parse_cell("2b3", CUBE)


@pytest.mark.parametrize("bad", ["", "a1", "5a1", "1e1", "1a5", "0a1", "1a0", "11a1", "1aa",
                                 "x", "1a1 2b2", "١a1"])
def test_bad_cells_raise_a_clear_error(bad: str) -> None:
    with pytest.raises(NotationError, match="is not a cell of 4x4x4"):
        parse_cell(bad, CUBE)


def test_error_names_the_broken_part() -> None:
    with pytest.raises(NotationError, match="level must be 1-4"):
        parse_cell("5a1", CUBE)
    with pytest.raises(NotationError, match="column must be a-d"):
        parse_cell("1e1", CUBE)


def test_games_round_trip() -> None:
    text = "1a1 2b2 4d4 3c3"
    cells = parse_moves(text, CUBE)
    assert cells == [0, 21, 63, 42]
    assert format_moves(cells, CUBE) == text
    assert parse_moves("  1a1\n 2b2\t", CUBE) == [0, 21]


def test_bad_game_names_the_move() -> None:
    with pytest.raises(NotationError, match="move 2: 'zz' is not a cell"):
        parse_moves("1a1 zz", CUBE)
