"""The terminal client's game review and analysis board (issue 29 items 1-2): driven by Pilot
against a real server (a finished game's review asked over the websocket from the game's end
and from My games, the analysis board on /api/solve), and snapshots of both screens at 80x24
and 120x40 from fixed answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytest_asyncio
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import client, in_lobby, running_server, unconnected, until

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.screens.analysis import AnalysisScreen
from client_tui.screens.dialogs import ConfirmDialog, GameOptions
from client_tui.screens.game import GameScreen
from client_tui.screens.my_games import MyGamesScreen
from client_tui.screens.review import ReviewScreen
from client_tui.widgets.board import BoardWidget
from engine import Board, format_cell, variant
from server.game.records import MoveRecord, Seat
from server.http.app import RunningServer
from server.protocol import MAX_FRAME_BYTES, GameReviewed, ReviewInfo, encode

SIZE = (100, 30)
SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


def text_of(app: QubicApp, selector: str) -> str:
    """What a Static of the screen shows ("" before it is composed)."""
    found = app.screen.query(selector)
    return str(found.first(Static).render()) if found else ""


async def test_a_finished_game_is_reviewed_then_analysed(
        server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(app), "the lobby")
        assert app.lobby_screen is not None
        app.lobby_screen.computer = GameOptions(level=1, colour="o")  # type: ignore[arg-type]
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await until(pilot, lambda: screen.model.my_turn, "the computer's first move")
        await until(pilot, lambda: screen.query_one(BoardWidget).has_focus, "the board")
        board = screen.model.board
        await pilot.press(*format_cell(board.legal_moves[0], board.geometry), "enter")
        await until(pilot, lambda: screen.model.ply == 3, "the computer's second move")
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await until(pilot, lambda: screen.model.over, "the end")
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review", 60)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert [m.cell for m in review.review.moves] == screen.model.board.moves
        assert review.review.result == "1-0" and review.review.reason == "resign"
        await until(pilot, lambda: text_of(app, "#review-explain").startswith("The start"),
                    "the review drawn")
        assert text_of(app, "#review-explain").startswith("The start: X wins")
        await pilot.press("full_stop", "full_stop")
        assert text_of(app, "#review-explain").startswith("2. O ")
        assert review.query_one(BoardWidget).view.board.ply == 2
        await pilot.press("end")
        assert review.query_one(BoardWidget).view.board.ply == 3
        await pilot.press("home", "full_stop", "full_stop", "a")
        await until(pilot, lambda: isinstance(app.screen, AnalysisScreen), "the analysis board")
        analysis = app.screen
        assert isinstance(analysis, AnalysisScreen)
        assert analysis.board.moves == screen.model.board.moves[:2]
        await until(pilot, lambda: "Asking" not in text_of(app, "#analysis-verdict"),
                    "the solver's verdict", 60)
        assert text_of(app, "#analysis-verdict").startswith(("X wins", "O wins", "Not proved"))
        await pilot.press("u")
        assert analysis.board.moves == screen.model.board.moves[:1]
        await pilot.press("escape", "escape")
        assert app.screen is screen
        # and from My games: the game is there, finished; v asks for its review again
        await pilot.press("escape")
        await until(pilot, lambda: in_lobby(app), "back in the lobby")
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, MyGamesScreen) and app.screen.ids,
                    "my games, from the server")
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review again")
        assert app.screen.review.game == screen.model.id  # type: ignore[attr-defined]


async def test_the_analysis_board_from_the_lobby(server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(app), "the lobby")
        await pilot.press("a")
        assert isinstance(app.screen, AnalysisScreen)
        screen = app.screen
        await until(pilot, lambda: "by the proof" in text_of(app, "#analysis-verdict"),
                    "the empty board's verdict", 60)
        assert text_of(app, "#analysis-verdict").startswith("X wins")
        await pilot.press("p")
        await pilot.press(*"1a1 4d4 1b1 4c4 1c1 4a1", "enter")
        assert [format_cell(c, screen.board.geometry) for c in screen.board.moves] == [
            "1a1", "4d4", "1b1", "4c4", "1c1", "4a1"]
        await pilot.press("y")  # shared as a move string
        assert app.clipboard == "1a1 4d4 1b1 4c4 1c1 4a1"
        await until(pilot, lambda: "1d1 wins 1" in text_of(app, "#analysis-moves"),
                    "the winning move listed", 60)
        assert screen.query_one(BoardWidget).view.suggested == 3  # 1d1 marked on the board
        await pilot.press(*"1d1")  # typed on the board, then played
        await pilot.press("enter")
        assert screen.board.outcome() is not None
        assert "The game is over" in text_of(app, "#analysis-position")
        await pilot.press("u", "e")
        assert screen.board.moves == []
        await pilot.press("p", *"1a1 1a1", "enter")  # refused: a cell twice
        assert screen.board.moves == []


# -- snapshots ---------------------------------------------------------------------------

REVIEW = {
    "game": "g1", "variant": "4x4x4", "x": "ann", "o": "bob", "result": "1-0", "reason": "line",
    "start": {"verdict": "win", "plies": 51, "proved_by": "book"},
    "seconds": 5.7, "computed": 1764160000.0,
    "moves": [
        {"ply": 1, "side": "x", "cell": 0, "move": "1a1", "class": "found", "line": [],
         "before": {"verdict": "win", "plies": 51, "proved_by": "book"},
         "after": {"verdict": "win", "plies": 50, "proved_by": "book"},
         "best": ["1a1", "1d1", "1a4", "1d4"]},
        {"ply": 2, "side": "o", "cell": 63, "move": "4d4", "class": "ok", "line": [],
         "before": {"verdict": "loss", "plies": 50, "proved_by": "book"},
         "after": {"verdict": "loss", "plies": 45, "proved_by": "book"},
         "best": ["2b2", "2c2", "2b3", "2c3"]},
        {"ply": 3, "side": "x", "cell": 1, "move": "1b1", "class": "unknown",
         "before": {"verdict": "win", "plies": 45, "proved_by": "book"},
         "after": {"verdict": "unknown", "plies": None, "proved_by": None},
         "best": ["1d1", "1a4", "4a1"], "line": ["1d1", "2b4", "4d1", "1a4", "3c4", "1c1"]},
        {"ply": 4, "side": "o", "cell": 62, "move": "4c4", "class": "unknown", "line": [],
         "before": {"verdict": "unknown", "plies": None, "proved_by": None},
         "after": {"verdict": "unknown", "plies": None, "proved_by": None}, "best": []},
        {"ply": 5, "side": "x", "cell": 2, "move": "1c1", "class": "unknown", "line": [],
         "before": {"verdict": "unknown", "plies": None, "proved_by": None},
         "after": {"verdict": "unknown", "plies": None, "proved_by": None}, "best": []},
        {"ply": 6, "side": "o", "cell": 48, "move": "4a1", "class": "missed_threat", "line": [],
         "before": {"verdict": "unknown", "plies": None, "proved_by": None},
         "after": {"verdict": "loss", "plies": 1, "proved_by": "book"}, "best": ["1d1"]},
        {"ply": 7, "side": "x", "cell": 3, "move": "1d1", "class": "found", "line": [],
         "before": {"verdict": "win", "plies": 1, "proved_by": "book"},
         "after": {"verdict": "win", "plies": 0, "proved_by": "search"}, "best": ["1d1"]},
    ],
    "summary": {"x": {"found": 2, "unknown": 2}, "o": {"missed_threat": 1, "ok": 1,
                                                       "unknown": 1}},
}
SOLVED: dict[str, Any] = {  # /api/solve's answer after the review's first six moves
    "variant": "4x4x4", "position": "1a1 4d4 1b1 4c4 1c1 4a1", "to_move": "x",
    "verdict": "win", "plies": 1, "proved_by": "book",
    "moves": [{"move": "1d1", "cell": 3, "verdict": "loss", "plies": 0, "proved_by": "search"},
              *({"move": m, "cell": c, "verdict": "unknown", "plies": None, "proved_by": None}
                for m, c in (("1a2", 4), ("1b2", 5), ("1c2", 6)))],
}


async def test_the_review_says_counts_and_ends_in_words(tmp_path: Path) -> None:
    """Issue 38 item 3: "1 threat missed", not "1 threats missed"; the move that won says
    "X has won", not "X wins within 0 plies"."""
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        review = msgspec.convert(REVIEW, ReviewInfo)
        app.post_message(LinkMessage(Received(GameReviewed(review=review))))
        await until(pilot, lambda: text_of(app, "#review-summary"), "the review")
        summary = text_of(app, "#review-summary")
        assert "O: 0 found, 0 blunders, 1 threat missed." in summary
        assert "X: 2 found, 0 blunders, 0 threats missed." in summary
        await pilot.press("end")
        explain = text_of(app, "#review-explain")
        assert "After: X has won." in explain and "0 plies" not in explain
        caption = app.screen.query_one(BoardWidget).view.caption or ""
        assert caption.startswith("after ply 7 of 7 ·")  # plies, not "7 moves" for 4


def review_snapshot(snap_compare, tmp_path: Path, size: tuple[int, int],  # noqa: ANN001
                    keys: tuple[str, ...]) -> bool:
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        review = msgspec.convert(REVIEW, ReviewInfo)
        app.post_message(LinkMessage(Received(GameReviewed(review=review))))
        while not isinstance(app.screen, ReviewScreen):
            await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=show)  # type: ignore[no-any-return]


@sizes
def test_review_at_a_missed_threat(snap_compare, tmp_path: Path,  # noqa: ANN001
                                   size: tuple[int, int]) -> None:
    assert review_snapshot(snap_compare, tmp_path, size, ("full_stop",) * 6)


@sizes
def test_review_at_a_win_let_go(snap_compare, tmp_path: Path,  # noqa: ANN001
                                size: tuple[int, int]) -> None:
    assert review_snapshot(snap_compare, tmp_path, size, ("full_stop",) * 3)


@sizes
def test_analysis(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        app.push_screen(AnalysisScreen(lambda variant, moves: SOLVED, "4x4x4",
                                       [0, 63, 1, 62, 2, 48]))
        while not (isinstance(app.screen, AnalysisScreen) and app.screen.answers):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


def long_game(plies: int) -> list[int]:
    """A legal 4x4x4 game of ``plies`` moves in which nobody has won yet."""
    board = Board("4x4x4")
    for _ in range(plies):
        for cell in board.legal_moves:
            trial = board.copy()
            trial.push(cell)
            if trial.outcome() is None:
                board.push(cell)
                break
    assert board.ply == plies
    return board.moves


def long_review(cells: list[int]) -> dict[str, Any]:
    """A review of ``cells`` as ``engine.solved.review`` keeps it, each move with its best moves and
    a line: a 38-ply game's reply comes to well over 8 KiB (issue 38 item 4)."""
    g = variant("4x4x4")
    unknown = {"verdict": "unknown", "plies": None, "proved_by": None}
    moves = [{"ply": ply, "side": "xo"[(ply - 1) % 2], "cell": cell,
              "move": format_cell(cell, g), "class": "ok", "before": unknown, "after": unknown,
              "best": [format_cell(c, g) for c in range(12)],
              "line": [format_cell(c, g) for c in range(20, 28)]}
             for ply, cell in enumerate(cells, 1)]
    return {"variant": "4x4x4", "start": unknown, "moves": moves, "seconds": 9.5,
            "summary": {"x": {"ok": (len(cells) + 1) // 2}, "o": {"ok": len(cells) // 2}}}


async def test_a_long_games_review_opens(server: RunningServer, tmp_path: Path) -> None:
    """The reply to ``review`` for a 38-ply game is larger than what a client may send; the
    client reads it all the same and shows the review."""
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(app), "the lobby")
        cells = long_game(38)
        store = server.store
        game = await store.create_game(variant="4x4x4", x=Seat.computer(1), o=Seat.human("ann"),
                                       clock=None, rated=False, now=1.0)
        for ply, cell in enumerate(cells, 1):
            await store.record_move(game.id, MoveRecord(ply, cell, None, None, 1.0 + ply))
        await store.finish_game(game.id, result="1-0", reason="resign", now=50.0)
        data = msgspec.json.encode(long_review(cells)).decode()
        await store.save_review(game.id, data, 60.0)
        reply = encode(GameReviewed(review=(await server.hub.reviews.review(game.id))))
        assert len(reply) > MAX_FRAME_BYTES
        app.open_review(game.id)
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), "the long review")
        await until(pilot, lambda: text_of(app, "#review-explain").startswith("The start"),
                    "the review drawn")
        await pilot.press("end")
        assert app.screen.query_one(BoardWidget).view.board.ply == 38
