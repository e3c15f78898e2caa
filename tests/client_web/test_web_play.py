"""End to end in headless Chromium against a real server: the computer to the end, a
protocol client as the opponent, chat shown as text, the private-room link, and coming back
after the server restarts."""

from __future__ import annotations

from pathlib import Path

import web_helpers
from web_helpers import XSS, Page


async def test_a_browser_player_plays_the_computer_to_the_end(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("ann")
        await page.select_option("select[name=variant]", "4x4x4")
        await page.select_option("select[name=colour]", "x")
        await page.select_option("select[name=level]", "1")
        await page.click("#play-ai")
        await tab.in_game()
        assert "Computer" in await page.text_content(".seat.o .name")
        # The first move typed on the keyboard, the rest clicked.
        await page.keyboard.type("1a1")
        await page.keyboard.press("Enter")
        await tab.wait_ply(1)
        assert await page.text_content('.cell[data-name="1a1"]') == "X"
        shown, last = await page.evaluate(
            "() => { const a = window.qubic.app; const g = a.games.get(a.current);"
            " return [document.querySelector('.cell.last').dataset.name,"
            " g.notation(g.moves[g.moves.length - 1])]; }")
        assert shown == last
        while True:
            await tab.my_turn()
            if await tab.over():
                break
            ply = await tab.ply()
            await page.click(".cell.playable >> nth=0")
            await tab.wait_ply(ply + 1)
        result = await page.text_content("#result-text")
        assert result is not None
        assert result.startswith(("You win", "You lose", "Draw")), result
        assert await page.is_visible("#rematch")
        # Step back to the start and forward one move.
        moves = await tab.ply()
        await page.click("#nav-first")
        assert await page.locator(".cell.x, .cell.o").count() == 0
        await page.keyboard.press("ArrowRight")
        assert await page.locator(".cell.x").count() == 1
        await page.click("#nav-live")
        assert await page.locator(".cell.x, .cell.o").count() == moves
        # The 3-D view draws the same game.
        await page.click("#view-cube")
        assert await page.is_visible("canvas.cube")
        assert tab.errors == []


async def test_a_browser_player_meets_a_protocol_client(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        await page.wait_for_selector('ul.players li:has-text("bob")')  # players online
        assert "ann" in (await page.text_content("ul.players") or "")
        seeking = await bob.request(t="seek", colour="o", rated=True)
        seek = seeking["seek"]["id"]
        await page.click(f'tr[data-seek="{seek}"] button.accept')
        await tab.in_game()
        game = (await bob.expect("game"))["id"]
        assert await page.text_content(".seat.o .name") == "bob"
        await tab.click_cell("1a1")
        assert (await bob.expect("move", ply=1))["notation"] == "1a1"
        await bob.send(t="move", game=game, cell="2b2", ply=1)
        await tab.wait_ply(2)
        assert await page.text_content('.cell[data-name="2b2"]') == "O"
        # Chat both ways, the markup shown as text and never run.
        await bob.send(t="chat", game=game, text=XSS)
        await page.wait_for_selector(".chat-log li")
        assert await page.text_content(".chat-log li .text") == XSS
        assert await page.text_content(".chat-log li .who") == "bob"
        await page.fill("#chat-input", XSS + " too")
        await page.press("#chat-input", "Enter")
        said = await bob.expect("chat", name="ann")
        assert said["text"] == XSS + " too"
        await page.wait_for_function(
            "() => document.querySelectorAll('.chat-log li').length == 2")
        assert await page.locator("img").count() == 0
        # A draw offer declined, then bob resigns.
        await bob.send(t="draw_offer", game=game)
        await page.click("#draw-decline")
        assert (await bob.expect("offer", kind="draw_declined"))["by"] == "x"
        await bob.send(t="resign", game=game)
        await page.wait_for_selector("#result-text")
        result = await page.text_content("#result-text") or ""
        assert result.startswith("You win 1-0 · resignation · rating +"), result
        gained = int(result.rsplit("+", 1)[1].split()[0])
        assert await page.text_content("#who") == f"ann · {1500 + gained}"  # the header too


async def test_a_challenge_from_a_protocol_client_is_declined_then_accepted(
    tmp_path: Path,
) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        terms = {"name": "ann", "variant": "4x4x4", "clock": None, "rated": False,
                 "colour": "o"}
        first = (await bob.request(t="challenge", **terms))["challenge"]["id"]
        await page.click(f'li[data-challenge="{first}"] button.decline')
        gone = await bob.expect("challenge_gone", reason="declined")
        assert gone["challenge"] == first
        second = (await bob.request(t="challenge", **terms))["challenge"]["id"]
        await page.click(f'li[data-challenge="{second}"] button.accept')
        await tab.in_game()
        assert (await bob.expect("game"))["you"] == "o"
        assert await page.text_content(".seat.o .name") == "bob"


async def test_the_private_room_link_opens_the_room(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        host = await Page.open(chromium, running.http_url + "/")
        await host.enter("ann")
        await host.page.select_option("select[name=colour]", "x")
        await host.page.click("#private-create")
        link = await host.page.wait_for_selector("#room-link")
        url = await link.text_content()
        code = await host.page.text_content("#room-code")
        assert url == f"{running.http_url}/#join={code}"
        guest = await Page.open(chromium, url, width=390, height=844)
        await guest.enter("cat")
        await guest.in_game()
        await host.in_game()
        assert await guest.page.text_content(".seat.x .name") == "ann"
        assert await host.page.text_content(".seat.o .name") == "cat"
        await host.click_cell("4d4")
        await guest.wait_ply(1)
        assert await guest.page.text_content('.cell[data-name="4d4"]') == "X"
        assert host.errors == [] and guest.errors == []


async def test_the_game_resumes_after_the_server_restarts(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    async with web_helpers.browser() as chromium:
        async with web_helpers.running_server(db) as running:
            port = running.port
            tab = await Page.open(chromium, running.http_url + "/")
            page = tab.page
            await tab.enter("ann")
            bob = await web_helpers.client(running, "bob")
            try:
                game = await tab.join_room_of(bob)
                await tab.click_cell("1a1")
                await bob.expect("move", ply=1)
                await bob.send(t="move", game=game, cell="2b2", ply=1)
                await tab.wait_ply(2)
            finally:
                await bob.ws.close()
            token = bob.token
        await page.wait_for_selector("#net.down, #net.connecting")
        async with web_helpers.running_server(db, port=port) as running:
            await page.wait_for_selector("#net.up")
            await page.wait_for_function(
                "() => document.querySelectorAll('.cell.x, .cell.o').length === 2")
            assert await tab.ply() == 2
            await tab.my_turn()
            await tab.click_cell("3c3")
            await tab.wait_ply(3)
            bob = await web_helpers.client(running)
            try:
                await bob.hello(token=token)
                state = await bob.request(t="watch", game=game)
                assert state["moves"][2] == 42  # 3c3, as the browser played it
            finally:
                await bob.ws.close()
            # A reload keeps the player (the token in the browser's storage) and the game.
            await page.reload()
            await page.wait_for_selector("#net.up")
            await tab.in_game()
            await page.wait_for_function(
                "() => document.querySelectorAll('.cell.x, .cell.o').length === 3")
            assert await page.text_content("#who .name") == "ann"
        assert tab.errors == [] or all("WebSocket" in e or "ERR_CONNECTION" in e
                                       for e in tab.errors), tab.errors


async def test_abort_and_claim(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db", grace=1.0) as running:
        tab = await Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("ann")
        bob = await web_helpers.client(running, "bob")
        try:
            # Called off before both have moved.
            await tab.join_room_of(bob)
            await page.click("#abort")
            await page.wait_for_selector("#result-text")
            assert (await page.text_content("#result-text") or "").startswith("Aborted")
            await bob.expect("end", reason="abort")
            await page.click("#to-lobby")
            # Bob leaves after both have moved: the claim button comes, and wins.
            game = await tab.join_room_of(bob)
            await tab.click_cell("1a1")
            await bob.expect("move", ply=1)
            await bob.send(t="move", game=game, cell="2b2", ply=1)
            await tab.wait_ply(2)
        finally:
            await bob.ws.close()
        await page.click("#claim")
        await page.wait_for_selector("#result-text")
        assert (await page.text_content("#result-text") or "").startswith(
            "You win 1-0 · the opponent left")
        assert tab.errors == []


async def test_a_live_game_is_watched_from_the_lobby(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("ann")
        cat = await web_helpers.client(running, "cat")
        dan = await web_helpers.client(running, "dan")
        try:
            seek = await cat.request(t="seek", variant="3x3x3", colour="x")
            await dan.send(t="accept_seek", seek=seek["seek"]["id"])
            game = (await cat.expect("game"))["id"]
            await cat.send(t="move", game=game, cell="2b2", ply=0)
            await page.click(f'li[data-game="{game}"] button')
            await tab.in_game()
            assert await page.locator(".level").count() == 3
            await tab.wait_ply(1)
            assert await page.text_content('.cell[data-name="2b2"]') == "X"
            await page.click('.cell[data-name="1a1"]')
            assert await page.text_content("#toast") == "You are watching this game."
            assert await page.locator("#resign, #abort, #draw-offer").count() == 0
            await dan.send(t="move", game=game, cell="1a1", ply=1)
            await tab.wait_ply(2)
            assert await page.text_content('.cell[data-name="1a1"]') == "O"
            await page.click("#to-lobby")
            await page.wait_for_selector("#lobby:not([hidden])")
        finally:
            await cat.ws.close()
            await dan.ws.close()
        assert tab.errors == []
