"""A moderator schedules a tournament from the terminal client (issue 43): ``n`` on the
tournaments' list opens the web client's form, a field at fault is said in it, Create sends
``tournament_create`` and the new tournament's page opens with the reply; players who are
not moderators have no ``n``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from scenes import NOW
from test_tournaments import feed, online, settle
from test_tournaments_live import protocol_client
from textual.pilot import Pilot
from textual.widgets import Input, Select
from tui_helpers import client, in_lobby, running_server, unconnected, until

from client_tui.app import QubicApp
from client_tui.screens.tournament_form import TournamentForm
from client_tui.screens.tournaments import TournamentScreen, TournamentsScreen
from client_tui.tokens import TokenStore
from server.node import levers
from server.protocol import TournamentCreate, TournamentList

SIZES = [(80, 24), (120, 40)]


async def open_form(app: QubicApp, pilot: Pilot) -> TournamentForm:
    await pilot.press("t")
    await until(pilot, lambda: isinstance(app.screen, TournamentsScreen), "the list")
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, TournamentForm), "the form")
    assert isinstance(app.screen, TournamentForm)
    return app.screen


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_form(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    """The form, a Swiss chosen (its rounds asked for), the name left out: said."""
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        online(app)
        app.session.roles = ["moderator"]
        app.show_lobby()
        await until(pilot, lambda: in_lobby(app), "the lobby")
        feed(app, TournamentList(tournaments=[]))
        form = await open_form(app, pilot)
        form.query_one("#kind", Select).value = "swiss"
        await settle(pilot, lambda: form.query_one("#length", Input).value == "5")
        form.query_one("#levels", Input).value = "2 5"
        await pilot.click("#create")
        # the same picture however long the click took: its 0.2 s press effect over, the
        # pointer off the button (under load the picture caught one or the other)
        await pilot.hover("#form-fault")
        create = form.query_one("#create")
        for _ in range(100):
            await pilot.pause(0.01)
            if not create.has_class("-active"):
                break
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=show)


async def test_the_form_checks_its_fields(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        link = online(app)
        app.show_lobby()
        await until(pilot, lambda: in_lobby(app), "the lobby")
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TournamentsScreen), "the list")
        list_screen = app.screen
        assert isinstance(list_screen, TournamentsScreen)
        assert not list_screen.check_action("create", ())  # not a moderator: no n
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is list_screen
        app.session.roles = ["admin"]
        form = await open_form(app, pilot)
        for field, value, fault in (("name", "Night", "Computers: levels from 1 to 8"),
                                    ("levels", "3", "Minutes: a whole number"),
                                    ("length", "2000", "<= 1440")):
            form.query_one(f"#{field}", Input).value = value
            if field == "name":
                form.query_one("#levels", Input).value = "9"
            if field == "levels":
                form.query_one("#length", Input).value = "0"
            form.query_one("#name", Input).focus()
            await pilot.press("enter")  # Enter in a field creates, as the button does
            await settle(pilot)
            assert app.screen is form and fault in str(form.query_one("#form-fault").render())
        form.query_one("#length", Input).value = "90"
        await pilot.press("enter")
        await settle(pilot, lambda: app.screen is list_screen)
        (sent,) = [m for m in link.sent if isinstance(m, TournamentCreate)]
        assert (sent.name, sent.kind, sent.minutes, sent.rounds, sent.clock, sent.variant,
                sent.rated, sent.computer_levels) == ("Night", "arena", 90, None, "3+2",
                                                      "4x4x4", True, [3])
        assert sent.starts_at == int(NOW) + 5 * 60


async def test_a_moderator_creates_one_on_a_real_server(tmp_path: Path) -> None:
    async with running_server(tmp_path) as running:
        marta = await protocol_client(running, "marta")
        await levers.grant(running.store, "test", "marta", "moderator")
        assert marta.token is not None
        TokenStore(tmp_path / "tokens-marta.json").save(running.ws_url, "marta", marta.token)
        await marta.ws.close()
        app = client(running, "marta", tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: in_lobby(app), "marta's lobby")
            assert app.session.roles == ["moderator"]
            form = await open_form(app, pilot)
            form.query_one("#name", Input).value = "Friday arena"
            form.query_one("#levels", Input).value = "2"
            await pilot.click("#create")
            # the reply opens its page
            await until(pilot, lambda: isinstance(app.screen, TournamentScreen)
                        and app.screen.title == "Friday arena", "the new tournament's page")
        ann = await protocol_client(running, "ann")
        listed = await ann.request(t="tournaments")
        (info,) = listed["tournaments"]
        assert (info["name"], info["kind"], info["clock"], info["rated"]) == (
            "Friday arena", "arena", "3+2", True)
        assert 4 * 60 <= info["starts_at"] - time.time() <= 5 * 60 + 5
        state = await ann.request(t="tournament_sub", tournament=info["id"])
        assert [s["computer"] for s in state["standings"]] == [2]
        await ann.ws.close()
