"""Accounts in the terminal client (issue 27, item 4), driven by Pilot against a real server:
protect this name (the recovery codes shown once), log in on another computer from the connect
screen, my devices (log the selected one out: that computer is back on the connect screen,
told why), log out everywhere else, and a wrong password said in words."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Input, Static
from tui_helpers import client, in_lobby, running_server, unconnected, until

from client_tui.app import QubicApp
from client_tui.screens.account import AccountScreen
from client_tui.tokens import TokenStore
from server.http.app import RunningServer
from server.protocol import PasswordSet

SIZE = (100, 40)
PASSWORD = "correct horse battery"


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


def another_computer(server: RunningServer, tmp_path: Path, which: str) -> QubicApp:
    """A client with a token file of its own, on the connect screen."""
    return QubicApp(server.ws_url, "ann", tokens=TokenStore(tmp_path / f"tokens-{which}.json"),
                    autoconnect=False)


def text_of(app: QubicApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def rows(app: QubicApp) -> int:
    return app.screen.query_one("#devices", DataTable).row_count


async def log_in(pilot: Pilot, app: QubicApp, password: str) -> None:
    screen = app.connect_screen
    screen.query_one("#password", Input).value = password
    screen.query_one("#name", Input).value = "ann"
    button = screen.query_one("#connect-button", Button)
    # a button ignores a click while its last press still shows (0.2 s): a quick refusal of
    # the previous try would otherwise swallow this one
    await until(pilot, lambda: not button.has_class("-active"), "the button pressable again")
    await pilot.click("#connect-button")


async def set_password(pilot: Pilot, app: QubicApp, password: str) -> None:
    """Type the new password twice and press Enter in the second field."""
    app.screen.query_one("#new", Input).value = password
    again = app.screen.query_one("#again", Input)
    again.value = password
    again.focus()
    await pilot.press("enter")


async def open_account(pilot: Pilot, app: QubicApp) -> None:
    await pilot.press("u")
    await until(pilot, lambda: isinstance(app.screen, AccountScreen) and rows(app) > 0,
                "the account screen with its devices")


async def test_protect_log_in_elsewhere_and_log_it_out(server: RunningServer,
                                                      tmp_path: Path) -> None:
    ann = client(server, "ann", tmp_path)
    laptop = another_computer(server, tmp_path, "laptop")
    async with ann.run_test(size=SIZE) as pa, laptop.run_test(size=SIZE) as pl:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await open_account(pa, ann)
        await set_password(pa, ann, "short")
        assert "at least 8" in text_of(ann, "#account-status")
        await set_password(pa, ann, PASSWORD)
        await until(pa, lambda: "recovery codes" in text_of(ann, "#recovery-codes"), "codes")
        assert text_of(ann, "#recovery-codes").count("-") == 30  # ten codes of four groups
        assert "protected" in text_of(ann, "#account-status")

        await log_in(pl, laptop, "not the password")
        await until(pl, lambda: "Wrong name or password" in text_of(laptop, "#connect-status"),
                    "the wrong password said")
        assert laptop.connect_screen.query_one("#password", Input).value == ""
        await log_in(pl, laptop, PASSWORD)
        await until(pl, lambda: in_lobby(laptop), "the laptop's lobby")
        assert laptop.session.name == "ann"
        assert laptop.tokens.token(server.ws_url, "ann") not in (None, ann.tokens.token(
            server.ws_url, "ann"))

        await pa.press("ctrl+r")
        await until(pa, lambda: rows(ann) == 2, "two devices")
        table = ann.screen.query_one("#devices", DataTable)
        assert str(table.get_row_at(0)[0]) == "this"
        table.focus()
        await pa.press("down", "r")
        await until(pa, lambda: rows(ann) == 1, "the laptop logged out")
        await until(pl, lambda: laptop.screen is laptop.connect_screen
                    and "logged out" in text_of(laptop, "#connect-status"),
                    "the laptop back on the connect screen, told why")
        # issue 38 item 15: said as it is, never "Connection lost… Reconnecting…"
        assert text_of(laptop, "#connect-status").startswith("Logged out on this device")
        told = [str(note.message) for note in laptop._notifications]
        assert not [note for note in told if "Reconnect" in note or "lost" in note], told
        assert "reconnect" not in laptop.sub_title
        assert laptop.tokens.token(server.ws_url, "ann") is None  # the dead token only


async def test_log_out_everywhere_else(server: RunningServer, tmp_path: Path) -> None:
    ann = client(server, "ann", tmp_path)
    laptop = another_computer(server, tmp_path, "laptop")
    async with ann.run_test(size=SIZE) as pa, laptop.run_test(size=SIZE) as pl:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await open_account(pa, ann)
        await set_password(pa, ann, PASSWORD)
        await until(pa, lambda: "protected" in text_of(ann, "#account-status"), "protected")
        await log_in(pl, laptop, PASSWORD)
        await until(pl, lambda: in_lobby(laptop), "the laptop's lobby")
        await pa.press("ctrl+r")
        await until(pa, lambda: rows(ann) == 2, "two devices")
        await pa.click("#logout-others")
        await until(pa, lambda: rows(ann) == 1, "one device left")
        assert "1 device logged out" in text_of(ann, "#account-status")
        await until(pl, lambda: laptop.screen is laptop.connect_screen, "the laptop logged out")
        assert in_lobby(ann) is False and isinstance(ann.screen, AccountScreen)
        await pa.press("escape")
        await until(pa, lambda: in_lobby(ann), "back in the lobby, still ann")


CODES = [f"{a}{a}{a}{a}-bcde-fghj-kmnp" for a in "abcdefghjk"]


async def test_recovery_codes_one_a_line_each_whole(tmp_path: Path) -> None:
    """Issue 38 item 9: the codes are on lines of their own (no visible ``␊``), none broken,
    also on a narrow terminal."""
    app = unconnected(tmp_path)
    async with app.run_test(size=(50, 60)) as pilot:
        app.push_screen(AccountScreen("ann"))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AccountScreen)
        screen.received(PasswordSet(recovery_codes=CODES))
        codes = screen.query_one("#recovery-codes", Static)
        codes.scroll_visible(animate=False)
        await pilot.pause()
        strips = screen._compositor.render_strips()
        shown = ["".join(segment.text for segment in strip) for strip in strips]
        assert not [line for line in shown if "␊" in line]
        for number, code in enumerate(CODES, 1):
            assert [line for line in shown if f"{number:2}. {code}" in line], (code, shown)
