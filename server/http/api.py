"""The HTTP JSON API: the lobby, games, players and the leaderboard, read-only.

Each answer is a msgspec struct, so ``openapi()`` (served at ``GET /api/openapi.json``) is
made from the very types the handlers encode. The API speaks the websocket protocol's words:
a game's ``status`` is ``playing`` or ``over``, an aborted game's ``result`` is ``"*"``, the
computer is named as in a game's seats (``Computer (level 8)``), clocks are clock specs.
Refusals are JSON ``{"code", "message"}`` with a protocol error code. ``docs/api.md`` is the
prose.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from typing import Any

import msgspec
from aiohttp import web

from engine import format_moves, variant
from server.errors import ServerError
from server.game.records import GameRecord, GameStatus
from server.http import tokens
from server.http.admin_api import add_admin_api, admin_paths
from server.http.openapi_parts import answer, bot_paths, limit_parameter, path_parameter
from server.http.rate import Limits, limited
from server.http.solve import ApiVerdict
from server.http.tournaments_schema import tournament_paths
from server.node.hub import Hub
from server.node.profiles import player_games_page, profile_of, seat_name
from server.node.routing import Unavailable
from server.protocol import (
    PROTOCOL_VERSION,
    VARIANTS,
    CellIndex,
    ClockSpec,
    ErrorCode,
    GameHeading,
    GameSummary,
    PlayedGame,
    PlayerProfile,
    PuzzleHistoryList,
    PuzzleInfo,
    PuzzleMode,
    PuzzleResult,
    PuzzleShown,
    RatingChange,
    RatingPoint,
    Reason,
    Result,
    ReviewInfo,
    SeekInfo,
)
from server.store.base import PAGE_MAX

NAME_PATTERN = r"[A-Za-z0-9_-]{1,24}"  # the protocol's Name
NAME = re.compile(NAME_PATTERN)  # matched whole
GAME_ID = r"[A-Za-z0-9_-]{1,32}"  # the protocol's GameId (aiohttp matches routes whole)
PUZZLE_ID = r"[0-9]{1,15}"
LEADERBOARD_MAX = 200
PAGE_DEFAULT = 20  # games in a page of a player's history unless ``limit`` says
HUB_KEY = web.AppKey("hub", Hub)


class ApiLobby(msgspec.Struct, kw_only=True):
    """The lobby as ``lobby_sub`` shows it: open seeks, the listed live games, players online."""

    seeks: list[SeekInfo]
    games: list[GameSummary]
    online: int


class ApiGame(GameHeading, gc=True):
    """A game, live or over. ``result`` is null while it is ``playing``; ``"*"`` if aborted."""

    x_ai: int | None  # the computer's level, or null for a player
    o_ai: int | None
    status: str  # "playing" or "over"
    result: Result | None
    reason: Reason | None
    winner: str | None  # "x", "o", or null
    line: list[int] | None
    moves: list[int]
    notation: str
    created: float  # Unix seconds
    ended: float | None
    ratings: RatingChange | None  # the players' ratings before a rated game
    rating_change: RatingChange | None
    tournament: str | None = None  # the tournament the game belongs to (docs/tournaments.md)
    x_bot: bool = False  # that side's player is a bot account (docs/bots.md)
    o_bot: bool = False


class ApiLeaderboard(msgspec.Struct, kw_only=True):
    """The best players by rating, among those with a rated game ended lately."""

    players: list[PlayerProfile]


class ApiPlayerGames(msgspec.Struct, kw_only=True):
    """A player's record and a page of their games, newest first, as the websocket's
    ``player_games`` gives them: ``next`` is the ``before`` of the next page (null: none)."""

    player: PlayerProfile
    games: list[PlayedGame]
    next: str | None
    ratings: list[RatingPoint]


class ApiAttempt(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST /api/puzzles/{id}/attempt`` (server/http/puzzles_api.py): your
    moves so far in the puzzle (yours only), and the mode."""

    moves: list[CellIndex]
    mode: PuzzleMode = "next"


class ApiError(msgspec.Struct, kw_only=True):
    """A refusal: a stable ``code`` from the protocol's list and a message for people."""

    code: str
    message: str


class ApiReviewPending(msgspec.Struct, kw_only=True):
    """A review being computed (``GET /api/games/{id}/review``, 202): ask again after
    ``Retry-After`` seconds."""

    game: str
    state: str = "computing"


