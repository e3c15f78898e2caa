"""Recovery in the terminal client (issue 27, item 3), by Pilot against a real server: a player
who lost the password types a recovery code and a new password from the connect screen
(*Lost your password?*), is logged in, and every other device is logged out; a wrong code,
or one used already, is said in words and changes nothing; the dialog checks the new
password before asking the server. Screenshots of the connect screen and the dialog at 80x24
and 120x40."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from test_account import PASSWORD, another_computer, open_account, set_password, text_of
from textual.pilot import Pilot
from textual.widgets import Input
from tui_helpers import client, in_lobby, running_server, unconnected, until

from client_tui.app import QubicApp
from client_tui.screens.recover import RecoverDialog
from server.http.app import RunningServer

SIZE = (100, 40)
CODE = re.compile(r"\b[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}\b")
NEW_PASSWORD = "a brand new passphrase"


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    async with running_server(tmp_path) as running:
        yield running


async def recover(pilot: Pilot, app: QubicApp, code: str, password: str,
                  again: str | None = None) -> None:
    """From the connect screen: *Lost your password?*, then the code and the new password."""
    app.connect_screen.query_one("#name", Input).value = "ann"
    await pilot.click("#recover-button")
    await until(pilot, lambda: isinstance(app.screen, RecoverDialog), "the recovery dialog")
    app.screen.query_one("#recovery-code", Input).value = code
    app.screen.query_one("#recover-new", Input).value = password
    field = app.screen.query_one("#recover-again", Input)
    field.value = password if again is None else again
    field.focus()
    await pilot.press("enter")


async def test_a_lost_password_is_recovered_from_the_connect_screen(
    server: RunningServer, tmp_path: Path
) -> None:
    ann = client(server, "ann", tmp_path)
    laptop = another_computer(server, tmp_path, "laptop")
    async with ann.run_test(size=SIZE) as pa, laptop.run_test(size=SIZE) as pl:
        await until(pa, lambda: in_lobby(ann), "ann's lobby")
        await open_account(pa, ann)
        await set_password(pa, ann, PASSWORD)
        await until(pa, lambda: "recovery codes" in text_of(ann, "#recovery-codes"), "codes")
        codes = CODE.findall(text_of(ann, "#recovery-codes"))
        assert len(codes) == 10

        # the dialog checks what it can before asking the server
        await recover(pl, laptop, codes[0], NEW_PASSWORD, again="something else")
        assert "differ" in text_of(laptop, "#recover-status")
        await pl.press("escape")
        await until(pl, lambda: laptop.screen is laptop.connect_screen, "the dialog closed")
        # a code that is not one of ann's: refused in words, nothing changes
        await recover(pl, laptop, "aaaa-bbbb-cccc-dddd", NEW_PASSWORD)
        await until(pl, lambda: "do not match" in text_of(laptop, "#connect-status"),
                    "the wrong code said")
        assert ann.link is not None and ann.link.connected  # ann is not disturbed

        await recover(pl, laptop, codes[0].upper(), NEW_PASSWORD)  # case does not matter
        await until(pl, lambda: in_lobby(laptop), "the laptop's lobby")
        assert laptop.session.name == "ann"
        assert laptop.tokens.token(server.ws_url, "ann") is not None
        assert any("Recovered" in n.message for n in laptop._notifications)
        # every other device is logged out, and told why
        await until(pa, lambda: ann.screen is ann.connect_screen
                    and "logged out" in text_of(ann, "#connect-status"),
                    "ann's first computer logged out")

        # the code is used up; the new password logs in
        await recover(pa, ann, codes[0], "yet another passphrase")
        await until(pa, lambda: "do not match" in text_of(ann, "#connect-status"),
                    "the used code refused")
        ann.connect_screen.query_one("#password", Input).value = NEW_PASSWORD
        await pa.click("#connect-button")
        await until(pa, lambda: in_lobby(ann), "logged in with the new password")


SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


@sizes
def test_connect_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    """The connect screen, with its *Lost your password?* beside *Connect*."""
    assert snap_compare(unconnected(tmp_path), terminal_size=size)


@sizes
def test_recover_dialog(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    """The recovery dialog over the connect screen, after a new password typed twice
    differently."""
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await pilot.click("#recover-button")
        while not isinstance(app.screen, RecoverDialog):
            await pilot.pause()
        app.screen.query_one("#recovery-code", Input).value = "k7qm-x2ra-9vwe-tbn4"
        app.screen.query_one("#recover-new", Input).value = "a new passphrase"
        field = app.screen.query_one("#recover-again", Input)
        field.value = "another one"
        field.focus()
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)
