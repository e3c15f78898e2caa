"""The terminal client's player pages against a real server (issue 27, item 5): "My games"
reads the server, so it is the same on every machine; a leader's page opens from the
leaderboard; a game on a page opens to replay."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import DataTable
from tui_helpers import client, in_lobby, running_server, until

from client_tui.app import QubicApp
from client_tui.screens.game import GameScreen
from client_tui.screens.my_games import MyGamesScreen
from client_tui.screens.player import PlayerScreen, rating_history
from server.game.records import MoveRecord, Seat
from server.http.app import RunningServer


def screen_text(app: QubicApp) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


async def games_on_the_server(running: RunningServer) -> tuple[str, str]:
    """ann beat bob in a rated 4x4 game; ann plays the computer now. Their ids."""
    store = running.hub.store
    await store.create_player("bob", time.time())
    won = await store.create_game(variant="4x4", x=Seat.human("ann"), o=Seat.human("bob"),
                                  clock=None, rated=True, now=time.time() - 60)
    for ply, cell in enumerate((0, 4, 1, 5, 2, 6, 3), start=1):
        await store.record_move(won.id, MoveRecord(ply, cell, None, None, time.time()))
    await store.finish_game(won.id, result="1-0", reason="line", now=time.time(),
                            winning_line=(0, 1, 2, 3))
    going = await store.create_game(variant="4x4x4", x=Seat.human("ann"),
                                    o=Seat.computer(3), clock=None, rated=False, now=time.time())
    return won.id, going.id


async def test_my_games_and_a_leaders_page_come_from_the_server(tmp_path: Path) -> None:
    async with running_server(tmp_path) as running:
        app = client(running, "ann", tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: in_lobby(app), "the lobby")
            won, going = await games_on_the_server(running)
            await pilot.press("g")
            await until(pilot, lambda: isinstance(app.screen, MyGamesScreen)
                        and app.screen.loaded, "my games, from the server")
            text = screen_text(app)
            assert "Rating 1" in text and "1 won · 0 lost" in text
            rows = text.index("Computer (level 3)"), text.index("bob")
            assert rows[0] < rows[1]  # newest first: the game going on, then the win
            assert "won" in text and "4x4 as X rated" in text
            lines = text.splitlines()
            going_row = next(line for line in lines if "Computer (level 3)" in line)
            won_row = next(line for line in lines if "bob" in line)
            assert going_row.split()[0] == "playing"  # not "on" (issue 38 item 3)
            assert " 4 " in won_row and " 7 " not in won_row  # 7 plies: moves 1 to 4
            assert "1 game (1 rated)" in text
            assert app.screen.ids == [going, won]
            # the finished game opens to replay
            table = app.screen.query_one(DataTable)
            table.move_cursor(row=1)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, GameScreen), "the game")
            model = app.screen.model
            assert model.id == won and model.over and model.ply == 7
            await pilot.pause()
            assert "esc Back" in screen_text(app)  # where Esc goes: the list, not the lobby
            titles = [command.title for command in app.get_system_commands(app.screen)]
            assert "Back to the list of games this one was opened from" in titles
            assert "Back to the lobby" not in titles
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, MyGamesScreen), "my games")
            await pilot.press("escape")
            await until(pilot, lambda: in_lobby(app), "the lobby")
            # a leader's page, from the leaderboard
            lobby = app.screen
            lobby.action_leaderboard()
            board = lobby.query_one("#leaderboard", DataTable)
            await until(pilot, lambda: board.row_count == 2, "ann and bob on the board")
            board.focus()
            board.move_cursor(row=1)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, PlayerScreen)
                        and app.screen.loaded, "bob's page")
            text = screen_text(app)
            assert app.screen.title == "bob" and "0 won · 1 lost" in text and "ann" in text
            # and a player online's page: ann is the one online
            await pilot.press("escape")
            await until(pilot, lambda: in_lobby(app), "the lobby")
            app.screen.query_one("#players", DataTable).focus()
            await pilot.press("i")
            await until(pilot, lambda: isinstance(app.screen, PlayerScreen)
                        and app.screen.loaded, "ann's page")
            assert app.screen.player == "ann"


def test_the_rating_history_says_its_change_once() -> None:
    """Issue 38 item 3: not "1338 → 1280, from 1280 to 1338"."""
    assert rating_history([1338, 1300, 1280]) == (
        "Rating after each rated game (the last 3): 1338 → 1280")
    assert rating_history([1338, 1250, 1400, 1280]) == (
        "Rating after each rated game (the last 4): 1338 → 1280 (lowest 1250, highest 1400)")
    assert rating_history([1516]) == "Rating after each rated game (the last game): 1516"
