"""Floods on the routes that had no limit of their own (issue 27): a player who reports over
and over (``--reports-per-hour``: ``too_many_reports`` with ``retry_in``), and one client
address asking the puzzles' HTTP routes (``--puzzles-rate``) or a player's games
(``--player-games-rate``) too often (429 ``rate_limited`` with ``Retry-After``). Each flood
is refused while other players and other addresses go on. Real server, real clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio

from server.node import levers
from tests.server.servers import Server, start_private_game

RATE = 0.2  # requests a second: a burst of one, then one every five seconds


@pytest_asyncio.fixture
async def limited(tmp_path: Path) -> AsyncIterator[Server]:
    """A server with low limits, behind a trusted proxy (this host), so that a test can
    speak from several client addresses with X-Forwarded-For."""
    s = Server(tmp_path / "qubic.db", reports_per_hour=3, puzzles_rate=RATE,
               player_games_rate=RATE, trusted_proxies=("127.0.0.1",))
    await s.start()
    yield s
    await s.stop()


async def get(server: Server, path: str, address: str,
              method: str = "GET", body: Any = None) -> tuple[int, Any, dict[str, str]]:
    """One request to ``path`` as the client at ``address``; its status, JSON and headers."""
    assert server.running is not None
    async with aiohttp.ClientSession() as http, http.request(
            method, server.running.http_url + path, json=body,
            headers={"X-Forwarded-For": address}) as reply:
        return reply.status, await reply.json(), dict(reply.headers)


async def test_a_player_reporting_over_and_over_is_refused_and_others_go_on(
    limited: Server,
) -> None:
    ann, bob = await limited.client("ann"), await limited.client("bob")
    game = await start_private_game(limited, ann, bob)
    for _ in range(3):
        assert (await ann.request(t="report", name="bob", reason="rude", game=game))["t"] == "ack"
    refused = await ann.request(t="report", name="bob", reason="rude again")
    assert (refused["t"], refused["code"]) == ("error", "too_many_reports")
    assert 600 < refused["retry_in"] <= 1200  # three an hour: one back every 20 minutes
    assert (await bob.request(t="report", name="ann", reason="spam"))["t"] == "ack"
    assert (await ann.request(t="chat", game=game, text="still playing"))["t"] == "ack"
    assert (await ann.request(t="ping"))["t"] == "pong"
    # what reached the moderators: the three reports let in, and bob's
    mod = await limited.client("marta")
    assert limited.running is not None
    await levers.grant(limited.running.store, "test", "marta", "moderator")
    again = await limited.client()
    await again.hello(token=mod.token)
    queue = (await again.request(t="reports"))["reports"]
    assert [(r["by"], r["name"]) for r in queue] == [("ann", "bob")] * 3 + [("bob", "ann")]


async def test_a_flood_of_puzzle_requests_from_one_address_is_refused_others_go_on(
    limited: Server,
) -> None:
    flood = "203.0.113.5"
    answers = [await get(limited, "/api/puzzles/daily", flood) for _ in range(4)]
    assert answers[0][0] == 200, answers[0]
    refused = next(a for a in answers if a[0] == 429)  # one at once, then one in 5 s
    assert refused[1]["code"] == "rate_limited" and int(refused[2]["Retry-After"]) >= 1
    # every puzzle route counts against the same rate, the attempt too
    status, body, _ = await get(limited, "/api/puzzles/1/attempt", flood, "POST",
                                {"moves": [0]})
    assert (status, body["code"]) == (429, "rate_limited")
    status, _, _ = await get(limited, "/api/players/ann/puzzles", flood)
    assert status == 429
    # another address is not held up, nor are the games
    assert (await get(limited, "/api/puzzles/daily", "203.0.113.6"))[0] == 200
    ann = await limited.client("ann")
    assert (await ann.request(t="ping"))["t"] == "pong"


async def test_a_flood_of_pages_of_a_players_games_is_refused_others_go_on(
    limited: Server,
) -> None:
    await limited.client("ann")
    flood = "203.0.113.9"
    answers = [await get(limited, "/api/players/ann/games", flood) for _ in range(4)]
    assert answers[0][0] == 200 and answers[0][1]["player"]["name"] == "ann"
    refused = next(a for a in answers if a[0] == 429)
    assert refused[1]["code"] == "rate_limited" and int(refused[2]["Retry-After"]) >= 1
    # the player's record, the lobby and other addresses are not held up
    assert (await get(limited, "/api/players/ann", flood))[0] == 200
    assert (await get(limited, "/api/players/ann/games", "203.0.113.10"))[0] == 200
