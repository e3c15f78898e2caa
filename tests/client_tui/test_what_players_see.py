"""Issue 38 items 13, 14 and 15 (the rest), read off the screen at 80x24, 100x30 and 70x20:
the analysis board keeps what a later position proved when a move is taken back; players see
that someone watches; Esc from a game that opened over Puzzles goes to the lobby, as the
footer says; after "Leave this game? → Stay" the board has the keys; a hint's toast leaves
the board's levels visible."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scenes import game, lobby, threats_game
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import in_lobby, screen_text, unconnected, until

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.screens.analysis import AnalysisScreen
from client_tui.screens.dialogs import ConfirmDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.puzzle import PuzzleScreen
from client_tui.widgets.board import BoardWidget
from server.protocol import GameState, Suggestion

SIZES = [(80, 24), (100, 30), (70, 20)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def feed(app: QubicApp, *messages: object) -> None:
    for message in messages:
        app.post_message(LinkMessage(Received(message)))  # type: ignore[arg-type]


async def open_game(app: QubicApp, pilot: Pilot, state: GameState) -> GameScreen:
    feed(app, state)
    await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
    await pilot.pause()
    assert isinstance(app.screen, GameScreen)
    return app.screen


# -- item 14: the analysis board after a take back ---------------------------------------

UNKNOWN = {"verdict": "unknown", "plies": None, "proved_by": None}


def solver(asked: list[str]) -> Any:  # noqa: ANN401
    """The solver as it answers on a busy day: after 1a1 4d4 (X to move) unknown (its time
    ran out), every move unknown; after 1a1 4d4 1b1 proved: O loses within 49 plies."""

    def fetch(variant: str, moves: str) -> dict[str, Any]:
        asked.append(moves)
        if moves == "1a1+4d4":
            return {"variant": variant, "position": "1a1 4d4", "to_move": "x", **UNKNOWN,
                    "moves": [{"move": m, "cell": c, **UNKNOWN}
                              for m, c in (("1a2", 4), ("1b1", 1), ("2a1", 16))]}
        if moves == "1a1+4d4+1b1":
            return {"variant": variant, "position": "1a1 4d4 1b1", "to_move": "o",
                    "verdict": "loss", "plies": 49, "proved_by": "search",
                    "moves": [{"move": "1c1", "cell": 2, "verdict": "win", "plies": 48,
                               "proved_by": "search"}]}
        return {"variant": variant, "position": moves, "to_move": "x", **UNKNOWN, "moves": []}

    return fetch


def text_of(app: QubicApp, selector: str) -> str:
    found = app.screen.query(selector)
    return str(found.first(Static).render()) if found else ""


@sizes
async def test_a_take_back_keeps_what_the_next_position_proved(
        tmp_path: Path, size: tuple[int, int]) -> None:
    app = unconnected(tmp_path)
    asked: list[str] = []
    async with app.run_test(size=size) as pilot:
        app.push_screen(AnalysisScreen(solver(asked), "4x4x4", [0, 63]))
        await until(pilot, lambda: "unknown" in text_of(app, "#analysis-verdict"), "unknown")
        assert "1b1 ?" in text_of(app, "#analysis-moves")
        await pilot.press(*"1b1", "enter")
        await until(pilot, lambda: "X wins within 49" in text_of(app, "#analysis-verdict"),
                    "the proof after 1b1")
        await pilot.press("u")
        await until(pilot, lambda: asked.count("1a1+4d4") == 2, "the position asked again")
        await pilot.pause()
        verdict, moves = text_of(app, "#analysis-verdict"), text_of(app, "#analysis-moves")
        assert "unknown" not in verdict and "X wins within 50" in verdict, verdict
        assert moves.splitlines()[0].split() == ["1b1", "wins", "50"], moves
        assert app.screen.query_one(BoardWidget).view.suggested == 1  # 1b1 marked
        assert "X wins within 50" in screen_text(app)


# -- item 15: someone watches ------------------------------------------------------------

@sizes
async def test_players_see_that_someone_watches(tmp_path: Path, size: tuple[int, int]) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=size) as pilot:
        app.show_lobby()
        state = game()
        state.spectators = 2
        await open_game(app, pilot, state)
        assert "2 watching" in screen_text(app)
        feed(app, game())  # a snapshot again (a resync, a reconnection): nobody now
        await until(pilot, lambda: app.screen.model.spectators == 0, "the new count")
        await pilot.pause()
        assert "watching" not in screen_text(app)


# -- item 15: Esc goes where the footer says ---------------------------------------------

async def test_esc_from_a_game_over_puzzles_goes_to_the_lobby(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.send = lambda request, quiet=False: True  # type: ignore[method-assign]
        app.show_lobby()
        feed(app, lobby())
        await pilot.pause()
        await pilot.press("z")
        await until(pilot, lambda: isinstance(app.screen, PuzzleScreen), "the puzzles")
        screen = await open_game(app, pilot, game())  # a challenge accepted meanwhile
        assert "esc Lobby" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "leave?")
        await pilot.press("y")
        await until(pilot, lambda: app.screen is app.lobby_screen, "the lobby")
        assert screen not in app.screen_stack


# -- Stay keeps the board's keys ---------------------------------------------------------

async def test_stay_gives_the_keys_back_to_the_board(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.show_lobby()
        screen = await open_game(app, pilot, threats_game())
        board = screen.query_one(BoardWidget)
        for answer in ("enter", "escape", "n"):
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "leave?")
            await pilot.press(answer)
            await until(pilot, lambda: app.screen is screen, "the game again")
            await pilot.pause()
            assert board.has_focus, answer
            await pilot.press("2", "d")
            assert board.typed == "2d", answer
            await pilot.press("escape")  # clears what was typed
            await pilot.pause()


# -- item 13: a hint's toast leaves the levels visible -----------------------------------

@pytest.mark.parametrize("size", [(100, 30), (80, 24), (120, 40), (70, 20)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_hint_toast_covers_no_level_of_the_board(
        tmp_path: Path, size: tuple[int, int]) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        app.show_lobby()
        state = threats_game()
        state.seats[1].ai = 3
        screen = await open_game(app, pilot, state)
        board = screen.query_one(BoardWidget)
        before = screen_text(app).splitlines()
        rows = range(board.region.y, board.region.bottom)
        app.send = lambda request, quiet=False: True  # type: ignore[method-assign]
        await pilot.press("h")  # "Asking the engine for a hint…"
        feed(app, Suggestion(game=state.id, ply=len(state.moves), cell=3, notation="1d1"))
        await until(pilot, lambda: any("Hint: 1d1" in str(n.message)
                                       for n in app._notifications), "the hint's toast")
        await pilot.press("h")  # the hint again: three toasts
        await pilot.pause(0.5)
        after = screen_text(app).splitlines()
        assert "Hint: 1d1" in "\n".join(after)

        def drawn(line: str) -> str:  # the board's row, its marks aside (! replaces x)
            return line.translate(str.maketrans("!x", "··"))

        for row in rows:
            assert drawn(before[row]) == drawn(after[row]), (size, "\n".join(after))


async def test_a_bot_is_marked_in_every_list_of_the_lobby(tmp_path: Path) -> None:
    """dan, a bot, is marked BOT by his seek, in the live game he plays, online and on the
    leaderboard; nobody else is."""
    from textual.widgets import DataTable

    from client_tui.connection import LeaderboardRow

    app = unconnected(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.show_lobby()
        await until(pilot, lambda: in_lobby(app), "the lobby")
        feed(app, lobby())
        assert app.lobby_screen is not None
        seeks = app.lobby_screen.query_one("#seeks", DataTable)
        await until(pilot, lambda: seeks.row_count == 3, "the lobby's seeks")
        app.lobby_screen.show_leaderboard([LeaderboardRow("dan", 1733, bot=True),
                                           LeaderboardRow("bob", 1612)])
        await pilot.pause()

        def names(table: str, *columns: int) -> list[str]:
            rows = app.lobby_screen.query_one(f"#{table}", DataTable)  # type: ignore[union-attr]
            return [str(rows.get_row_at(row)[column]) for row in range(rows.row_count)
                    for column in columns]

        assert names("seeks", 0) == ["bob", "cat", "dan BOT"]
        assert names("games", 0, 1) == ["eve", "Computer (level 5)", "fay", "dan BOT"]
        assert names("players", 0) == ["ann", "bob", "cat", "dan BOT", "eve"]
        assert names("leaderboard", 1) == ["dan BOT", "bob"]
