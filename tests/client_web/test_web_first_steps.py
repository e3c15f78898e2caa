"""What new players tripped on in the web client (issue 29), each in headless Chromium against
a real server: a link opened in a tab that has Qubic, names that cannot be used, tokens kept
per name (issue 27: the client never throws one away), the first screen's quiet, messages as
sentences, and the rating after a game as the server rounds it."""

from __future__ import annotations

import json
from pathlib import Path

import web_helpers
from web_helpers import Page

ROW = ["1a1", "1a2", "1b1", "1b2", "1c1", "1c2", "1d1"]  # X completes level 1's first row


async def test_a_game_link_opened_in_a_tab_that_has_qubic_opens_it(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.enter("ann")
        async with web_helpers.protocol_client(running) as bob, \
                web_helpers.protocol_client(running) as cat:
            await bob.hello("bob")
            await cat.hello("cat")
            created = await bob.request(t="private_create", colour="x")
            await cat.send(t="private_join", code=created["code"])
            game = (await bob.expect("game"))["id"]
            assert await tab.page.is_visible("#lobby")
            await tab.page.evaluate("(id) => { location.hash = 'game=' + id; }", game)
            await tab.in_game()
            assert await tab.page.evaluate("() => window.qubic.app.current") == game
            # A private room's link, pasted into the same tab, joins the room.
            await tab.page.click("#home")
            created = await bob.request(t="private_create", colour="x")
            await tab.page.evaluate("(c) => { location.hash = 'join=' + c; }", created["code"])
            await tab.in_game()
            assert await tab.page.text_content(".seat.x .name") == "bob"
        assert tab.errors == []


async def test_names_that_cannot_be_used_are_refused_in_words(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        assert (await tab.page.text_content("#net") or "") == ""  # nothing tried: nothing said
        await tab.page.fill("#name", "a" * 40)
        assert await tab.page.input_value("#name") == "a" * 40  # not cut silently
        await tab.page.click("#connect-form button")
        error = await tab.page.text_content("#connect-error")
        assert error == "A name has at most 24 characters; this one has 40."
        await tab.page.fill("#name", "ann smith")
        await tab.page.click("#connect-form button")
        assert "letters, digits, _ and - only" in (await tab.page.text_content("#connect-error")
                                                   or "")
        async with web_helpers.protocol_client(running) as ann:
            await ann.hello("ann")
            await tab.page.fill("#name", "ANN")
            await tab.page.click("#connect-form button")
            await tab.page.wait_for_function(
                "() => document.querySelector('#connect-error').textContent.includes('taken')")
            error = await tab.page.text_content("#connect-error") or ""
        assert error.startswith("“ANN” is taken.") and "Expected" not in error
        assert tab.errors == []


async def test_playing_another_name_keeps_the_first_names_token(tmp_path: Path) -> None:
    """The old client erased its token when its name form was submitted: a player who tried
    another name lost the first one for good. Now each name's token is kept."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.enter("ann")
        first = await tab.page.evaluate("() => window.qubic.app.me.token")
        await tab.page.evaluate("() => window.qubic.link.close()")
        await tab.page.reload()
        await tab.page.wait_for_selector("#net.up")  # the kept token: ann again, no form
        assert await tab.page.evaluate("() => window.qubic.app.me.name") == "ann"
        # A second name on the same device, then back to the first by typing it.
        await tab.page.evaluate("() => { localStorage.setItem('qubic.name', ''); }")
        await tab.page.reload()
        await tab.enter("bob")
        await tab.page.evaluate("() => { window.qubic.link.close(); "
                                "localStorage.setItem('qubic.name', ''); }")
        await tab.page.reload()
        await tab.enter("Ann")
        me = await tab.page.evaluate("() => window.qubic.app.me")
        assert me["name"] == "ann" and me["token"] == first
        kept = json.loads(await tab.page.evaluate("() => localStorage.getItem('qubic.tokens')"))
        assert set(kept) == {"ann", "bob"}
        assert tab.errors == []


async def test_a_token_kept_by_an_older_client_is_moved_not_lost(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        async with web_helpers.protocol_client(running) as ann:
            token = (await ann.hello("ann"))["token"]
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.page.evaluate("(t) => { localStorage.setItem('qubic.token', t);"
                                " localStorage.setItem('qubic.name', 'ann'); }", token)
        await tab.page.reload()
        await tab.page.wait_for_selector("#net.up")
        assert await tab.page.evaluate("() => window.qubic.app.me.name") == "ann"
        assert await tab.page.evaluate("() => localStorage.getItem('qubic.token')") is None
        assert tab.errors == []


async def test_after_a_rated_game_the_header_shows_the_servers_rating(tmp_path: Path) -> None:
    """The header, the players' cards and the result after rated games; the second game's
    rating is one where adding the rounded change to the rounded rating is off by one."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.enter("ann")
        async with web_helpers.protocol_client(running) as bob:
            token = (await bob.hello("bob"))["token"]
            created = await bob.request(t="private_create", colour="o", rated=True)
            await tab.page.fill("input[name=code]", created["code"])
            await tab.page.click("form.join button")
            game = (await bob.expect("game"))["id"]
            await tab.in_game()
            for ply, cell in enumerate(ROW):
                if ply % 2 == 0:
                    await tab.my_turn()  # bob's move shown: a click before it plays nothing
                    await tab.click_cell(cell)
                    await bob.expect("move", game=game, ply=ply + 1)
                else:
                    await bob.request(t="move", game=game, cell=cell, ply=ply)
            await bob.expect("end", game=game)
        player = await web_helpers.get_json(running, "/api/players/ann")
        other = await web_helpers.get_json(running, "/api/players/bob")
        await tab.page.wait_for_function(
            "(r) => document.querySelector('#who').textContent.endsWith(' · ' + r)",
            arg=player["rating"])
        # The winning line is named in the result, not shown by colour alone.
        assert "(1a1-1d1)" in (await tab.page.text_content("#result-text") or "")
        # The players' cards show the ratings the game left, not only the ones before it.
        await tab.page.wait_for_function(
            "(r) => document.querySelector('.seat.x .rating').textContent.trim() === r",
            arg=f"1500 → {player['rating']}")
        assert (await tab.page.text_content(".seat.o .rating") or "").strip() == \
            f"1500 → {other['rating']}"
        # A second rated game, drawn: ann goes from 1662.31 to 1576.69 (Glicko-2, both new
        # players), where the rounded rating plus the rounded change (1662 - 86) is one short
        # of the server's 1577. The header shows the server's.
        async with web_helpers.protocol_client(running) as bob:
            await bob.hello("bob", token=token)  # bob again, on his kept token
            await tab.page.click("#to-lobby")
            created = await bob.request(t="private_create", colour="o", rated=True)
            await tab.page.fill("input[name=code]", created["code"])
            await tab.page.click("form.join button")
            game = (await bob.expect("game"))["id"]
            await tab.page.wait_for_function("(id) => window.qubic.app.current === id",
                                             arg=game)
            await tab.my_turn()
            await tab.click_cell("1a1")
            await bob.expect("move", game=game, ply=1)
            await bob.request(t="move", game=game, cell="4d4", ply=1)
            await tab.wait_ply(2)
            await bob.send(t="draw_offer", game=game)
            await tab.page.click("#draw-accept")
            await bob.expect("end", game=game)
        player = await web_helpers.get_json(running, "/api/players/ann")
        assert player["rating"] == 1577
        await tab.page.wait_for_function(
            "() => document.querySelector('#who').textContent.endsWith(' · 1577')")
        assert tab.errors == []


async def test_a_player_online_is_challenged_from_the_lobby(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        await bob.request(t="lobby_sub")
        row = tab.page.locator('.players li[data-player="bob"] button.challenge')
        await row.wait_for()
        assert await tab.page.locator('.players li[data-player="ann"] button').count() == 0
        await tab.page.select_option("select[name=variant]", "3x3x3")
        await row.click()
        challenge = (await bob.expect("challenge"))["challenge"]
        assert challenge["by"] == "ann" and challenge["variant"] == "3x3x3"
        await tab.page.wait_for_function(
            "() => document.querySelector('#toast').textContent"
            ".startsWith('Challenge sent to bob')")
        await bob.send(t="challenge_accept", challenge=challenge["id"])
        await tab.in_game()


async def test_the_rules_and_the_theme_switch(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.page.click("#rules-link")
        assert await tab.page.is_visible("#rules")
        assert "four in a row" in (await tab.page.text_content("#rules") or "")
        await tab.page.click("#rules-back")
        assert await tab.page.is_visible("#connect")
        background = "() => getComputedStyle(document.body).backgroundColor"
        await tab.page.emulate_media(color_scheme="light")
        light = await tab.page.evaluate(background)
        await tab.page.click("#theme")  # system -> light
        await tab.page.click("#theme")  # light -> dark
        assert await tab.page.text_content("#theme") == "Theme: dark"
        dark = await tab.page.evaluate(background)
        assert dark != light
        await tab.page.reload()  # the choice is kept
        assert await tab.page.text_content("#theme") == "Theme: dark"
        assert await tab.page.evaluate(background) == dark
        assert tab.errors == []