PLAYER_GAMES_RATE = 2.0  # /api/players/{name}/games a second per address (--player-games-rate)


def add_api(app: web.Application, player_games_rate: float = PLAYER_GAMES_RATE) -> None:
    """Route ``/api/*`` on ``app``, whose ``HUB_KEY`` holds the hub; a player's games
    (a query of the database per page) ``player_games_rate`` times a second per client
    address (``server.http.rate``)."""
    app.router.add_get("/api/openapi.json", api_openapi)
    app.router.add_get("/api/lobby", api_lobby)
    app.router.add_get(f"/api/games/{{id:{GAME_ID}}}.txt", api_game_text)
    app.router.add_get(f"/api/games/{{id:{GAME_ID}}}", api_game)
    app.router.add_get("/api/players/{name}", api_player)
    app.router.add_get("/api/players/{name}/games", limited(
        Limits(player_games_rate), "too many pages of games asked: wait a moment",
        api_player_games))
    app.router.add_get("/api/leaderboard", api_leaderboard)
    add_admin_api(app, HUB_KEY)  # /api/admin/* (server/http/admin_api.py)


def _hub(request: web.Request) -> Hub:
    return request.app[HUB_KEY]


def json_reply(value: msgspec.Struct, status: int = 200) -> web.Response:
    """``value`` as the JSON body of a response (every ``/api`` route answers so)."""
    return web.Response(body=msgspec.json.encode(value), status=status,
                        content_type="application/json")


STORE_MESSAGE = "the server cannot read or write its database just now"


def refusal(error: ServerError, statuses: Mapping[str, int]) -> web.Response:
    """A refused request's answer, the same on every API: ``{"code", "message"}`` at the
    status ``statuses`` gives the code (any other: 400); ``store_unavailable`` says
    ``STORE_MESSAGE``, never the database's own words; a 401 asks for a bearer token
    (``WWW-Authenticate``); a refusal that says when to try again (``retry_in``: a rate or
    connection limit, a lobby or owner that did not answer) sends ``Retry-After`` in whole
    seconds, at least 1, and so does every ``rate_limited``."""
    code = str(error.code)
    message = STORE_MESSAGE if code == ErrorCode.STORE_UNAVAILABLE else error.message
    status = statuses.get(code, 400)
    reply = json_reply(ApiError(code=code, message=message), status)
    if status == 401:
        reply.headers.update(tokens.CHALLENGE)
    retry_in = getattr(error, "retry_in", None)
    if retry_in is None and code == ErrorCode.RATE_LIMITED:
        retry_in = 1.0
    if retry_in is not None:
        reply.headers["Retry-After"] = str(max(1, math.ceil(retry_in)))
    return reply


def _refuse(status: int, code: ErrorCode, message: str) -> web.HTTPException:
    text = msgspec.json.encode(ApiError(code=code.value, message=message)).decode()
    error = {400: web.HTTPBadRequest, 404: web.HTTPNotFound,
             503: web.HTTPServiceUnavailable}[status]
    return error(text=text, content_type="application/json")


def game_of(record: GameRecord) -> ApiGame:
    """The API's view of a stored game."""
    over = record.status is not GameStatus.ACTIVE
    result = (record.result or "*") if over else None
    ratings = changes = None
    if record.x_rating is not None and record.o_rating is not None:
        ratings = RatingChange(x=round(record.x_rating), o=round(record.o_rating))
    if record.x_rating_change is not None and record.o_rating_change is not None:
        changes = RatingChange(x=round(record.x_rating_change), o=round(record.o_rating_change))
    clock = record.clock
    return ApiGame(
        id=record.id, variant=record.variant,  # type: ignore[arg-type]
        clock=None if clock is None else ClockSpec(round(clock.initial), round(clock.increment)),
        rated=record.rated, x=seat_name(record.x), o=seat_name(record.o),
        x_bot=record.x.bot, o_bot=record.o.bot,
        x_ai=record.x.computer_level, o_ai=record.o.computer_level,
        status="over" if over else "playing", result=result,  # type: ignore[arg-type]
        reason=record.reason if over else None,  # type: ignore[arg-type]
        winner={"1-0": "x", "0-1": "o"}.get(result or ""),
        line=None if record.winning_line is None else list(record.winning_line),
        moves=record.cells, notation=format_moves(record.cells, variant(record.variant)),
        created=record.created, ended=record.ended, ratings=ratings, rating_change=changes,
        tournament=record.tournament,
    )


