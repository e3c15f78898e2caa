"""Tournaments and bots in the web client (issue 43, item 4), in headless Chromium: the
lobby's list, a tournament's page with its live standings and games, join and leave, a
moderator's form that creates one, a tournament's game naming it and leading back, and BOT by
a bot's name; at a phone's size too (every target a finger's, no text under 4.5:1, nothing
wider than the screen).

The page talks to a real server; the tournament messages of these tests are the documented
ones (docs/protocol.md; test_web_protocol.py checks the client reads them), answered by the
test on the page's own websocket (Playwright's ``route_web_socket``) so that each state is
the one the test describes. test_web_tournament_play.py plays one against the server's own
tournaments."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import web_helpers
from test_web_phone import LONG, low_contrast, phone, small_targets
from web_helpers import Page

from server.node import levers


def arena_info() -> dict[str, Any]:
    """A running arena ending 50 minutes from now (now: when the page is shown, not when
    this module was imported: the suite may run it minutes later)."""
    now = time.time()
    return {"id": "T7kq2m9x", "name": "Evening arena", "kind": "arena", "status": "started",
            "starts_at": now - 600, "ends_at": now + 2990, "rounds": None, "round": None,
            "clock": "3+2", "variant": "4x4x4", "rated": True, "players": 5}


def swiss_info() -> dict[str, Any]:
    return {"id": "S1", "name": "Sunday Swiss", "kind": "swiss", "status": "created",
            "starts_at": time.time() + 3700, "ends_at": None, "rounds": 5, "round": 0,
            "clock": "5+3", "variant": "4x4x4", "rated": True, "players": 8}


def standing(rank: int, name: str, points: list[int], **flags: Any) -> dict[str, Any]:
    return {"rank": rank, "name": name, "score": flags.get("score", sum(points)),
            "points": points, "fire": False, "rating": 1500 + 10 * rank,
            "performance": 1700 - 50 * rank, "games": len(points), "playing": False,
            "withdrawn": False, "bot": False, "buchholz": None, "sonneborn_berger": None,
            **{k: v for k, v in flags.items() if k != "score"}}


def arena_state(ann_in: bool) -> dict[str, Any]:
    me = "ann" if ann_in else "fay"
    return {"t": "tournament", "info": arena_info(), "ref": None, "standings": [
        standing(1, "dan", [2, 2, 4, 4, 0], playing=True),
        standing(2, me, [2, 2, 4], fire=True, playing=True),
        standing(3, "computer-3", [2, 1, 0, 2, 0], computer=3),
        standing(3, LONG, [1, 2, 2], withdrawn=True),
        standing(5, "eve", [0, 0], bot=True)],
        "games": [
        {"id": "g21", "x": "dan", "o": "computer-3", "round": None, "result": None},
        {"id": "g20", "x": me, "o": "eve", "round": None, "result": None},
        {"id": "g19", "x": "eve", "o": "dan", "round": None, "result": "0-1"},
        {"id": "g18", "x": me, "o": "computer-3", "round": None, "result": "1/2-1/2"}]}


def swiss_state() -> dict[str, Any]:
    info = {**swiss_info(), "status": "started", "round": 2,
            "next_round_at": time.time() + 900}
    line = {"buchholz": 2.5, "sonneborn_berger": 1.25}
    return {"t": "tournament", "info": info, "ref": None, "standings": [
        standing(1, "dan", [2, 2], score=2, **line),
        standing(2, "fay", [2, 1], score=1.5, **line),
        standing(3, "eve", [1, 0], score=0.5, **line)],
        "games": [{"id": "g31", "x": "fay", "o": "dan", "round": 2, "result": None},
                  {"id": "g30", "x": "eve", "o": "fay", "round": 1, "result": "0-1"}]}


class Desk:
    """The tournaments' side of the page's websocket: every other frame goes to the real
    server and back; the page's tournament requests are kept and answered as the test says."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.states: dict[str, dict[str, Any]] = {"T7kq2m9x": arena_state(False),
                                                  "S1": swiss_state()}
        self.ws: Any = None

    async def route(self, ws: Any) -> None:
        self.ws = ws
        server = ws.connect_to_server()
        server.on_message(ws.send)

        def up(frame: str | bytes) -> None:
            message = json.loads(frame)
            if not message["t"].startswith("tournament"):
                server.send(frame)
                return
            self.asked.append(message)
            ref = message.get("id")
            if message["t"] == "tournaments":
                self.push({"t": "tournaments", "tournaments": [arena_info(), swiss_info()],
                           "ref": ref})
            elif message["t"] == "tournament_sub":
                self.push({**self.states[message["tournament"]], "ref": ref})
            elif message["t"] == "tournament_create":
                info = {**arena_info(), "id": "N3w", "name": message["name"], "status": "created",
                        "starts_at": message["starts_at"], "players": 0}
                self.push({"t": "tournament", "info": info, "standings": [], "games": [],
                           "ref": ref})
            elif message["t"] != "tournament_unsub":
                self.push({"t": "ack", "ref": ref})

        ws.on_message(up)

    def push(self, message: dict[str, Any]) -> None:
        """A frame from "the server" to the page."""
        self.ws.send(json.dumps(message))

    def kinds(self) -> list[str]:
        return [m["t"] for m in self.asked]


