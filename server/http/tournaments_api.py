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
from server.http.api import HUB_KEY, ApiError
from server.http.openapi_parts import answer, path_parameter
from server.node.tournaments import TournamentsService
from server.protocol import (
    ErrorCode,
    Standing,
    TournamentCreate,
    TournamentGame,
    TournamentInfo,
    decode_client_message,
)

TOURNAMENT_ID = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,31}"

STATUS = {
    **tokens.STATUS,
    ErrorCode.NO_SUCH_TOURNAMENT: 404, ErrorCode.TOURNAMENT_OVER: 409,
    ErrorCode.TOURNAMENT_STARTED: 409, ErrorCode.TOURNAMENT_FULL: 409,
    ErrorCode.NOT_MODERATOR: 403, ErrorCode.BAD_MESSAGE: 400, ErrorCode.BAD_CLOCK: 400,
    ErrorCode.BAD_LEVEL: 400, ErrorCode.BAD_VARIANT: 400, ErrorCode.NO_SUCH_PLAYER: 404,
    ErrorCode.STORE_UNAVAILABLE: 503,
}


class ApiTournaments(msgspec.Struct, kw_only=True):
    """``GET /api/tournaments``: as the websocket's ``tournaments``."""

    tournaments: list[TournamentInfo]


class ApiTournament(msgspec.Struct, kw_only=True):
    """``GET /api/tournaments/{id}``: the websocket's ``tournament`` without ``t`` and
    ``ref``."""

    info: TournamentInfo
    standings: list[Standing]
    games: list[TournamentGame]


class ApiTournamentCreate(msgspec.Struct, kw_only=True):
    """The body of ``POST /api/tournaments``: ``tournament_create``'s fields."""

    name: str
    kind: str
    starts_at: float
    clock: str
    minutes: int | None = None
    rounds: int | None = None
    variant: str = "4x4x4"
    rated: bool = False
    computer_levels: list[int] = []


class ApiOk(msgspec.Struct, kw_only=True):
    ok: bool = True


def add_tournaments(app: web.Application) -> None:
    """Route ``/api/tournaments*`` on ``app`` (whose ``HUB_KEY`` holds the hub)."""
    app.router.add_get("/api/tournaments", api_list)
    app.router.add_post("/api/tournaments", api_create)
    app.router.add_get(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}", api_one)
    app.router.add_post(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}/join", api_join)
    app.router.add_post(f"/api/tournaments/{{id:{TOURNAMENT_ID}}}/withdraw", api_withdraw)


def _service(request: web.Request) -> TournamentsService:
    return request.app[HUB_KEY].tournaments


def _json(value: msgspec.Struct, status: int = 200) -> web.Response:
    return web.Response(body=msgspec.json.encode(value), status=status,
                        content_type="application/json")


def _refusal(error: ServerError) -> web.Response:
    code = str(error.code)
    message = error.message if code != ErrorCode.STORE_UNAVAILABLE else (
        "the server cannot read or write its database just now")
    status = STATUS.get(code, 400)
    reply = _json(ApiError(code=code, message=message), status)
    if status == 401:
        reply.headers.update(tokens.CHALLENGE)
    return reply


async def _player(request: web.Request) -> str:
    held = await tokens.holder(request.app[HUB_KEY].store, request)
    assert held is not None
    return held.player.name


def _state(state: Any) -> ApiTournament:
    return ApiTournament(info=state.info, standings=state.standings, games=state.games)


async def api_list(request: web.Request) -> web.Response:
    try:
        return _json(ApiTournaments(tournaments=await _service(request).listing()))
    except ServerError as error:
        return _refusal(error)


async def api_one(request: web.Request) -> web.Response:
    try:
        return _json(_state(await _service(request).state(request.match_info["id"])))
    except ServerError as error:
        return _refusal(error)


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
        return _json(_state(await service.state(created)), 201)
    except ServerError as error:
        return _refusal(error)


async def api_join(request: web.Request) -> web.Response:
    try:
        name = await _player(request)
        await _service(request).join(name, request.match_info["id"], always=True)
        return _json(ApiOk())
    except ServerError as error:
        return _refusal(error)


async def api_withdraw(request: web.Request) -> web.Response:
    try:
        name = await _player(request)
        await _service(request).leave(name, request.match_info["id"])
        return _json(ApiOk())
    except ServerError as error:
        return _refusal(error)


def tournament_paths() -> tuple[dict[str, Any], dict[str, Any]]:
    """The OpenAPI paths of these routes, and the schemas they name."""
    (listing, one, create, ok, error), schemas = msgspec.json.schema_components(
        [ApiTournaments, ApiTournament, ApiTournamentCreate, ApiOk, ApiError],
        ref_template="#/components/schemas/{name}")
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    refused = answer(error, "refused: `code` says why")
    no_token = answer(error, "`not_authenticated` (no token), `bad_token` or `token_revoked`")
    tournament_id = path_parameter("id", TOURNAMENT_ID)
    entered = {"200": answer(ok, "done"), "401": no_token,
               "403": answer(error, "`banned`"), "404": answer(error, "`no_such_tournament`"),
               "409": answer(error, "`tournament_over`, `tournament_started` (a Swiss is "
                                    "joined before its first round), `tournament_full`")}
    paths = {
        "/api/tournaments": {
            "get": {"summary": "The tournaments coming, going on, and finished in the last "
                               "24 hours (docs/tournaments.md)",
                    "responses": {"200": answer(listing, "the tournaments")}},
            "post": {"summary": "Moderators: schedule a tournament (the body of the "
                                "websocket's tournament_create)",
                     "security": bearer,
                     "requestBody": {"required": True,
                                     "content": {"application/json": {"schema": create}}},
                     "responses": {"201": answer(one, "the tournament"), "400": refused,
                                   "401": no_token,
                                   "403": answer(error, "`not_moderator` or `banned`")}}},
        "/api/tournaments/{id}": {"get": {
            "summary": "A tournament: its info, standings (best first) and games (newest "
                       "first)", "parameters": [tournament_id],
            "responses": {"200": answer(one, "the tournament"),
                          "404": answer(error, "`no_such_tournament`")}}},
        "/api/tournaments/{id}/join": {"post": {
            "summary": "Enter the tournament (or come back): paired whenever free, whether "
                       "or not a websocket of yours is connected (how a bot enters)",
            "security": bearer, "parameters": [tournament_id], "responses": entered}},
        "/api/tournaments/{id}/withdraw": {"post": {
            "summary": "Withdraw: not paired again; your results stay",
            "security": bearer, "parameters": [tournament_id], "responses": entered}},
    }
    return paths, schemas
