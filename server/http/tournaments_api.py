"""Tournaments over HTTP (``/api/tournaments...``): the list and one tournament's state as
the websocket's ``tournaments`` and ``tournament`` give them, and, with a bearer token
(``server.http.tokens``), creating one (moderators) and joining or withdrawing (how a bot
enters, as on lichess). ``server.node.tournaments`` answers both. docs/api.md lists the routes,
their answers and their refusals."""

from __future__ import annotations

from typing import Any

import msgspec
from aiohttp import web

from server.errors import ServerError
from server.http import tokens
from server.http.api import HUB_KEY, json_reply, refusal
from server.http.tournaments_schema import (
    TOURNAMENT_ID,
    ApiOk,
    ApiTournament,
    ApiTournaments,
)
from server.node.tournament_view import Pages
from server.node.tournaments import TournamentsService
from server.protocol import (
    MAX_PAGE,
    ErrorCode,
    TournamentCreate,
    decode_client_message,
)

STATUS = {
    **tokens.STATUS,
    ErrorCode.NO_SUCH_TOURNAMENT: 404, ErrorCode.TOURNAMENT_OVER: 409,
    ErrorCode.TOURNAMENT_STARTED: 409, ErrorCode.TOURNAMENT_FULL: 409,
    ErrorCode.NOT_MODERATOR: 403, ErrorCode.BAD_MESSAGE: 400, ErrorCode.BAD_CLOCK: 400,
    ErrorCode.BAD_LEVEL: 400, ErrorCode.BAD_VARIANT: 400, ErrorCode.NO_SUCH_PLAYER: 404,
    ErrorCode.STORE_UNAVAILABLE: 503,
}


def add_tournaments(app: web.Application) -> None:
    """Route ``/api/tournaments*`` on ``app`` (whose ``HUB_KEY`` holds the hub)."""
    app.router.add_get("/api/tournaments", api_list)
    app.router.add_post("/api/tournaments", api_create)
    app.router.add_get(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}", api_one)
    app.router.add_post(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}/join", api_join)
    app.router.add_post(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}/withdraw", api_withdraw)


def _service(request: web.Request) -> TournamentsService:
    return request.app[HUB_KEY].tournaments


async def _player(request: web.Request) -> str:
    held = await tokens.holder(request.app[HUB_KEY].store, request)
    assert held is not None
    return held.player.name


def _state(state: Any, page: int | None = None) -> ApiTournament:
    return ApiTournament(info=state.info, standings=state.standings, games=state.games,
                         page=page, pages=state.pages)


def _page(request: web.Request) -> int | None:
    """``?page=N`` (from 1), or None: the whole table."""
    text = request.query.get("page")
    if text is None:
        return None
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise ServerError(f"`page` is a number from 1 to {MAX_PAGE}", ErrorCode.BAD_MESSAGE)
    return int(text)


async def api_list(request: web.Request) -> web.Response:
    try:
        return json_reply(ApiTournaments(tournaments=await _service(request).listing()))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_one(request: web.Request) -> web.Response:
    """The whole table with every game, or (``?page=``) one page as the websocket's."""
    try:
        page = _page(request)
        state = await _service(request).state(request.match_info["id"],
                                              every_game=page is None)
        if page is None:
            return json_reply(_state(state))
        pages = Pages(state)
        page = min(page, pages.pages)
        return json_reply(_state(pages.view(page), page))
    except ServerError as error:
        return refusal(error, STATUS)


async def api_create(request: web.Request) -> web.Response:
    try:
        name = await _player(request)  # the token first
        try:
            body = msgspec.json.decode(await request.read())
        except (msgspec.DecodeError, RecursionError) as error:
            raise ServerError(f"bad body: {error}", ErrorCode.BAD_MESSAGE) from None
        if not isinstance(body, dict) or "id" in body:
            raise ServerError("the body is tournament_create's object", ErrorCode.BAD_MESSAGE)
        # read as the websocket's request, so every field is refused with the same code
        message = decode_client_message(msgspec.json.encode({**body, "t": "tournament_create"}))
        if not isinstance(message, TournamentCreate):
            raise ServerError("the body is tournament_create's object", ErrorCode.BAD_MESSAGE)
        service = _service(request)
        await service.check_moderator(name)
        created = await service.create(name, message)
        return json_reply(_state(await service.state(created, every_game=True)), 201)
    except ServerError as error:
        return refusal(error, STATUS)


async def api_join(request: web.Request) -> web.Response:
    """Enter the tournament over HTTP (a bot): no connection carried the join, so the arena
    pairs the player only while one of theirs (its event stream) is open on some node."""
    try:
        name = await _player(request)
        await _service(request).join(name, request.match_info["id"], always=True)
        return json_reply(ApiOk())
    except ServerError as error:
        return refusal(error, STATUS)


async def api_withdraw(request: web.Request) -> web.Response:
    try:
        name = await _player(request)
        await _service(request).leave(name, request.match_info["id"])
        return json_reply(ApiOk())
    except ServerError as error:
        return refusal(error, STATUS)
