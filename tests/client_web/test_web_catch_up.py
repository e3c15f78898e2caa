"""The web client and the game's versions (issue 36, item 1; issue 38, item 1): the chats are
applied whatever the version, each `line` once; a gap asks one catch-up at a time, and after two
whose ack leaves it open the full game. A browser player whose game's spectators chat sends no
`watch` at all (it sent one per spectator line and move before: 4,002 in one game)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import web_helpers

X_MOVES = ["1a1", "2b3", "3c1"]  # no line between them, nor between O's
O_MOVES = ["1d4", "2a2", "3b4"]


async def game_js(tmp_path: Path, script: str) -> Any:
    """Run ``script`` (an async function of game.js's module) in a page of a real server."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        page = await web_helpers.Page.open(chromium, running.http_url + "/")
        base = await page.page.evaluate(
            "() => document.querySelector('script[type=module]').src.replace(/main\\.js$/, '')")
        result = await page.page.evaluate(
            f"async (base) => ({script})(await import(base + 'game.js'))", base)
        assert page.errors == []
        return result


async def test_the_game_model_bounds_its_catch_ups_and_keeps_each_chat_line_once(
    tmp_path: Path,
) -> None:
    script = """(m) => {
        const state = { id: "g1", variant: "4x4x4", clock: null, rated: false,
          seats: [{ name: "ann", rating: 1500, online: true, ai: null },
                  { name: "bob", rating: 1500, online: true, ai: null }],
          moves: [0], clocks: null, status: "playing", version: 1, you: "o", draw_offer: null,
          rematch: [], end: null, spectators: 0, chat: [] };
        const model = new m.GameModel(state, 0);
        const said = (line, text) => ({ t: "chat", game: "g1", name: "bob", side: "x", text,
          line });
        const move = (ply, version) => ({ t: "move", game: "g1", ply, cell: ply, notation: "",
          side: "x", clocks: null, version });
        const out = {};
        out.chat = [model.apply(said(5, "first"), 0), model.apply(said(9, "third"), 0),
                    model.apply(said(5, "first"), 0), model.apply(said(6, "second"), 0)];
        out.lines = model.chat.map((line) => line.text);
        out.versionAfterChat = model.version;
        out.gap = model.apply(move(3, 3), 0);
        out.first = model.resync();
        model.asked = "w1";
        out.gapAgain = model.apply(move(4, 4), 0);
        out.whileAsking = model.resync();
        out.offer = model.apply({ t: "offer", game: "g1", kind: "draw", by: "x", version: 2 }, 0);
        out.otherAck = model.caughtUp("w0");
        out.second = model.caughtUp("w1");
        model.asked = "w2";
        out.third = model.caughtUp("w2");
        model.asked = "w3";
        out.failed = model.failed;
        out.removed = [model.apply({ t: "chat_removed", game: "g1", line: 9 }, 0),
                       model.apply({ t: "chat_removed", game: "g1", line: 9 }, 0)];
        out.left = model.chat.map((line) => line.text);
        model.refused("w3");
        out.afterRefusal = [model.asked, model.failed];
        out.reconnected = model.reconnected();
        const fresh = new m.GameModel({ ...state, version: 4 }, 0);
        fresh.apply(move(2, 6), 0);
        const closing = fresh.resync();
        fresh.asked = "c1";
        fresh.apply({ t: "offer", game: "g1", kind: "draw", by: "x", version: 5 }, 0);
        fresh.apply(move(2, 6), 0);
        out.closed = [closing, fresh.caughtUp("c1"), fresh.failed, fresh.asked, fresh.ply];
        return out;
    }"""
    out = await game_js(tmp_path, script)
    assert out["chat"] == ["changed", "changed", "ignored", "changed"]
    assert out["lines"] == ["first", "second", "third"] and out["versionAfterChat"] == 1
    assert out["gap"] == "gap" and out["first"] == {"game": "g1", "since": 1}
    assert out["gapAgain"] == "gap" and out["whileAsking"] is None  # one at a time
    assert out["offer"] == "changed"
    assert out["otherAck"] is None  # not the ack of its catch-up
    assert out["second"] == {"game": "g1", "since": 2}  # the gap is still open: again
    assert out["third"] == {"game": "g1"} and out["failed"] == 2  # then the full game
    assert out["removed"] == ["changed", "ignored"] and out["left"] == ["first", "second"]
    assert out["afterRefusal"] == [None, 3]  # a refusal sends nothing
    assert out["reconnected"] == {"game": "g1"}
    assert out["closed"] == [{"game": "g1", "since": 4}, None, 0, None, 2]


async def test_a_browser_player_whose_spectators_chat_sends_no_watch(tmp_path: Path) -> None:
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        tab = await web_helpers.Page.open(chromium, running.http_url + "/")
        sent: list[dict[str, Any]] = []

        def frames(ws: Any) -> None:
            ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

        tab.page.on("websocket", frames)
        await tab.enter("ann")
        bob = await web_helpers.client(running, "bob")
        carl = await web_helpers.client(running, "carl")
        try:
            game = await tab.join_room_of(bob)  # ann is X
            await carl.request(t="watch", game=game)
            sent.clear()
            for turn in range(3):
                await carl.request(t="chat", game=game, text=f"from the stands {turn}")
                await tab.my_turn()
                await tab.click_cell(X_MOVES[turn])
                await bob.expect("move", ply=2 * turn + 1)
                await bob.request(t="chat", game=game, text=f"bob {turn}")
                await carl.request(t="chat", game=game, text=f"the stands again {turn}")
                await bob.request(t="move", game=game, cell=O_MOVES[turn], ply=2 * turn + 1)
                await tab.wait_ply(2 * turn + 2)
            await tab.page.wait_for_function(
                "() => document.querySelectorAll('.chat-log li').length == 3")
            texts = await tab.page.locator(".chat-log li .text").all_text_contents()
            assert texts == ["bob 0", "bob 1", "bob 2"]  # the players' chat only
            watches = [frame for frame in sent if frame["t"] == "watch"]
            assert watches == [], watches
            assert [frame["t"] for frame in sent].count("move") == 3
        finally:
            await bob.ws.close()
            await carl.ws.close()
        assert tab.dialogs == [] and tab.errors == []
