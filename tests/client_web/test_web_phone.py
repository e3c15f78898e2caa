"""The web client as a person sees it (issue 38, items 16-22): the phone's game and lobby at
390x844 and 360x740 with touch (the levels in a 2x2 grid, the actions in a bar on screen,
every target at least 44x44 px, names on one line, the page at the top), the board as one Tab
stop, challenges answered where the player is, quick pairing's own clock, the links that lead
somewhere without a name, a device logged out, and the messages a player must not miss. Read
from layout boxes and computed styles in headless Chromium against a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import web_helpers
from web_helpers import Page

LONG = "Maximilian-Fitzgerald_xy"  # 24 characters, a name at its longest
PHONES = [(390, 844), (360, 740)]

# The page's measures (measure.js): targets and contrast.
MEASURE = (Path(__file__).parent / "measure.js").read_text()


async def phone(chromium: Any, url: str, width: int, height: int) -> Page:
    context = await chromium.new_context(viewport={"width": width, "height": height},
                                         has_touch=True, is_mobile=True)
    page = Page(await context.new_page())
    await page.page.goto(url)
    return page


async def small_targets(tab: Page, *roots: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for root in roots:
        found += await tab.page.evaluate(f"(root) => ({MEASURE}).targets(root)", root)
    return [t for t in found if t["width"] < 44 - 0.01 or t["height"] < 44 - 0.01]


async def box(tab: Page, selector: str) -> dict[str, float]:
    found = await tab.page.locator(selector).bounding_box()
    assert found is not None, f"{selector} has no box"
    return dict(found)


async def test_quick_pairing_uses_its_own_clock_and_two_players_meet(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        ann = await Page.open(chromium, running.http_url + "/")
        await ann.enter("ann")
        # a clock chosen for the computer is the computer's only
        await ann.page.select_option("select[name=ai_clock]", "5+3")
        await ann.page.click("#quick")
        await ann.page.wait_for_function("() => window.qubic.app.queued !== null")
        assert await ann.page.evaluate("() => window.qubic.app.queued") == "4x4x4 untimed"
        bob = await Page.open(chromium, running.http_url + "/")
        await bob.enter("bob")
        await bob.page.click("#quick")  # the defaults, as ann's
        await ann.in_game()
        await bob.in_game()
        ids = [await t.page.evaluate("() => window.qubic.app.current") for t in (ann, bob)]
        assert ids[0] == ids[1]
        assert "untimed · rated" in (await ann.page.text_content(".status .info") or "")
        assert ann.errors == [] and bob.errors == []


@pytest.mark.parametrize(("width", "height"), PHONES)
async def test_the_phone_is_a_first_class_board(tmp_path: Path, width: int, height: int) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await phone(chromium, running.http_url + "/", width, height)
        page = tab.page
        await tab.enter("ann")
        # the lobby and the header: every target a finger's size
        await page.wait_for_selector("#lobby:not([hidden]) #quick")
        assert await small_targets(tab, "header.top", "#lobby") == []
        other = await web_helpers.client(running, LONG)
        try:
            await page.evaluate("() => window.scrollTo(0, 400)")
            game = await tab.join_room_of(other, rated=True,
                                          clock={"initial": 300, "increment": 3})
            await page.wait_for_function("() => window.scrollY === 0")  # opened at the top
            # the four levels in a 2x2 grid: 1 and 2 side by side, 3 and 4 under them
            levels = [await box(tab, f'.level[data-level="{z}"]') for z in (1, 2, 3, 4)]
            assert abs(levels[0]["y"] - levels[1]["y"]) < 1 and levels[1]["x"] > levels[0]["x"]
            assert levels[2]["y"] > levels[0]["y"] + levels[0]["height"] - 1
            assert abs(levels[2]["x"] - levels[0]["x"]) < 1
            assert all(b["x"] >= 0 and b["x"] + b["width"] <= width + 0.5 for b in levels)
            assert await page.evaluate("() => document.documentElement.scrollWidth") <= width
            # the players' cards: ratings, "(you)", the long name on one line cut with …
            for part in (".seat.x .rating", ".seat.o .rating", ".seat .you"):
                assert await page.is_visible(part), part
                shown = await box(tab, part)
                assert shown["x"] >= 0 and shown["x"] + shown["width"] <= width
            name = await page.evaluate(
                """() => { const e = document.querySelector('.seat.o .name');
                const r = document.createRange(); r.selectNodeContents(e);
                const s = getComputedStyle(e);
                return { lines: new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size,
                  cut: e.scrollWidth > e.clientWidth, overflow: s.textOverflow,
                  title: e.title }; }""")
            assert name["lines"] == 1, name
            assert not name["cut"] or name["overflow"] == "ellipsis", name
            assert name["title"] == LONG
            # the actions in a bar on screen without scrolling, and everything a finger's size
            bar = await box(tab, "#game .actions")
            assert bar["y"] >= 0 and bar["y"] + bar["height"] <= height + 0.5, bar
            assert await page.evaluate(
                "() => getComputedStyle(document.querySelector('#game .actions')).position"
            ) == "fixed"
            abort = await box(tab, "#abort")
            assert abort["y"] + abort["height"] <= height
            assert await small_targets(tab, "header.top", "#game") == []
            # the moves played, then the actions again at the end of the board's scroll
            await tab.click_cell("1a1")
            await other.expect("move", ply=1)
            await other.send(t="move", game=game, cell="2b2", ply=1)
            await tab.wait_ply(2)
            await page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
            resign = await box(tab, "#resign")
            assert resign["y"] >= 0 and resign["y"] + resign["height"] <= height
            typed = await box(tab, "#cell-input")  # the page ends above the bar
            assert typed["y"] + typed["height"] <= (await box(tab, "#game .actions"))["y"]
            assert await small_targets(tab, "header.top", "#game") == []
            await page.click("#resign")
            await page.click("#resign")  # "Really resign?"
            await page.wait_for_selector("#result-text")
            # a challenge while scrolled down: Accept in sight, the cell box not covered
            await page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
            await other.send(t="challenge", name="ann", colour="o")
            accept = page.locator("#challenge-bar button.accept")
            await accept.wait_for()
            shown = await box(tab, "#challenge-bar button.accept")
            assert shown["y"] >= 0 and shown["y"] + shown["height"] <= height
            for place in ("top", "center"):  # the page at the top, then the box in the middle
                await page.evaluate(
                    "(place) => place === 'top' ? window.scrollTo(0, 0) : document"
                    ".querySelector('#cell-input').scrollIntoView({ block: 'center' })", place)
                bar_box = await box(tab, "#challenge-bar")
                cell_box = await box(tab, "#cell-input")
                assert (bar_box["y"] + bar_box["height"] <= cell_box["y"]
                        or cell_box["y"] + cell_box["height"] <= bar_box["y"]), (place, bar_box,
                                                                                cell_box)
            assert await small_targets(tab, "#challenge-bar") == []
            await page.evaluate("() => window.scrollTo(0, 300)")
            await accept.click()
            await page.wait_for_function(
                "(id) => { const a = window.qubic.app; return a.current && a.current !== id"
                " && a.screen === 'game'; }", arg=game)
            await page.wait_for_function("() => window.scrollY === 0")
            assert await page.is_hidden("#challenge-bar")
        finally:
            await other.ws.close()
        assert tab.errors == [] and tab.dialogs == []


async def test_the_board_is_one_tab_stop_with_arrows_inside(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        await tab.join_room_of(bob)  # ann is X
        stops = await page.evaluate(
            "() => [...document.querySelectorAll('#game .cell')]"
            ".filter((c) => c.tabIndex === 0).length")
        assert stops == 1
        roles = await page.evaluate(
            """() => [document.querySelectorAll('#game [role=grid]').length,
              document.querySelectorAll('#game [role=grid] [role=row]').length,
              document.querySelectorAll('#game [role=row] [role=gridcell] .cell').length,
              document.querySelector('#game [role=grid]').getAttribute('aria-label')]""")
        assert roles == [4, 16, 64, "Level 1"]
        # Tab from the view switches reaches the board once, then its actions
        await page.focus("#view-levels")
        names = []
        for _ in range(6):
            await page.keyboard.press("Tab")
            names.append(await page.evaluate(
                "() => document.activeElement.dataset.name || document.activeElement.id"
                " || document.activeElement.tagName"))
        cell = next(i for i, n in enumerate(names) if n == "1a4")
        assert sum(1 for n in names if len(n) == 3 and n[0].isdigit()) == 1, names
        assert names.index("abort") - cell <= 3, names
        # the arrows inside a level, PageUp to the level above, Enter plays
        await page.focus('.cell[data-name="1a4"]')
        for key, name in (("ArrowRight", "1b4"), ("ArrowDown", "1b3"), ("PageUp", "2b3"),
                          ("ArrowLeft", "2a3"), ("PageDown", "1a3")):
            await page.keyboard.press(key)
            assert await page.evaluate("() => document.activeElement.dataset.name") == name, key
        stops = await page.evaluate(
            "() => [...document.querySelectorAll('#game .cell')].filter((c) => c.tabIndex === 0)"
            ".map((c) => c.dataset.name)")
        assert stops == ["1a3"]
        label = await page.get_attribute('.cell[data-name="1a3"]', "aria-label")
        assert label is not None and label.startswith("1a3, empty")
        await page.keyboard.press("Enter")
        assert (await bob.expect("move", ply=1))["notation"] == "1a3"


async def test_challenges_are_answered_listed_and_cancelled_where_the_player_is(
    tmp_path: Path,
) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        await bob.request(t="lobby_sub")
        await page.click("#rules-link")  # away from the lobby
        first = (await bob.request(t="challenge", name="ann", colour="o"))["challenge"]["id"]
        row = page.locator(f'#challenge-bar li[data-challenge="{first}"]')
        await row.wait_for()
        assert "bob challenges you" in (await row.text_content() or "")
        # the page renders on every message: the bar is not built again under the focus
        await row.locator("button.accept").focus()
        seek = (await bob.request(t="seek", variant="4x4x4"))["seek"]["id"]
        await page.wait_for_function("(id) => window.qubic.app.lobby.seeks.has(id)", arg=seek)
        assert await page.evaluate(
            "(id) => document.activeElement === document.querySelector("
            "`#challenge-bar li[data-challenge='${id}'] button.accept`)", first)
        await bob.request(t="cancel_seek", seek=seek)
        await row.locator("button.decline").click()
        assert (await bob.expect("challenge_gone", reason="declined"))["challenge"] == first
        await page.wait_for_selector("#challenge-bar", state="hidden")
        # ann's own challenge: listed, cancelled
        await page.click("#rules-back")
        await page.click("#home")
        challenge = page.locator('.players li[data-player="bob"] button.challenge')
        await challenge.click()
        sent = (await bob.expect("challenge"))["challenge"]["id"]
        waiting = page.locator(f'#challenge-bar li[data-outgoing="{sent}"]')
        await waiting.wait_for()
        assert "Waiting for bob" in (await waiting.text_content() or "")
        await waiting.locator("button.cancel").click()
        assert (await bob.expect("challenge_gone", reason="cancelled"))["challenge"] == sent
        await page.wait_for_selector("#challenge-bar", state="hidden")
        # declined: ann is told, and the line goes
        await challenge.click()
        again = (await bob.expect("challenge"))["challenge"]["id"]
        await page.locator(f'#challenge-bar li[data-outgoing="{again}"]').wait_for()
        await bob.send(t="challenge_decline", challenge=again)
        await page.wait_for_selector("#toast.shown:has-text('bob declined your challenge.')")
        await page.wait_for_selector("#challenge-bar", state="hidden")


async def test_without_a_name_every_link_leads_somewhere(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await Page.open(chromium, running.http_url + "/#analysis=1a1")
        page = tab.page
        await page.wait_for_selector("#analysis:not([hidden])")
        await page.click("#puzzles-link")
        await page.wait_for_selector("#connect:not([hidden])")
        assert "Say your name first" in (await page.text_content("#connect-error") or "")
        assert await page.evaluate("() => document.activeElement.id") == "name"
        await page.click("#account-link")
        assert await page.is_visible("#login-password")  # the login, opened
        await page.click("#home")
        assert await page.is_visible("#connect")
        await page.click("#puzzles-link")
        await tab.enter("ann")
        await page.wait_for_selector("#puzzles:not([hidden])")  # where the player was going
        await page.goto(running.http_url + "/#analysis=1a1")
        await page.wait_for_selector("#analysis:not([hidden])")
        await page.click("#home")
        await page.wait_for_selector("#lobby:not([hidden])")
        assert await page.evaluate("() => location.hash") == ""
        assert tab.errors == []


async def test_a_device_logged_out_elsewhere_shows_nobody(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        ann = await web_helpers.client(running, "ann")
        try:
            await ann.request(t="set_password", password="correct horse battery")
            tab = await Page.open(chromium, running.http_url + "/")
            page = tab.page
            await page.fill("#name", "ann")
            await page.click("#connect-form button")
            # a newcomer typing a protected name: the login form, opened, says how
            await page.wait_for_selector("#connect-error:has-text('is taken')")
            assert await page.is_visible("#login-password")
            await page.fill("#login-password", "correct horse battery")
            await page.click("#login-button")
            await page.wait_for_selector("#net.up")
            assert (await page.text_content("#who") or "").startswith("ann · ")
            await ann.request(t="revoke", others=True)
            await page.wait_for_selector("#connect:not([hidden])")
            assert (await page.text_content("#who") or "") == ""
            assert "logged out" in (await page.text_content("#connect-error") or "")
        finally:
            await ann.ws.close()


async def test_what_a_player_must_not_miss(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        # the empty leaderboard is a sentence, not a list's "1."
        assert await page.is_visible("#no-leaders")
        assert await page.is_hidden("ol.leaders")
        # the private room's link shown whole, its buttons unsquashed
        await page.click("#private-create")
        await page.wait_for_selector("#room-link")
        link = await page.evaluate(
            """() => { const a = document.querySelector('.room .room-link');
            const p = a.closest('.panel').getBoundingClientRect();
            const b = a.getBoundingClientRect();
            return { inside: b.left >= p.left && b.right <= p.right,
              whole: a.scrollWidth <= a.clientWidth + 1,
              buttons: [...document.querySelectorAll('.room button')].map((e) =>
                e.scrollWidth <= e.clientWidth && e.getBoundingClientRect().height < 50) }; }""")
        assert link == {"inside": True, "whole": True, "buttons": [True, True]}, link
        await page.click("#private-cancel")
        game = await tab.join_room_of(bob)
        await tab.click_cell("1a1")
        await bob.expect("move", ply=1)
        await bob.send(t="move", game=game, cell="2b2", ply=1)
        await tab.wait_ply(2)
        # a draw offered and declined: the offerer is told
        await page.click("#draw-offer")
        await bob.expect("offer", kind="draw")
        await bob.send(t="draw_decline", game=game)
        await page.wait_for_selector("#toast.shown:has-text('bob declined your draw offer.')")
        assert "Your draw offer was declined." in (await page.text_content(".status") or "")
        await page.click("#resign")
        await page.click("#resign")
        await bob.expect("end")
        await page.wait_for_selector("#rematch")
        await bob.send(t="rematch", game=game)  # a rematch offered: said, not only a label
        await page.wait_for_selector("#toast.shown:has-text('bob offers a rematch.')")
        assert await page.text_content("#rematch-note") == "bob offers a rematch."
        assert await page.text_content("#rematch") == "Accept rematch"


async def low_contrast(tab: Page, *roots: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for scheme in ("light", "dark"):
        await tab.page.emulate_media(color_scheme=scheme)
        for item in await tab.page.evaluate(f"(roots) => ({MEASURE}).contrast(roots)",
                                            list(roots)):
            found.append({"scheme": scheme, **item})
    return found


async def test_contrast_is_at_least_4_5_everywhere(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        await bob.request(t="lobby_sub")
        seek = (await bob.request(t="seek", rated=True))["seek"]["id"]
        await page.wait_for_selector("tr[data-seek]")
        await page.wait_for_selector('ul.players li:has-text("bob")')
        assert await low_contrast(tab, "header.top", "#lobby") == []
        await bob.request(t="cancel_seek", seek=seek)
        game = await tab.join_room_of(bob, rated=True, clock={"initial": 300, "increment": 3})
        for ply, (mine, theirs) in enumerate((("1a1", "2a1"), ("1b2", "2b1"))):
            await tab.my_turn()
            await tab.click_cell(mine)
            await bob.expect("move", ply=2 * ply + 1)
            await bob.send(t="move", game=game, cell=theirs, ply=2 * ply + 1)
            await tab.wait_ply(2 * ply + 2)
        await bob.send(t="chat", game=game, text="hello")
        await page.wait_for_selector(".chat-log li")
        await bob.send(t="draw_offer", game=game)
        await page.wait_for_selector("#draw-accept")
        assert await low_contrast(tab, "header.top", "#game") == []
        await page.click("#draw-decline")
        await page.click("#resign")
        await page.click("#resign")
        await page.wait_for_selector("#result-text")
        assert await low_contrast(tab, "header.top", "#game") == []
        await page.click(".seat.o a.player-link")
        await page.wait_for_selector("#player:not([hidden]) table.games")
        assert await low_contrast(tab, "header.top", "#player") == []
        await page.click("#account-link")
        await page.wait_for_selector("#account:not([hidden]) #devices li")
        assert await low_contrast(tab, "header.top", "#account") == []
        await page.goto(f"{page.url.split('#')[0]}#review={game}")
        await page.wait_for_selector("#review:not([hidden]) #review-moves .move >> nth=3")
        assert await low_contrast(tab, "header.top", "#review") == []
        await page.click("#review-analyse")
        await page.wait_for_selector("#analysis:not([hidden]) #analysis-verdict")
        await page.wait_for_function(
            "() => !document.querySelector('#analysis-verdict').textContent.startsWith('Asking')")
        assert await low_contrast(tab, "header.top", "#analysis") == []
