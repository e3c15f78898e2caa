"""Screenshots of the web client for docs/web/: the lobby, a game in progress (levels and
3-D), the end screen and a player's page, at 1280x800, 390x844 and 360x740 (the phones with
touch). Run by hand after
changing the client:

    .venv/bin/python tests/client_web/make_screenshots.py

(Not a test: it writes files. It plays a short scripted game against a protocol client.)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

import web_helpers  # noqa: E402
from web_helpers import Page  # noqa: E402

OUT = web_helpers.ROOT / "docs" / "web"
SIZES = {"wide": (1280, 800), "phone": (390, 844), "small": (360, 740)}
X_MOVES = ["1a1", "1b2", "1c3"]
O_MOVES = ["2a1", "2b1", "2c1"]


async def snap(page: Any, path: Path) -> None:
    """A screenshot of what a player sees: nothing focused, scrolled to the top."""
    await page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    await page.screenshot(path=path)


async def shoot(chromium: Any, size: str, db: Path) -> None:
    width, height = SIZES[size]
    async with web_helpers.running_server(db) as running:
        cat = await web_helpers.client(running, "cat")
        dan = await web_helpers.client(running, "dan")
        bob = await web_helpers.client(running, "bob")
        try:
            seek = await dan.request(t="seek", variant="3x3x3", colour="x")
            await cat.send(t="accept_seek", seek=seek["seek"]["id"])
            live = (await dan.expect("game"))["id"]
            await dan.send(t="move", game=live, cell="2b2", ply=0)
            open_seek = await bob.request(t="seek", variant="4x4x4", rated=True,
                                          clock={"initial": 300, "increment": 3})
            context = await chromium.new_context(
                viewport={"width": width, "height": height},
                has_touch=size != "wide", is_mobile=size != "wide")
            tab = Page(await context.new_page())
            await tab.page.goto(running.http_url + "/")
            page = tab.page
            await tab.enter("ann")
            await page.wait_for_selector("tr[data-seek]")
            await page.wait_for_selector("li[data-game]")
            await snap(page, OUT / f"lobby-{size}.png")
            await bob.request(t="cancel_seek", seek=open_seek["seek"]["id"])
            game = await tab.join_room_of(bob, variant="4x4x4", rated=True,
                                          clock={"initial": 300, "increment": 3})
            for ply, (mine, theirs) in enumerate(zip(X_MOVES, O_MOVES, strict=True)):
                await tab.my_turn()
                await tab.click_cell(mine)
                await bob.expect("move", ply=2 * ply + 1)
                await bob.send(t="move", game=game, cell=theirs, ply=2 * ply + 1)
                await tab.wait_ply(2 * ply + 2)
            await bob.send(t="chat", game=game, text="nice diagonal")
            await page.fill("#chat-input", "thanks! yours is on level 2")
            await page.press("#chat-input", "Enter")
            await page.wait_for_function(
                "() => document.querySelectorAll('.chat-log li').length == 2")
            await page.hover('.cell[data-name="1d4"]')
            await snap(page, OUT / f"game-levels-{size}.png")
            await page.click("#view-cube")
            await page.mouse.move(0, 0)
            await snap(page, OUT / f"game-cube-{size}.png")
            await page.click("#view-levels")
            await tab.click_cell("1d4")
            await page.wait_for_selector("#result-text")
            await page.mouse.move(0, 0)
            await snap(page, OUT / f"end-{size}.png")
            await page.click("#view-cube")
            await page.mouse.move(0, 0)
            await snap(page, OUT / f"end-cube-{size}.png")
            await page.click(".seat.o a.player-link")  # bob's page, from his card
            await page.wait_for_selector("#player:not([hidden]) table.games")
            await page.mouse.move(0, 0)
            await snap(page, OUT / f"player-{size}.png")
        finally:
            await cat.ws.close()
            await dan.ws.close()
            await bob.ws.close()


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    async with web_helpers.browser() as chromium:
        for size in SIZES:
            with tempfile.TemporaryDirectory() as tmp:
                await shoot(chromium, size, Path(tmp) / "q.db")
    print(f"screenshots in {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