@asynccontextmanager
async def tab_with_desk(tmp_path: Path, width: int = 1280, height: int = 800,
                        touch: bool = False, leaderboard: list[dict[str, Any]] | None = None
                        ) -> AsyncIterator[tuple[Page, Desk, Any]]:
    """A page of ann's on a real server, its tournament messages answered by a ``Desk``
    (and ``/api/leaderboard`` with ``leaderboard``'s players, if given)."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        desk = Desk()
        if touch:
            tab = await phone(chromium, "about:blank", width, height)
        else:
            context = await chromium.new_context(viewport={"width": width, "height": height})
            tab = Page(await context.new_page())
        await tab.page.route_web_socket("**/ws", desk.route)
        if leaderboard is not None:
            body = json.dumps({"players": leaderboard})
            await tab.page.route("**/api/leaderboard*", lambda route: route.fulfill(
                status=200, content_type="application/json", body=body))
        await tab.page.goto(running.http_url + "/")
        await tab.enter("ann")
        yield tab, desk, running
        assert tab.dialogs == [] and tab.errors == []


async def until(condition: Any, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not reached")


async def test_the_list_a_page_join_and_leave(tmp_path: Path) -> None:
    async with tab_with_desk(tmp_path) as (tab, desk, _):
        page = tab.page
        await page.wait_for_selector('#tournaments li[data-tournament="T7kq2m9x"]')
        arena = await page.text_content('#tournaments li[data-tournament="T7kq2m9x"]')
        assert arena is not None and "Evening arena" in arena and "playing" in arena
        assert "Arena · ends in 50 min" in arena and "4x4x4 · 3+2 · rated · 5 players" in arena
        swiss = await page.text_content('#tournaments li[data-tournament="S1"]')
        assert swiss is not None and "Swiss · starts in 1 h 02" in swiss
        assert "5 rounds · 8 players" in swiss
        assert await page.is_hidden("#create-tournament")  # not a moderator

        await page.click('#tournaments li[data-tournament="T7kq2m9x"] a.tournament-link')
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        assert desk.asked[-1] == {"t": "tournament_sub", "tournament": "T7kq2m9x",
                                  "id": desk.asked[-1]["id"]}
        assert "#tournament=T7kq2m9x" in page.url
        assert await page.text_content("#tournament-name") == "Evening arena"
        rows = page.locator("table.standings tbody tr")
        assert await rows.count() == 5
        dan = await rows.nth(0).inner_text()
        assert dan.split() == ["1", "dan", "playing", "12", "2", "2", "4", "4", "0", "5", "1510",
                               "1650"]
        assert "on fire" in await rows.nth(1).inner_text()
        assert await rows.nth(4).locator(".bot-mark").text_content() == "BOT"  # eve's account
        assert await rows.nth(0).locator(".bot-mark").count() == 0
        # the computer: no BOT (no account) and no link to a player page that does not exist
        assert await rows.nth(2).locator(".bot-mark, a.player-link").count() == 0
        assert await rows.nth(0).locator("a.player-link").count() == 1
        assert "left" in await rows.nth(3).inner_text()
        assert await page.locator(".points .doubled").count() == 3  # 4s: doubled on fire
        games = page.locator(".tournament-games li")
        assert [await games.nth(i).get_attribute("data-game") for i in range(4)] == [
            "g21", "g20", "g19", "g18"]  # newest first, as sent
        assert "½–½" in await games.nth(3).inner_text()
        assert [await games.nth(0).locator("a.player-link").inner_text()] == ["dan"]
        assert await page.is_hidden("#tournament-leave") and await page.is_hidden(
            "#tournament-game")

        await page.click("#tournament-join")
        await until(lambda: desk.kinds()[-1] == "tournament_join")
        assert desk.asked[-1]["tournament"] == "T7kq2m9x"
        desk.push(arena_state(True))  # the server's update: ann is in, on fire, playing
        await page.wait_for_selector("#tournament-leave")
        assert await page.is_visible("#tournament-game")  # her game g20 is going on
        assert "You are in" in (await page.text_content("#tournament .note") or "")
        assert await page.locator("table.standings tr.me").count() == 1
        await page.click("#tournament-leave")
        await until(lambda: desk.kinds()[-1] == "tournament_leave")
        # back to the lobby while in it: still followed (the server follows who joined)
        await page.click("#tournament-back")
        await page.wait_for_selector("#lobby:not([hidden])")
        assert "tournament_unsub" not in desk.kinds()


def paged_state() -> dict[str, Any]:
    """Page 2 of 3 of a bigger arena (ranks 11-20) and ann's own line, 27th, under it."""
    return {"t": "tournament", "info": {**arena_info(), "players": 29}, "ref": None,
            "standings": [standing(10 + n, f"player{10 + n}", [2] * (12 - n)) for n in
                          range(1, 11)],
            "games": [{"id": "g40", "x": "ann", "o": "zed", "round": None, "result": None}],
            "page": 2, "pages": 3, "me": standing(27, "ann", [0, 2, 0], playing=True)}


