"""Typed cells on the board: only a whole, valid cell is ever played; the rest is refused."""

from __future__ import annotations

import pytest
from rich.color import ColorSystem
from rich.console import Console
from textual.app import App, ComposeResult

from client_tui.widgets.board import BoardView, BoardWidget, read_typed
from engine import Board, format_cell, parse_cell, variant

CUBE = variant("4x4x4")


class BoardApp(App[None]):
    """The board alone, recording what it asks to play."""

    def __init__(self, board: Board) -> None:
        super().__init__()
        self.board = board
        self.picked: list[str] = []

    def compose(self) -> ComposeResult:
        yield BoardWidget(BoardView(self.board))

    def on_mount(self) -> None:
        self.query_one(BoardWidget).focus()

    def on_board_widget_cell_picked(self, event: BoardWidget.CellPicked) -> None:
        self.picked.append(format_cell(event.cell, self.board.geometry))


def hint(app: BoardApp) -> str:
    return app.query_one(BoardWidget).render().plain.splitlines()[-1].strip()


@pytest.mark.parametrize(("text", "reason"), [
    ("2", "unfinished: add the column (a–d)"),
    ("2b", "unfinished: add the row (1–4)"),
    ("9", "no level 9 (only 1–4)"),
    ("5e5", "no level 5 (only 1–4)"),
    ("2e1", "no column e (only a–d)"),
    ("2b7", "no row 7 (only 1–4)"),
    ("b2", "the level comes next: a number 1–4"),
    ("22", "the column comes next: a letter a–d"),
])
def test_read_typed_says_why_a_cell_is_refused(text: str, reason: str) -> None:
    assert read_typed(text, CUBE) == (None, reason)


def test_read_typed_reads_whole_cells() -> None:
    assert read_typed("2b3", CUBE) == (parse_cell("2b3", CUBE), "")
    assert read_typed("b3", variant("4x4")) == (parse_cell("b3", variant("4x4")), "")
    assert read_typed("3", variant("4x4")) == (None, "the column comes next: a letter a–d")


@pytest.mark.parametrize("keys", [["9"], ["5", "e", "5"], ["2", "b"], ["2"], ["2", "e", "1"]])
async def test_an_unfinished_or_invalid_cell_is_never_played(keys: list[str]) -> None:
    app = BoardApp(Board("4x4x4"))
    async with app.run_test(size=(80, 20)) as pilot:
        board = app.query_one(BoardWidget)
        await pilot.press(*keys, "enter")
        assert app.picked == []  # not the cell under the cursor either
        assert board.typed == "".join(keys)  # what was typed stays shown, with the reason
        assert hint(app).startswith(f"typed {''.join(keys)}: ")
        await pilot.press("space")
        assert app.picked == []
        await pilot.press("escape")  # clears it; then Enter plays the cursor
        assert board.typed == "" and "⏎ plays it" in hint(app)
        await pilot.press("enter")
        assert app.picked == ["2b2"]


async def test_a_whole_cell_is_played_and_a_wrong_one_can_be_mended() -> None:
    app = BoardApp(Board("4x4x4"))
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("3", "c", "3")
        assert hint(app).startswith("go to 3c3")
        await pilot.press("enter")
        assert app.picked == ["3c3"]
        await pilot.press("2", "e", "backspace", "a", "4", "enter")
        assert app.picked == ["3c3", "2a4"]


async def test_the_prompt_promises_only_what_enter_does() -> None:
    """On a taken cell the prompt says so (not "⏎ plays it"), and after the game it says the
    game is over (issue 29: what new players tripped on)."""
    app = BoardApp(Board("4x4x4", [21]))  # 2b2, under the cursor at first
    async with app.run_test(size=(80, 20)):
        assert "is taken" in hint(app) and "plays it" not in hint(app)
    over = Board("4x4x4", [0, 16, 1, 17, 2, 18, 3])  # X completes level 1's first row
    app = BoardApp(over)
    async with app.run_test(size=(80, 20)):
        assert "the game is over" in hint(app) and "plays it" not in hint(app)


async def test_a_typed_cell_promises_only_what_enter_does() -> None:
    """A typed taken cell, or one typed after the game, is not offered as "⏎ plays" (issue 38
    item 5); Enter on it asks nothing the server would refuse."""
    app = BoardApp(Board("4x4x4", [21]))  # 2b2 taken
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("2", "b", "2")
        assert hint(app) == "typed 2b2: that cell is taken · esc clears"
        await pilot.press("escape", "2", "b", "3")
        assert hint(app).startswith("go to 2b3 · ⏎ plays")
    over = Board("4x4x4", [0, 16, 1, 17, 2, 18, 3])
    app = BoardApp(over)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("3", "c", "3")
        assert hint(app) == "typed 3c3: the game is over · esc clears"
        assert "plays" not in hint(app)


@pytest.mark.parametrize("system", [ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT],
                         ids=["truecolor", "256"])
async def test_the_winning_line_is_a_shape_and_a_green_apart_from_the_cursor(
        system: ColorSystem) -> None:
    """Issue 38 item 6: the winning line's pieces are drawn =X= (not colour only), on a green
    that stays green, apart from the cursor's and the guides' greys, as a 256-colour terminal
    (tmux) draws it as well as in true colour."""
    over = Board("4x4x4", [0, 16, 1, 17, 2, 18, 3])  # X: 1a1 1b1 1c1 1d1
    app = BoardApp(over)
    async with app.run_test(size=(100, 24)) as pilot:
        widget = app.query_one(BoardWidget)
        widget.view = BoardView(over, winning_line=(0, 1, 2, 3), last_move=3)
        widget.cursor = 5  # 1b2, an empty cell next to the line
        await pilot.pause()
        text = widget.render()
        plain = text.plain
        row = next(line for line in plain.splitlines() if "=X=" in line)
        assert row.count("=X=") == 4 and "(X)" not in row  # the whole line, the last move too
        console = Console(color_system=system.name.lower().replace("eight_bit", "256"))

        def ground(offset: int) -> tuple[int, int, int]:
            colour = text.get_style_at_offset(console, offset).bgcolor
            assert colour is not None
            return colour.downgrade(system).get_truecolor()

        win = ground(plain.index("=X=") + 1)
        cursor = ground(plain.index("[·]") + 1)
        red, green, blue = win
        assert green > red + 60 and green > blue + 60, f"{win} is not green"
        assert win != cursor and max(abs(a - b) for a, b in zip(win, cursor, strict=True)) > 60
