"""The web client's player page in headless Chromium against a real server (issue 27, items 5
and 10): names open it (leaderboard, game cards), it shows the record, the rating's history
and the games, a game opens to replay, and it fits a wide screen and a phone; the chat says
whose it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import web_helpers
from web_helpers import Page

SIZES = [(1280, 800), (390, 844)]


async def a_rated_game_ann_wins(tab: Page, bob: Any) -> str:
    """ann (the page, X) beats bob (a protocol client) along 1a1-1d1 in a rated 4x4 game."""
    game = await tab.join_room_of(bob, variant="4x4", rated=True, colour="o")
    for ply, (mine, theirs) in enumerate(zip(("a1", "b1", "c1"), ("a2", "b2", "c2"),
                                             strict=True)):
        await tab.my_turn()
        await tab.click_cell(mine)
        await bob.expect("move", ply=2 * ply + 1)
        await bob.send(t="move", game=game, cell=theirs, ply=2 * ply + 1)
        await tab.wait_ply(2 * ply + 2)
    await tab.my_turn()
    await tab.click_cell("d1")
    await tab.page.wait_for_selector("#result-text")
    return game


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_players_page_from_a_name_to_a_replay(tmp_path: Path,
                                                      size: tuple[int, int]) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/", *size)
        page = tab.page
        await tab.enter("ann")
        bob = await web_helpers.client(running, "bob")
        try:
            game = await a_rated_game_ann_wins(tab, bob)
            # the players' chat, said so to the player
            assert await page.text_content(".chat-title") == "Players' chat"
            # bob's name on his card opens his page
            await page.click(".seat.o a.player-link")
            await page.wait_for_selector("#player:not([hidden]) table.games")
            assert await page.evaluate("() => location.hash") == "#player=bob"  # a link to it
            text = await page.text_content("#player")
            assert text is not None and "bob" in text and "Lost1" in text.replace(" ", "")
            assert await page.locator("#player .rating-chart circle").count() == 1
            row = page.locator(f'#player tr[data-game="{game}"]')
            assert await row.locator(".outcome").text_content() == "lost"
            assert (await row.locator("td.num").nth(1).text_content() or "").startswith("-")
            # it fits: nothing wider than the screen
            wide = await page.evaluate(
                "() => document.documentElement.scrollWidth <= window.innerWidth")
            assert wide
            # the game opens to replay, from the start
            await row.locator("button.open").click()
            await tab.in_game()
            await page.wait_for_function(
                "(id) => window.qubic.app.current === id", arg=game)
            assert await tab.over() and await tab.ply() == 7
            await page.click("#nav-first")
            assert await page.locator(".cell.x, .cell.o").count() == 0
            # back in the lobby: the leaderboard's names open pages too; "All my games"
            await page.click("#home")
            await page.wait_for_selector('#lobby:not([hidden]) .leaders a[data-player="ann"]')
            # every message renders the lobby: its lists are not built again under the focus
            # (nor under a press: a link pressed and gone before it is let go is no click)
            await page.focus('.leaders a[data-player="ann"]')
            seek = (await bob.request(t="seek", variant="4x4x4"))["seek"]["id"]
            await page.wait_for_function("(id) => window.qubic.app.lobby.seeks.has(id)", arg=seek)
            assert await page.evaluate(
                "() => document.activeElement === "
                "document.querySelector('.leaders a[data-player=\"ann\"]')")
            await bob.request(t="cancel_seek", seek=seek)
            await page.click('.leaders a[data-player="ann"]')
            await page.wait_for_selector("#player:not([hidden]) .outcome.won")
            assert "ann (you)" in (await page.text_content("#player h2") or "")
            await page.click("#player button.back")
            await page.click("#my-games")
            await page.wait_for_selector("#player:not([hidden]) .outcome.won")
            # an address with #player=NAME opens that page in a tab that has Qubic
            await page.evaluate("() => { location.hash = '#player=bob'; }")
            await page.wait_for_selector('#player:not([hidden]) h2:text-is("bob")')
            assert tab.errors == [] and tab.dialogs == []
        finally:
            await bob.ws.close()


async def test_a_spectator_is_told_whose_chat_it_is(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        bob = await web_helpers.client(running, "bob")
        cat = await web_helpers.client(running, "cat")
        try:
            created = await bob.request(t="private_create", colour="x")
            await cat.send(t="private_join", code=created["code"])
            game = (await bob.expect("game"))["id"]
            await bob.request(t="chat", game=game, text="players only")
            tab = await Page.open(chromium, running.http_url + "/")
            await tab.enter("ann")
            page = tab.page
            await page.evaluate("(id) => { location.hash = `#game=${id}`; }", game)  # a link
            await tab.in_game()
            assert await page.text_content(".chat-title") == "Spectators' chat"
            await page.fill("#chat-input", "hello watchers")
            await page.press("#chat-input", "Enter")
            await page.wait_for_function(
                "() => document.querySelectorAll('.chat-log li').length == 1")
            assert "players only" not in (await page.text_content(".chat-log") or "")
            assert tab.errors == []
        finally:
            await bob.ws.close()
            await cat.ws.close()
