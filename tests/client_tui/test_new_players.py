"""What new players tripped on in the terminal client (issue 29): each item held on a client
fed the server's messages, or on a real server where the server takes part."""

from __future__ import annotations

import colorsys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from rich.color import Color
from scenes import challenge, ended_game, game, lobby, threats_game
from textual.widgets import Button
from tui_helpers import client, in_lobby, running_server, unconnected, until

import client_tui.app
from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.model import GameModel, describe_end
from client_tui.screens.dialogs import ConfirmDialog, NoticeDialog, OptionsDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.help import HELP
from client_tui.settings import GameOptions, Settings
from client_tui.tokens import TokenStore
from client_tui.widgets.board import BoardWidget
from client_tui.widgets.game_info import GameInfo, note_line
from engine import parse_cell, variant
from server.http.app import RunningServer
from server.protocol import ClockSpec, Error, MovePlayed, Offer, Rematched, Watch

SIZE = (80, 24)


class Observed(QubicApp):
    """The client with its bell counted (a headless terminal has no bell to hear)."""

    CSS_PATH = Path(client_tui.app.__file__).with_name("app.tcss")
    rung = 0

    def bell(self) -> None:
        self.rung += 1


def observed(tmp_path: Path, bell: bool = True) -> Observed:
    app = Observed(None, "ann", tokens=TokenStore(tmp_path / "tokens.json"), autoconnect=False,
                   clock=lambda: 100.0)
    app.settings.bell = bell
    return app


async def open_game(app: QubicApp, pilot, state) -> GameScreen:  # noqa: ANN001
    app.show_lobby()
    app.post_message(LinkMessage(Received(state)))
    await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
    await pilot.pause()
    return app.screen  # type: ignore[return-value]


def cell(name: str) -> int:
    return parse_cell(name, variant("4x4x4"))


# -- the board ----------------------------------------------------------------------------


async def test_the_cursor_and_the_last_move_differ_in_colour_and_in_shape(
    tmp_path: Path,
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, game())
        board = screen.query_one(BoardWidget)
        assert board.has_focus
        cursor, last, guide = (board._ground(f"board--{name}").bgcolor
                               for name in ("cursor", "last", "guide"))
        assert cursor is not None and last is not None and guide is not None
        assert cursor != guide  # the cursor stands out of the lines drawn through it

        def saturation(colour: Color) -> float:
            return colorsys.rgb_to_hls(*colour.get_truecolor().normalized)[2]

        assert saturation(cursor) < 0.1 < saturation(last)  # grey against amber
        drawn = board.render().plain
        assert "(X)" in drawn  # the last move, 1c1, in parentheses; the cursor in brackets
        board.cursor = cell("4a4")  # an empty cell
        assert "[4a4] not your move now · + its lines (g)" in board.render().plain  # named


async def test_enter_on_a_taken_cell_says_why_on_the_line_under_the_board(
    tmp_path: Path,
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, threats_game())  # ann (X) to move
        board = screen.query_one(BoardWidget)
        board.cursor = cell("1a1")
        await pilot.press("enter")
        await pilot.pause()
        hint = board.render().plain.splitlines()[-1]
        assert "Not played: 1a1 is taken · move to an empty cell" in hint
        await pilot.press("right")
        assert "Not played" not in board.render().plain


async def test_the_line_under_the_board_offers_enter_only_on_this_players_move(
    tmp_path: Path,
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, game())  # bob (O) to move
        board = screen.query_one(BoardWidget)
        board.cursor = cell("4a4")
        hint = board.render().plain.splitlines()[-1]
        assert "not your move now" in hint and "⏎" not in hint


async def test_a_spectator_is_not_offered_enter(tmp_path: Path) -> None:
    """Watching a game with X to move: the line under the board offers no move to play."""
    state = threats_game()  # X (ann) to move
    state.you = None
    app = unconnected(tmp_path, name="cat")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, state)
        board = screen.query_one(BoardWidget)
        board.cursor = cell("4a4")  # an empty cell
        hint = board.render().plain.splitlines()[-1]
        assert "⏎" not in hint and "plays it" not in hint, hint
        assert "[4a4] watching" in hint and "not your move" not in hint, hint  # the right words