async def test_the_standings_come_a_page_at_a_time_with_ones_own_line(tmp_path: Path) -> None:
    async with tab_with_desk(tmp_path) as (tab, desk, _):
        page = tab.page
        desk.states["T7kq2m9x"] = paged_state()
        await page.wait_for_selector('#tournaments li[data-tournament="T7kq2m9x"]')
        await page.click('#tournaments li[data-tournament="T7kq2m9x"] a.tournament-link')
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        rows = page.locator("table.standings tbody tr")
        assert await rows.count() == 11
        assert (await rows.nth(0).inner_text()).split()[:2] == ["11", "player11"]
        own = page.locator("table.standings tr.own")
        assert (await own.inner_text()).split()[:2] == ["27", "ann"]
        assert await page.locator("table.standings tr.me.own").count() == 1
        assert await page.text_content("#standings-page") == "Page 2 of 3"
        assert await page.is_visible("#tournament-leave")  # in it, by her own line
        assert await page.is_visible("#tournament-game")  # her game, with the page's
        await page.click("#standings-next")
        await until(lambda: desk.asked[-1].get("page") == 3)
        assert desk.asked[-1] == {"t": "tournament_sub", "tournament": "T7kq2m9x", "page": 3,
                                  "id": desk.asked[-1]["id"]}
        desk.push({**paged_state(), "page": 3})
        await page.wait_for_selector("#standings-next[disabled]")
        await page.click("#standings-prev")
        await until(lambda: desk.asked[-1].get("page") == 2)


async def test_a_page_left_unjoined_is_unfollowed_and_a_swiss_reads_in_halves(
        tmp_path: Path) -> None:
    async with tab_with_desk(tmp_path) as (tab, desk, _):
        page = tab.page
        await page.evaluate("() => { location.hash = 'tournament=S1'; }")  # a link to it
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        heads = await page.locator("table.standings th").all_inner_texts()
        assert heads[-2:] == ["Buchholz", "S-B"]
        fay = (await page.locator("table.standings tbody tr").nth(1).inner_text()).split()
        assert fay[:6] == ["2", "fay", "1½", "1", "½", "2"]  # score, then each game: 1, ½
        assert (await page.text_content("#tournament-stage") or "").startswith(
            "Swiss · round 2 of 5 · next in 15 min (")  # round 3 due by the clock
        assert "R2" in (await page.locator(".tournament-games li").first.inner_text())
        await page.click("#tournament-back")
        await until(lambda: "tournament_unsub" in desk.kinds())
        assert [m["tournament"] for m in desk.asked if m["t"] == "tournament_unsub"] == ["S1"]


