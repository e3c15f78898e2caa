"""Issue 38 items 11 and 12, read off the screen: another server or name from inside the app
(the command palette's "Connect to a server…" and "Rename…", ``w`` in the lobby; a connection
that fails stays on the form saying why); the forms' labels whole at 80, 100 and 70 columns;
the Account screen's first field focused; input fields seen at 256 colours as in true colour."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from rich.color import ColorSystem
from textual.command import CommandPalette
from textual.widgets import Input, Label, Static
from tui_helpers import (
    background_at,
    client,
    in_lobby,
    running_server,
    screen_rows,
    screen_text,
    unconnected,
    until,
)

from client_tui.app import QubicApp
from client_tui.screens.account import AccountScreen
from client_tui.screens.connect import ConnectScreen
from client_tui.tokens import TokenStore
from server.http.app import RunningServer

SIZES = [(80, 24), (100, 30), (70, 20)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
systems = pytest.mark.parametrize("system", [ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT],
                                  ids=["truecolor", "256"])


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


def status(app: QubicApp) -> str:
    return str(app.connect_screen.query_one("#connect-status", Static).render())


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> int:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def assert_fields_seen(app: QubicApp, system: ColorSystem) -> None:
    """Each input field on screen has a background a person tells from what is around it
    (the row above it, its label's, in the same form), as ``system`` draws it."""
    fields = [field for field in app.screen.query(Input) if field.region.width]
    assert fields
    for field in fields:
        x, y = field.region.x + field.region.width - 1, field.region.y
        inside = background_at(app, x, y, system)
        around = background_at(app, x, y - 1, system)
        assert contrast(inside, around) >= 30, (field.id, inside, around, system)


def luminance(colour: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        v = value / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


async def assert_fields_readable(pilot, app: QubicApp, system: ColorSystem) -> None:  # noqa: ANN001
    """What a field shows (its text, or its placeholder) keeps 4.5:1 on the field's ground,
    with the focus elsewhere and in it."""
    for field in [f for f in app.screen.query(Input) if f.region.width]:
        for focused in (False, True):
            if focused:
                field.focus()
            else:
                app.screen.set_focus(None)
            await pilot.pause()
            x = field.region.x + 1  # the cursor is at 0 before a placeholder
            style = screen_rows(app)[field.region.y][x][1]
            fg, bg = style.color, style.bgcolor
            if system is not ColorSystem.TRUECOLOR:
                fg, bg = fg.downgrade(system), bg.downgrade(system)
            ratio = contrast_ratio(tuple(fg.get_truecolor()), tuple(bg.get_truecolor()))
            assert ratio >= 4.5, (field.id, focused, system, fg, bg, ratio)


@sizes
@systems
async def test_the_connect_form_is_whole_and_its_fields_seen(
        tmp_path: Path, size: tuple[int, int], system: ColorSystem) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        for label in app.screen.query(Label):
            words = str(label.render())
            assert words in shown, f"{words!r} cut at {size}:\n{shown}"
        assert "Connect" in shown and "Lost your password?" in shown
        assert_fields_seen(app, system)
        assert "esc Back" not in shown  # no session to go back to
        await assert_fields_readable(pilot, app, system)


@sizes
@systems
async def test_the_account_screen_takes_the_first_key_and_shows_its_fields(
        tmp_path: Path, size: tuple[int, int], system: ColorSystem) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=size) as pilot:
        app.push_screen(AccountScreen("ann"))
        await pilot.pause()
        await pilot.press(*"secret")
        assert app.screen.query_one("#current", Input).value == "secret"
        shown = screen_text(app)
        for label in app.screen.query(Label):
            assert str(label.render()) in shown, (str(label.render()), size)
        assert_fields_seen(app, system)
        await assert_fields_readable(pilot, app, system)


async def palette(pilot, app: QubicApp, command: str) -> None:  # noqa: ANN001
    """Run ``command`` from the command palette, as typed there."""
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press(*command)
    await pilot.pause(0.5)
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette closed")


async def test_another_server_and_another_name_from_inside(
        server: RunningServer, tmp_path: Path) -> None:
    app = client(server, "ann", tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: in_lobby(app), "ann's lobby")
        first_link = app.link

        # w in the lobby: the form, filled with this session's server and name; Esc goes back
        await pilot.press("w")
        await until(pilot, lambda: app.screen is app.connect_screen, "the connect form")
        await pilot.pause()
        assert app.focused is app.connect_screen.query_one("#url", Input)
        assert app.connect_screen.query_one("#url", Input).value == server.ws_url
        assert app.connect_screen.query_one("#name", Input).value == "ann"
        assert "You play as ann, online at" in status(app)
        assert "esc Back" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: in_lobby(app), "back in the lobby")
        assert app.link is first_link and app.link.connected  # the same session went on

        # a server that does not answer: the form stays, says why, as typed
        await pilot.press("w")
        await until(pilot, lambda: app.screen is app.connect_screen, "the connect form")
        app.connect_screen.query_one("#url", Input).value = "ws://127.0.0.1:9/ws"
        await pilot.click("#connect-button")
        await until(pilot, lambda: "cannot reach" in status(app).lower(), "the failure said")
        await pilot.pause(0.3)
        assert app.screen is app.connect_screen
        assert app.connect_screen.query_one("#url", Input).value == "ws://127.0.0.1:9/ws"
        assert app.connect_screen.query_one("#name", Input).value == "ann"
        assert "esc Back" not in screen_text(app)  # that session is over

        # back to the server, then Rename… in the palette: another name, another player
        app.connect_screen.query_one("#url", Input).value = server.ws_url
        await pilot.pause(0.3)  # the button's press effect is over
        await pilot.click("#connect-button")
        await until(pilot, lambda: in_lobby(app), "the lobby again")
        await palette(pilot, app, "Rename")
        await until(pilot, lambda: app.screen is app.connect_screen, "the form, for a name")
        await pilot.pause()
        name = app.connect_screen.query_one("#name", Input)
        assert app.focused is name
        name.value = ""
        await pilot.press(*"bea", "enter")
        await until(pilot, lambda: in_lobby(app) and app.session.name == "bea", "bea's lobby")
        assert "bea" in app.sub_title and "online at" in app.sub_title
        await until(pilot, lambda: [p.name for p in app.lobby.players] == ["bea"],
                    "ann's session closed, bea's open")