async def test_a_player_looking_back_is_not_offered_enter(tmp_path: Path) -> None:
    """On this player's move, stepped back two moves (X to move there too): the position on
    screen is not the one Enter would play in, so the line offers no move; back at the live
    position it does again."""
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, threats_game())  # ann (X) to move
        board = screen.query_one(BoardWidget)
        board.cursor = cell("4a4")
        assert "⏎ plays it" in board.render().plain.splitlines()[-1]
        await pilot.press("comma", "comma")
        await pilot.pause()
        assert screen.model.reviewing and board.view.board.ply == 4
        hint = board.render().plain.splitlines()[-1]
        assert "⏎" not in hint and "plays it" not in hint, hint
        assert "looking back (end: live)" in hint, hint
        await pilot.press("end")
        await pilot.pause()
        assert "⏎ plays it" in board.render().plain.splitlines()[-1]


# -- beside the board ---------------------------------------------------------------------


def test_the_winning_line_is_named_in_the_result() -> None:
    model = GameModel.from_state(ended_game(), now=0.0)
    assert describe_end(model) == "You win 1-0 · a line is complete: 1a1-1d1 · rating +9"


def test_a_finished_game_followed_by_a_rematch_says_so_in_the_past() -> None:
    model = GameModel.from_state(ended_game(), now=0.0)
    model.apply(Offer(game="g3", kind="rematch", by="x", version=10), 0.0)
    model.apply(Offer(game="g3", kind="rematch", by="o", version=11), 0.0)
    assert note_line(model, 0.0).plain == "Rematch agreed: starting it…"  # type: ignore[union-attr]
    model.apply(Rematched(game="g3", rematch="g4", version=12), 0.0)
    assert model.rematch_game == "g4"
    assert note_line(model, 0.0).plain == "A rematch followed this game"  # type: ignore[union-attr]


async def test_no_blank_line_stays_where_a_threat_was(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, threats_game())
        info = screen.query_one(GameInfo)
        assert info.size.height == 4  # the seats, the status and "You can win at 1d1"
        for version, (name, side) in enumerate([("2d2", "x"), ("1d1", "o")], start=9):
            app.post_message(LinkMessage(Received(MovePlayed(
                game="g2", ply=version - 2, cell=cell(name), notation=name, side=side,
                clocks=None, version=version))))
            await pilot.pause()
        await pilot.pause()
        assert screen.model.ply == 8 and note_line(screen.model, 100.0, True) is None
        assert info.size.height == 3


async def test_a_spectator_reads_the_whole_result(tmp_path: Path) -> None:
    state = ended_game()
    state.you = None
    app = unconnected(tmp_path, name="cat")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, state)
        shown = " ".join(screen.query_one(GameInfo).render().plain.split())
        assert "X (ann) wins 1-0 · a line is complete: 1a1-1d1 · rating X +9, O -9" in shown


# -- dialogs, refusals, the palette, the help ---------------------------------------------