async def test_a_tournament_game_names_it_and_leads_back(tmp_path: Path) -> None:
    async with tab_with_desk(tmp_path) as (tab, desk, _):
        page = tab.page
        desk.states["T7kq2m9x"] = arena_state(True)
        await page.click('#tournaments li[data-tournament="T7kq2m9x"] a.tournament-link')
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        # the next pairing: a game that starts, against a bot account, over the page
        game = {"t": "game", "id": "g20", "variant": "4x4x4",
                "clock": {"initial": 180, "increment": 2}, "rated": True,
                "seats": [{"name": "ann", "rating": 1500, "online": True, "ai": None,
                           "bot": False},
                          {"name": "robo", "rating": 1580, "online": True, "ai": None,
                           "bot": True}],
                "moves": [], "clocks": {"x": 180000, "o": 180000, "running": None},
                "status": "playing", "version": 1, "you": "x", "draw_offer": None,
                "rematch": [], "end": None, "spectators": 0, "chat": [], "ref": None,
                "spectator_chat": True, "rematch_game": None, "tournament": "T7kq2m9x"}
        desk.push(game)
        await tab.in_game()
        assert await page.text_content("#game-tournament") == "Evening arena"
        assert await page.text_content(".seat.o .bot-mark") == "BOT"
        assert await page.locator(".seat.x .bot-mark").count() == 0
        assert await page.is_visible("#to-tournament")
        desk.push({"t": "end", "game": "g20", "version": 2, "result": "1-0",
                   "reason": "resign", "winner": "x", "line": None, "clocks": None,
                   "rating_change": None})
        await page.wait_for_selector("#result-text")
        assert await page.is_hidden("#rematch")  # the arena pairs again by itself
        assert "primary" in (await page.get_attribute("#to-tournament", "class") or "")
        await page.click("#to-tournament")
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        await page.click("#tournament-game")  # ann's game going on, as the standings say
        await tab.in_game()
        assert await page.evaluate("() => window.qubic.app.current") == "g20"
        await page.click("#game-tournament")
        await page.wait_for_selector("#tournament:not([hidden])")


async def test_a_moderator_creates_a_tournament(tmp_path: Path) -> None:
    async with tab_with_desk(tmp_path) as (tab, desk, running):
        page = tab.page
        await levers.grant(running.store, "test", "ann", "moderator")
        await page.reload()  # the welcome now lists the role
        await page.wait_for_selector("#net.up")
        await page.wait_for_selector("#create-tournament:not([hidden])")
        await page.click("#create-tournament summary")
        await page.click("#tournament-create")  # no name: said, nothing sent
        await page.wait_for_selector("#toast.shown")
        assert "name" in (await page.text_content("#toast") or "")
        assert "tournament_create" not in desk.kinds()
        await page.fill(".tournament-form input[name=name]", "Friday Swiss")
        await page.select_option(".tournament-form select[name=kind]", "swiss")
        assert await page.input_value(".tournament-form input[name=duration]") == "5"
        await page.fill(".tournament-form input[name=duration]", "7")
        await page.fill(".tournament-form input[name=start]", "10")
        await page.select_option(".tournament-form select[name=clock]", "5+3")
        await page.fill(".tournament-form input[name=levels]", "2, 5")
        await page.uncheck(".tournament-form input[name=rated]")
        before = time.time()
        await page.click("#tournament-create")
        await until(lambda: "tournament_create" in desk.kinds())
        sent = desk.asked[-1]
        assert {k: v for k, v in sent.items() if k not in ("id", "starts_at")} == {
            "t": "tournament_create", "name": "Friday Swiss", "kind": "swiss", "rounds": 7,
            "clock": "5+3", "variant": "4x4x4", "rated": False, "computer_levels": [2, 5]}
        assert before + 590 <= sent["starts_at"] <= time.time() + 610
        # its page opens with the reply
        await page.wait_for_selector("#tournament:not([hidden])")
        assert await page.text_content("#tournament-name") == "Friday Swiss"


