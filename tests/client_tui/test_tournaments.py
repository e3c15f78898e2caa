"""Tournaments and bots in the terminal client (issue 43, item 4): the list from the lobby,
a tournament's page with its standings and games, join and leave, a tournament's game naming
it and leading back, and BOT by a program's name. Fed the server's messages by hand (Pilot);
tests/client_tui/test_tournaments_live.py plays one against a real server."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from scenes import (
    NOW,
    lobby,
    player_page,
    tournament,
    tournament_game,
    tournament_list,
    tournament_paged,
)
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from tui_helpers import screen_text, unconnected

from client_tui.app import LinkMessage, QubicApp
from client_tui.connection import Received
from client_tui.screens.dialogs import OptionsDialog
from client_tui.screens.game import GameScreen
from client_tui.screens.player import PlayerScreen
from client_tui.screens.tournaments import TournamentScreen, TournamentsScreen
from client_tui.tournament_model import (
    TournamentsModel,
    halves,
    point_text,
    stage,
    terms,
    until,
    when,
)
from server.protocol import (
    Ack,
    ClientMessage,
    PlayerOnline,
    TournamentGame,
    TournamentJoin,
    TournamentLeave,
    TournamentSub,
    TournamentUnsub,
    Unwatch,
    Watch,
)

SIZE = (100, 30)


# -- words --------------------------------------------------------------------------------


def test_a_tournament_in_words() -> None:
    listed = tournament_list().tournaments
    assert until(NOW + 30, NOW) == "in 30 s" and until(NOW + 300, NOW) == "in 5 min"
    assert until(NOW + 3720, NOW) == "in 1 h 02" and until(NOW - 5, NOW) == "now"
    assert stage(listed[0], NOW) == "Arena · ends in 50 min"
    assert stage(listed[1], NOW).startswith("Swiss · starts in 1 h 02 (")
    assert stage(listed[2], NOW) == "Arena · finished"
    playing = msgspec.structs.replace(listed[1], status="started", round=2)
    assert stage(playing, NOW) == "Swiss · round 2 of 5"  # its rounds wait for the games
    due = msgspec.structs.replace(playing, next_round_at=NOW + 240)
    assert stage(due, NOW).startswith("Swiss · round 2 of 5 · next in 4 min (")
    assert [when(info, NOW) for info in listed] == ["ends in 50 min", "in 1 h 02", "over"]
    assert terms(listed[1]) == "4x4x4 · 5+3 · rated · 5 rounds · 8 players"
    assert terms(listed[2]) == "3x3x3 · 1+0 · casual · 14 players"
    assert [halves(v) for v in (0, 0.5, 1.0, 2.5, 3)] == ["0", "½", "1", "2½", "3"]
    # a Swiss's points come in half points: a win (or a bye) 2, a draw 1
    assert [point_text(p, swiss=True) for p in (2, 1, 0)] == ["1", "½", "0"]
    assert [point_text(p, swiss=False) for p in (4, 2, 0)] == ["4", "2", "0"]


def test_the_model_keeps_the_list_and_what_is_followed() -> None:
    model = TournamentsModel()
    model.load(tournament_list())
    assert model.name("S1") == "Sunday Swiss" and model.name("nope") == "nope"
    state = tournament()
    model.update(state)
    assert "T7kq2m9x" in model.followed and model.joined("T7kq2m9x", "ANN")
    assert not model.joined("T7kq2m9x", "Maximilian-Fitzgerald_xy")  # withdrawn
    model.load(tournament_list())  # a newer line in the list reaches the state followed
    assert model.states["T7kq2m9x"].info.players == 5
    model.forget("T7kq2m9x")
    assert "T7kq2m9x" not in model.followed and "T7kq2m9x" not in model.states
    assert model.name("T7kq2m9x") == "Evening arena"


# -- screens ------------------------------------------------------------------------------


def sent(app: QubicApp) -> list[ClientMessage]:
    """What the app asked the server for (kept until answered), oldest first."""
    return list(app._requests.values())


class FakeLink:
    """Takes every request, as a connected link would, so the app keeps it as sent."""

    connected = True

    def __init__(self) -> None:
        self.sent: list[ClientMessage] = []

    def send(self, message: ClientMessage) -> bool:
        self.sent.append(message)
        return True

    async def close(self) -> None:
        return None


def online(app: QubicApp) -> FakeLink:
    link = FakeLink()
    app.link = link  # type: ignore[assignment]
    app.tournaments.clock = lambda: NOW
    return link


def feed(app: QubicApp, message: object) -> None:
    app.post_message(LinkMessage(Received(message)))  # type: ignore[arg-type]


async def settle(pilot: Pilot, condition: object = None) -> None:
    for _ in range(50):
        await pilot.pause()
        if condition is None or condition():  # type: ignore[operator]
            return
    raise AssertionError("the app did not get there")


async def open_page(app: QubicApp, pilot: Pilot, tournament_id: str = "T7kq2m9x") -> None:
    """Open the tournament's page and wait until it is shown."""
    app.open_tournament(tournament_id)
    await settle(pilot, lambda: isinstance(app.screen, TournamentScreen))


