"""A hint and a takeback against the computer (issue 14, item 16): against a real server, the
keys, the hint marked on the board, and the reasons when they are refused."""

from __future__ import annotations

from pathlib import Path

from scenes import game, threats_game
from test_app import game_of, server, start_computer_game  # noqa: F401 (the fixture)
from test_trust import notes, open_game, screen_text
from tui_helpers import client, unconnected, until

from client_tui.model import Applied, GameModel
from client_tui.widgets.board import BoardWidget
from engine import format_cell
from server.http.app import RunningServer
from server.protocol import SeatInfo, Suggestion, TakenBack


def suggested_cells(app: object) -> list[str]:
    board = app.screen.query_one(BoardWidget)  # type: ignore[attr-defined]
    cell = board.view.suggested
    return [] if cell is None else [format_cell(cell, board.view.board.geometry)]


async def test_a_hint_is_marked_and_a_takeback_undoes_both_moves(
    server: RunningServer, tmp_path: Path  # noqa: F811
) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await start_computer_game(app, pilot)
        footer = screen_text(app)[-1]
        assert "h Hint" in footer and "u Take back" in footer and "? Help" in footer
        await pilot.press("u")
        await pilot.pause()
        assert "You have no move to take back yet." in notes(app)
        await pilot.press("h")
        await until(pilot, lambda: game_of(app).suggestion is not None, "the hint")
        hint = game_of(app).suggestion
        assert hint is not None and suggested_cells(app) == [hint.notation]
        assert "!" in "".join(screen_text(app))
        await pilot.press(*hint.notation, "enter")  # take the advice
        await until(pilot, lambda: game_of(app).ply == 2, "the computer's reply")
        assert game_of(app).suggestion is None and suggested_cells(app) == []
        await pilot.press("u")
        await until(pilot, lambda: game_of(app).ply == 0, "the takeback")
        assert game_of(app).my_turn and "Move taken back." in notes(app)


async def test_no_hint_or_takeback_between_people_or_while_the_computer_thinks(
    tmp_path: Path,
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())  # a rated game between people, bob to move
        assert "Hint" not in screen_text(app)[-1]
        await pilot.press("h", "u")
        await pilot.pause()
        assert "No hints in a game between people: only against the computer." in notes(app)
        assert "No takebacks in a game between people: only against the computer." in notes(app)
        state = threats_game()
        state.id = "g4"
        state.seats = [SeatInfo(name="ann"), SeatInfo(name="Computer (level 3)", ai=3)]
        state.moves = state.moves[:-1]  # the computer (O) to move
        app.pop_screen()
        await open_game(app, pilot, state)
        await pilot.press("h")
        await pilot.pause()
        assert "The computer is thinking: a hint is for your own turn." in notes(app)


def test_the_model_drops_a_stale_hint_and_applies_a_takeback() -> None:
    state = threats_game()
    state.seats = [SeatInfo(name="ann"), SeatInfo(name="Computer (level 3)", ai=3)]
    model = GameModel.from_state(state, 0.0)
    old = Suggestion(game="g2", ply=4, cell=3, notation="1d1")
    assert model.apply(old, 1.0) is Applied.IGNORED and model.suggestion is None
    hint = Suggestion(game="g2", ply=6, cell=3, notation="1d1")
    assert model.apply(hint, 1.0) is Applied.CHANGED and model.suggestion == hint
    model.show(2)
    taken = TakenBack(game="g2", ply=4, by="x", clocks=None, version=model.version + 1)
    assert model.apply(taken, 2.0) is Applied.CHANGED
    assert model.ply == 4 and model.suggestion is None and model.shown_ply == 2