async def test_the_resign_dialog_answers_the_arrow_keys(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_game(app, pilot, threats_game())
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
        buttons = [button.id for button in app.screen.query(Button)]
        assert buttons == ["no", "yes"]  # the safe answer first, and focused
        assert app.focused is not None and app.focused.id == "no"
        await pilot.press("right")
        assert app.focused.id == "yes"
        await pilot.press("left")
        assert app.focused.id == "no"
        await pilot.press("tab")
        assert app.focused.id == "yes"
        await pilot.press("n")
        assert isinstance(app.screen, GameScreen)


async def test_a_refusal_is_one_sentence(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.show_lobby()
        app.post_message(LinkMessage(Received(Error(
            code="no_such_code", message="no private room has this code"))))
        await pilot.pause()
        [shown] = list(app._notifications)
        assert (shown.title, shown.message) == ("", "No private room has this code.")


def test_a_dialog_opens_with_the_time_control_just_picked() -> None:
    settings = Settings()
    settings.chose("computer", GameOptions(level=5, clock=ClockSpec(initial=60, increment=0)))
    settings.chose("seek", GameOptions(variant="3x3x3", clock=ClockSpec(initial=300,
                                                                        increment=3)))
    challenge_terms = settings.options_for("challenge")
    assert challenge_terms.variant == "3x3x3" and challenge_terms.clock == ClockSpec(
        initial=300, increment=3)
    assert settings.options_for("computer").clock == ClockSpec(initial=60, increment=0)


async def test_the_command_palette_lists_the_games_commands_only(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_game(app, pilot, threats_game())
        titles = [command.title for command in app.get_system_commands(screen)]
        assert "Resign the game" in titles and "Bell: on" in titles and "Quit" in titles
        for framework in ("Copy selected text", "Focus Next", "Focus Previous", "Screenshot",
                          "Keys", "Maximize"):
            assert not [t for t in titles if t.startswith(framework)], titles


def test_the_help_names_every_key_a_new_player_reaches_for() -> None:
    for key in ("`home`", "`end`", "`esc`", "`←` `→`", "grey `+`", "`( )`"):
        assert key in HELP, key


# -- notifications: the bell --------------------------------------------------------------


async def test_the_bell_rings_for_a_move_a_game_found_and_a_challenge(tmp_path: Path) -> None:
    app = observed(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.show_lobby()
        app.post_message(LinkMessage(Received(lobby())))
        app.post_message(LinkMessage(Received(challenge())))
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the challenge")
        assert app.rung == 1
        await pilot.press("n")
        await open_game(app, pilot, game())  # a game this client did not ask for: found
        assert app.rung == 2
        app.post_message(LinkMessage(Received(MovePlayed(
            game="g1", ply=10, cell=cell("4a4"), notation="4a4", side="o", clocks=None,
            version=12))))
        await until(pilot, lambda: app.games["g1"].ply == 10, "bob's move")
        assert app.rung == 3


async def test_the_bell_is_silent_when_turned_off(tmp_path: Path) -> None:
    app = observed(tmp_path, bell=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_game(app, pilot, game())
        app.post_message(LinkMessage(Received(challenge())))
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the challenge")
        assert app.rung == 0


# -- with a real server: a private room closed, a spectator taken to the rematch ----------


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


async def test_x_closes_a_private_room_and_quick_pairing_is_open_again(
    server: RunningServer, tmp_path: Path,
) -> None:
    ann = client(server, "ann", tmp_path)
    async with ann.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: in_lobby(ann), "the lobby")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(ann.screen, OptionsDialog), "the room's terms")
        await pilot.click("#ok")
        await until(pilot, lambda: isinstance(ann.screen, NoticeDialog), "the code")
        await pilot.press("escape")
        assert ann.session.private_code is not None
        assert "(x cancels)" in str(ann.lobby_screen.query_one("#lobby-status").render())  # type: ignore[union-attr]
        await pilot.press("x")
        await until(pilot, lambda: ann.session.private_code is None, "the room closed")
        await pilot.press("p")
        await until(pilot, lambda: isinstance(ann.screen, OptionsDialog), "quick terms")
        await pilot.click("#ok")
        await until(pilot, lambda: ann.session.queued is not None, "ann queued")
        assert not [n for n in ann._notifications if "already" in str(n.message)]


async def test_a_spectator_is_taken_to_the_rematch(server: RunningServer, tmp_path: Path) -> None:
    ann, cat = client(server, "ann", tmp_path), client(server, "cat", tmp_path)
    async with ann.run_test(size=(100, 30)) as pa, cat.run_test(size=(100, 30)) as pc:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await until(pc, lambda: in_lobby(cat), "cat's lobby")
        ann.settings.chose("computer", GameOptions(level=1, colour="o"))
        await pa.press("c")
        await until(pa, lambda: isinstance(ann.screen, GameScreen), "ann's game")
        first = ann.screen.model.id  # type: ignore[attr-defined]
        cat.send(Watch(game=first))
        await until(pc, lambda: isinstance(cat.screen, GameScreen), "cat watching")
        await until(pa, lambda: ann.screen.model.ply >= 1, "the computer's first move")  # type: ignore[attr-defined]
        await pa.press("r")
        await until(pa, lambda: isinstance(ann.screen, ConfirmDialog), "the question")
        await pa.press("y")
        await until(pa, lambda: ann.screen.model.over, "the resignation")  # type: ignore[attr-defined]
        await pa.press("m")  # the computer always agrees
        await until(pa, lambda: ann.screen.model.id != first, "the rematch")  # type: ignore[attr-defined]
        second = ann.screen.model.id  # type: ignore[attr-defined]
        await until(pc, lambda: cat.screen.model.id == second, "cat at the rematch")  # type: ignore[attr-defined]
        assert cat.screen.model.you is None  # type: ignore[attr-defined]


def test_a_system_login_is_not_offered_as_the_players_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `qubic play` on a fresh machine or in a container runs as root, a name the server keeps
    # back: the first screen opened on a refusal before the player had typed anything.
    from server.game.names import ReservedNames

    reserved = ReservedNames()
    for login, offered in (("root", "player"), ("Admin", "player"),
                           ("ada.lovelace", "adalovelace"), ("", "player")):
        monkeypatch.setattr(client_tui.app.getpass, "getuser", lambda login=login: login)
        assert client_tui.app.default_name() == offered
        assert offered not in reserved
    assert all(login in reserved for login in client_tui.app.SYSTEM_LOGINS)


def test_the_help_says_lost_password_once() -> None:
    """Issue 38 item 15: not "Lost the password? *Lost your password?*"."""
    assert HELP.count("Lost") == 1 and "Lost your password?" in HELP