def table_text(app: QubicApp, selector: str) -> list[str]:
    table = app.screen.query_one(selector, DataTable)
    return [" ".join(str(c) for c in table.get_row_at(n)) for n in range(table.row_count)]


async def test_the_list_opens_a_tournament_joined_then_left(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        link = online(app)
        app.show_lobby()
        feed(app, lobby())
        await settle(pilot)
        assert "t tournaments" in str(app.screen.query_one("#lobby-status", Static).render())
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, TournamentsScreen))
        assert any(type(m).__name__ == "Tournaments" for m in link.sent)  # asked for the list
        feed(app, tournament_list())
        await settle(pilot, lambda: app.screen.query_one(DataTable).row_count == 3)
        rows = table_text(app, "#tournament-list")
        assert rows[0].startswith("Evening arena Arena playing ends in 50 min 3+2 4x4x4 rated")
        assert rows[2].startswith("Morning blitz Arena finished over 1+0 3x3x3")

        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, TournamentScreen))
        page = app.screen
        assert isinstance(page, TournamentScreen)
        assert [m.tournament for m in link.sent if isinstance(m, TournamentSub)] == ["T7kq2m9x"]
        feed(app, tournament(me_in=False))
        await settle(pilot, lambda: page.query_one("#standings", DataTable).row_count == 5)
        info = str(page.query_one("#tournament-info", Static).render())
        assert "Arena · ends in 50 min · 4x4x4 · 3+2 · rated" in info and "j joins" in info
        standings = table_text(app, "#standings")
        assert standings[0].startswith("1 dan ● 12 2 2 4 4 0 5")
        assert "computer-3 ●" in standings[2] and "BOT" not in standings[2]
        assert "Maximilian-Fitzgerald_xy left" in standings[3]
        assert "eve BOT ●" in standings[4]
        lines = page.query_one("#standings", DataTable)
        lines.focus()
        lines.move_cursor(row=2)
        await pilot.press("enter")  # the computer has no page to open
        await settle(pilot)
        assert app.screen is page
        assert any("computer-3 is the computer" in str(n.message) for n in app._notifications)
        assert table_text(app, "#tournament-games")[1] == "fay eve BOT playing"
        assert page.check_action("join", ()) and not page.check_action("withdraw", ())
        assert not page.check_action("my_game", ())

        await pilot.press("j")
        await settle(pilot)
        join = link.sent[-1]
        assert join == TournamentJoin(tournament="T7kq2m9x", id=join.id)
        feed(app, Ack(ref=join.id))
        feed(app, tournament(me_in=True))  # the server's update: ann is in, on fire, playing
        await settle(pilot, lambda: "ann" in table_text(app, "#standings")[1])
        assert "ann on fire ●" in table_text(app, "#standings")[1]
        assert "You are in" in str(page.query_one("#tournament-info", Static).render())
        assert page.check_action("withdraw", ()) and not page.check_action("join", ())
        assert page.check_action("my_game", ())
        assert any("You are in Evening arena" in str(n.message) for n in app._notifications)

        await pilot.press("l")
        await settle(pilot)
        assert isinstance(link.sent[-1], TournamentLeave)
        # Esc while in it: still followed (the server follows a player who is in it)
        await pilot.press("escape")
        await settle(pilot, lambda: isinstance(app.screen, TournamentsScreen))
        assert not any(isinstance(m, TournamentUnsub) for m in link.sent)
        assert "T7kq2m9x" in app.tournaments.followed


