"""The web client's puzzles in headless Chromium against a real server: a puzzle solved move
by move with the rating change shown, a wrong move answered with the solution, the puzzle of
the day and a streak, at desktop and phone sizes (screenshots in docs/web/)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import web_helpers
from web_helpers import Page

from engine import variant
from engine.rules.notation import format_cell
from server.http.app import RunningServer
from server.store import puzzles as ops
from server.store.puzzles import PuzzleStore, StoredPuzzle

DOCS = Path(__file__).parents[2] / "docs" / "web"
G = variant("4x4x4")


async def shown_puzzle(tab: Page, running: RunningServer) -> StoredPuzzle:
    await tab.page.wait_for_selector("#puzzles .puzzle-feedback.solving")
    meta = await tab.page.text_content("#puzzles .puzzle-meta") or ""
    found = re.search(r"puzzle #(\d+)", meta)
    assert found, meta
    stored = await PuzzleStore(running.hub.store).read(ops.puzzle_by_id(int(found.group(1))))
    assert stored is not None
    assert await tab.page.text_content("#puzzle-title") == stored.puzzle.title
    return stored


async def shot(tab: Page, name: str, where: Path) -> None:
    """A screenshot in ``where`` (the test's temporary folder); in docs/web/ instead when
    QUBIC_DOCS_SHOTS=1 asks for the documentation's pictures to be made again (a test run
    leaves the source tree as it found it)."""
    await tab.page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    folder = DOCS if os.environ.get("QUBIC_DOCS_SHOTS") == "1" else where
    await tab.page.screenshot(path=str(folder / name))


async def solve_in_the_page(tab: Page, stored: StoredPuzzle) -> None:
    step = stored.puzzle.solution
    while True:
        cell = min(step.accepted)
        await tab.page.click(f'#puzzles .cell[data-name="{format_cell(cell, G)}"]')
        reply, nxt = step.accepted[cell]
        if nxt is None or not nxt.accepted:
            break
        assert reply is not None
        await tab.page.wait_for_function(
            "(name) => document.querySelector('#puzzles .puzzle-feedback').textContent"
            ".includes('answered ' + name)", arg=format_cell(reply, G))
        step = nxt
    await tab.page.wait_for_selector("#puzzles .puzzle-feedback.solved")


async def test_a_puzzle_solved_and_one_missed_at_desktop_size(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/")
        await tab.enter("ann")
        await tab.page.click("#puzzles-link")
        stored = await shown_puzzle(tab, running)
        await shot(tab, "puzzle-wide.png", tmp_path)
        await solve_in_the_page(tab, stored)
        feedback = await tab.page.text_content("#puzzles .puzzle-feedback") or ""
        assert re.fullmatch(r"Solved! Your puzzle rating: \d+ \(\+\d+\)\.", feedback), feedback
        await tab.page.wait_for_selector("#puzzles .puzzle-history li.solved")
        await shot(tab, "puzzle-solved-wide.png", tmp_path)
        await tab.page.click("#puzzle-next")
        second = await shown_puzzle(tab, running)
        assert second.id != stored.id
        taken = set(second.puzzle.position)
        wrong = next(c for c in range(64) if c not in taken and c not in second.puzzle.first_moves)
        await tab.page.click(f'#puzzles .cell[data-name="{format_cell(wrong, G)}"]')
        await tab.page.wait_for_selector("#puzzles .puzzle-feedback.wrong")
        feedback = await tab.page.text_content("#puzzles .puzzle-feedback") or ""
        solution = " ".join(format_cell(c, G) for c in second.puzzle.solution.main_line())
        assert f"the solution was {solution}." in feedback and "(−" in feedback
        if wrong not in second.puzzle.solution.main_line():  # the move tried stays marked
            assert await tab.page.text_content(
                f'#puzzles .cell.tried[data-name="{format_cell(wrong, G)}"]') == "✗"
        await shot(tab, "puzzle-wrong-wide.png", tmp_path)
        # the puzzle of the day
        await tab.page.click("#puzzle-daily")
        await shown_puzzle(tab, running)
        assert "Puzzle of the day" in (await tab.page.text_content("#puzzles .puzzle-meta") or "")
        assert tab.errors == [] and tab.dialogs == []


async def test_a_streak_on_a_phone(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/", width=390, height=844)
        await tab.enter("bob")
        await tab.page.click("#puzzles-link")
        await shown_puzzle(tab, running)
        await tab.page.click("#puzzle-streak")
        await tab.page.wait_for_function(
            "() => document.querySelector('#puzzles .puzzle-meta').textContent"
            ".includes('streak 0')")
        stored = await shown_puzzle(tab, running)
        box = await tab.page.locator("#puzzles .cell").first.bounding_box()
        assert box is not None and box["width"] >= 30
        await shot(tab, "puzzle-phone.png", tmp_path)
        await solve_in_the_page(tab, stored)
        assert "streak 1 (best 1)" in (await tab.page.text_content("#puzzles .puzzle-meta") or "")
        await tab.page.click("#puzzle-streak-next")
        following = await shown_puzzle(tab, running)
        assert following.id != stored.id
        await shot(tab, "puzzle-streak-phone.png", tmp_path)
        assert tab.errors == [] and tab.dialogs == []
