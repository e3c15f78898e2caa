"""The puzzles over HTTP (``/api/puzzles/...``): the same answers as the websocket's ``puzzle``,
``puzzle_result`` and ``puzzle_history`` messages (``server.node.puzzles`` makes both).

A player is the bearer token checked by ``server.http.tokens``; every route counts against one
rate per client address (``--puzzles-rate``, ``server.http.rate``). docs/api.md,
"``/api/puzzles``", lists the routes, their answers and their refusals."""

from __future__ import annotations

import re

import msgspec
from aiohttp import web

from server.errors import ServerError
from server.game.records import PlayerRecord
from server.http import tokens
from server.http.api import HUB_KEY, NAME, PUZZLE_ID, ApiAttempt, json_reply, refusal
from server.http.rate import Handler, Limits, limited
from server.node.puzzles import Puzzles
from server.protocol import ErrorCode

STATUS = {
    **tokens.STATUS,
    ErrorCode.NO_SUCH_PUZZLE: 404, ErrorCode.NO_PUZZLES: 404,
    ErrorCode.BAD_MESSAGE: 400, ErrorCode.BAD_NAME: 400, ErrorCode.NOT_ALLOWED: 403,
    ErrorCode.NO_SUCH_PLAYER: 404,
    ErrorCode.STORE_UNAVAILABLE: 503,
}


RATE = 5.0  # requests a second per client address to all of them (--puzzles-rate)


def add_puzzles(app: web.Application, rate: float = RATE) -> None:
    """Route ``/api/puzzles/*`` on ``app`` (whose ``HUB_KEY`` holds the hub), ``rate``
    requests a second per client address."""
    limits = Limits(rate)

    def route(method: str, path: str, handler: Handler) -> None:
        app.router.add_route(method, path, limited(
            limits, "too many puzzle requests: wait a moment", handler))

    route("GET", "/api/puzzles/next", api_next)
    route("GET", "/api/puzzles/daily", api_daily)
    route("GET", "/api/puzzles/streak", api_streak)
    route("GET", "/api/puzzles/history", api_history)
    route("GET", f"/api/puzzles/{{id:{PUZZLE_ID}}}", api_puzzle)
    route("POST", f"/api/puzzles/{{id:{PUZZLE_ID}}}/attempt", api_attempt)
    route("GET", "/api/players/{name}/puzzles", api_player_puzzles)


def _puzzles(request: web.Request) -> Puzzles:
    return request.app[HUB_KEY].puzzles


async def _player(request: web.Request, required: bool = True) -> PlayerRecord | None:
    """The player of the request's bearer token, as every route checks one
    (``server.http.tokens``)."""
    held = await tokens.holder(request.app[HUB_KEY].store, request, required=required)
    return None if held is None else held.player


async def api_next(request: web.Request) -> web.Response:
    try:
        player = await _player(request)
        assert player is not None
        return json_reply(await _puzzles(request).next(player.name))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_daily(request: web.Request) -> web.Response:
    try:
        player = await _player(request, required=False)
        return json_reply(await _puzzles(request).daily(None if player is None else player.name))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_streak(request: web.Request) -> web.Response:
    new = request.query.get("new", "true")
    try:
        player = await _player(request)  # the token first, on every route
        assert player is not None
        if new not in ("true", "false"):
            raise ServerError("new is true or false", ErrorCode.BAD_MESSAGE)
        return json_reply(await _puzzles(request).streak(player.name, new == "true"))
    except ServerError as error:
        return refusal(error, STATUS)


def _limit(request: web.Request) -> int:
    text = request.query.get("limit", "20")
    if re.fullmatch(r"[0-9]{1,3}", text) is None or not 1 <= int(text) <= 100:
        raise ServerError("limit is a whole number from 1 to 100", ErrorCode.BAD_MESSAGE)
    return int(text)


async def api_history(request: web.Request) -> web.Response:
    try:
        player = await _player(request)
        assert player is not None
        return json_reply(await _puzzles(request).history(player.name, _limit(request)))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_player_puzzles(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    try:
        limit = _limit(request)
        if NAME.fullmatch(name) is None:
            raise ServerError("a name is 1-24 ASCII letters, digits, _ and -",
                              ErrorCode.BAD_NAME)
        player = await request.app[HUB_KEY].store.get_player(name)
        if player is None:
            raise ServerError(f"no player {name}", ErrorCode.NO_SUCH_PLAYER)
        return json_reply(await _puzzles(request).history(player.name, limit))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_puzzle(request: web.Request) -> web.Response:
    try:
        return json_reply(await _puzzles(request).one(int(request.match_info["id"])))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_attempt(request: web.Request) -> web.Response:
    try:
        player = await _player(request)  # the token first, on every route
        assert player is not None
        try:
            body = msgspec.json.decode(await request.read(), type=ApiAttempt)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
            raise ServerError(f"bad body: {error}", ErrorCode.BAD_MESSAGE) from None
        if not 1 <= len(body.moves) <= 8:
            raise ServerError("moves holds 1 to 8 cells", ErrorCode.BAD_MESSAGE)
        return json_reply(await _puzzles(request).attempt(
            player.name, int(request.match_info["id"]), body.moves, body.mode))
    except ServerError as error:
        return refusal(error, STATUS)