async def test_a_page_left_unjoined_is_unfollowed(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        link = online(app)
        app.show_lobby()
        await settle(pilot)
        await open_page(app, pilot)
        feed(app, tournament(me_in=False))
        await settle(pilot, lambda: app.screen.title == "Evening arena")
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is app.lobby_screen)
        await settle(pilot, lambda: any(isinstance(m, TournamentUnsub) for m in link.sent))
        assert [m.tournament for m in link.sent if isinstance(m, TournamentUnsub)] == ["T7kq2m9x"]
        assert "T7kq2m9x" not in app.tournaments.followed


async def test_the_next_pairing_opens_names_the_tournament_and_leads_back(
        tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        link = online(app)
        app.show_lobby()
        await settle(pilot)
        feed(app, tournament())  # followed (joined): the server sends its updates
        await open_page(app, pilot)
        feed(app, tournament_game())  # the pairing: a game that starts, over the page
        await settle(pilot, lambda: isinstance(app.screen, GameScreen))
        screen = app.screen
        assert isinstance(screen, GameScreen) and screen.back  # Esc: back to the page
        assert screen.title == "ann vs robo · Evening arena"
        assert "robo BOT" in screen_text(app)
        assert screen.check_action("tournament", ())

        feed(app, tournament_game(over=True))
        await settle(pilot, lambda: app.screen.model.over)  # type: ignore[attr-defined]
        assert not app.screen.check_action("rematch", ())  # the arena pairs again by itself
        await pilot.press("b")
        await settle(pilot, lambda: isinstance(app.screen, TournamentScreen))
        assert "g20" not in app.games and Unwatch(game="g20", id=link.sent[-1].id) in link.sent

        # a pairing that comes over the lobby: Esc goes to the lobby, b to the page
        await pilot.press("escape")
        await settle(pilot, lambda: app.screen is app.lobby_screen)
        state = tournament_game()
        state.id = "g22"
        feed(app, state)
        await settle(pilot, lambda: isinstance(app.screen, GameScreen))
        assert not app.screen.back  # type: ignore[attr-defined]
        await pilot.press("b")  # a game going on stays under the page
        await settle(pilot, lambda: isinstance(app.screen, TournamentScreen))
        assert "g22" in app.games
        update = tournament()
        update.games.insert(0, TournamentGame(id="g22", x="ann", o="robo", round=None,
                                              result=None))
        update.games[2] = TournamentGame(id="g20", x="ann", o="eve", round=None, result="1-0")
        feed(app, update)
        await settle(pilot)
        await pilot.press("y")  # your game: the one under the page
        await settle(pilot, lambda: isinstance(app.screen, GameScreen))
        assert app.screen.model.id == "g22"  # type: ignore[attr-defined]
        await pilot.press("b")
        await settle(pilot, lambda: isinstance(app.screen, TournamentScreen))
        update.games[0] = TournamentGame(id="g23", x="robo", o="ann", round=None, result=None)
        feed(app, update)
        await settle(pilot)
        await pilot.press("y")  # one not open here: asked for
        await settle(pilot, lambda: isinstance(link.sent[-1], Watch))
        assert link.sent[-1] == Watch(game="g23", id=link.sent[-1].id)


async def test_a_game_of_an_unknown_tournament_asks_for_its_name(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        link = online(app)
        app.show_lobby()
        await settle(pilot)
        feed(app, tournament_game())
        await settle(pilot, lambda: isinstance(app.screen, GameScreen))
        assert app.screen.title == "ann vs robo · T7kq2m9x"
        assert type(link.sent[-1]).__name__ == "Tournaments"
        feed(app, tournament_list())
        await settle(pilot, lambda: app.screen.title == "ann vs robo · Evening arena")


async def test_bots_are_marked_and_challenged_from_their_page(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        online(app)
        app.show_lobby()
        snapshot = lobby()
        snapshot.players = [*snapshot.players, PlayerOnline(name="robo", rating=1580, bot=True)]
        feed(app, snapshot)
        await settle(pilot, lambda: app.screen.query_one("#players", DataTable).row_count == 6)
        assert "robo BOT" in table_text(app, "#players")[5]
        assert "BOT" not in table_text(app, "#players")[1]
        app.push_screen(PlayerScreen("robo"))
        await settle(pilot)
        page = player_page("robo")
        page.player.bot = True
        feed(app, page)
        await settle(pilot, lambda: "BOT" in str(app.screen.query_one("#player-record",
                                                                       Static).render()))
        await pilot.press("c")
        await settle(pilot, lambda: isinstance(app.screen, OptionsDialog))
        assert "Challenge robo" in screen_text(app)


async def test_the_standings_come_a_page_at_a_time_with_ones_own_line(tmp_path: Path) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        link = online(app)
        app.show_lobby()
        await settle(pilot)
        await open_page(app, pilot)
        page = app.screen
        assert isinstance(page, TournamentScreen)
        assert link.sent[-1] == TournamentSub(tournament="T7kq2m9x", id=link.sent[-1].id)
        feed(app, tournament_paged())
        await settle(pilot, lambda: page.query_one("#standings", DataTable).row_count == 11)
        rows = table_text(app, "#standings")
        assert rows[0].startswith("11 player11") and rows[9].startswith("20 player20")
        assert rows[10].startswith("27 ann ●")  # her own line, under the page
        assert "page 2 of 3" in str(page.query_one("#standings-title").render())
        assert app.tournaments.joined("T7kq2m9x", "ann") and page.my_game() == "g40"
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert link.sent[-1] == TournamentSub(tournament="T7kq2m9x", page=3, id=link.sent[-1].id)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert link.sent[-1] == TournamentSub(tournament="T7kq2m9x", page=1, id=link.sent[-1].id)
        assert app.tournaments.asked["T7kq2m9x"] == 1  # asked again after a reconnection
        feed(app, tournament())  # the first page: no page keys
        await settle(pilot, lambda: page.query_one("#standings", DataTable).row_count == 5)
        assert not page.check_action("page", (1,)) and not page.check_action("page", (-1,))


@pytest.mark.parametrize("me_in", [True, False])
async def test_the_tournament_page_fits_80_columns(tmp_path: Path, me_in: bool) -> None:
    app = unconnected(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        online(app)
        app.show_lobby()
        await settle(pilot)
        feed(app, tournament(me_in))
        await open_page(app, pilot)
        await settle(pilot)
        text = screen_text(app)
        assert "Evening arena" in text and ("l Leave" in text) == me_in
        assert ("j Join" in text) != me_in


# -- how they look ------------------------------------------------------------------------

SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def scene(snap_compare, tmp_path: Path, size: tuple[int, int], steps) -> bool:  # noqa: ANN001
    app = unconnected(tmp_path)

    async def show(pilot: Pilot) -> None:
        online(app)
        app.session.rating = 1500
        app.show_lobby()
        feed(app, lobby())
        await settle(pilot)
        await steps(app, pilot)
        await settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=show)  # type: ignore[no-any-return]


@sizes
def test_the_list(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    async def steps(app: QubicApp, pilot: Pilot) -> None:
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, TournamentsScreen))
        feed(app, tournament_list())
        await settle(pilot, lambda: app.screen.query_one(DataTable).row_count == 3)

    assert scene(snap_compare, tmp_path, size, steps)


@sizes
def test_the_page(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    async def steps(app: QubicApp, pilot: Pilot) -> None:
        feed(app, tournament())
        await open_page(app, pilot)

    assert scene(snap_compare, tmp_path, size, steps)


@sizes
def test_the_game_against_a_bot(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # noqa: ANN001
    async def steps(app: QubicApp, pilot: Pilot) -> None:
        feed(app, tournament())
        feed(app, tournament_game())
        await settle(pilot, lambda: isinstance(app.screen, GameScreen))

    assert scene(snap_compare, tmp_path, size, steps)


@sizes
def test_a_page_of_the_standings_and_ones_own_line(snap_compare, tmp_path: Path,  # noqa: ANN001
                                                   size: tuple[int, int]) -> None:
    async def steps(app: QubicApp, pilot: Pilot) -> None:
        feed(app, tournament_paged())
        await open_page(app, pilot)

    assert scene(snap_compare, tmp_path, size, steps)
