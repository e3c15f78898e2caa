"""Moderation from the web client (issue 27, item 8), in headless Chromium against a real
server: a moderator removes a chat line (gone from the players' screens), works the reports'
queue and bans from it; a player reports another from a chat line; a kicked player's page
stays away and says why."""

from __future__ import annotations

import asyncio
from pathlib import Path

import web_helpers

from server.node import levers


async def test_a_moderator_removes_a_line_and_bans_from_the_reports_queue(
    tmp_path: Path,
) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await web_helpers.Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("marta")
        await levers.grant(running.store, "test", "marta", "moderator")
        await page.reload()  # the welcome now lists the role
        await page.wait_for_selector("#moderation:not([hidden]) h2")
        ann = await web_helpers.client(running, "ann")
        bob = await web_helpers.client(running, "bob")
        created = await ann.request(t="private_create", colour="x")
        await bob.send(t="private_join", code=created["code"])
        game = (await ann.expect("game"))["id"]
        await bob.expect("game")
        await page.evaluate("(id) => { location.hash = `game=${id}`; }", game)
        await tab.in_game()  # the moderator watches: the spectators' chat is on screen
        cleo = await web_helpers.client(running, "cleo")
        await cleo.request(t="watch", game=game)
        await cleo.request(t="chat", game=game, text="you are all idiots")
        line = (await cleo.expect("chat", text="you are all idiots"))["line"]
        await page.wait_for_selector(f'.chat-log li[data-line="{line}"] .chat-tool.remove')
        await page.click(f'.chat-log li[data-line="{line}"] .chat-tool.remove')
        assert (await cleo.expect("chat_removed", game=game))["line"] == line
        await page.wait_for_function(
            "() => document.querySelectorAll('.chat-log li').length === 0")
        # ann reports bob; the moderator refreshes the queue and bans him from it
        assert (await ann.request(t="report", name="bob", reason="insults"))["t"] == "ack"
        await page.click("#home")
        await page.click("#moderation .mod-refresh")
        row = '#moderation tr[data-report] '
        await page.wait_for_selector(row + "td.about:has-text('bob')")
        assert await page.text_content(row + "td.reason") == "insults"
        await page.click(row + "button.mod-ban")
        banned = await bob.expect("error", code="banned")
        assert "insults" in banned["message"]
        await page.click(row + "button.mod-resolve")
        await page.wait_for_function("() => !document.querySelector('#moderation tr[data-report]')")
        log = await levers.audit(running.store)
        while len(log) < 4:  # the resolve's ack may still be on its way
            await asyncio.sleep(0.05)
            log = await levers.audit(running.store)
        assert [(e.actor, e.action, e.target) for e in log] == [
            ("marta", "resolve-report", "1"), ("marta", "ban", "bob"),
            ("marta", "remove-chat", game), ("test", "grant", "marta")]
        await ann.ws.close()
        await cleo.ws.close()
        assert tab.dialogs == [] and tab.errors == []


async def test_a_player_reports_from_a_chat_line_and_a_kick_keeps_the_page_away(
    tmp_path: Path,
) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await web_helpers.Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("ann")
        bob = await web_helpers.client(running, "bob")
        assert await page.is_hidden("#moderation")  # not a moderator: no panel
        game = await tab.join_room_of(bob)
        await bob.request(t="chat", game=game, text="spam spam spam")
        await page.wait_for_selector(".chat-log li .chat-tool.report")
        assert await page.locator(".chat-log li .chat-tool.remove").count() == 0
        await page.click(".chat-log li .chat-tool.report")
        await page.wait_for_selector("#toast.shown:has-text('reported')")
        queue = await levers.reports(running.store)
        assert [(r.reporter, r.reported, r.game) for r in queue] == [("ann", "bob", game)]
        assert queue[0].reason == 'said in the chat: "spam spam spam"'
        await levers.kick(running.store, "test", "ann", "calm down")
        await page.wait_for_selector("#connect:not([hidden])")
        assert "calm down" in (await page.text_content("#connect-error") or "")
        assert not await page.evaluate("() => window.qubic.link.connected")
        await page.click("#connect-form button")  # back by choice, with the same token
        await page.wait_for_selector("#net.up")
        assert await page.text_content("#who .name") == "ann"
        await bob.ws.close()
        assert tab.dialogs == [] and tab.errors == []


async def test_a_moderator_watching_sees_both_chats_marked_and_removes_a_players_line(
    tmp_path: Path,
) -> None:
    """The players' chat reaches a moderator's screen beside the spectators', each line
    saying which chat it is in; its removal takes it off the players' screens too."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await web_helpers.Page.open(chromium, running.http_url + "/")
        page = tab.page
        await tab.enter("marta")
        await levers.grant(running.store, "test", "marta", "moderator")
        await page.reload()
        await page.wait_for_selector("#moderation:not([hidden]) h2")
        ann = await web_helpers.client(running, "ann")
        bob = await web_helpers.client(running, "bob")
        created = await ann.request(t="private_create", colour="x")
        await bob.send(t="private_join", code=created["code"])
        game = (await ann.expect("game"))["id"]
        await bob.expect("game")
        await page.evaluate("(id) => { location.hash = `game=${id}`; }", game)
        await tab.in_game()
        assert await page.text_content(".chat-title") == "Both chats"
        cleo = await web_helpers.client(running, "cleo")
        await cleo.request(t="watch", game=game)
        await cleo.request(t="chat", game=game, text="go ann")
        await ann.request(t="chat", game=game, text="you play like a fool")
        line = (await bob.expect("chat", text="you play like a fool"))["line"]
        said = f'.chat-log li[data-line="{line}"]'
        await page.wait_for_selector(said + " .chat-tool.remove")
        assert await page.text_content(said + " .channel") == "players"
        assert await page.text_content('.chat-log li[data-channel="spectators"] .channel') \
            == "spectators"
        await page.click(said + " .chat-tool.remove")
        for player in (ann, bob):
            assert (await player.expect("chat_removed", game=game))["line"] == line
        await page.wait_for_function(
            "() => document.querySelectorAll('.chat-log li').length === 1")
        assert (await cleo.request(t="watch", game=game))["chat"][0]["text"] == "go ann"
        for client in (ann, bob, cleo):
            await client.ws.close()
        assert tab.dialogs == [] and tab.errors == []
