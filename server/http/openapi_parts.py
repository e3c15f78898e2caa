"""The pieces the OpenAPI document repeats: an answer's description, a path's id, a page's
``limit``. ``server.http.api`` and ``server.http.admin_api`` build their paths from them, so
one parameter reads the same wherever it stands."""

from __future__ import annotations

from typing import Any


def answer(schema: dict[str, Any], what: str) -> dict[str, Any]:
    """A JSON response: ``what`` it is and its ``schema``."""
    return {"description": what, "content": {"application/json": {"schema": schema}}}


def path_parameter(name: str, pattern: str) -> dict[str, Any]:
    """The path's ``{name}``, a string matched whole by ``pattern``."""
    return {"name": name, "in": "path", "required": True,
            "schema": {"type": "string", "pattern": f"^{pattern}$"}}


def limit_parameter(most: int, default: int) -> dict[str, Any]:
    """The optional ``limit`` of a page: 1 to ``most`` entries, ``default`` when left out."""
    return {"name": "limit", "in": "query", "required": False,
            "schema": {"type": "integer", "minimum": 1, "maximum": most, "default": default}}


def bot_paths() -> dict[str, Any]:
    """The bot API's routes (server/http/bot_api.py, docs/bots.md): every one with the
    bearer token; the streams answer newline-delimited JSON (their lines: docs/bots.md)."""
    error = {"$ref": "#/components/schemas/ApiError"}
    refused = answer(error, "refused: `code` says why (docs/bots.md gives each status)")
    ok = answer({"type": "object", "properties": {"ok": {"type": "boolean"},
                                                  "game": {"type": ["string", "null"]}}},
                "done (`game`: an accepted challenge's game)")
    stream = {"description": "NDJSON: one event a line, an empty line every 6 s",
              "content": {"application/x-ndjson": {"schema": {"type": "string"}}}}
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    refusals = {"400": refused, "401": refused, "403": refused, "404": refused,
                "409": refused, "429": refused, "503": refused}

    def post(summary: str, *parameters: str) -> dict[str, Any]:
        return {"post": {"summary": summary, "security": bearer,
                         "parameters": [path_parameter(p, r"[^/]+") for p in parameters],
                         "responses": {"200": ok, **refusals}}}

    return {
        "/api/bot/account/upgrade": post("Make your account a bot (while it has no rated "
                                         "game)"),
        "/api/stream/event": {"get": {
            "summary": "Your events: challenges, your games starting and finishing",
            "security": bearer, "responses": {"200": stream, **refusals}}},
        "/api/bot/game/stream/{id}": {"get": {
            "summary": "A game's full state, then its states and chat lines until it is over "
                       "(bots only)", "security": bearer,
            "parameters": [path_parameter("id", r"[A-Za-z0-9_-]{1,32}")],
            "responses": {"200": stream, **refusals}}},
        "/api/bot/game/{id}/move/{cell}": post("Play a cell (bots only; ?ply=n: the moves "
                                               "before it)", "id", "cell"),
        "/api/bot/game/{id}/resign": post("Resign (bots only)", "id"),
        "/api/bot/game/{id}/abort": post("Call the game off before both sides moved (bots "
                                         "only)", "id"),
        "/api/bot/game/{id}/draw/{accept}": post("yes: offer a draw or accept the one that "
                                                 "stands; no: decline it (bots only)",
                                                 "id", "accept"),
        "/api/bot/game/{id}/chat": post('Say {"text": ...} in the game (bots only)', "id"),
        "/api/challenge/{name}": post("Challenge a player online (terms as the websocket's "
                                      "challenge)", "name"),
        "/api/challenge/{id}/accept": post("Accept a challenge to you", "id"),
        "/api/challenge/{id}/decline": post("Decline a challenge to you", "id"),
        "/api/challenge/{id}/cancel": post("Withdraw your challenge", "id"),
    }
