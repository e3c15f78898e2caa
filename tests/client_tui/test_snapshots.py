"""Screenshots of the lobby and the game at 80x24 and 120x40 (fixed names, frozen clock)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenes import game, lobby
from textual.pilot import Pilot
from tui_helpers import unconnected

from client_tui.app import LinkMessage
from client_tui.connection import LeaderboardRow, Received
from client_tui.screens.game import GameScreen

SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_lobby(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        app.session.rating = 1500
        app.show_lobby()
        app.post_message(LinkMessage(Received(lobby())))
        await pilot.pause()
        assert app.lobby_screen is not None
        app.lobby_screen.show_leaderboard(
            [LeaderboardRow("dan", 1733), LeaderboardRow("bob", 1612),
             LeaderboardRow("ann", 1500)]
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_game(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        app.show_lobby()
        app.post_message(LinkMessage(Received(game())))
        while not isinstance(app.screen, GameScreen):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)
