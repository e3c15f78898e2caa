"""Puzzles on a real server: the websocket requests and the HTTP API, attempts judged against
the stored solution, Glicko-2 ratings, the puzzle of the day and streaks; and the puzzles'
operations on PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from engine.puzzles.mate import Step, load_puzzles
from server.game.puzzles import daily_index
from server.game.ratings import Rating, rate_game
from server.node.puzzles import Puzzles
from server.store import puzzles as ops
from server.store.puzzles import PuzzleStore, StoredPuzzle
from tests.server.servers import Client, Server


def db(server: Server) -> PuzzleStore:
    assert server.running is not None
    return PuzzleStore(server.running.hub.store)


async def stored(server: Server, puzzle_id: int) -> StoredPuzzle:
    found = await db(server).read(ops.puzzle_by_id(puzzle_id))
    assert found is not None
    return found


def line_from(step: Step, first: int) -> list[int]:
    """The solver's moves of the solution that starts with ``first`` (the first accepted
    move at every later step)."""
    moves = [first]
    _, nxt = step.accepted[first]
    while nxt is not None and nxt.accepted:
        cell = min(nxt.accepted)
        moves.append(cell)
        _, nxt = nxt.accepted[cell]
    return moves


async def solve(client: Client, puzzle: StoredPuzzle, first: int, mode: str = "next"
                ) -> dict[str, Any]:
    """Play the solution from ``first`` move by move; the last reply."""
    moves = line_from(puzzle.puzzle.solution, first)
    step: Step | None = puzzle.puzzle.solution
    for count in range(1, len(moves) + 1):
        reply = await client.request(t="puzzle_attempt", puzzle=puzzle.id,
                                     moves=moves[:count], mode=mode)
        assert step is not None
        expected_reply, step = step.accepted[moves[count - 1]]
        if count < len(moves):
            assert reply["verdict"] == "right" and reply["reply"] == expected_reply, reply
    return reply


async def test_next_puzzle_solved_is_rated_as_glicko_2_says(server: Server) -> None:
    ann = await server.client("ann")
    shown = await ann.request(t="puzzle_next")
    assert shown["t"] == "puzzle" and shown["mode"] == "next" and shown["rating"] == 1500
    info = shown["puzzle"]
    puzzle = await stored(server, info["id"])
    assert info["title"] == puzzle.puzzle.title and info["moves"] == list(puzzle.puzzle.position)
    before = puzzle.rating
    result = await solve(ann, puzzle, puzzle.puzzle.first_moves[0])
    assert result["verdict"] == "solved" and result["rated"]
    player, rated_puzzle = rate_game(Rating(), before, 1.0)
    assert result["rating"] == round(player.rating) > 1500
    assert result["rating_change"] == round(player.rating) - 1500
    after = await stored(server, info["id"])
    assert after.rating.rating == pytest.approx(rated_puzzle.rating)
    assert (after.plays, after.solves) == (1, 1)
    again = await solve(ann, puzzle, puzzle.puzzle.first_moves[0])  # the second try: unrated
    assert again["verdict"] == "solved" and not again["rated"] and again["rating_change"] is None
    assert again["rating"] == result["rating"]
    following = await ann.request(t="puzzle_next")  # not the one just solved
    assert following["puzzle"]["id"] != info["id"]


async def test_a_wrong_move_shows_the_solution_and_costs_rating(server: Server) -> None:
    bob = await server.client("bob")
    info = (await bob.request(t="puzzle_next"))["puzzle"]
    puzzle = await stored(server, info["id"])
    taken = set(puzzle.puzzle.position)
    wrong = next(c for c in range(64) if c not in taken and c not in puzzle.puzzle.first_moves)
    result = await bob.request(t="puzzle_attempt", puzzle=info["id"], moves=[wrong])
    assert result["verdict"] == "wrong"
    assert result["solution"] == puzzle.puzzle.solution.main_line()
    player, _ = rate_game(Rating(), puzzle.rating, 0.0)
    assert result["rating"] == round(player.rating) < 1500 and result["rated"]
    history = await bob.request(t="puzzle_history")
    assert [(a["puzzle"], a["solved"], a["rated"]) for a in history["attempts"]] == [
        (info["id"], False, True)]
    assert history["rating"] == result["rating"]


async def test_every_accepted_first_move_is_accepted(server: Server) -> None:
    cat = await server.client("cat")
    ids = [pid for pid, _ in await db(server).read(ops.ids_by_rating())]
    await cat.request(t="puzzle_next")  # the starting set is in by now
    ids = [pid for pid, _ in await db(server).read(ops.ids_by_rating())]
    puzzles = [await stored(server, pid) for pid in ids]
    several = next(p for p in puzzles if len(p.puzzle.first_moves) > 1
                   and p.puzzle.kind == "win" and p.puzzle.moves > 1)
    second = several.puzzle.first_moves[1]
    result = await solve(cat, several, second)
    assert result["verdict"] == "solved"


async def test_bad_attempts_are_refused(server: Server) -> None:
    dan = await server.client("dan")
    assert (await dan.request(t="puzzle_attempt", puzzle=999999, moves=[0]))["code"] == (
        "no_such_puzzle")
    info = (await dan.request(t="puzzle_next"))["puzzle"]
    puzzle = await stored(server, info["id"])
    moves = line_from(puzzle.puzzle.solution, puzzle.puzzle.first_moves[0])
    past = await dan.request(t="puzzle_attempt", puzzle=info["id"], moves=[*moves, 63, 62])
    assert past["t"] == "error" and past["code"] == "bad_message"
    streak = await dan.request(t="puzzle_attempt", puzzle=info["id"], moves=moves[:1],
                               mode="streak")
    assert streak["t"] == "error" and streak["code"] == "not_allowed"


async def test_a_streak_climbs_until_the_first_mistake(server: Server) -> None:
    eve = await server.client("eve")
    first = await eve.request(t="puzzle_streak")
    assert first["streak"] == 0 and first["best_streak"] == 0
    puzzle = await stored(server, first["puzzle"]["id"])
    solved = await solve(eve, puzzle, puzzle.puzzle.first_moves[0], mode="streak")
    assert solved["verdict"] == "solved" and solved["streak"] == 1 and not solved["rated"]
    second = await eve.request(t="puzzle_streak", new=False)
    assert second["streak"] == 1 and second["puzzle"]["rating"] >= first["puzzle"]["rating"]
    nxt = await stored(server, second["puzzle"]["id"])
    taken = set(nxt.puzzle.position)
    wrong = next(c for c in range(64) if c not in taken and c not in nxt.puzzle.first_moves)
    missed = await eve.request(t="puzzle_attempt", puzzle=nxt.id, moves=[wrong], mode="streak")
    assert missed["verdict"] == "wrong" and missed["streak"] == 0 and missed["best_streak"] == 1
    again = await eve.request(t="puzzle_streak")
    assert again["streak"] == 0 and again["best_streak"] == 1


async def test_the_puzzle_of_the_day_holds_all_day(server: Server) -> None:
    assert server.running is not None
    hub = server.running.hub
    day = datetime.datetime(2026, 11, 26, tzinfo=datetime.UTC)
    now = [day.timestamp() + 1]
    puzzles = Puzzles(hub.store, clock=lambda: now[0])
    ann = await server.client("ann")
    morning = await puzzles.daily(None)
    assert morning.day == "2026-11-26"
    shipped = load_puzzles()
    assert morning.puzzle.id == sorted(
        [pid for pid, _ in await db(server).read(ops.ids_by_rating())])[
            daily_index(day.date(), len(shipped))]
    # a puzzle added during the day changes nothing until the next day
    extra = shipped[0]
    extra.position = (*extra.position[:-2],)  # a new position: the key differs
    await db(server).write(ops.insert_puzzles([extra], now=now[0] + 60))
    now[0] = day.timestamp() + 86399
    evening = await puzzles.daily("ann")
    assert evening.puzzle == morning.puzzle and evening.day == "2026-11-26"
    now[0] = day.timestamp() + 86400 + 1
    tomorrow = await puzzles.daily(None)
    assert tomorrow.day == "2026-11-27"
    today = await ann.request(t="puzzle_daily")
    assert today["mode"] == "daily" and today["rating"] == 1500


def http(url: str, token: str | None = None, body: dict[str, Any] | None = None
         ) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def test_the_http_api_identifies_players_by_their_token(server: Server) -> None:
    assert server.running is not None
    base = server.running.http_url
    fay = await server.client("fay")
    token = fay.token
    status, refused = await asyncio.to_thread(http, base + "/api/puzzles/next")
    assert status == 401 and refused["code"] == "not_authenticated"
    status, refused = await asyncio.to_thread(http, base + "/api/puzzles/next", "nobody")
    assert status == 401 and refused["code"] == "bad_token"
    status, shown = await asyncio.to_thread(http, base + "/api/puzzles/next", token)
    assert status == 200 and shown["t"] == "puzzle" and shown["rating"] == 1500
    status, daily = await asyncio.to_thread(http, base + "/api/puzzles/daily")
    assert status == 200 and daily["rating"] is None and daily["day"]
    pid = shown["puzzle"]["id"]
    status, one = await asyncio.to_thread(http, f"{base}/api/puzzles/{pid}")
    assert status == 200 and one == shown["puzzle"]
    status, missing = await asyncio.to_thread(http, f"{base}/api/puzzles/999999")
    assert status == 404 and missing["code"] == "no_such_puzzle"
    puzzle = await stored(server, pid)
    first = puzzle.puzzle.first_moves[0]
    status, result = await asyncio.to_thread(
        http, f"{base}/api/puzzles/{pid}/attempt", token, {"moves": [first]})
    assert status == 200 and result["t"] == "puzzle_result"
    assert result["verdict"] in ("right", "solved")
    status, bad = await asyncio.to_thread(
        http, f"{base}/api/puzzles/{pid}/attempt", token, {"moves": "1a1"})
    assert status == 400 and bad["code"] == "bad_message"
    status, streak = await asyncio.to_thread(http, base + "/api/puzzles/streak", token)
    assert status == 200 and streak["mode"] == "streak" and streak["streak"] == 0
    status, history = await asyncio.to_thread(http, base + "/api/puzzles/history", token)
    assert status == 200 and history["t"] == "puzzle_history"
    status, public = await asyncio.to_thread(http, base + "/api/players/FAY/puzzles?limit=5")
    assert status == 200 and public == history  # anyone's, by name in any case
    status, missing = await asyncio.to_thread(http, base + "/api/players/nobody/puzzles")
    assert status == 404 and missing["code"] == "no_such_player"
    status, bad = await asyncio.to_thread(http, base + "/api/players/fay/puzzles?limit=0")
    assert status == 400 and bad["code"] == "bad_message"


async def test_the_puzzle_operations_on_postgresql(postgres_url: str) -> None:
    from server.store.postgres import PostgresStore

    store = await PostgresStore.open(postgres_url)
    try:
        puzzles = PuzzleStore(store)
        shipped = load_puzzles()[:5]
        assert await puzzles.write(ops.insert_puzzles(shipped, now=0.0)) == 5
        assert await puzzles.write(ops.insert_puzzles(shipped, now=0.0)) == 0
        await store.create_player("gus", 1.0)
        ids = await puzzles.read(ops.ids_by_rating())
        recorded = await puzzles.write(ops.record_attempt("gus", ids[0][0], "next", True, 5.0))
        assert recorded.rated and recorded.player.rating.rating > 1500
        again = await puzzles.write(ops.record_attempt("gus", ids[0][0], "next", True, 6.0))
        assert not again.rated
        history = await puzzles.read(ops.history("gus", 10))
        assert [a.rated for a in history] == [False, True]
        unseen = await puzzles.read(ops.nearest_unseen("gus", 0.0))
        assert len(unseen) == 1 and unseen[0][0] != ids[0][0]  # the easiest left
        streak = await puzzles.write(ops.start_streak("gus"))
        assert streak.streak.run == 1
    finally:
        await store.close()


async def test_the_move_to_postgresql_keeps_the_puzzles(tmp_path: Path, postgres_url: str
                                                         ) -> None:
    from server.store import tools
    from server.store.postgres import PostgresStore
    from server.store.sqlite import SQLiteStore

    db = tmp_path / "q.db"
    async with await SQLiteStore.open(db) as store:
        await store.create_player("hal", 1.0)
        puzzles = PuzzleStore(store)
        await puzzles.write(ops.insert_puzzles(load_puzzles()[:4], now=0.0))
        first = (await puzzles.read(ops.ids_by_rating()))[0][0]
        await puzzles.write(ops.record_attempt("hal", first, "next", True, 5.0))
    copied = await tools.copy_to_postgres(db, postgres_url)
    assert copied["puzzles"] == 4 and copied["puzzle_attempts"] == 1
    assert copied["puzzle_players"] == 1
    async with await PostgresStore.open(postgres_url) as moved:
        puzzles = PuzzleStore(moved)
        history = await puzzles.read(ops.history("hal", 5))
        assert [(a.puzzle_id, a.solved, a.rated) for a in history] == [(first, True, True)]
        assert (await puzzles.read(ops.puzzle_player("hal"))).rated == 1
        # new rows take ids after the copied ones
        assert await puzzles.write(ops.insert_puzzles(load_puzzles()[4:6], now=9.0)) == 2
        second = max(pid for pid, _ in await puzzles.read(ops.ids_by_rating()))
        await puzzles.write(ops.record_attempt("hal", second, "next", False, 10.0))
