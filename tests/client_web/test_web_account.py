"""Accounts in the web client (issue 27, item 4), in headless Chromium against a real server:
protect this name (the recovery codes shown once), log in on this device, my devices (log one
out: that tab is closed and told so), log out everywhere else, recover with a code, and the
tokens the browser holds for its other names kept throughout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import web_helpers
from web_helpers import Page

PASSWORD = "correct horse battery"


async def protect(tab: Page, password: str = PASSWORD) -> list[str]:
    """Set a password on the account screen; the recovery codes it shows."""
    await tab.page.click("#account-link")
    await tab.page.wait_for_selector("#account:not([hidden]) #protect-form")
    await tab.page.fill("#password-new", password)
    await tab.page.fill("#password-again", password)
    await tab.page.click("#password-set")
    await tab.page.wait_for_selector("#recovery-codes li")
    return [c.strip() for c in await tab.page.locator("#recovery-codes code").all_text_contents()]


async def log_in(tab: Page, name: str, password: str = PASSWORD) -> None:
    await tab.page.fill("#name", name)
    if not await tab.page.is_visible("#login-password"):
        await tab.page.click("#login summary")
    await tab.page.fill("#login-password", password)
    await tab.page.click("#login-button")


async def kept_tokens(tab: Page) -> dict[str, Any]:
    return dict(json.loads(await tab.page.evaluate(
        "() => localStorage.getItem('qubic.tokens')") or "{}"))


async def devices_shown(tab: Page, count: int) -> None:
    await tab.page.wait_for_function(
        "(n) => document.querySelectorAll('#devices li').length === n", arg=count)


async def test_protect_log_in_elsewhere_and_log_that_device_out(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        home = await Page.open(chromium, running.http_url + "/")
        await home.enter("ann")
        codes = await protect(home)
        assert len(codes) == 10 and all(len(c) == 19 for c in codes)
        await devices_shown(home, 1)
        assert "(this device)" in (await home.page.text_content("#devices li") or "")
        # another browser: it has played as bob, then logs in as ann
        other = await Page.open(chromium, running.http_url + "/")
        await other.enter("bob")
        await other.page.click("#account-link")
        await other.page.click("#switch-player")
        await other.page.wait_for_selector("#connect:not([hidden])")
        await log_in(other, "ann", "not the password")
        await other.page.wait_for_function(
            "() => document.querySelector('#connect-error').textContent.includes('Wrong')")
        await log_in(other, "ann")
        await other.page.wait_for_selector("#net.up")
        assert await other.page.evaluate("() => window.qubic.app.me.name") == "ann"
        assert set(await kept_tokens(other)) == {"ann", "bob"}
        # home sees two devices and logs the other one out
        await home.page.click("#home")
        await home.page.click("#account-link")
        await devices_shown(home, 2)
        await home.page.click("#devices button.revoke")
        await devices_shown(home, 1)
        await other.page.wait_for_selector("#connect:not([hidden])")
        await other.page.wait_for_function(
            "() => document.querySelector('#connect-error').textContent.includes('logged out')")
        assert set(await kept_tokens(other)) == {"bob"}  # ann's dead token only
        assert home.errors == [] and other.errors == []


async def test_log_out_everywhere_else_and_recover(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        home = await Page.open(chromium, running.http_url + "/")
        await home.enter("ann")
        codes = await protect(home)
        away = [await Page.open(chromium, running.http_url + "/") for _ in range(2)]
        for tab in away:
            await log_in(tab, "ann")
            await tab.page.wait_for_selector("#net.up")
        await home.page.click("#home")
        await home.page.click("#account-link")
        await devices_shown(home, 3)
        await home.page.click("#logout-others")
        await devices_shown(home, 1)
        assert "2 devices logged out" in (await home.page.text_content("#account-note") or "")
        for tab in away:
            await tab.page.wait_for_selector("#connect:not([hidden])")
        # a lost password: a recovery code on a new device
        lost = await Page.open(chromium, running.http_url + "/")
        await lost.page.fill("#name", "ann")
        await lost.page.click("#login summary")
        await lost.page.click("#recover summary")
        await lost.page.fill("#recover-code", codes[0].upper())
        await lost.page.fill("#recover-password", "short")
        await lost.page.click("#recover-button")
        assert "at least 8" in (await lost.page.text_content("#connect-error") or "")
        await lost.page.fill("#recover-password", "a brand new secret")
        await lost.page.click("#recover-button")
        await lost.page.wait_for_selector("#net.up")
        await home.page.wait_for_selector("#connect:not([hidden])")  # logged out by the recovery
        assert lost.errors == [] and home.errors == []


async def test_a_password_being_typed_survives_lobby_traffic(tmp_path: Path) -> None:
    """The account screen is drawn again on every message; what is typed in its form, and the
    focus, stay (once they were wiped when an answer came in between typing and the click)."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        home = await Page.open(chromium, running.http_url + "/")
        await home.enter("ann")
        await home.page.click("#account-link")
        await devices_shown(home, 1)
        await home.page.fill("#password-new", PASSWORD)
        await home.page.fill("#password-again", PASSWORD)
        online = await home.page.evaluate("() => window.qubic.app.lobby.online")
        other = await Page.open(chromium, running.http_url + "/")
        await other.enter("bob")  # the lobby changes on ann's screen
        await home.page.wait_for_function(
            "(n) => window.qubic.app.lobby.online > n", arg=online)
        assert await home.page.input_value("#password-new") == PASSWORD
        assert await home.page.input_value("#password-again") == PASSWORD
        assert await home.page.evaluate("() => document.activeElement.id") == "password-again"
        await home.page.click("#password-set")
        await home.page.wait_for_selector("#recovery-codes li")
        assert home.errors == [] and other.errors == []
