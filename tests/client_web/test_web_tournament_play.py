"""An arena from the web client against a real server's tournaments (issue 43, item 4): a
moderator creates it with the lobby's form, a player finds it in the list, joins, is paired
with a protocol client, plays the game the director opened, and reads the standings after;
at a phone's size too."""

from __future__ import annotations

from pathlib import Path

import pytest
import web_helpers
from test_web_phone import phone
from web_helpers import Page

from server.node import levers


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
async def test_an_arena_created_joined_played_and_scored(tmp_path: Path,
                                                         size: tuple[int, int]) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        width, height = size
        tab = (await phone(chromium, running.http_url + "/", width, height) if width < 800
               else await Page.open(chromium, running.http_url + "/", width, height))
        page = tab.page
        await tab.enter("ann")
        await levers.grant(running.store, "test", "ann", "moderator")
        await page.reload()  # the welcome now lists the role: the form is offered
        await page.wait_for_selector("#net.up")
        await page.click("#create-tournament summary")
        await page.fill(".tournament-form input[name=name]", "Lunch arena")
        await page.fill(".tournament-form input[name=start]", "0")  # now
        await page.select_option(".tournament-form select[name=clock]", "1+0")
        await page.click("#tournament-create")
        await page.wait_for_selector("#tournament:not([hidden]) #tournament-join")
        assert await page.text_content("#tournament-name") == "Lunch arena"
        tid = await page.evaluate(
            "() => new URLSearchParams(location.hash.slice(1)).get('tournament')")
        # the lobby lists it; its page again from there
        await page.click("#tournament-back")
        await page.wait_for_selector(f'#tournaments li[data-tournament="{tid}"]')
        await page.click(f'#tournaments li[data-tournament="{tid}"] a.tournament-link')
        await page.click("#tournament-join")
        await page.wait_for_selector("#tournament-leave")  # the server's update: ann is in
        bob = await web_helpers.client(running, "bob")
        try:
            assert (await bob.request(t="tournament_join", tournament=tid))["t"] == "ack"
            game = await bob.expect("game", tournament=tid)
            await tab.in_game()  # the pairing opens by itself
            assert await page.text_content("#game-tournament") == "Lunch arena"
            if game["you"] == "o":  # ann is X
                await tab.click_cell("1a1")
                await bob.expect("move", ply=1)
                await bob.request(t="move", game=game["id"], cell="2b2", ply=1)
            else:
                await bob.request(t="move", game=game["id"], cell="1a1", ply=0)
                await tab.wait_ply(1)
                await tab.click_cell("2b2")
                await bob.expect("move", ply=2)
            assert (await bob.request(t="resign", game=game["id"]))["t"] == "ack"
            await page.wait_for_selector("#result-text")
            assert await page.is_hidden("#rematch")
            await page.click("#to-tournament")
            await page.wait_for_function(
                "() => { const r = document.querySelector('table.standings tbody tr');"
                " return r && r.dataset.player === 'ann'"
                " && r.querySelector('.score strong').textContent === '2'; }")
            won = "1-0" if game["you"] == "o" else "0-1"  # ann won, as X or as O
            row = f'.tournament-games li[data-game="{game["id"]}"] .score'
            await page.wait_for_function("(row) => document.querySelector(row)?.textContent",
                                         arg=row)
            assert await page.text_content(row) == won
        finally:
            await bob.ws.close()
        assert tab.dialogs == [] and tab.errors == []
