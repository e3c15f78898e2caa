"""``GET /api/solve`` (issue 26 item 3): the verdicts of a position, on the proof's tree and
off it, and bad input refused with clear codes while the server goes on."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from server.http import rate, solve
from tests.server.servers import Server

BURST = rate.Limits(solve.RATE).burst


def fetch(server: Server, query: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    assert server.running is not None
    url = f"{server.running.http_url}/api/solve?{query}"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


async def get(server: Server, query: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    return await asyncio.to_thread(fetch, server, query)


@pytest.mark.parametrize(("query", "status", "code"), [
    ("variant=9x9x9&moves=1a1", 400, "bad_variant"),
    ("moves=1a1+9z9", 400, "bad_cell"),
    ("moves=1a1+1a1", 400, "illegal_move"),
    ("moves=" + "+".join(["1a1", "4d4", "1b1", "4c4", "1c1", "4a1", "1d1", "2a1"]), 400,
     "game_over"),
    ("moves=" + "+".join(["1a1"] * 65), 400, "bad_message"),
    ("moves=" + "x" * 3000, 400, "bad_message"),
    ("variant=4x4&moves=a1+b2+a1", 400, "illegal_move"),
])
async def test_bad_positions_are_refused_with_their_code(
        server: Server, query: str, status: int, code: str) -> None:
    got, body, _ = await get(server, query)
    assert (got, body["code"]) == (status, code), body
    assert body["message"]


async def test_a_flood_of_questions_is_limited_per_address(server: Server) -> None:
    answers = [await get(server, "moves=1a1+1a1") for _ in range(BURST + 3)]
    statuses = [status for status, _, _ in answers]
    assert statuses[:BURST] == [400] * BURST
    assert 429 in statuses[BURST:]
    limited = next(a for a in answers if a[0] == 429)
    assert limited[1]["code"] == "rate_limited" and int(limited[2]["Retry-After"]) >= 1
    status, body, _ = await get(server, "moves=1a1+1a1")  # still limited, not crashed
    assert status in (400, 429)
    ann = await server.client("ann")  # and the games go on
    assert (await ann.request(t="ping"))["t"] == "pong"


async def test_the_empty_board_is_a_win_for_x_from_the_proof(server: Server) -> None:
    status, body, _ = await get(server, "variant=4x4x4&moves=")
    assert status == 200, body
    assert (body["variant"], body["position"], body["to_move"]) == ("4x4x4", "", "x")
    assert body["verdict"] == "win" and body["proved_by"] == "book"
    best = body["moves"][0]
    assert best["verdict"] == "loss" and best["proved_by"] == "book"  # O loses after it
    assert best["plies"] is not None and best["plies"] >= 7  # no win faster than 4 X moves
    assert {m["move"] for m in body["moves"]} >= {"1a1"} and len(body["moves"]) == 64
    assert server.running is not None
    searched = server.running.hub.truth.searches
    again = await get(server, "moves=")  # the cache answers, the same
    assert again[1] == body
    assert server.running.hub.truth.searches == searched  # not asked of the worker again


async def test_a_finished_game_is_lost_for_the_side_to_move(server: Server) -> None:
    """X's 1d1 completed level 1's first row: no move is left, and O (to move) has lost, in
    0 plies; a move after it is refused (above)."""
    status, body, _ = await get(server, "moves=1a1+4d4+1b1+4c4+1c1+4a1+1d1")
    assert status == 200, body
    assert (body["to_move"], body["verdict"], body["plies"], body["moves"]) == (
        "o", "loss", 0, [])


async def test_a_position_after_x_deviates_is_answered_without_a_guess(server: Server) -> None:
    status, body, _ = await get(server, "moves=1a1+1d4+4a4+3b3+1a4")
    assert status == 200, body
    assert body["to_move"] == "o" and body["verdict"] in ("loss", "unknown")
    assert body["proved_by"] in (None, "search", "book")
    if body["verdict"] == "unknown":
        assert body["plies"] is None


async def test_small_boards_come_from_their_table(server: Server) -> None:
    status, body, _ = await get(server, "variant=4x4&moves=")
    assert status == 200, body
    assert body["verdict"] == "draw"
