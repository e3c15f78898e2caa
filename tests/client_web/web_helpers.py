"""A real server, a headless Chromium and a protocol client, for the web client's tests.

Imported by name (``import web_helpers``). Every browser test skips, saying why, when
Playwright or a Chromium (Debian's ``chromium`` package, ``/usr/bin/chromium``) is missing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from server.http.app import RunningServer, ServerConfig, start_server
from tests.server.servers import Client

ROOT = Path(__file__).parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
TIMEOUT_MS = 45_000  # only a failure waits it out; CI runs two test files at once
XSS = "<img src=x onerror=alert(1)>"



def chromium_path() -> str | None:
    """The Chromium to drive: ``$QUBIC_CHROMIUM``, else ``chromium`` on the PATH."""
    found = os.environ.get("QUBIC_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return found if Path(found).exists() else None


def need_browser() -> str:
    """The Chromium's path, or skip the test saying what is missing."""
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("no browser tests: Playwright for Python is not installed (pip install "
                    "-e '.[test]')")
    path = chromium_path()
    if path is None:
        pytest.skip("no browser tests: no Chromium found (install Debian's chromium package, "
                    "`apt-get install chromium`, or set QUBIC_CHROMIUM)")
    return path


@contextlib.asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    """A headless Chromium, closed afterwards even when the test fails."""
    path = need_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@contextlib.asynccontextmanager
async def running_server(db: Path, port: int = 0, **config: Any) -> AsyncIterator[RunningServer]:
    """A server on ``port`` (0: any free one) over the database ``db``; stopped afterwards."""
    settings = {"computer_workers": 1, "computer_move_time": 0.05, "grace": 60.0, **config}
    running = await start_server(ServerConfig(port=port, db_path=str(db), **settings))
    try:
        yield running
    finally:
        await running.stop()


class Page:
    """One browser tab on the web client, remembering the page's errors and dialogs."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("dialog", self._dialog)

    async def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        await dialog.dismiss()

    @classmethod
    async def open(cls, chromium: Any, url: str, width: int = 1280, height: int = 800) -> Page:
        context = await chromium.new_context(viewport={"width": width, "height": height})
        page = cls(await context.new_page())
        await page.page.goto(url)
        return page

    async def enter(self, name: str) -> None:
        """Say who we are on the connect screen and wait for the lobby."""
        await self.page.fill("#name", name)
        await self.page.click("#connect-form button")
        await self.page.wait_for_selector("#net.up")

    async def in_game(self) -> None:
        await self.page.wait_for_selector("#game:not([hidden]) .cell")

    async def ply(self) -> int:
        return int(await self.page.evaluate(
            "() => window.qubic.app.games.get(window.qubic.app.current).ply"))

    async def wait_ply(self, ply: int) -> None:
        await self.page.wait_for_function(
            "(ply) => { const a = window.qubic.app; const g = a.games.get(a.current);"
            " return g && g.ply >= ply; }", arg=ply)

    async def my_turn(self) -> None:
        await self.page.wait_for_function(
            "() => { const a = window.qubic.app; const g = a.games.get(a.current);"
            " return g && (g.over || (g.myTurn && a.pendingMove === null)); }")

    async def over(self) -> bool:
        return bool(await self.page.evaluate(
            "() => window.qubic.app.games.get(window.qubic.app.current).over"))

    async def join_room_of(self, host: Any, **options: Any) -> str:
        """``host`` (a protocol client) opens a private room (as O unless told) and this page
        joins it by typing the code; returns the game's id once the page shows it."""
        created = await host.request(t="private_create", **{"colour": "o", **options})
        await self.page.fill("input[name=code]", created["code"])
        await self.page.click("form.join button")
        game = str((await host.expect("game"))["id"])
        await self.page.wait_for_function("(id) => window.qubic.app.current === id", arg=game)
        await self.in_game()
        return game

    async def click_cell(self, name: str) -> None:
        await self.page.click(f'.cell[data-name="{name}"]')


async def client(running: RunningServer, name: str | None = None) -> Any:
    """A protocol client (``tests/server``'s) on ``running``; ``name`` says hello first."""
    ws = await websockets.connect(running.ws_url, max_size=None)
    c = Client(ws)
    if name is not None:
        await c.hello(name)
    return c


@contextlib.asynccontextmanager
async def protocol_client(running: RunningServer) -> AsyncIterator[Any]:
    """A protocol client on ``running`` (no hello yet), closed afterwards."""
    c = await client(running)
    try:
        yield c
    finally:
        await c.ws.close()


async def get_json(running: RunningServer, path: str) -> Any:
    """``GET path`` on ``running``'s HTTP API, decoded."""
    import json
    import urllib.request

    def fetch() -> Any:
        with urllib.request.urlopen(running.http_url + path, timeout=30) as response:
            return json.loads(response.read())

    import asyncio

    return await asyncio.to_thread(fetch)


@contextlib.asynccontextmanager
async def ann_in_a_browser_and_bob(tmp_path: Path) -> AsyncIterator[tuple[Page, Any]]:
    """A server, ann in the browser's lobby and bob a protocol client on it; at the end bob's
    socket is closed and the page must have shown no dialog and thrown nothing."""
    async with browser() as chromium, running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.enter("ann")
        bob = await client(running, "bob")
        try:
            yield tab, bob
        finally:
            await bob.ws.close()
        assert tab.dialogs == [] and tab.errors == []
