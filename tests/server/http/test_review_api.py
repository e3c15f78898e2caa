"""A finished game's review (issue 29 item 1): ``GET /api/games/{id}/review`` and the
websocket's ``review``, computed once however many ask, kept across a restart, refused with
codes for a missing or unfinished game."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from server.http.api import openapi
from tests.eventually import eventually
from tests.server.servers import Client, Server, play, start_private_game

QUICK_WIN = ["1a1", "4d4", "1b1", "4c4", "1c1", "4a1", "1d1"]  # O leaves 1d1 open: X wins


def fetch(server: Server, path: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    assert server.running is not None
    try:
        with urllib.request.urlopen(f"{server.running.http_url}{path}", timeout=60) as answer:
            return answer.status, json.loads(answer.read()), dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


async def get(server: Server, path: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    return await asyncio.to_thread(fetch, server, path)


async def review_of(server: Server, game: str) -> dict[str, Any]:
    """The review over HTTP, asking again while the answer is 202 (being computed)."""
    for _ in range(60):
        status, body, headers = await get(server, f"/api/games/{game}/review")
        if status != 202:
            assert status == 200, body
            return body
        assert body == {"game": game, "state": "computing"}
        assert int(headers["Retry-After"]) >= 1
        await asyncio.sleep(0.5)
    raise AssertionError("the review never came")


async def finished_game(server: Server, moves: list[str], **terms: Any
                        ) -> tuple[str, Client, Client]:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, "x", **terms)
    for ply, cell in enumerate(moves):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    await ann.expect("end", game=game)
    return game, ann, bob


async def test_a_finished_game_is_reviewed_move_by_move(server: Server) -> None:
    game, ann, _ = await finished_game(server, QUICK_WIN)
    review = await review_of(server, game)
    assert (review["game"], review["variant"], review["x"], review["o"]) == (
        game, "4x4x4", "ann", "bob")
    assert (review["result"], review["reason"]) == ("1-0", "line")
    assert [m["move"] for m in review["moves"]] == QUICK_WIN
    assert review["start"] == {"verdict": "win", "plies": review["start"]["plies"],
                               "proved_by": "book"}
    last = review["moves"][-1]
    assert (last["side"], last["class"], last["after"]["verdict"], last["after"]["plies"]) == (
        "x", "found", "win", 0)
    left_open = review["moves"][5]  # O's 4a1 with X's 1a1 1b1 1c1 open at 1d1
    assert left_open["side"] == "o" and left_open["class"] == "missed_threat"
    assert left_open["best"] == ["1d1"] and left_open["after"]["verdict"] == "loss"
    assert review["summary"]["o"]["missed_threat"] == 1
    assert sum(review["summary"]["x"].values()) == 4
    # the websocket's twin: the same review, as the reply to ``review``
    reply = await ann.request(t="review", game=game)
    assert reply["t"] == "review" and reply["review"] == review


async def test_many_asking_at_once_cost_one_computation(server: Server) -> None:
    """Thirty requests at once (HTTP and websocket) for a game nobody reviewed yet: one
    review computed, every answer the same; then kept: a restarted server reads it."""
    game, ann, bob = await finished_game(server, QUICK_WIN)
    assert server.running is not None
    truth = server.running.hub.truth
    assert truth.reviews == 0
    watchers = [ann, bob] + [await server.client(f"w{i}") for i in range(8)]
    answers = await asyncio.gather(
        *(review_of(server, game) for _ in range(20)),
        *(w.request(t="review", game=game) for w in watchers))
    http, ws = answers[:20], answers[20:]
    assert truth.reviews == 1
    assert all(a == http[0] for a in http)
    assert all(r["t"] == "review" and r["review"] == http[0] for r in ws)
    await server.stop()
    await server.start()
    assert await review_of(server, game) == http[0]
    assert server.running.hub.truth.reviews == 0  # read from the store, not computed


async def test_missing_and_unfinished_games_are_refused(server: Server) -> None:
    status, body, _ = await get(server, "/api/games/nosuchgame/review")
    assert (status, body["code"]) == (404, "no_such_game")
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, "x")
    await play(ann, game, "1a1", 0)
    status, body, _ = await get(server, f"/api/games/{game}/review")
    assert (status, body["code"]) == (409, "game_not_over") and body["message"]
    refused = await bob.request(t="review", game=game)
    assert (refused["t"], refused["code"]) == ("error", "game_not_over")
    refused = await bob.request(t="review", game="nosuchgame")
    assert (refused["t"], refused["code"]) == ("error", "no_such_game")
    # the game goes on meanwhile
    await play(bob, game, "4d4", 1)


async def test_a_small_board_is_reviewed_from_its_table(server: Server) -> None:
    """3x3x3: X opens in a corner (only the centre wins, by the table): a blunder, the
    centre shown as the best move and the line that would have won."""
    moves = ["1a1", "2b2", "1b1", "1c1", "1a3", "3a3"]  # O wins on 1c1-2b2-3a3
    game, _, _ = await finished_game(server, moves, variant="3x3x3")
    review = await review_of(server, game)
    first = review["moves"][0]
    assert (first["class"], first["before"]["verdict"], first["after"]["verdict"]) == (
        "blunder", "win", "loss")
    assert first["best"] == ["2b2"] and first["line"][0] == "2b2"
    assert review["moves"][-1]["class"] == "found" and review["result"] == "0-1"


def test_the_openapi_document_describes_the_review() -> None:
    path = openapi()["paths"]["/api/games/{id}/review"]["get"]
    assert set(path["responses"]) == {"200", "202", "404", "409", "503"}
    assert "ReviewInfo" in openapi()["components"]["schemas"]


async def test_a_worker_killed_mid_review_is_unavailable_then_recomputed(
        server: Server) -> None:
    """The solver's process dies while it reviews: the asker gets ``unavailable``, nothing is
    kept, and the next request computes the review anew (in a new worker)."""
    # a game off the proof's tree (X leaves it at once): its review searches for seconds
    moves = ["1b1", "2c3", "4d4", "1a1", "3b2", "2b2", "4a4", "3c3", "1d1", "1c1", "4b4",
             "4c4", "2a1", "3a1", "2d1", "3d1", "1a4", "2a4", "4a1", "4a2"]
    game, ann, _ = await finished_game_or_resigned(server, moves)
    assert server.running is not None
    truth, reviews = server.running.hub.truth, server.running.hub.reviews
    asked = asyncio.ensure_future(ann.request(t="review", game=game))
    await eventually(lambda: reviews.computing and truth._executor is not None  # noqa: SLF001
                     and truth._executor._processes,  # noqa: SLF001 - the worker to kill
                     "the review is being computed")
    for process in list(truth._executor._processes.values()):  # noqa: SLF001
        process.kill()
    refused = await asyncio.wait_for(asked, 60)
    assert (refused["t"], refused["code"]) == ("error", "unavailable")
    assert truth.reviews == 0
    review = await review_of(server, game)
    assert [m["move"] for m in review["moves"]] == moves and truth.reviews == 1


async def finished_game_or_resigned(server: Server, moves: list[str]
                                    ) -> tuple[str, Client, Client]:
    """``moves`` played by ann (X) and bob (O), then bob resigns."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, "x")
    for ply, cell in enumerate(moves):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    await bob.send(t="resign", game=game)
    await ann.expect("end", game=game)
    return game, ann, bob