async def api_lobby(request: web.Request) -> web.Response:
    """The lobby; on a cluster node, the one lobby of every node, as its holder shows it."""
    hub = _hub(request)
    try:
        snapshot = await hub.lobby.view()
    except Unavailable as error:
        hub.metrics.error(error.code)
        return refusal(error, {ErrorCode.UNAVAILABLE: 503})
    return json_reply(ApiLobby(seeks=snapshot.seeks, games=snapshot.games, online=snapshot.online))


async def _record(request: web.Request) -> GameRecord:
    game_id = request.match_info["id"]
    record: GameRecord | None = await _hub(request).store.get_game(game_id)
    if record is None:
        raise _refuse(404, ErrorCode.NO_SUCH_GAME, f"no game {game_id}")
    return record


async def api_game(request: web.Request) -> web.Response:
    return json_reply(game_of(await _record(request)))


async def api_game_text(request: web.Request) -> web.Response:
    """The game as text: tag lines like PGN's, then the moves in notation."""
    game = game_of(await _record(request))
    clock = "-" if game.clock is None else f"{game.clock.initial}+{game.clock.increment}"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(game.created))
    header = {
        "Game": game.id, "Variant": game.variant, "X": game.x, "O": game.o, "Clock": clock,
        "Rated": "yes" if game.rated else "no", "Started": started + " UTC",
        "Result": game.result or "*", "Reason": game.reason or "-",
    }
    lines = [f"[{key} \"{value}\"]" for key, value in header.items()]
    text = "\n".join([*lines, "", game.notation, ""])
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def _name(request: web.Request) -> str:
    name = request.match_info["name"]
    if NAME.fullmatch(name) is None:
        raise _refuse(400, ErrorCode.BAD_NAME, "a name is 1-24 ASCII letters, digits, _ and -")
    return name


def _limit(request: web.Request, default: int, most: int) -> int:
    """The query's ``limit``, brought within 1 to ``most``."""
    text = request.query.get("limit", str(default))
    if re.fullmatch(r"[0-9]{1,4}", text) is None:
        raise _refuse(400, ErrorCode.BAD_MESSAGE, "limit is a whole number")
    return max(1, min(most, int(text)))


async def api_player(request: web.Request) -> web.Response:
    name = _name(request)
    record = await _hub(request).store.get_player(name)
    if record is None:
        raise _refuse(404, ErrorCode.NO_SUCH_PLAYER, f"no player {name}")
    return json_reply(profile_of(record))


async def api_player_games(request: web.Request) -> web.Response:
    """A page of the player's games, newest first: ``?limit=`` (1-50, default 20) games
    started before the game ``?before=`` (the previous page's ``next``)."""
    name = _name(request)
    limit = _limit(request, PAGE_DEFAULT, PAGE_MAX)
    before = request.query.get("before")
    if before is not None and re.fullmatch(GAME_ID, before) is None:
        raise _refuse(400, ErrorCode.BAD_MESSAGE, "before is a game's id")
    try:
        page = await player_games_page(_hub(request).store, name, before, limit)
    except ServerError as error:
        if error.code not in (ErrorCode.NO_SUCH_PLAYER, ErrorCode.NO_SUCH_GAME):
            raise  # the database's trouble, answered as every route answers it
        raise _refuse(404, ErrorCode(error.code), error.message) from None
    return json_reply(ApiPlayerGames(player=page.player, games=page.games, next=page.next,
                                ratings=page.ratings))


async def api_leaderboard(request: web.Request) -> web.Response:
    """The best players by rating among those with a rated game in the last
    ``leaderboard_inactive`` seconds (all who have one, when that is 0)."""
    limit = _limit(request, 50, LEADERBOARD_MAX)
    hub = _hub(request)
    inactive = hub.config.leaderboard_inactive
    since = time.time() - inactive if inactive > 0 else None
    players = await hub.store.leaderboard(limit, min_rated_games=1, active_since=since)
    return json_reply(ApiLeaderboard(players=[profile_of(p) for p in players]))


