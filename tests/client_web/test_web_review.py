"""The web client's game review and analysis board (issue 29 items 1-2), in headless Chromium
at desktop and phone sizes: a review opened by link with no session and from a finished game,
stepped through with keys and buttons; "analyse from here"; the analysis board set up from
pasted moves, shared as a link, played on and taken back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import web_helpers
from web_helpers import Page

QUICK_WIN = ["1a1", "4d4", "1b1", "4c4", "1c1", "4a1", "1d1"]  # O leaves 1d1 open
SIZES = [(1280, 800), (390, 844)]


async def finished_game(running: Any) -> str:
    """ann (X) and bob (O), protocol clients, play QUICK_WIN; returns the game's id."""
    ann = await web_helpers.client(running, "ann")
    bob = await web_helpers.client(running, "bob")
    try:
        created = await ann.request(t="private_create", colour="x")
        await bob.send(t="private_join", code=created["code"])
        game = str((await ann.expect("game"))["id"])
        await bob.expect("game")
        for ply, cell in enumerate(QUICK_WIN):
            player = ann if ply % 2 == 0 else bob
            ref = await player.send(t="move", game=game, cell=cell, ply=ply)
            await player.expect("ack", ref=ref)
        await ann.expect("end", game=game)
    finally:
        await ann.ws.close()
        await bob.ws.close()
    return game


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["wide", "phone"])
async def test_a_review_by_link_then_analyse_from_here(
        tmp_path: Path, width: int, height: int) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        game = await finished_game(running)
        tab = await Page.open(chromium, f"{running.http_url}/#review={game}", width, height)
        page = tab.page
        await page.wait_for_selector("#review:not([hidden]) #review-moves .move >> nth=6")
        assert await page.is_hidden("#connect")  # no session needed to read a review
        marks = await page.locator("#review-moves .move").all_text_contents()
        assert marks == ["X 1a1!", "O 4d4", "X 1b1", "O 4c4", "X 1c1", "O 4a1?!", "X 1d1!"]
        # the list follows the current move, marked, even when it scrolls (one row shown here:
        # the list's height set through the CSSOM, which the page's CSP allows)
        await page.evaluate(
            "() => { const l = document.querySelector('#review-moves');"
            " l.style.maxHeight = `${l.querySelector('.move').offsetHeight + 4}px`; }")
        for key, current in (("End", "X 1d1!"), ("Home", None), ("ArrowRight", "X 1a1!")):
            await page.keyboard.press(key)
            seen = await page.evaluate(
                """() => { const l = document.querySelector('#review-moves');
                const c = l.querySelector('[aria-current]'); if (!c) return null;
                const a = l.getBoundingClientRect(); const b = c.getBoundingClientRect();
                return [c.textContent, b.top >= a.top - 0.5 && b.bottom <= a.bottom + 0.5]; }""")
            assert seen == (None if current is None else [current, True]), (key, seen)
        await page.keyboard.press("Home")
        assert await page.locator("#review .cell.x, #review .cell.o").count() == 0  # the start
        for _ in range(6):
            await page.keyboard.press("ArrowRight")
        explain = await page.text_content("#review-explain")
        assert explain is not None and "6. O 4a1?!" in explain and "a threat missed" in explain
        assert "Best: 1d1" in explain
        assert await page.locator('#review .cell.best[data-name="1d1"]').count() == 1
        assert await page.locator("#review .cell.x, #review .cell.o").count() == 6
        await page.click("#review-next")
        assert await page.locator("#review .cell.win").count() == 4
        await page.keyboard.press("Home")
        assert await page.locator("#review .cell.x, #review .cell.o").count() == 0
        await page.click('#review-moves .move >> nth=5')  # straight to O's 4a1
        await page.click("#review-analyse")
        await page.wait_for_selector("#analysis:not([hidden])")
        assert await page.evaluate("() => location.hash") == (
            "#analysis=1a1+4d4+1b1+4c4+1c1+4a1")
        await page.wait_for_function(
            "() => document.querySelector('#analysis-verdict').textContent.startsWith('X wins')")
        assert await page.locator('#analysis .cell.best[data-name="1d1"]').count() == 1
        first = page.locator("#analysis-moves-list .verdict-move >> nth=0")
        assert await first.text_content() == "1d1 wins 1"
        await first.click()  # the winning move: the game is over on the board
        assert await page.locator("#analysis .cell.win").count() == 4
        await page.click("#analysis-back")
        assert await page.locator("#analysis .cell.x, #analysis .cell.o").count() == 6
        await page.click("#analysis-leave")
        await page.wait_for_selector("#connect:not([hidden])")
        assert tab.errors == [] and tab.dialogs == []


async def test_a_finished_game_opens_its_review(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        game = await tab.join_room_of(bob, colour="x")  # bob X, ann O
        for ply, cell in enumerate(QUICK_WIN):
            if ply % 2 == 0:
                ref = await bob.send(t="move", game=game, cell=cell, ply=ply)
                await bob.expect("ack", ref=ref)
            else:
                await tab.wait_ply(ply)
                await tab.click_cell(cell)
        await tab.wait_ply(len(QUICK_WIN))
        await page.click("#review-game")
        await page.wait_for_selector("#review:not([hidden]) #review-moves .move >> nth=6")
        assert await page.evaluate("() => location.hash") == f"#review={game}"
        title = await page.text_content("#review-title")
        assert title is not None and "bob (X)" in title and "ann (O)" in title
        await page.click("#review-last")
        assert await page.locator("#review .cell.x, #review .cell.o").count() == 7
        await page.click("#review-leave")
        await page.wait_for_selector("#lobby:not([hidden])")


async def test_the_analysis_board_by_link_and_pasted_moves(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, f"{running.http_url}/#analysis=", 1280, 800)
        page = tab.page
        await page.wait_for_function(
            "() => document.querySelector('#analysis-verdict').textContent.startsWith('X wins')")
        assert "by the proof" in (await page.text_content("#analysis-verdict") or "")
        await page.fill("#analysis-moves", "1a1 2b2")
        await page.click(".analysis-paste button")
        assert await page.evaluate("() => location.hash") == "#analysis=1a1+2b2"
        assert await page.locator("#analysis .cell.x, #analysis .cell.o").count() == 2
        await page.fill("#analysis-moves", "1a1 1a1")  # a cell twice: refused in words
        await page.click(".analysis-paste button")
        assert "each once" in (await page.text_content("#toast") or "")
        await page.click('#analysis .cell[data-name="3c3"]')
        assert await page.evaluate("() => location.hash") == "#analysis=1a1+2b2+3c3"
        # the link opens the same position in another tab
        other = await Page.open(chromium, f"{running.http_url}/#analysis=1a1+2b2+3c3", 390, 844)
        await other.page.wait_for_selector("#analysis:not([hidden])")
        assert await other.page.locator("#analysis .cell.x, #analysis .cell.o").count() == 3
        # 3x3x3: the centre is the only winning first move
        await page.select_option("#analysis-variant", "3x3x3")
        await page.wait_for_selector('#analysis-moves-list .verdict-move.good')
        good = await page.locator("#analysis-moves-list .verdict-move.good").all_text_contents()
        assert [g.split()[0] for g in good] == ["2b2"]
        assert "&variant=3x3x3" in await page.evaluate("() => location.hash")
        assert tab.errors == [] and other.errors == []
