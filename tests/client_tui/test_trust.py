"""Issue 14, "the client a player trusts": each defect found by playing as a new player, driven
with Pilot on a client fed fixed server messages (no server needed)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from scenes import game, lobby, threats_game
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Footer, Input, RichLog, Select
from tui_helpers import unconnected, until

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Dropped, Received
from client_tui.model import GameModel
from client_tui.screens.connect import ConnectScreen
from client_tui.screens.dialogs import ConfirmDialog, OptionsDialog, normalise_code
from client_tui.screens.game import GameScreen
from client_tui.screens.too_small import TooSmallScreen
from client_tui.settings import GameOptions
from client_tui.tokens import TokenStore
from client_tui.widgets.board import BoardWidget
from client_tui.widgets.game_info import GameInfo
from engine import parse_cell, variant
from server.protocol import (
    ChatLine,
    EngineStatus,
    GameEnd,
    GameState,
    Offer,
    RatingChange,
    Rematched,
    SeatInfo,
    Watch,
)

CUBE = variant("4x4x4")


def feed(app: QubicApp, *messages: object) -> None:
    for message in messages:
        app.post_message(LinkMessage(Received(message)))  # type: ignore[arg-type]


async def open_game(app: QubicApp, pilot: Pilot, state: GameState) -> GameScreen:
    app.show_lobby()
    feed(app, lobby(), state)
    await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, GameScreen)
    return screen


def notes(app: QubicApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def screen_text(app: QubicApp) -> list[str]:
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


def info(app: QubicApp) -> str:
    return app.screen.query_one(GameInfo).render().plain


def board_cell(app: QubicApp, notation: str) -> tuple[str, str, str]:
    """The characters left of, at and right of ``notation``'s piece, and the piece's style."""
    board = app.screen.query_one(BoardWidget)
    x, y = board.cell_offset(parse_cell(notation, CUBE))
    x -= board.styles.gutter.left
    line = board.render().split("\n")[y]
    assert isinstance(line, Text)
    style = line.get_style_at_offset(app.console, x)
    return line.plain[x - 1 : x + 2], str(style), notation


# -- input that never misfires -------------------------------------------------------------


async def test_the_options_dialogs_open_on_their_first_field(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_lobby()
        await pilot.pause()
        for key in ("o", "p", "s", "n"):
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, OptionsDialog), "the dialog")
            assert isinstance(app.screen.focused, Select)
            await pilot.press("enter")  # opens the first field; starts nothing
            await pilot.pause()
            assert isinstance(app.screen, OptionsDialog)
            await pilot.press("escape", "escape")
            await until(pilot, lambda: app.screen is app.lobby_screen, "the lobby again")


async def test_the_cursor_and_the_last_move_differ_by_shape(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())
        around_cursor, cursor_style, _ = board_cell(app, "2b2")
        around_last, last_style, _ = board_cell(app, "1c1")  # the last move, not the cursor
        assert around_cursor == "[X]"  # brackets: visible in any number of colours
        assert around_last == "(X)" and "underline" in last_style  # parentheses, underlined
        assert "underline" not in cursor_style


async def test_enter_in_a_question_answers_no(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())
        for key in ("escape", "r"):  # leave, resign
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game again")


async def test_keys_that_cannot_act_say_why(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())  # nine moves in: too late to abort
        await pilot.press("k")
        await pilot.press("w")
        await pilot.pause()
        assert "Too late to abort: both sides have moved (r resigns)." in notes(app)
        assert "Nothing to claim: your opponent is here." in notes(app)


async def test_draw_against_the_computer_and_a_second_rematch_say_why(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = threats_game()
        state.seats = [SeatInfo(name="ann"), SeatInfo(name="Computer (level 3)", ai=3)]
        await open_game(app, pilot, state)
        await pilot.press("o")
        await pilot.pause()
        assert "The computer never agrees to a draw: play on, or r resigns." in notes(app)
        feed(app, GameEnd(game="g2", version=9, result="0-1", reason="resign", winner="o"),
             Offer(game="g2", kind="rematch", by="x", version=10))
        await until(pilot, lambda: app.screen.model.rematch, "our rematch request")
        await pilot.press("m")
        await pilot.pause()
        assert "Rematch asked: waiting for your opponent to agree." in notes(app)


async def test_a_rematch_already_played_is_not_waited_for(tmp_path: Path) -> None:
    """Issue 38 item 10: once the rematch was played, m in the old game goes to it; it never
    says "Rematch asked: waiting…"."""
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        sent: list[object] = []
        app.send = lambda request, quiet=False: sent.append(request) or True  # type: ignore[method-assign]
        await open_game(app, pilot, threats_game())
        feed(app, GameEnd(game="g2", version=9, result="0-1", reason="resign", winner="o"),
             Offer(game="g2", kind="rematch", by="x", version=10),
             Offer(game="g2", kind="rematch", by="o", version=11),
             Rematched(game="g2", rematch="g3", version=12))
        await until(pilot, lambda: app.screen.model.rematch_game == "g3", "the rematch played")
        await pilot.press("m")
        await pilot.pause()
        assert not [n for n in notes(app) if "waiting" in n], notes(app)
        assert [r.game for r in sent if isinstance(r, Watch)] == ["g3"]
        footer = app.screen.query_one(Footer)
        assert "Rematch game" in "".join(str(key.render()) for key in footer.query("FooterKey"))


async def test_a_resignation_before_any_move_says_the_game_was_called_off(
        tmp_path: Path) -> None:
    """Issue 38 item 15: not "Aborted": what happened, and why."""
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = threats_game()
        state.moves, state.version = [], 1
        await open_game(app, pilot, state)
        feed(app, GameEnd(game="g2", version=2, result="*", reason="abort"))
        await until(pilot, lambda: app.screen.model.over, "the end")
        await pilot.pause()
        assert "Called off: no move was played · no result" in info(app)
        assert "Aborted" not in info(app)


async def test_esc_after_a_chat_line_stays_in_the_game(tmp_path: Path) -> None:
    """Issue 38 item 15: Esc after Enter sent a chat line does not ask to leave, and the cell
    typed next reaches the board."""
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.send = lambda request, quiet=False: True  # type: ignore[method-assign]
        screen = await open_game(app, pilot, game())
        await pilot.press("slash", *"hi", "enter")
        await until(pilot, lambda: screen.query_one(BoardWidget).has_focus, "the board again")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen  # no "Leave this game?"
        await pilot.press("2", "a")
        assert screen.query_one(BoardWidget).typed == "2a"
        await pilot.press("escape", "escape")  # clears the cell; then Esc asks to leave
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")


async def test_connect_while_the_local_server_starts_says_so(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        asked: list[object] = []
        app.connect = lambda url, name, *rest: asked.append((url, name))  # type: ignore[method-assign]
        app.connect_screen.starting = True
        await pilot.click("#connect-button")
        await pilot.pause()
        assert asked == [] and any("Still starting the local server" in n for n in notes(app))
        app.connect_screen.starting = False
        await pilot.pause(0.3)  # the button's press effect is over
        await pilot.click("#connect-button")
        await until(pilot, lambda: asked, "the connect request")


# -- seeing the game -----------------------------------------------------------------------


async def test_threats_and_the_lines_through_the_cursor_are_shown_at_once(
    tmp_path: Path
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, threats_game())
        assert board_cell(app, "1d1")[0] == " x "  # X completes the first row there
        assert board_cell(app, "2d2")[0] == " o "
        assert "You can win at 1d1" in info(app)
        assert board_cell(app, "2b3")[0] == " + "  # on a line through the cursor (2b2)
        assert board_cell(app, "3a1")[0] == " · "  # on none
        await pilot.press("g", "t")
        assert board_cell(app, "2b3")[0] == " · " and board_cell(app, "1d1")[0] == " · "
        assert "win at" not in info(app)


async def test_the_waiting_player_is_warned_of_the_opponents_threat(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = threats_game()
        state.you = "o"  # X to move: bob (O) sees X about to win
        await open_game(app, pilot, state)
        assert "Your opponent wins next at 1d1" in info(app)


async def test_chat_wraps_to_its_panel_and_marks_spectators(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = game()
        long = "a long line of chat " * 6
        state.chat = [
            ChatLine(game="g1", name="bob", side="o", text=long, line=1),
            ChatLine(game="g1", name="kim", side=None, text="go ann", line=2),
        ]
        await open_game(app, pilot, state)
        log = app.screen.query_one(RichLog)
        await until(pilot, lambda: len(log.lines) > 2, "the chat")
        width = log.scrollable_content_region.width
        assert all(line.cell_length <= width for line in log.lines)
        text = ["".join(s.text for s in line).rstrip() for line in log.lines]
        assert text[0].startswith("O bob: a long line")
        assert text[-1] == "(watching) kim: go ann"


async def test_a_draw_offer_stays_until_answered_and_rated_is_shown(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())
        assert "rated · 5+5" in info(app)
        await pilot.press("o")  # against a person, o offers a draw
        await pilot.pause()
        assert "Draw offered." in notes(app)
        feed(app, Offer(game="g1", kind="draw", by="o", version=12))
        await until(pilot, lambda: "Draw offered: o accepts, n declines" in info(app), "offer")
        await pilot.pause(0.3)
        assert "Draw offered: o accepts, n declines" in info(app)
        assert "? Help" in screen_text(app)[-1]  # the footer with the offer's keys, at 80


async def test_quick_pairing_says_it_is_rated(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_lobby()
        await pilot.pause()
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, OptionsDialog), "the dialog")
        assert "Quick games are rated" in "\n".join(screen_text(app))


# -- stale figures -------------------------------------------------------------------------


async def test_no_rematch_request_once_we_asked_and_the_rematch_keeps_new_ratings(
    tmp_path: Path
) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = threats_game()
        state.rated = True
        await open_game(app, pilot, state)
        feed(app, GameEnd(game="g2", version=9, result="1-0", reason="resign", winner="x",
                          rating_change=RatingChange(x=9, o=-9)))
        await until(pilot, lambda: "ann (1509)" in info(app), "the new rating")
        feed(app, Offer(game="g2", kind="rematch", by="x", version=10),
             Offer(game="g2", kind="rematch", by="o", version=11))  # bob agrees
        await pilot.pause(0.2)
        assert not any("asks for a rematch" in n for n in notes(app))
        assert "Rematch agreed" in info(app)  # not "asked by O, X"
        rematch = threats_game()
        rematch.id, rematch.moves, rematch.you, rematch.version = "g4", [], "o", 1
        rematch.seats = [SeatInfo(name="bob", rating=1603), SeatInfo(name="ann", rating=1509)]
        feed(app, rematch)  # the server seats the rematch at the ratings after the game
        await until(pilot, lambda: app.screen.model.id == "g4", "the rematch")
        assert "ann (1509)" in info(app) and "bob (1603)" in info(app)


async def test_reconnecting_counts_down(tmp_path: Path) -> None:
    now = [100.0]
    app = QubicApp(None, "ann", tokens=TokenStore(tmp_path / "t.json"), autoconnect=False,
                   clock=lambda: now[0])
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(LinkMessage(Dropped("gone", retry_in=7.0)))
        await until(pilot, lambda: "reconnecting in 7s" in app.sub_title, "the drop")
        now[0] += 3
        await until(pilot, lambda: "reconnecting in 4s" in app.sub_title, "the countdown")


# -- the frame -----------------------------------------------------------------------------


async def test_the_footer_keeps_help_at_80_columns(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_lobby()
        app.session.my_seek = "s9"  # waiting: the footer gains "x Cancel"
        feed(app, lobby())
        await pilot.pause()
        footer = screen_text(app)[-1]
        assert "x Cancel" in footer and "? Help" in footer


async def test_the_connect_form_fits_24_rows(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.connect_screen.set_status("Cannot reach ws://example.org:8765/ws: connection "
                                      "refused. Check the address.", error=True)
        await pilot.pause()
        status = app.connect_screen.query_one("#connect-status")
        form = app.connect_screen.query_one("#connect")
        assert form.region.bottom <= 23  # above the footer, nothing scrolled away
        assert status.region.height >= 2 and status.region.bottom < form.region.bottom


async def test_a_terminal_too_small_says_so(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())
        await pilot.resize_terminal(40, 24)
        await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), "the notice")
        await pilot.pause()
        assert any("Terminal too small" in line for line in screen_text(app))
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game again")


# -- features ------------------------------------------------------------------------------


async def test_settings_are_remembered_between_runs(tmp_path: Path) -> None:
    first = unconnected(tmp_path)
    async with first.run_test(size=(80, 24)) as pilot:
        first.show_lobby()
        await pilot.pause()
        await pilot.press("o")
        await until(pilot, lambda: isinstance(first.screen, OptionsDialog), "the dialog")
        first.screen.query_one("#level", Select).value = 6
        first.screen.query_one("#colour", Select).value = "o"
        await pilot.click("#ok")
        await until(pilot, lambda: first.screen is first.lobby_screen, "the lobby")
        await open_game(first, pilot, game())
        await pilot.press("t")  # threats hidden
    again = unconnected(tmp_path)
    async with again.run_test(size=(80, 24)) as pilot:
        again.show_lobby()
        await pilot.pause()
        assert again.lobby_screen is not None
        assert again.lobby_screen.computer == GameOptions(level=6, colour="o")
        assert not again.settings.show_threats


async def test_the_command_palette_runs_the_screens_actions(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_game(app, pilot, game())
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"resign")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the question")


async def test_the_command_palette_shows_the_games_commands_once(tmp_path: Path) -> None:
    """Issue 38 item 7: no Textual "Theme", one "Quit"."""
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        app.show_lobby()
        await pilot.pause()
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        shown = app.screen.query_one(CommandList)
        await until(pilot, lambda: shown.option_count > 3, "the palette's commands")
        titles = [str(shown.get_option_at_index(i).prompt).split("\n")[0]
                  for i in range(shown.option_count)]
        assert titles.count("Quit") == 1, titles
        assert not [t for t in titles if t.startswith("Theme")], titles
        assert "Bell: on" in titles


async def test_odd_names_are_refused_as_the_command_line_does(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        asked: list[object] = []
        app.connect = lambda url, name, *rest: asked.append((url, name))  # type: ignore[method-assign]
        name = app.connect_screen.query_one("#name", Input)
        name.value = ""
        name.focus()
        await pilot.press(*"john.doe", "enter")
        await pilot.pause()
        assert name.value == "john.doe" and asked == []  # nothing silently rewritten
        status = str(app.connect_screen.query_one("#connect-status").render())
        assert "'john.doe' is not a name: use 1-24 letters, digits, _ or -" in status
        assert isinstance(app.screen, ConnectScreen)


def test_private_codes_read_0_as_o() -> None:
    assert normalise_code(" k7qd-m2xa-p0ve-3418 ") == "K7QD-M2XA-POVE-34IB"


# -- gaps found by planting bugs -----------------------------------------------------------


async def test_stepping_back_highlights_the_shown_positions_last_move(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_game(app, pilot, game())
        model: GameModel = screen.model
        await pilot.press("comma")
        assert model.shown_ply == 8
        board = app.screen.query_one(BoardWidget)
        assert board.view.last_move == parse_cell("3b2", CUBE)
        assert "underline" in board_cell(app, "3b2")[1]
        assert board_cell(app, "1c1")[0] == " · "  # not played yet in the shown position
        await pilot.press("end")
        assert "underline" in board_cell(app, "1c1")[1]


async def test_the_engine_being_prepared_shows_with_its_progress(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        state = threats_game()
        state.moves, state.version, state.you = [], 1, "o"
        state.seats = [SeatInfo(name="Computer (level 3)", ai=3), SeatInfo(name="ann")]
        await open_game(app, pilot, state)
        message = "preparing the engine (first start only)…"
        feed(app, EngineStatus(game="g2", state="preparing", progress=0.4, message=message))
        await until(pilot, lambda: f"{message} 40%" in info(app), "the engine's progress")
        feed(app, EngineStatus(game="g2", state="ready", progress=1.0, message="ready"))
        await until(pilot, lambda: "preparing" not in info(app), "the engine ready")
        assert "Waiting for Computer" in info(app)


async def test_the_header_icon_opens_the_command_palette(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_lobby()
        await pilot.pause()
        await pilot.click("HeaderIcon")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")


async def test_the_connect_form_offers_the_last_server(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    app.settings.used_server("ws://example.org:8765/ws")
    async with app.run_test(size=(80, 24)) as pilot:
        url = app.connect_screen.query_one("#url", Input)
        assert "example.org" in url.placeholder
        url.focus()
        await pilot.press("right")
        assert url.value == "ws://example.org:8765/ws"
