"""Screenshots at 80x24 and 120x40 (fixed names, frozen clock): the lobby, a game with its
threats shown, a game's end (played and watched), and dialogs (a game's options, a challenge
to answer, resigning, which wait to cancel), and a player's page."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenes import challenge, ended_game, game, lobby, player_page, threats_game
from textual.pilot import Pilot
from tui_helpers import unconnected

from client_tui.app import LinkMessage
from client_tui.connection import LeaderboardRow, Received
from client_tui.screens.dialogs import CancelDialog, ConfirmDialog, OptionsDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.player import PlayerScreen
from server.protocol import ChallengeInfo, ClockSpec, GameState

SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


async def show_lobby(app, pilot: Pilot) -> None:  # noqa: ANN001
    app.session.rating = 1500
    app.show_lobby()
    app.post_message(LinkMessage(Received(lobby())))
    await pilot.pause()
    assert app.lobby_screen is not None
    app.lobby_screen.show_leaderboard(
        [LeaderboardRow("dan", 1733, bot=True), LeaderboardRow("bob", 1612),
         LeaderboardRow("ann", 1500)]
    )
    await pilot.pause()


def game_snapshot(snap_compare, tmp_path: Path, size: tuple[int, int],  # noqa: ANN001
                  state: GameState) -> bool:
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        app.show_lobby()
        app.post_message(LinkMessage(Received(state)))
        while not isinstance(app.screen, GameScreen):
            await pilot.pause()
        await pilot.pause()

    return snap_compare(app, terminal_size=size, run_before=show)  # type: ignore[no-any-return]


@sizes
def test_lobby(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_lobby(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_game(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    assert game_snapshot(snap_compare, tmp_path, size, game())


@sizes
def test_game_with_threats(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    assert game_snapshot(snap_compare, tmp_path, size, threats_game())


@sizes
def test_game_end(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    assert game_snapshot(snap_compare, tmp_path, size, ended_game())


@sizes
def test_options_dialog(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_lobby(app, pilot)
        await pilot.press("o")
        while not isinstance(app.screen, OptionsDialog):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_challenge_prompt(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_lobby(app, pilot)
        app.post_message(LinkMessage(Received(challenge())))
        while not isinstance(app.screen, ConfirmDialog):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_game_end_watched(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    state = ended_game()
    state.you = None  # a spectator: the result names the winner and both rating changes
    assert game_snapshot(snap_compare, tmp_path, size, state)


@sizes
def test_resign_dialog(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        app.show_lobby()
        app.post_message(LinkMessage(Received(threats_game())))
        while not isinstance(app.screen, GameScreen):
            await pilot.pause()
        await pilot.pause()
        await pilot.press("r")
        while not isinstance(app.screen, ConfirmDialog):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_player_page(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    """A player's page: record, rating history, games (opened from the leaderboard)."""
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_lobby(app, pilot)
        app.push_screen(PlayerScreen("bob"))
        await pilot.pause()
        app.post_message(LinkMessage(Received(player_page())))
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)


@sizes
def test_cancel_which(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    """x in the lobby with two challenges sent and a seek posted: which to cancel."""
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        await show_lobby(app, pilot)
        for challenge_id, to in (("c1", "bob"), ("c2", "dan")):
            app.session.challenges_out[challenge_id] = ChallengeInfo(
                id=challenge_id, by="ann", to=to, variant="4x4x4",
                clock=ClockSpec(initial=300, increment=5), rated=True, colour="x")
        app.session.my_seek = "s9"
        assert app.lobby_screen is not None
        app.lobby_screen.refresh_lobby()
        await pilot.pause()
        await pilot.press("x")
        while not isinstance(app.screen, CancelDialog):
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=show)
