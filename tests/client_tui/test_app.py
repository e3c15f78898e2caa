"""The client driven by Pilot against a real server: the computer, people, drops, safety."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from textual.widgets import RichLog, Static
from tui_helpers import client, in_lobby, running_server, until

from client_tui.app import QubicApp
from client_tui.embedded import server_key
from client_tui.model import GameModel, threats
from client_tui.screens.connect import ConnectScreen
from client_tui.screens.dialogs import CodeDialog, ConfirmDialog, GameOptions, NoticeDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.help import HelpScreen
from client_tui.screens.lobby import LobbyScreen
from client_tui.widgets.board import BoardWidget
from client_tui.widgets.game_info import GameInfo
from engine import O, X, format_cell, parse_cell
from server.http.app import RunningServer
from server.protocol import Ack, ChatLine, ClientMessage, GameState, MovePlayed, SeatInfo, Watch

SIZE = (100, 30)


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


def game_of(app: QubicApp) -> GameModel:
    screen = app.screen
    assert isinstance(screen, GameScreen), screen
    return screen.model


async def start_computer_game(app: QubicApp, pilot, colour: str = "x") -> GameModel:  # noqa: ANN001
    await until(pilot, lambda: in_lobby(app), "the lobby")
    assert app.lobby_screen is not None
    app.lobby_screen.computer = GameOptions(level=1, colour=colour)  # type: ignore[arg-type]
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
    await until(pilot, lambda: app.screen.query(BoardWidget) and app.screen.query_one(
        BoardWidget).has_focus, "the board to take the keys")
    return game_of(app)


async def test_offline_play_starts_the_embedded_server(tmp_path: Path) -> None:
    db = tmp_path / "data" / "qubic.db"
    app = client(None, "ann", tmp_path, db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        model = await start_computer_game(app, pilot)
        assert model.against_computer and model.you == "x" and model.my_turn
        assert app.embedded is not None and app.sub_title.endswith("offline")
    assert app.embedded is None  # stopped on exit
    assert db.exists()
    assert app.tokens.token(server_key(db), "ann") is not None  # the same player next time


async def test_moves_by_arrow_keys_a_typed_cell_and_a_click(
    server: RunningServer, tmp_path: Path
) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        model = await start_computer_game(app, pilot)
        board = app.screen.query_one(BoardWidget)
        assert board.has_focus and format_cell(board.cursor, model.board.geometry) == "2b2"
        await pilot.press("right", "up", "right_square_bracket", "enter")  # 2b2 -> 3c3
        await until(pilot, lambda: game_of(app).ply >= 2, "our move and the reply")
        assert game_of(app).board.moves[0] == parse_cell("3c3", model.board.geometry)

        # a mistyped cell is never played: not even as the cell under the cursor
        for wrong in ("9", "5e5", "2b", "2e1"):
            await pilot.press(*wrong, "enter", "escape")
        typed = _free_cell(game_of(app), prefer=0)
        await pilot.press(*format_cell(typed, model.board.geometry), "enter")
        await until(pilot, lambda: game_of(app).ply >= 4, "the typed move and the reply")
        assert game_of(app).board.moves[2] == typed

        clicked = _free_cell(game_of(app), prefer=63)
        x, y = board.cell_offset(clicked)
        assert await pilot.click(BoardWidget, offset=(x, y))
        await until(pilot, lambda: game_of(app).ply >= 6, "the clicked move and the reply")
        assert game_of(app).board.moves[4] == clicked


async def test_a_game_against_the_computer_to_its_end(
    server: RunningServer, tmp_path: Path
) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await start_computer_game(app, pilot)
        await pilot.press("t")  # show threats: the board marks them
        for _ in range(40):
            model = game_of(app)
            if model.over:
                break
            await until(pilot, lambda: game_of(app).my_turn or game_of(app).over, "our turn")
            model = game_of(app)
            if model.over:
                break
            ply = model.ply
            cell = _good_move(model)
            await pilot.press(*format_cell(cell, model.board.geometry), "enter")
            await until(pilot, lambda p=ply: game_of(app).ply > p, "our move to land")
        model = game_of(app)
        await until(pilot, lambda: game_of(app).over, "the end")
        model = game_of(app)
        assert model.end is not None and model.end.reason in ("line", "full", "dead")
        status = app.screen.query_one(GameInfo).render().plain
        assert model.end.result in status
        # finished games can be stepped through
        await pilot.press("comma", "comma")
        assert model.shown_ply == model.ply - 2 and model.reviewing
        await pilot.press("full_stop", "full_stop")
        assert not model.reviewing
        await pilot.press("home")
        assert model.shown_ply == 0


async def test_resign_and_rematch(server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await start_computer_game(app, pilot, colour="o")
        await until(pilot, lambda: game_of(app).my_turn, "the computer's first move")
        model = game_of(app)
        # one move of ours first: a resignation before both sides have moved is an abort
        await pilot.press(*format_cell(model.board.legal_moves[0], model.board.geometry), "enter")
        await until(pilot, lambda: game_of(app).ply == 3, "the computer's second move")
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await until(pilot, lambda: game_of(app).over, "the end")
        end = game_of(app).end
        assert end is not None and end.reason == "resign" and end.result == "1-0"
        assert "You lose 1-0 · resignation" in app.screen.query_one(GameInfo).render().plain
        hint = app.screen.query_one(BoardWidget).render().plain.splitlines()[-1]
        assert "the game is over" in hint and "⏎" not in hint  # issue 38 item 5
        first = game_of(app)
        await pilot.press("m")  # a rematch: the computer always agrees; colours swap
        await until(pilot, lambda: game_of(app).id != first.id, "the rematch")
        assert game_of(app).you == "x" and game_of(app).against_computer
        await pilot.press("escape")  # leaving a game on asks first
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await until(pilot, lambda: in_lobby(app), "back in the lobby")


async def test_two_players_a_private_room_chat_and_a_dropped_connection(
    server: RunningServer, tmp_path: Path
) -> None:
    ann, bob = client(server, "ann", tmp_path), client(server, "bob", tmp_path)
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await until(pb, lambda: in_lobby(bob), "bob's lobby")
        ann.lobby_screen.options["private"] = GameOptions(colour="x")  # type: ignore[union-attr]
        await pa.press("n")
        await until(pa, lambda: ann.screen.query("#ok"), "the options dialog")
        await pa.click("#ok")
        await until(pa, lambda: isinstance(ann.screen, NoticeDialog), "the room's code")
        code = ann.session.private_code
        assert code is not None
        await pa.press("enter")
        await pb.press("j")
        assert isinstance(bob.screen, CodeDialog)
        await pb.press(*code, "enter")
        await until(pa, lambda: isinstance(ann.screen, GameScreen), "ann's game")
        await until(pb, lambda: isinstance(bob.screen, GameScreen), "bob's game")
        assert game_of(ann).you == "x" and game_of(bob).you == "o"

        for pilot, app, cell in ((pa, ann, "1a1"), (pb, bob, "2b2"), (pa, ann, "1b1")):
            ply = game_of(app).ply
            await pilot.press(*cell, "enter")
            await until(pilot, lambda a=app, p=ply: game_of(a).ply > p, f"{cell} to land")
        await until(pb, lambda: game_of(bob).ply == 3, "bob to see ann's move")
        assert game_of(bob).move_texts() == ["1a1", "2b2", "1b1"]

        # chat shows markup literally
        await pa.press("slash", *"[b]hi[/b]", "enter")
        await until(pb, lambda: game_of(bob).chat, "the chat line")
        log = bob.screen.query_one(RichLog)
        await until(pb, lambda: log.lines, "the chat log")
        assert "ann: [b]hi[/b]" in "".join(seg.text for seg in log.lines[-1])

        # ann's link drops; bob moves meanwhile; ann comes back and catches up
        assert ann.link is not None
        ann.link.drop()
        await until(pa, lambda: "reconnect" in ann.sub_title or "lost" in ann.sub_title,
                    "ann to notice")
        await until(pb, lambda: not game_of(bob).seat("x").online, "bob to see ann gone")
        await pb.press(*"1c1", "enter")
        await until(pb, lambda: game_of(bob).ply == 4, "bob's move")
        await until(pa, lambda: ann.link is not None and ann.link.connected, "the reconnect")
        await until(pa, lambda: game_of(ann).ply == 4, "ann to catch up")
        assert ann.sub_title.endswith(f"online at {server.ws_url}")
        await until(pb, lambda: game_of(bob).seat("x").online, "bob to see ann back")
        await pa.press(*"1d1", "enter")
        await until(pb, lambda: game_of(bob).ply == 5, "ann's move after the reconnect")


async def test_an_unreachable_server_and_a_taken_name(
    server: RunningServer, tmp_path: Path
) -> None:
    nowhere = QubicApp("ws://127.0.0.1:9/ws", "ann", tokens=client(None, "x", tmp_path).tokens)
    async with nowhere.run_test(size=SIZE) as pilot:
        status = nowhere.connect_screen.query_one("#connect-status", Static)
        await until(pilot, lambda: "cannot reach" in str(status.render()).lower(), "the failure")
        assert "refused" in str(status.render())
        assert isinstance(nowhere.screen, ConnectScreen)

    first = client(server, "cat", tmp_path)
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(first), "cat's lobby")
    other = client(server, "CAT", tmp_path / "elsewhere")  # another computer, no token
    async with other.run_test(size=SIZE) as pilot:
        status = other.connect_screen.query_one("#connect-status", Static)
        await until(pilot, lambda: "taken" in str(status.render()), "the refusal")
    again = client(server, "cat", tmp_path)  # the same token file: the same player
    async with again.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(again), "cat's lobby again")
        assert again.session.name == "cat"


async def test_the_lobby_keeps_move_counts_current(
    server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LobbyScreen, "REFRESH_SECONDS", 0.2)
    ann, bob, cat = (client(server, name, tmp_path) for name in ("ann", "bob", "cat"))
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb, \
            cat.run_test(size=SIZE) as pc:
        for pilot, app in ((pa, ann), (pb, bob), (pc, cat)):
            await until(pilot, lambda a=app: in_lobby(a), "the lobby")
        ann.lobby_screen.options["seek"] = GameOptions(colour="x")  # type: ignore[union-attr]
        await pa.press("s")
        await until(pa, lambda: ann.screen.query("#ok"), "the seek dialog")
        await pa.click("#ok")
        await until(pb, lambda: bob.lobby.seeks, "ann's seek")
        await pb.press("enter")  # the seeks table has the focus: accept
        await until(pa, lambda: isinstance(ann.screen, GameScreen), "ann's game")
        await until(pc, lambda: cat.lobby.games, "the game listed for cat")
        await pa.press(*"1a1", "enter")
        await until(pc, lambda: any(g.ply >= 1 for g in cat.lobby.games.values()),
                    "the move count to follow the game")


async def test_help_screen(server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(app), "the lobby")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, LobbyScreen)


def _free_cell(model: GameModel, prefer: int) -> int:
    empty = [c for c in range(model.board.geometry.size) if model.board.piece_at(c) is None]
    return min(empty, key=lambda c: abs(c - prefer))


def _good_move(model: GameModel) -> int:
    """Win if we can, else block, else the first free cell of the main diagonal or any."""
    me = X if model.you == "x" else O
    board = model.board
    for side in (me, me ^ 1):
        found = threats(board, side)
        if found:
            return min(found)
    for cell in (0, 21, 42, 63, 3, 22, 41, 60, *range(64)):
        if board.piece_at(cell) is None:
            return cell
    raise AssertionError("no free cell")



async def test_the_smaller_boards(server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for variant, cell in (("3x3x3", "3c1"), ("4x4", "b3")):
            await until(pilot, lambda: in_lobby(app), "the lobby")
            assert app.lobby_screen is not None
            app.lobby_screen.computer = GameOptions(level=1, colour="x", variant=variant)
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
            await until(pilot, lambda: app.screen.query_one(BoardWidget).has_focus, "focus")
            model = game_of(app)
            assert model.variant == variant
            await pilot.press(*cell, "enter")
            await until(pilot, lambda: game_of(app).ply >= 2, "the move and the reply")
            assert model.move_texts()[0] == cell
            await pilot.press("r", "y")
            await until(pilot, lambda: game_of(app).over, "the resignation")
            await pilot.press("escape")


async def test_a_gap_that_catch_ups_cannot_close_loads_the_full_game(
    server: RunningServer, tmp_path: Path
) -> None:
    """The versioning rule with a bound, as the app sends it: one catch-up at a time, and
    after two whose ack leaves the gap open the full game; never a frame per event."""
    ann = client(server, "ann", tmp_path)
    async with ann.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: in_lobby(ann), "the lobby")
        assert ann.link is not None
        sent: list[ClientMessage] = []  # the `watch` requests the app sends
        ann.link.send = lambda request: (  # type: ignore[method-assign]
            isinstance(request, Watch) and sent.append(request)) or True
        seats = [SeatInfo(name="ann", rating=1500), SeatInfo(name="bob", rating=1500)]
        ann._received(GameState(id="g1", variant="4x4x4", clock=None, rated=False, seats=seats,
                                moves=[0], clocks=None, status="playing", version=1, you="o"))
        await pilot.pause()

        def moved(ply: int, version: int) -> MovePlayed:
            return MovePlayed(game="g1", ply=ply, cell=ply, notation="", side="xo"[(ply - 1) % 2],
                              clocks=None, version=version)

        for version in range(3, 13):  # ten events after a gap: one request
            ann._received(moved(version, version))
        ann._received(ChatLine(game="g1", name="bob", side="x", text="hi", line=1))
        assert [(type(r), getattr(r, "since", None)) for r in sent] == [(Watch, 1)]
        ann._received(Ack(ref=sent[0].id))  # its catch-up brought nothing
        assert [getattr(r, "since", "-") for r in sent] == [1, 1]
        ann._received(Ack(ref=sent[1].id))
        assert [getattr(r, "since", "-") for r in sent] == [1, 1, None]  # the full game
        ann._received(Ack(ref=sent[1].id))
        assert len(sent) == 3
        assert [line.text for line in ann.games["g1"].chat] == ["hi"]
