"""The solver's one worker shared fairly (issue 36, item 7): one address that keeps it busy
(an IPv6 /64 counted as one) has at most ``MAX_JOBS`` questions in, is refused
``solver_busy`` past that, and another address's question waits for at most the one job
running, not for the backlog; reviews have a rate per address. Real server, real clients
(HTTP behind a trusted proxy, so that a test speaks from several addresses)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio

from server.computer.truth import MAX_JOBS
from server.game.addresses import address_key
from server.node.reviews import REVIEW_BURST
from tests.eventually import eventually
from tests.server.servers import Server, start_private_game

FLOOD = ["2001:db8:0:7::1", "2001:db8:0:7::beef"]  # one /64: one address
OTHER = "198.51.100.20"


@pytest_asyncio.fixture
async def proxied(tmp_path: Path) -> AsyncIterator[Server]:
    s = Server(tmp_path / "qubic.db", trusted_proxies=("127.0.0.1",))
    await s.start()
    yield s
    await s.stop()


async def solve(server: Server, moves: list[int] | str, address: str
                ) -> tuple[int, dict[str, Any], dict[str, str]]:
    assert server.running is not None
    query = moves if isinstance(moves, str) else "+".join(_cell(c) for c in moves)
    async with aiohttp.ClientSession() as http, http.get(
            f"{server.running.http_url}/api/solve", params={"moves": query},
            headers={"X-Forwarded-For": address}) as reply:
        return reply.status, await reply.json(), dict(reply.headers)


def _cell(index: int) -> str:
    return f"{index // 16 + 1}{'abcd'[index % 4]}{index // 4 % 4 + 1}"


async def test_one_address_flooding_the_solver_delays_another_by_one_job_at_most(
    proxied: Server,
) -> None:
    assert proxied.running is not None
    truth = proxied.running.hub.truth
    assert (await solve(proxied, "", OTHER))[0] == 200  # the worker started, the proof loaded
    rng = random.Random(7)
    positions = [rng.sample(range(64), 4) for _ in range(MAX_JOBS)]  # ~1 s of search each
    flood = [asyncio.create_task(solve(proxied, p, FLOOD[n % 2]))
             for n, p in enumerate(positions)]
    await eventually(lambda: truth.held(address_key(FLOOD[0])) == MAX_JOBS,
                     "the flood holds its MAX_JOBS", every=0.01)
    assert truth.held(address_key(FLOOD[1])) == MAX_JOBS  # both addresses: one /64
    status, body, headers = await solve(proxied, rng.sample(range(64), 4), FLOOD[1])
    assert (status, body["code"]) == (429, "solver_busy"), body
    assert int(headers["Retry-After"]) >= 1
    searched = truth.searches
    status, body, _ = await solve(proxied, "1a1", OTHER)  # another address's question
    assert status == 200, body
    assert truth.searches - searched <= 2  # the flood's job running then, and this one
    assert truth.held(address_key(FLOOD[0])) >= MAX_JOBS - 2  # the backlog still waits
    assert all(status == 200 for status, _, _ in await asyncio.gather(*flood))


async def test_reviews_computed_for_one_address_are_rated_and_the_socket_stays(
    server: Server,
) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    games = []
    for _ in range(REVIEW_BURST + 1):
        game = await start_private_game(server, ann, bob)
        await ann.request(t="resign", game=game)
        games.append(game)
    answers = [await ann.request(t="review", game=game) for game in games]
    assert [a["t"] for a in answers[:REVIEW_BURST]] == ["review"] * REVIEW_BURST
    refused = answers[REVIEW_BURST]
    assert (refused["t"], refused["code"]) == ("error", "solver_busy"), refused
    assert refused["retry_in"] > 0
    # a kept review costs nothing; the socket is open
    assert (await bob.request(t="review", game=games[0]))["t"] == "review"
    assert (await ann.request(t="ping"))["t"] == "pong"
    assert server.running is not None
    async with aiohttp.ClientSession() as http, http.get(
            f"{server.running.http_url}/api/games/{games[-1]}/review") as reply:
        assert reply.status == 429 and (await reply.json())["code"] == "solver_busy"
        assert int(reply.headers["Retry-After"]) >= 1
