"""An arena played from the terminal client against a real server (issue 43, item 4): the
list from the lobby, the page, join, the pairing opening by itself over the page with the
tournament's name, the game played to its end, the standings' score, and back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import websockets
from textual.widgets import DataTable
from tui_helpers import client, in_lobby, running_server, until

from client_tui.messages import Outgoing
from client_tui.screens.game import GameScreen
from client_tui.screens.tournaments import TournamentScreen, TournamentsScreen
from server.http.app import RunningServer
from server.node import levers
from server.protocol import Move
from tests.server.servers import Client

SIZE = (100, 30)


async def protocol_client(running: RunningServer, name: str | None = None) -> Client:
    """A protocol client on ``running``; ``name`` says hello first."""
    c = Client(await websockets.connect(running.ws_url, max_size=None))
    if name is not None:
        await c.hello(name)
    return c


async def arena(running: RunningServer) -> str:
    """A moderator schedules an arena that starts at once; its id."""
    mod = await protocol_client(running, "marta")
    await levers.grant(running.store, "test", "marta", "moderator")
    again = await protocol_client(running)
    await again.hello(token=mod.token)
    state = await again.request(t="tournament_create", name="Test arena", kind="arena",
                                starts_at=time.time(), minutes=60, clock="1+0")
    assert state["t"] == "tournament", state
    await mod.ws.close()
    await again.ws.close()
    return str(state["info"]["id"])


def standings(screen: TournamentScreen) -> list[str]:
    table = screen.query_one("#standings", DataTable)
    return [" ".join(str(c) for c in table.get_row_at(n)) for n in range(table.row_count)]


async def test_an_arena_from_the_list_to_a_game_and_back(tmp_path: Path) -> None:
    async with running_server(tmp_path) as running:
        tid = await arena(running)
        ann = client(running, "ann", tmp_path)
        async with ann.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: in_lobby(ann), "ann's lobby")
            await pilot.press("t")
            await until(pilot, lambda: isinstance(ann.screen, TournamentsScreen), "the list")
            await until(pilot, lambda: ann.screen.query_one(DataTable).row_count == 1,
                        "the arena listed")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(ann.screen, TournamentScreen), "its page")
            page = ann.screen
            assert isinstance(page, TournamentScreen)
            await until(pilot, lambda: page.title == "Test arena", "its state")
            await pilot.press("j")
            await until(pilot, lambda: page.joined, "ann in the standings")
            bob = await protocol_client(running, "bob")
            try:
                assert (await bob.request(t="tournament_join", tournament=tid))["t"] == "ack"
                # the director pairs them: the game opens over the page, named
                await until(pilot, lambda: isinstance(ann.screen, GameScreen), "the pairing")
                screen = ann.screen
                assert isinstance(screen, GameScreen) and screen.back
                await until(pilot, lambda: screen.title is not None, "the game's title")
                model = screen.model
                assert model.tournament == tid and screen.title.endswith(" · Test arena")
                game: dict[str, Any] = await bob.expect("game", tournament=tid)
                if model.you == "x":
                    ann.post_message(Outgoing(Move(game=model.id, cell="1a1", ply=0)))
                    await bob.expect("move", ply=1)
                    await bob.request(t="move", game=game["id"], cell="2b2", ply=1)
                else:
                    await bob.request(t="move", game=game["id"], cell="1a1", ply=0)
                    await until(pilot, lambda: model.ply == 1, "bob's move")
                    ann.post_message(Outgoing(Move(game=model.id, cell="2b2", ply=1)))
                    await bob.expect("move", ply=2)
                assert (await bob.request(t="resign", game=game["id"]))["t"] == "ack"
                await until(pilot, lambda: screen.model.over, "the end")
                assert not screen.check_action("rematch", ())
                # the standings say it: ann's win, 2 points
                await until(pilot, lambda: standings(page)[0].startswith("1 ann 2 2 1 "),
                            "the standings updated: ann first, 2 points from 1 game")
                await pilot.press("b")
                await until(pilot, lambda: ann.screen is page, "back on the page")
            finally:
                await bob.ws.close()