async def api_openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi())


def _puzzle_paths(shown: Any, result: Any, history: Any, info: Any, attempt: Any,
                  refused: Any, too_many: Any) -> dict[str, Any]:
    """The routes of server/http/puzzles_api.py."""
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    no_token = answer({"$ref": "#/components/schemas/ApiError"},
                      "`not_authenticated` (no token), `bad_token` or `token_revoked` "
                      "(the device was logged out)")
    banned = answer({"$ref": "#/components/schemas/ApiError"},
                    "`banned`: the player or the address is banned")
    puzzle_id = path_parameter("id", PUZZLE_ID)
    paths: dict[str, Any] = {
        "/api/puzzles/next": {"get": {
            "summary": "A puzzle near your puzzle rating that you have not finished",
            "security": bearer,
            "responses": {"200": answer(shown, "the puzzle (mode next)"), "401": no_token,
                          "403": banned, "404": refused}}},
        "/api/puzzles/daily": {"get": {
            "summary": "The puzzle of the day (UTC), the same for everyone; with a token, "
                       "your puzzle rating too",
            "security": [{}, {"bearer": []}],
            "responses": {"200": answer(shown, "the puzzle (mode daily, with its day)"),
                          "401": no_token, "403": banned, "404": refused}}},
        "/api/puzzles/streak": {"get": {
            "summary": "A streak's puzzle: new=true starts a streak at 0, new=false gives "
                       "the puzzle for the streak going on",
            "security": bearer,
            "parameters": [{"name": "new", "in": "query", "required": False,
                            "schema": {"type": "boolean", "default": True}}],
            "responses": {"200": answer(shown, "the puzzle (mode streak)"), "400": refused,
                          "401": no_token, "403": banned, "404": refused}}},
        "/api/puzzles/history": {"get": {
            "summary": "Your latest finished puzzles, newest first",
            "security": bearer,
            "parameters": [limit_parameter(100, 20)],
            "responses": {"200": answer(history, "your history"), "400": refused,
                          "401": no_token, "403": banned}}},
        "/api/players/{name}/puzzles": {"get": {
            "summary": "A player's puzzle rating, best streak and latest finished puzzles "
                       "(public)",
            "parameters": [path_parameter("name", NAME_PATTERN), limit_parameter(100, 20)],
            "responses": {"200": answer(history, "the player's puzzles"), "400": refused,
                          "404": refused}}},
        "/api/puzzles/{id}": {"get": {
            "summary": "One puzzle", "parameters": [puzzle_id],
            "responses": {"200": answer(info, "the puzzle"), "404": refused}}},
        "/api/puzzles/{id}/attempt": {"post": {
            "summary": "Judge your moves so far in a puzzle: right (with the reply), "
                       "solved or wrong (with the solution); a first finished try is rated",
            "security": bearer, "parameters": [puzzle_id],
            "requestBody": {"required": True,
                            "content": {"application/json": {"schema": attempt}}},
            "responses": {"200": answer(result, "the judgement"), "400": refused,
                          "401": no_token, "403": answer(
                              {"$ref": "#/components/schemas/ApiError"},
                              "`banned`, or `not_allowed`: not the streak's puzzle"),
                          "404": refused}}},
    }
    for route in paths.values():  # all of them behind one rate per address (--puzzles-rate)
        for operation in route.values():
            operation["responses"]["429"] = too_many
    return paths


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 description of this API, its schemas made from the answer types."""
    answers = [ApiLobby, ApiGame, PlayerProfile, ApiLeaderboard, ApiError, ApiVerdict,
               ApiPlayerGames, ReviewInfo, ApiReviewPending, PuzzleShown, PuzzleResult,
               PuzzleHistoryList, PuzzleInfo, ApiAttempt]
    (lobby, game, player, board, error, verdict, history, review, pending, shown, result,
     puzzle_history, info, attempt), components = (
        msgspec.json.schema_components(answers, ref_template="#/components/schemas/{name}"))

    refused = answer(error, "refused: `code` says why")
    too_many = answer(error, "`rate_limited`: too many requests from your address; try "
                             "again after Retry-After seconds")
    admin, admin_schemas, security = admin_paths()
    tournaments, tournament_schemas = tournament_paths()
    game_id = path_parameter("id", GAME_ID)
    player_name = path_parameter("name", NAME_PATTERN)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Qubic HTTP API", "version": str(PROTOCOL_VERSION),
                 "description": "JSON next to the websocket protocol (docs/api.md), and "
                                "the bot API (docs/bots.md)."},
        "paths": {
            "/api/lobby": {"get": {
                "summary": "Open seeks, the listed live games and players online",
                "responses": {"200": answer(lobby, "the lobby"),
                              "503": answer(error, "a cluster's lobby did not answer: "
                                                   "`unavailable`; try again after "
                                                   "Retry-After seconds")}}},
            "/api/games/{id}": {"get": {
                "summary": "A game, live or over", "parameters": [game_id],
                "responses": {"200": answer(game, "the game"), "404": refused}}},
            "/api/games/{id}.txt": {"get": {
                "summary": "A game as text: tag lines, then its moves", "parameters": [game_id],
                "responses": {
                    "200": {"description": "the game",
                            "content": {"text/plain": {"schema": {"type": "string"}}}},
                    "404": refused}}},
            "/api/games/{id}/review": {"get": {
                "summary": "A finished game's review: each move's verdicts before and after "
                           "for its mover, its class, the best moves, the line that would "
                           "have won (computed once, then kept)",
                "parameters": [game_id],
                "responses": {"200": answer(review, "the review"),
                              "202": answer(pending, "being computed: ask again after "
                                                     "Retry-After seconds"),
                              "404": refused,
                              "409": answer(error, "`game_not_over`: the game is still "
                                                   "being played"),
                              "503": answer(error, "`unavailable`: the solver could not "
                                                   "review it; try again after "
                                                   "Retry-After seconds")}}},
            "/api/players/{name}": {"get": {
                "summary": "A player's record (the name in any case)",
                "parameters": [player_name],
                "responses": {"200": answer(player, "the player"), "400": refused,
                              "404": refused}}},
            "/api/players/{name}/games": {"get": {
                "summary": "A player's record and a page of their games, newest first, with "
                           "their moves, and the rating after each of their last 50 rated games",
                "parameters": [player_name,
                               {"name": "before", "in": "query", "required": False,
                                "description": "the previous page's `next`: games started "
                                               "before this one",
                                "schema": {"type": "string", "pattern": f"^{GAME_ID}$"}},
                               limit_parameter(PAGE_MAX, PAGE_DEFAULT)],
                "responses": {"200": answer(history, "the player and the page"),
                              "400": refused, "429": too_many,
                              "404": answer(error, "`no_such_player`, or `no_such_game`: "
                                                   "`before` is not one of their games")}}},
            "/api/leaderboard": {"get": {
                "summary": "The best players by rating among those with a rated game in the "
                           "last 90 days (the server's leaderboard_inactive_days)",
                "parameters": [limit_parameter(LEADERBOARD_MAX, 50)],
                "responses": {"200": answer(board, "the players, best first"),
                              "400": refused}}},
            "/api/solve": {"get": {
                "summary": "Who wins a position with best play (the shape of lichess's "
                           "tablebase API): the side to move's verdict and each move's",
                "parameters": [
                    {"name": "variant", "in": "query", "required": False,
                     "schema": {"type": "string", "enum": list(VARIANTS),
                                "default": "4x4x4"}},
                    {"name": "moves", "in": "query", "required": False,
                     "description": "the moves so far in notation, separated by spaces, "
                                    "commas or +", "schema": {"type": "string"}}],
                "responses": {"200": answer(verdict, "the verdicts, best move first"),
                              "400": refused,
                              "429": too_many,
                              "503": answer(error, "`unavailable`: the solver could not "
                                                   "answer")}}},
            **_puzzle_paths(shown, result, puzzle_history, info, attempt, refused, too_many),
            **tournaments,
            "/api/openapi.json": {"get": {
                "summary": "This description",
                "responses": {"200": {"description": "OpenAPI 3.1",
                                      "content": {"application/json": {}}}}}},
            **admin,
            **bot_paths(),
        },
        "components": {"schemas": {**components, **admin_schemas, **tournament_schemas},
                       "securitySchemes": {**security, "bearer": {
                           "type": "http", "scheme": "bearer",
                           "description": "the token the websocket's welcome gave the "
                                          "player"}}},
    }
