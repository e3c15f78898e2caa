"""One refusal for every HTTP API (``server.http.api.refusal``): the status of its code, the
database's trouble in the same words, ``WWW-Authenticate`` with a 401 and ``Retry-After`` with
every refusal that says when to try again; then the puzzles', tournaments' and bot API's
refusals on a real server."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from server.errors import LimitReached, ServerError, StoreError
from server.http import bot_api, puzzles_api, tournaments_api
from server.http.api import STORE_MESSAGE, refusal
from server.node.routing import Unavailable
from server.protocol import ErrorCode
from tests.server.servers import Server


def answer(error: ServerError, statuses: dict[str, int]) -> tuple[int, dict[str, Any], Any]:
    reply = refusal(error, statuses)
    assert reply.content_type == "application/json" and isinstance(reply.body, bytes)
    return reply.status, dict(reply.headers), json.loads(reply.body)


def test_a_refusal_is_answered_the_same_on_every_api() -> None:
    for statuses in (puzzles_api.STATUS, tournaments_api.STATUS, bot_api.STATUS):
        status, headers, body = answer(StoreError("disk I/O error at page 7"), statuses)
        assert (status, body) == (503, {"code": "store_unavailable", "message": STORE_MESSAGE})
        assert "Retry-After" not in headers
        status, headers, body = answer(ServerError("who?", ErrorCode.BAD_TOKEN), statuses)
        assert (status, headers["WWW-Authenticate"], body["code"]) == (401, "Bearer", "bad_token")
        status, headers, _ = answer(ServerError("banned", ErrorCode.BANNED), statuses)
        assert status == 403 and "WWW-Authenticate" not in headers
        status, headers, _ = answer(LimitReached("slow down", ErrorCode.RATE_LIMITED, 0.2),
                                    statuses)
        assert headers["Retry-After"] == "1"  # whole seconds, at least 1
        _, headers, _ = answer(LimitReached("slow down", ErrorCode.RATE_LIMITED), statuses)
        assert headers["Retry-After"] == "1"  # a rate refusal always says when
        _, headers, body = answer(Unavailable("the lobby did not answer", 3.0), statuses)
        assert (headers["Retry-After"], body["code"]) == ("3", "unavailable")
        status, _, _ = answer(ServerError("?", "some_new_code"), statuses)
        assert status == 400
    # a store error with its own code keeps its words (a puzzle that is not there)
    status, _, body = answer(StoreError("no puzzle 9", code="no_such_puzzle"), puzzles_api.STATUS)
    assert (status, body) == (404, {"code": "no_such_puzzle", "message": "no puzzle 9"})


async def test_each_api_refuses_with_its_status_and_headers(server: Server) -> None:
    ann = await server.client("ann")
    assert server.running is not None
    base = server.running.http_url
    bearer = {"Authorization": f"Bearer {ann.token}"}
    async with aiohttp.ClientSession() as http:

        async def call(method: str, path: str, headers: dict[str, str] | None = None
                       ) -> tuple[int, Any, Any]:
            async with http.request(method, base + path, headers=headers) as reply:
                return reply.status, reply.headers, await reply.json()

        for method, path in (("GET", "/api/puzzles/next"), ("POST", "/api/tournaments"),
                             ("POST", "/api/challenge/bob")):
            status, headers, body = await call(method, path)
            assert (status, headers.get("WWW-Authenticate"), body["code"]) == (
                401, "Bearer", "not_authenticated"), path
        status, _, body = await call("GET", "/api/puzzles/123456789")
        assert (status, body["code"], body["message"]) == (404, "no_such_puzzle",
                                                           "no puzzle 123456789")
        status, _, body = await call("GET", "/api/tournaments/nothere")
        assert (status, body["code"]) == (404, "no_such_tournament")
        status, _, body = await call("POST", "/api/challenge/bob", bearer)
        assert (status, body["code"]) == (404, "no_such_player")
        for method, path, headers in (("POST", "/api/challenge/bob", bearer),  # the player's
                                      ("GET", "/api/puzzles/daily", None)):  # the address's
            for _ in range(100):
                status, said, body = await call(method, path, headers)
                if status == 429:
                    break
            assert body["code"] == "rate_limited" and int(said["Retry-After"]) >= 1, path


async def test_the_lobby_that_did_not_answer_is_refused_like_the_rest(server: Server) -> None:
    """``GET /api/lobby`` when the lobby's holder does not answer (a cluster node whose holder
    is gone; here the node's lobby made to say so): 503 ``unavailable`` with Retry-After."""
    await server.client("ann")
    assert server.running is not None

    async def gone() -> None:
        raise Unavailable("the lobby did not answer", 2.5)

    server.running.hub.lobby.view = gone  # type: ignore[method-assign, union-attr]
    async with aiohttp.ClientSession() as http, \
            http.get(server.running.http_url + "/api/lobby") as reply:
        assert (reply.status, reply.headers["Retry-After"]) == (503, "3")
        assert await reply.json() == {"code": "unavailable",
                                      "message": "the lobby did not answer"}