async def test_the_palette_lists_connect_and_rename(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.show_lobby()
        await pilot.pause()
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert titles.count("Connect to a server…") == 1 and "Rename…" in titles
        assert isinstance(app.connect_screen, ConnectScreen)


async def test_the_form_waits_while_connecting_and_a_failure_stays_on_it(
        tmp_path: Path) -> None:
    """The form does not flash editable and then vanish: while the first connection is under
    way its fields are greyed (what is typed is not lost), and it says how to change server
    or name later; a failure gives it back, saying why, the focus on the server."""
    release = asyncio.Event()

    async def start_local(db_path: Path) -> Any:  # noqa: ANN401
        await release.wait()
        raise RuntimeError("no room for the database")

    app = QubicApp(None, "ann", tokens=TokenStore(tmp_path / "tokens.json"),
                   start_local=start_local)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert all(field.disabled for field in app.screen.query(Input))
        assert "w in the lobby connects to another server" in status(app)
        await pilot.press(*"bob")
        assert app.connect_screen.query_one("#name", Input).value == "ann"
        release.set()
        await until(pilot, lambda: "no room for the database" in status(app), "the failure")
        await pilot.pause()
        assert not any(field.disabled for field in app.screen.query(Input))
        assert app.focused is app.connect_screen.query_one("#url", Input)
        assert app.screen is app.connect_screen
