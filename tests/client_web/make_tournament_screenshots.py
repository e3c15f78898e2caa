"""Screenshots of the web client's tournaments for docs/web/: the lobby's list and an arena's
page with its standings and games, at 1280x800 and 390x844 (the phone with touch). Run by hand
after changing the client:

    .venv/bin/python tests/client_web/make_tournament_screenshots.py

(Not a test: it writes files. Three players, protocol clients, play an arena for a few seconds
against two computer players the host entered, each playing the first free cell; ann, in the
browser, watches its page.)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

import web_helpers  # noqa: E402
from web_helpers import Page  # noqa: E402

from server.node import levers  # noqa: E402

OUT = web_helpers.ROOT / "docs" / "web"
SIZES = {"wide": (1280, 800), "phone": (390, 844)}


async def snap(page: Any, path: Path, full: bool = False) -> None:
    await page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    await page.screenshot(path=path, full_page=full)


async def play(running: Any, name: str, tid: str) -> None:
    """``name`` joins ``tid`` and plays its games: each move the first free cell."""
    me = await web_helpers.client(running, name)
    await me.request(t="tournament_join", tournament=tid)
    try:
        while True:
            game = await me.expect("game", tournament=tid, status="playing")
            moves = list(game["moves"])
            while True:
                if len(moves) % 2 == (0 if game["you"] == "x" else 1):
                    cell = next(c for c in range(64) if c not in moves)
                    await me.send(t="move", game=game["id"], cell=cell, ply=len(moves))
                message = await me.recv()
                if message.get("game") != game["id"]:
                    me.inbox.append(message)
                elif message["t"] == "move" and message["ply"] > len(moves):
                    moves.append(message["cell"])
                elif message["t"] == "end":
                    break
    except (TimeoutError, asyncio.CancelledError):
        pass
    finally:
        await me.ws.close()


async def shoot(chromium: Any, size: str, db: Path) -> None:
    width, height = SIZES[size]
    async with web_helpers.running_server(db, ai_move_time=0.01) as running:
        mod = await web_helpers.client(running, "marta")
        await levers.grant(running.store, "test", "marta", "moderator")
        host = await web_helpers.client(running)
        await host.hello(token=mod.token)
        arena = await host.request(t="tournament_create", name="Evening arena", kind="arena",
                                   starts_at=time.time(), minutes=60, clock="1+0", rated=True,
                                   computer_levels=[1, 2])
        await host.request(t="tournament_create", name="Sunday Swiss", kind="swiss",
                           starts_at=time.time() + 3720, rounds=5, clock="5+3", rated=True)
        tid = arena["info"]["id"]
        context = await chromium.new_context(
            viewport={"width": width, "height": height},
            has_touch=size != "wide", is_mobile=size != "wide")
        tab = Page(await context.new_page())
        page = tab.page
        await page.goto(running.http_url + "/")
        await tab.enter("ann")
        players = [asyncio.create_task(play(running, name, tid)) for name in ("bob", "cat", "dan")]
        await asyncio.sleep(10)  # a few games
        await page.evaluate("() => window.qubic.link.send('tournaments', {})")
        await page.wait_for_selector(f'#tournaments li[data-tournament="{tid}"]')
        await page.locator("#tournaments").scroll_into_view_if_needed()
        await page.locator("#tournaments").screenshot(path=OUT / f"tournaments-{size}.png")
        await page.click(f'#tournaments li[data-tournament="{tid}"] a.tournament-link')
        await page.wait_for_selector("table.standings tbody tr")
        await snap(page, OUT / f"tournament-{size}.png", full=size != "wide")
        for task in players:
            task.cancel()
        await asyncio.gather(*players, return_exceptions=True)
        await mod.ws.close()
        await host.ws.close()
        await context.close()


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    async with web_helpers.browser() as chromium:
        for size in SIZES:
            with tempfile.TemporaryDirectory() as tmp:
                await shoot(chromium, size, Path(tmp) / "q.db")
    print(f"written to {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