def profile(name: str, bot: bool = False) -> dict[str, Any]:
    return {"name": name, "created": 1767225600.0, "rating": 1500, "rd": 290, "games": 1,
            "rated_games": 1, "wins": 1, "losses": 0, "draws": 0, "bot": bot}


async def test_bots_are_marked_in_the_lobby_and_challenged_from_their_page(
        tmp_path: Path) -> None:
    """BOT by a bot's name online, by its seek, by its side of a live game, on the
    leaderboard and as an opponent in a player's games (absent ``x_bot``: not a bot)."""
    leaders = [profile("robo", bot=True), profile("ann")]
    async with tab_with_desk(tmp_path, leaderboard=leaders) as (tab, desk, running):
        page = tab.page
        robo = await web_helpers.client(running, "robo")
        try:
            await page.wait_for_selector('ul.players li[data-player="robo"]')
            seek = {"id": "s1", "name": "robo", "rating": 1500, "variant": "4x4x4",
                    "clock": None, "rated": False, "colour": "random", "bot": True}
            game = {"id": "g5", "variant": "4x4", "clock": None, "rated": False, "x": "ann",
                    "o": "robo", "ply": 3, "o_bot": True}
            desk.push({"t": "lobby", "seeks": [seek], "games": [game], "online": 2,
                       "players": [{"name": "ann", "rating": 1500, "bot": False},
                                   {"name": "robo", "rating": 1500, "bot": True}],
                       "ref": None})
            await page.wait_for_selector('ul.players li[data-player="robo"] .bot-mark')
            assert await page.locator('ul.players li[data-player="ann"] .bot-mark').count() == 0
            assert await page.text_content('tr[data-seek="s1"] .bot-mark') == "BOT"
            assert await page.locator('li[data-game="g5"] .bot-mark').count() == 1
            assert "robo BOT" in (await page.text_content('li[data-game="g5"]') or "")
            leaders_list = page.locator("ol.leaders li")
            assert await leaders_list.nth(0).locator(".bot-mark").count() == 1
            assert await leaders_list.nth(1).locator(".bot-mark").count() == 0
            await page.click('ul.players li[data-player="robo"] a.player-link')
            await page.wait_for_selector("#player-challenge")
            desk.push({"t": "player_games", "player": profile("robo", bot=True), "games": [
                {"id": "g4", "variant": "4x4", "clock": None, "rated": True, "side": "o",
                 "x": "deep", "o": "robo", "x_ai": None, "o_ai": None, "status": "over",
                 "result": "0-1", "reason": "line", "moves": [0, 5, 1, 6, 2, 7, 3, 4],
                 "created": 1767229200.0, "ended": 1767229500.0, "rating": 1500,
                 "rating_change": 9, "x_bot": True}], "next": None, "ratings": [],
                       "ref": None})
            await page.wait_for_selector("table.games tbody tr .bot-mark")
            assert "deep BOT" in (await page.text_content("table.games tbody tr") or "")
            await page.click("#player-challenge")
            challenge = await robo.expect("challenge")
            assert challenge["challenge"]["by"] == "ann"
        finally:
            await robo.ws.close()


@pytest.mark.parametrize(("width", "height"), [(390, 844), (360, 740)])
async def test_a_tournament_on_a_phone(tmp_path: Path, width: int, height: int) -> None:
    async with tab_with_desk(tmp_path, width, height, touch=True) as (tab, desk, _):
        page = tab.page
        desk.states["T7kq2m9x"] = arena_state(True)
        await page.wait_for_selector('#tournaments li[data-tournament="T7kq2m9x"]')
        assert await small_targets(tab, "#tournaments") == []
        await page.click('#tournaments li[data-tournament="T7kq2m9x"] a.tournament-link')
        await page.wait_for_selector("#tournament:not([hidden]) table.standings")
        assert await small_targets(tab, "header.top", "#tournament") == []
        assert await low_contrast(tab, "header.top", "#tournament") == []
        wide = await page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert wide <= 0, f"the page is {wide} px wider than the screen"
        # the standings keep rank, player and score (the rest gives way on a phone)
        shown = await page.locator("table.standings thead th").evaluate_all(
            "(ths) => ths.filter((th) => th.offsetWidth > 0).map((th) => th.textContent)")
        assert shown == ["#", "Player", "Score"]
