"""What new players tripped on in the web client, and its notifications (issue 29), in
headless Chromium against a real server at 1280x800 and 390x844."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import web_helpers
from web_helpers import Page

ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]  # X wins on level 1, row 1
PHONE = (390, 844)


async def box(page: Any, selector: str) -> dict[str, float]:
    """Where the first ``selector`` is drawn, once it is (a view may be drawing anew)."""
    locator = page.locator(selector).first
    while True:
        await locator.wait_for(state="visible")
        found = await locator.bounding_box()
        if found is not None:
            return dict(found)


async def play_out(x: Any, o: Any, game: str, moves: list[str]) -> None:
    for ply, cell in enumerate(moves):
        mover = x if ply % 2 == 0 else o
        ref = await mover.send(t="move", game=game, cell=cell, ply=ply)
        await mover.expect("ack", ref=ref)


async def private_game(host: Any, guest: Any, **terms: Any) -> str:
    created = await host.request(t="private_create", colour="x", **terms)
    await guest.send(t="private_join", code=created["code"])
    await guest.expect("game")
    return str((await host.expect("game"))["id"])


async def test_a_private_room_is_cancelled_from_the_lobby(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        await page.click("#private-create")
        code = await (await page.wait_for_selector("#room-code")).text_content()
        await page.click("#private-cancel")
        await page.wait_for_selector("#room-code", state="detached")
        await bob.send(t="private_join", code=code)
        await bob.error("no_such_code")
        await page.click("#quick")  # waiting nowhere now: quick pairing is open
        await page.wait_for_function("() => window.qubic.app.queued !== null")
        assert "already" not in await page.inner_text("#toast")


async def test_a_spectator_goes_to_the_rematch_and_sees_the_new_ratings(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        bob, cat = await web_helpers.client(running, "bob"), await web_helpers.client(
            running, "cat")
        try:
            game = await private_game(bob, cat, rated=True)
            tab = await Page.open(chromium, f"{running.http_url}/#game={game}")
            page = tab.page
            await tab.enter("ann")
            await page.wait_for_function("(id) => window.qubic.app.current === id", arg=game)
            await play_out(bob, cat, game, ROW)
            await page.wait_for_selector("#result-text")
            await bob.send(t="rematch", game=game)
            await cat.expect("offer", kind="rematch")
            await cat.send(t="rematch", game=game)
            again = str((await bob.expect("game"))["id"])
            await page.wait_for_function("(id) => window.qubic.app.current === id", arg=again)
            await tab.in_game()
            ratings = await page.locator(".seat .rating").all_text_contents()
            after = {p["name"]: p["rating"] for p in
                     (await web_helpers.get_json(running, "/api/leaderboard"))["players"]}
            # the rematch's seats: bob now plays O, cat X, at their ratings after the game
            assert [r.strip() for r in ratings] == [str(after["cat"]), str(after["bob"])]
            assert after["bob"] != 1500
            assert tab.errors == []
        finally:
            await bob.ws.close()
            await cat.ws.close()


async def test_a_phone_has_big_cells_whole_names_and_the_draw_offer_in_sight(
    tmp_path: Path,
) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        bob = await web_helpers.client(running, "bob")
        long_name = await web_helpers.client(running, "a_rather_long_name_24ch")
        try:
            await long_name.request(t="seek", variant="4x4x4", rated=True,
                                    clock={"initial": 300, "increment": 3})
            tab = await Page.open(chromium, running.http_url + "/", *PHONE)
            page = tab.page
            await tab.enter("ann")
            # the lobby: the open seeks in sight, a long name on one line
            await page.wait_for_selector("tr[data-seek]")
            row = await box(page, "tr[data-seek]")
            assert row["y"] + row["height"] <= PHONE[1], row
            lines = await page.evaluate(
                "() => { const r = document.createRange();"
                " r.selectNodeContents(document.querySelector('tr[data-seek] td.name a'));"
                " return new Set([...r.getClientRects()].map((b) => b.top)).size; }")
            assert lines == 1  # the name on one line (cut with … if it must be)
            # against the computer: cells a finger can hit, the computer's name whole
            await page.select_option("select[name=level]", "1")
            await page.click("#play-ai")
            await tab.in_game()
            cell = await box(page, ".cell")
            assert cell["width"] >= 44 and cell["height"] >= 44, cell
            cut = await page.evaluate("() => [...document.querySelectorAll('.seat .name')]"
                                      ".filter((e) => e.scrollWidth > e.clientWidth).length")
            assert cut == 0
            assert "Computer (level 1)" in await page.inner_text("#game .seats")
            wide = await page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= PHONE[0]
            await page.click("#to-lobby")
            # a person offers a draw: Accept and Decline in sight, above the board
            game = await tab.join_room_of(bob)
            await tab.my_turn()
            await tab.click_cell("1a1")
            await bob.expect("move", ply=1)
            await bob.send(t="move", game=game, cell="4d4", ply=1)
            await tab.wait_ply(2)
            await bob.send(t="draw_offer", game=game)
            for button in ("#draw-accept", "#draw-decline"):  # scrolled down to 1a1
                drawn = await box(page, button)
                assert drawn["y"] >= 0 and drawn["y"] + drawn["height"] <= PHONE[1], drawn
            await page.evaluate("() => window.scrollTo(0, 0)")
            for button in ("#draw-accept", "#draw-decline"):  # at the top: in the bar, in sight
                drawn = await box(page, button)
                assert drawn["y"] >= 0 and drawn["y"] + drawn["height"] <= PHONE[1], drawn
            assert tab.errors == []
        finally:
            await bob.ws.close()
            await long_name.ws.close()


async def test_the_title_and_the_sound_call_the_player_back(tmp_path: Path) -> None:
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        title = "() => document.title"
        assert await page.evaluate(title) == "Qubic"
        await page.click("#seek")
        seek = await page.wait_for_function("() => window.qubic.app.mySeek")
        await page.evaluate("() => window.dispatchEvent(new Event('blur'))")  # another window
        await bob.send(t="accept_seek", seek=await seek.json_value())
        game = str((await bob.expect("game"))["id"])
        await page.wait_for_function("(t) => document.title === t", arg="(1) Game started — Qubic")
        you = await page.evaluate("() => window.qubic.app.games.get(window.qubic.app.current).you")
        if you == "x":
            await tab.click_cell("1a1")
            await bob.expect("move", ply=1)
            await bob.send(t="move", game=game, cell="4d4", ply=1)
        else:
            await bob.send(t="move", game=game, cell="4d4", ply=0)
        await page.wait_for_function("(t) => document.title === t", arg="(2) Your move — Qubic")
        await page.evaluate("() => window.dispatchEvent(new Event('focus'))")  # back
        assert await page.evaluate(title) == "Qubic"
        assert await page.evaluate("() => window.qubic.attention.played") == 0  # off at first
        await page.click("#to-lobby")
        await page.check("#sound")
        assert await page.evaluate("() => localStorage.getItem('qubic.sound')") == "on"
        played = await page.evaluate("() => window.qubic.attention.played")
        await bob.send(t="challenge", name="ann")
        await page.wait_for_function("(n) => window.qubic.attention.played > n", arg=played)
        assert await page.evaluate(title) == "Qubic"  # the window has the focus: no count


RECORD_DRAWING = """() => {
  // Every canvas call that paints, in order, with the colour it paints in.
  const log = [];
  window.drawn = log;
  const P = CanvasRenderingContext2D.prototype;
  for (const name of ["clearRect", "fill", "stroke", "fillText"]) {
    const original = P[name];
    P[name] = function (...args) {
      const text = name === "fillText" ? String(args[0]) : null;
      log.push({ op: name, colour: name === "stroke" ? this.strokeStyle : this.fillStyle,
                 text, x: text === null ? null : args[1],
                 width: text === null ? null : this.measureText(text).width });
      return original.apply(this, args);
    };
  }
}"""


async def test_in_3d_the_winning_line_is_drawn_over_the_pieces_and_the_levels_named(
    tmp_path: Path,
) -> None:
    """The cube's last picture after X's win: the winning line (and a ring round each of its
    four cells) painted after every piece, no longer under them, and each level labelled,
    its label inside the canvas."""
    async with web_helpers.ann_in_a_browser_and_bob(tmp_path) as (tab, bob):
        page = tab.page
        game = await tab.join_room_of(bob)  # bob hosts as O: ann is X
        for ply, cell in enumerate(ROW):
            if ply % 2 == 0:
                await tab.my_turn()
                await tab.click_cell(cell)
                await bob.expect("move", game=game, ply=ply + 1)
            else:
                await bob.request(t="move", game=game, cell=cell, ply=ply)
        await page.wait_for_selector("#result-text")
        await page.evaluate(RECORD_DRAWING)
        await page.click("#view-cube")
        await page.wait_for_function("() => window.drawn.some((c) => c.op === 'clearRect')")
        drawn = await page.evaluate("() => window.drawn")
        start = max(i for i, c in enumerate(drawn) if c["op"] == "clearRect")
        frame = drawn[start:]  # the last whole picture (each is drawn in one go)
        win = [i for i, c in enumerate(frame) if c["op"] == "stroke" and c["colour"] == "#f5b700"]
        pieces = [i for i, c in enumerate(frame) if c["op"] == "fill"]
        assert pieces and len(win) == 1 + 4, frame  # the line, then a ring round each cell
        assert min(win) > max(pieces)
        labels = [c for c in frame if c["op"] == "fillText"]
        assert [c["text"] for c in labels] == [f"Level {z}" for z in (1, 2, 3, 4)]
        assert all(c["x"] >= c["width"] for c in labels)  # right-aligned: none cut off
