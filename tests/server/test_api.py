"""The HTTP JSON API: its OpenAPI description, and that it speaks the protocol's words."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import msgspec
from conftest import Server, play, start_private_game

from server.api import ApiError, ApiGame, ApiLeaderboard, ApiLobby, ApiPlayer, openapi


def http_get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


async def get(server: Server, path: str) -> tuple[int, Any]:
    assert server.running is not None
    status, kind, body = await asyncio.to_thread(http_get, server.running.http_url + path)
    return status, json.loads(body) if kind.startswith("application/json") else body


def strict(kind: type, data: Any) -> Any:
    """``data`` decoded as ``kind``: the answer has exactly the documented shape."""
    return msgspec.json.decode(json.dumps(data), type=kind, strict=True)


def test_the_description_names_every_route_and_schema() -> None:
    spec = openapi()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {"/api/lobby", "/api/games/{id}", "/api/games/{id}.txt",
                                  "/api/players/{name}", "/api/leaderboard",
                                  "/api/openapi.json"}
    schemas = spec["components"]["schemas"]
    assert {"ApiGame", "ApiPlayer", "ApiLobby", "ApiError", "SeekInfo", "GameSummary"} <= set(
        schemas)
    assert set(schemas["ApiGame"]["properties"]["status"].get("enum", ["playing", "over"])) == {
        "playing", "over"}


async def test_the_api_speaks_the_protocols_words(server: Server) -> None:
    status, spec = await get(server, "/api/openapi.json")
    assert status == 200 and spec == json.loads(json.dumps(openapi()))
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    status, data = await get(server, f"/api/games/{game}")
    playing = strict(ApiGame, data)
    assert (playing.status, playing.result, playing.moves, playing.x) == ("playing", None, [0],
                                                                           "ann")
    await ann.request(t="abort", game=game)
    aborted = strict(ApiGame, (await get(server, f"/api/games/{game}"))[1])
    assert (aborted.status, aborted.result, aborted.reason) == ("over", "*", "abort")
    computer = await ann.request(t="play_ai", level=8, colour="x")
    state = strict(ApiGame, (await get(server, f"/api/games/{computer['id']}"))[1])
    assert state.o == computer["seats"][1]["name"] == "Computer (level 8)" and state.o_ai == 8
    status, text = await get(server, f"/api/games/{computer['id']}.txt")
    assert '[O "Computer (level 8)"]' in text and '[Result "*"]' in text
    strict(ApiLobby, (await get(server, "/api/lobby"))[1])
    assert strict(ApiPlayer, (await get(server, "/api/players/ANN"))[1]).name == "ann"
    board = strict(ApiLeaderboard, (await get(server, "/api/leaderboard?limit=1"))[1])
    assert len(board.players) == 1


async def test_refusals_are_json_with_a_protocol_code(server: Server) -> None:
    await server.client("ann")
    for path, status, code in [
        ("/api/players/ann%0A", 400, "bad_name"),
        ("/api/players/%EF%BD%81nn", 400, "bad_name"),  # fullwidth a
        ("/api/players/nobody", 404, "no_such_player"),
        ("/api/games/nothing", 404, "no_such_game"),
        ("/api/leaderboard?limit=5%0A", 400, "bad_message"),
    ]:
        got, data = await get(server, path)
        assert (got, strict(ApiError, data).code) == (status, code), path
    got, _ = await get(server, "/api/games/g%0A")
    assert got == 404  # no route: an id is matched whole
