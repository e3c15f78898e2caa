"""The shapes of ``/api/tournaments`` (``server.http.tournaments_api``) and their OpenAPI
paths, apart so that ``server.http.api`` describes them without importing the routes (which
import it)."""

from __future__ import annotations

from typing import Any

import msgspec

from server.http.openapi_parts import answer, path_parameter
from server.protocol import MAX_PAGE, Standing, TournamentGame, TournamentInfo

TOURNAMENT_ID = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,31}"


class ApiTournaments(msgspec.Struct, kw_only=True):
    """``GET /api/tournaments``: as the websocket's ``tournaments``."""

    tournaments: list[TournamentInfo]


class ApiTournament(msgspec.Struct, kw_only=True):
    """``GET /api/tournaments/{id}``: the whole standings and every game (``page`` null),
    or with ``?page=N`` that page of the standings and its players' games, as the
    websocket's ``tournament`` (without ``t``, ``ref`` and ``me``); ``pages`` of
    ``PAGE_SIZE`` lines."""

    info: TournamentInfo
    standings: list[Standing]
    games: list[TournamentGame]
    page: int | None = None
    pages: int = 1


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
    round_interval: float | None = None
    round_times: list[float] = []


class ApiOk(msgspec.Struct, kw_only=True):
    ok: bool = True


def tournament_paths() -> tuple[dict[str, Any], dict[str, Any]]:
    """The OpenAPI paths of these routes, and the schemas they name."""
    (listing, one, create, ok), schemas = msgspec.json.schema_components(
        [ApiTournaments, ApiTournament, ApiTournamentCreate, ApiOk],
        ref_template="#/components/schemas/{name}")
    error = {"$ref": "#/components/schemas/ApiError"}  # server.http.api's
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
            "summary": "A tournament: its info, the whole standings (best first) and every "
                       "game (newest first); with `page`, one page of 10 lines and its "
                       "players' games, as the websocket's `tournament`",
            "parameters": [tournament_id, {
                "name": "page", "in": "query", "required": False,
                "description": "a page of the standings, from 1 (past the last: the last)",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}}],
            "responses": {"200": answer(one, "the tournament"),
                          "400": answer(error, "`bad_message`: `page` is not 1 to 1000"),
                          "404": answer(error, "`no_such_tournament`")}}},
        "/api/tournaments/{id}/join": {"post": {
            "summary": "Enter the tournament (or come back; how a bot enters): an arena "
                       "pairs you while free and a connection of yours (your event stream) "
                       "is open on some node",
            "security": bearer, "parameters": [tournament_id], "responses": entered}},
        "/api/tournaments/{id}/withdraw": {"post": {
            "summary": "Withdraw: not paired again; your results stay",
            "security": bearer, "parameters": [tournament_id], "responses": entered}},
    }
    return paths, schemas
