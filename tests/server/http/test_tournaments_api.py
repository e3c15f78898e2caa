"""``/api/tournaments``: the list and one tournament as the websocket gives them; creating
one with a moderator's token, joining and withdrawing with a player's (how a bot enters);
the refusals, each with its status and code (docs/api.md)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any

from tests.server.node.test_levers import connected_moderator
from tests.server.servers import Server


def call(url: str, method: str = "GET", token: str | None = None,
         body: Any = None) -> tuple[int, Any]:
    data = None if body is None else (body if isinstance(body, bytes)
                                      else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


async def api(server: Server, path: str, method: str = "GET", token: str | None = None,
              body: Any = None) -> tuple[int, Any]:
    assert server.running is not None
    return await asyncio.to_thread(call, server.running.http_url + path, method, token, body)


TERMS = {"name": "Bots' arena", "kind": "arena", "minutes": 30, "clock": "3+2",
         "rated": False}


async def test_a_moderator_creates_and_a_bot_joins_over_http(server: Server) -> None:
    mod = await connected_moderator(server)
    ann = await server.client("ann")
    starts = time.time() + 600
    status, created = await api(server, "/api/tournaments", "POST", mod.token,
                                {**TERMS, "starts_at": starts})
    assert status == 201, created
    tid = created["info"]["id"]
    assert created["info"]["status"] == "created" and created["standings"] == []
    assert (await api(server, "/api/tournaments"))[1] == {"tournaments": [created["info"]]}
    assert await api(server, f"/api/tournaments/{tid}/join", "POST", ann.token) == (
        200, {"ok": True})
    status, one = await api(server, f"/api/tournaments/{tid}")
    assert status == 200 and set(one) == {"info", "standings", "games", "page", "pages"}
    assert (one["page"], one["pages"]) == (None, 1)  # the whole table
    # joined over HTTP (paired like a bot), but marked only if the account is one
    assert [(row["name"], row["bot"]) for row in one["standings"]] == [("ann", False)]
    status, paged = await api(server, f"/api/tournaments/{tid}?page=3")  # past the last
    assert status == 200 and (paged["page"], paged["pages"]) == (1, 1)
    assert paged["standings"] == one["standings"]
    for bad in ("0", "x", "1001"):
        status, said = await api(server, f"/api/tournaments/{tid}?page={bad}")
        assert (status, said["code"]) == (400, "bad_message"), bad
    assert await api(server, f"/api/tournaments/{tid}/withdraw", "POST", ann.token) == (
        200, {"ok": True})
    status, one = await api(server, f"/api/tournaments/{tid}")
    assert one["standings"][0]["withdrawn"] is True
    # the websocket sees the same
    state = await ann.request(t="tournament_sub", tournament=tid)
    assert state["info"] == one["info"] and state["standings"] == one["standings"]


async def test_refusals_have_their_status_and_code(server: Server) -> None:
    ann = await server.client("ann")
    body = {**TERMS, "starts_at": time.time()}
    for path, method, token, sent, expected in (
        ("/api/tournaments/Tnope", "GET", None, None, (404, "no_such_tournament")),
        ("/api/tournaments/Tnope/join", "POST", ann.token, None, (404, "no_such_tournament")),
        ("/api/tournaments/Tnope/join", "POST", None, None, (401, "not_authenticated")),
        ("/api/tournaments", "POST", None, body, (401, "not_authenticated")),
        ("/api/tournaments", "POST", ann.token, body, (403, "not_moderator")),
    ):
        status, said = await api(server, path, method, token, sent)
        assert (status, said["code"]) == expected, (path, said)
    mod = await connected_moderator(server)
    for sent, expected in (({**body, "clock": "0+1"}, "bad_clock"),
                           ({**body, "rounds": 3}, "bad_message"),
                           ({**body, "computer_levels": [0]}, "bad_level"),
                           (b"[1]", "bad_message"), (b"{", "bad_message")):
        status, said = await api(server, "/api/tournaments", "POST", mod.token, sent)
        assert (status, said["code"]) == (400, expected), (sent, said)
