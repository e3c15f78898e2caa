"""The HTTP JSON API: its OpenAPI description, and that it speaks the protocol's words."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest_asyncio

from server.cluster.lobby import ClusterLobby
from server.http.api import ApiError, ApiGame, ApiLeaderboard, ApiLobby, openapi
from server.http.app import RunningServer
from server.protocol import PlayerProfile
from tests.eventually import eventually
from tests.server.servers import Nodes, Server, play, start_private_game


def http_get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


async def get(server: Server | RunningServer, path: str) -> tuple[int, Any]:
    """``path``'s status and answer (JSON decoded) from a server or one node of a cluster."""
    running = server.running if isinstance(server, Server) else server
    assert running is not None
    status, kind, body = await asyncio.to_thread(http_get, running.http_url + path)
    return status, json.loads(body) if kind.startswith("application/json") else body


def strict(kind: type, data: Any) -> Any:
    """``data`` decoded as ``kind``: the answer has exactly the documented shape."""
    return msgspec.json.decode(json.dumps(data), type=kind, strict=True)


def test_the_description_names_every_route_and_schema() -> None:
    spec = openapi()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {"/api/lobby", "/api/games/{id}", "/api/games/{id}.txt",
                                  "/api/players/{name}", "/api/players/{name}/games",
                                  "/api/leaderboard",
                                  "/api/solve", "/api/openapi.json",
                                  "/api/games/{id}/review", "/api/admin/audit",
                                  "/api/puzzles/next",
                                  "/api/puzzles/daily", "/api/puzzles/streak",
                                  "/api/puzzles/history", "/api/puzzles/{id}",
                                  "/api/puzzles/{id}/attempt",
                                  "/api/players/{name}/puzzles",
                                  "/api/bot/account/upgrade", "/api/stream/event",
                                  "/api/bot/game/stream/{id}", "/api/bot/game/{id}/move/{cell}",
                                  "/api/bot/game/{id}/resign", "/api/bot/game/{id}/chat",
                                  "/api/bot/game/{id}/abort",
                                  "/api/bot/game/{id}/draw/{accept}",
                                  "/api/challenge/{name}", "/api/challenge/{id}/accept",
                                  "/api/challenge/{id}/decline", "/api/challenge/{id}/cancel",
                                  "/api/tournaments", "/api/tournaments/{id}",
                                  "/api/tournaments/{id}/join", "/api/tournaments/{id}/withdraw"}
    schemas = spec["components"]["schemas"]
    assert {"ApiGame", "PlayerProfile", "ApiPlayerGames", "PlayedGame", "ApiLobby", "ApiError",
            "SeekInfo", "GameSummary", "ApiVerdict", "ApiMoveVerdict", "ApiAudit",
            "ApiAuditEntry"} <= set(schemas)
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
    assert strict(PlayerProfile, (await get(server, "/api/players/ANN"))[1]).name == "ann"
    board = strict(ApiLeaderboard, (await get(server, "/api/leaderboard?limit=1"))[1])
    assert board.players == []  # nobody has played a rated game


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


# -- on a cluster: the same answers on every node ----------------------------------------------


@pytest_asyncio.fixture
async def two_nodes(redis_url: str, postgres_url: str) -> AsyncIterator[Nodes]:
    nodes = Nodes(redis_url, postgres_url, names="ab")
    try:
        await nodes.start()
        yield nodes
    finally:
        await nodes.stop()


async def on_every_node(nodes: Nodes, path: str) -> list[tuple[int, Any]]:
    return [await get(running, path) for running in nodes.running.values()]


async def test_every_node_of_a_cluster_answers_alike(two_nodes: Nodes) -> None:
    """The lobby is the one lobby wherever it is asked (not only on the node holding it),
    and games, players and the leaderboard are the same on every node."""
    nodes = two_nodes
    holders = await eventually(lambda: [r for r in nodes.running.values()
                                        if isinstance(r.hub.lobby, ClusterLobby)
                                        and r.hub.lobby.holding], "a node holds the lobby")
    assert len(holders) == 1
    ann, bob, cat = (await nodes.client("a", "ann"), await nodes.client("b", "bob"),
                     await nodes.client("b", "cat"))
    seek = (await ann.request(t="seek", colour="x"))["seek"]["id"]
    await bob.send(t="accept_seek", seek=seek)
    game = (await ann.expect("game"))["id"]
    await bob.expect("game", id=game)
    await play(ann, game, "1a1", 0)
    await bob.expect("move", game=game, ply=1)
    open_seek = (await cat.request(t="seek", colour="o"))["seek"]["id"]

    async def both_lobbies() -> list[ApiLobby] | None:
        answers = await on_every_node(nodes, "/api/lobby")
        lobbies = [strict(ApiLobby, data) for status, data in answers if status == 200]
        same = len(lobbies) == 2 and all(
            ([s.id for s in lobby.seeks], [(g.id, g.ply) for g in lobby.games],
             lobby.online) == ([open_seek], [(game, 1)], 3) for lobby in lobbies)
        return lobbies if same else None

    # the holder hears of each change from the nodes within moments
    lobbies = await eventually(both_lobbies, "both nodes list the seek, the game and 3 online")
    assert lobbies[0] == lobbies[1]
    assert lobbies[0].seeks[0].name == "cat" and lobbies[0].games[0].x == "ann"
    for path in (f"/api/games/{game}", f"/api/games/{game}.txt", "/api/players/BOB",
                 "/api/leaderboard", "/api/games/nothing", "/api/openapi.json"):
        first, second = await on_every_node(nodes, path)
        assert first == second, path
    playing = strict(ApiGame, (await get(nodes["b"], f"/api/games/{game}"))[1])
    assert (playing.status, playing.moves, playing.x, playing.o) == ("playing", [0], "ann",
                                                                      "bob")
    assert (await get(nodes["a"], "/api/openapi.json"))[1] == json.loads(json.dumps(openapi()))
    # a lobby holder that stops answering: the other node says so after 2 x ttl
    lobby = holders[0].hub.lobby
    assert isinstance(lobby, ClusterLobby) and lobby.holding is not None
    holding = lobby.holding
    holding.worker.cancel()
    other = next(r for r in nodes.running.values() if r is not holders[0])
    try:
        await asyncio.to_thread(urllib.request.urlopen, other.http_url + "/api/lobby", timeout=30)
    except urllib.error.HTTPError as refused:
        assert refused.code == 503 and refused.headers["Retry-After"] == "2"
        assert strict(ApiError, json.loads(refused.read())).code == "unavailable"
    else:
        raise AssertionError("the lobby answered")
