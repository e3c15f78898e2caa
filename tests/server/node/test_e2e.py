"""End to end: a real server on an ephemeral port, real websocket clients, a real database."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import urllib.request
from pathlib import Path

import pytest

from engine import Board
from server.game.records import Seat
from server.store.sqlite import SQLiteStore
from tests.server.servers import Client, Server, play, start_private_game

ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]  # X wins on level 1, row 1


async def play_out(x: Client, o: Client, game: str, moves: list[str]) -> None:
    for ply, cell in enumerate(moves):
        await play(x if ply % 2 == 0 else o, game, cell, ply)


async def clients(server: Server, *names: str) -> list[Client]:
    return [await server.client(name) for name in names]


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def http(server: Server) -> str:
    """The running server's HTTP address."""
    assert server.running is not None
    return server.running.http_url


async def get(url: str) -> tuple[int, str]:
    return await asyncio.to_thread(http_get, url)


async def test_two_people_play_to_a_win(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ROW)
    for client in (ann, bob):
        end = await client.expect("end", game=game)
        assert end["result"] == "1-0" and end["reason"] == "line" and end["winner"] == "x"
        assert end["line"] == [0, 1, 2, 3]
    moves = [m for m in bob.seen if m["t"] == "move"]
    assert [m["notation"] for m in moves] == ROW and [m["ply"] for m in moves] == list(range(1, 8))
    assert [m["version"] for m in moves] == sorted(m["version"] for m in moves)
    status, text = await get(f"{http(server)}/api/games/{game}.txt")
    assert status == 200
    assert '[X "ann"]' in text and '[Result "1-0"]' in text and " ".join(ROW) in text
    status, body = await get(f"{http(server)}/api/games/{game}")
    data = json.loads(body)
    assert data["status"] == "over" and data["result"] == "1-0"
    assert data["notation"] == " ".join(ROW)


async def test_a_draw_by_agreement(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ["1a1", "4d4"])
    await ann.send(t="draw_offer", game=game)
    offer = await bob.expect("offer", kind="draw")
    assert offer["by"] == "x"
    await bob.send(t="draw_accept", game=game)
    end = await ann.expect("end")
    assert end["result"] == "1/2-1/2" and end["reason"] == "agreement"


async def test_a_declined_draw_and_then_resignation(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ["1a1", "4d4", "2b2"])
    await bob.send(t="draw_offer", game=game)
    await ann.expect("offer", kind="draw")
    await ann.send(t="draw_decline", game=game)
    await bob.expect("offer", kind="draw_declined")
    await bob.send(t="resign", game=game)
    end = await ann.expect("end")
    assert end["result"] == "1-0" and end["reason"] == "resign"


async def test_a_loss_on_time(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, clock={"initial": 1, "increment": 0})
    await play_out(ann, bob, game, ["1a1", "4d4"])  # both clocks now run; X has 1 s
    end = await bob.expect("end", timeout=10)
    assert end["reason"] == "time" and end["result"] == "0-1"
    assert end["clocks"]["x"] <= 0


async def test_a_spectator_sees_every_move_and_the_end(server: Server) -> None:
    ann, bob, cat = await clients(server, "ann", "bob", "cat")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ROW[:2])
    state = await cat.request(t="watch", game=game)
    assert state["t"] == "game" and state["you"] is None and state["moves"] == [0, 16]
    assert state["spectators"] == 1
    for player in (ann, bob):  # the players see someone watch
        assert (await player.expect("watching"))["count"] == 1
    for ply, cell in list(enumerate(ROW))[2:]:
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    seen = [(await cat.expect("move"))["notation"] for _ in ROW[2:]]
    assert seen == ROW[2:]
    assert (await cat.expect("end"))["result"] == "1-0"
    await cat.send(t="move", game=game, cell="4d4", ply=7)
    await cat.error("spectator")  # the seat is checked before anything else
    await bob.send(t="move", game=game, cell="4d4", ply=7)
    await bob.error("game_over")


async def test_reconnect_within_the_grace_period_catches_up(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    version = (await bob.expect("move"))["version"]
    token = bob.token
    await bob.ws.close()
    gone = await ann.expect("presence", online=False)
    assert gone["side"] == "o" and gone["claim_in"] > 50
    bob2 = await server.client()
    welcome = await bob2.hello(token=token)
    assert welcome["name"] == "bob" and game in welcome["games"]
    await bob2.send(t="watch", game=game, since=version)
    back = await ann.expect("presence", online=True)
    assert back["side"] == "o"
    await play(bob2, game, "4d4", 1)
    assert (await ann.expect("move", ply=2))["notation"] == "4d4"


async def test_claim_after_the_grace_period(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db", grace=1.0)
    await server.start()
    try:
        ann, bob = await server.client("ann"), await server.client("bob")
        game = await start_private_game(server, ann, bob)
        await play_out(ann, bob, game, ["1a1", "4d4"])
        await bob.ws.close()
        await ann.expect("presence", online=False)
        await ann.send(t="claim", game=game)
        early = await ann.error("claim_too_early")
        assert 0 < early["retry_in"] <= 1.0
        await asyncio.sleep(early["retry_in"] + 0.05)  # as the refusal said: a rule of time
        await ann.send(t="claim", game=game)
        end = await ann.expect("end")
        assert end["reason"] == "claim" and end["result"] == "1-0"
    finally:
        await server.stop()


async def test_a_full_game_against_the_computer(server: Server) -> None:
    ann = await server.client("ann")
    state = await ann.request(t="play_ai", level=4, colour="x", variant="4x4")
    assert state["t"] == "game" and state["you"] == "x" and state["seats"][1]["ai"] == 4
    game, board = state["id"], Board("4x4")
    while True:
        cell = board.legal_moves[0]
        board.push(cell)
        await ann.send(t="move", game=game, cell=cell, ply=board.ply - 1)
        await ann.expect("move", ply=board.ply)
        if board.outcome() is not None:
            break
        thinking = await ann.expect("ai_thinking")
        assert thinking["ply"] == board.ply
        reply = await ann.expect("move", ply=board.ply + 1)
        assert reply["side"] == "o"
        board.push(reply["cell"])
        if board.outcome() is not None:
            break
    end = await ann.expect("end")
    outcome = board.outcome()
    assert outcome is not None and end["result"] == outcome.result


async def test_the_computer_moves_first_when_it_has_x(server: Server) -> None:
    ann = await server.client("ann")
    state = await ann.request(t="play_ai", level=2, colour="o")
    assert state["you"] == "o"
    first = await ann.expect("move", ply=1)
    assert first["side"] == "x"


async def test_one_player_has_at_most_three_computer_games_going(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    games = [(await ann.request(t="play_ai", level=1, colour="x"))["id"] for _ in range(3)]
    refused = await ann.request(t="play_ai", level=1, colour="x")
    assert refused["t"] == "error" and refused["code"] == "too_many_computer_games"
    assert (await bob.request(t="play_ai", level=1, colour="x"))["t"] == "game"  # others play on
    await ann.request(t="resign", game=games[0])
    assert (await ann.request(t="play_ai", level=1, colour="x"))["t"] == "game"


async def test_quick_pairing_pairs_two_players(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    assert (await ann.request(t="quick", variant="3x3x3"))["t"] == "queued"
    await bob.send(t="quick", variant="3x3x3")
    game_a, game_b = await ann.expect("game"), await bob.expect("game")
    assert game_a["id"] == game_b["id"] and game_a["variant"] == "3x3x3" and game_a["rated"]
    assert {game_a["you"], game_b["you"]} == {"x", "o"}


async def test_seeks_are_listed_live_and_accepted(server: Server) -> None:
    ann, bob, cat = await clients(server, "ann", "bob", "cat")
    lobby = await cat.request(t="lobby_sub")
    assert lobby["t"] == "lobby" and lobby["seeks"] == []
    seeking = await ann.request(t="seek", variant="4x4", colour="o")
    seek = seeking["seek"]["id"]
    delta = await cat.expect("lobby_delta")
    assert [s["id"] for s in delta["seeks_added"]] == [seek]
    await bob.send(t="accept_seek", seek=seek)
    game = await bob.expect("game")
    assert game["you"] == "x" and game["variant"] == "4x4"
    removed = await cat.expect("lobby_delta", seeks_removed=[seek])
    assert removed["seeks_added"] == []
    # the game is announced with the seek's removal or in a later delta (on a cluster the
    # holder may hear of both at once); deltas of other changes may come between
    added = removed["games_added"]
    while not added:
        added = (await cat.expect("lobby_delta"))["games_added"]
    assert [g["id"] for g in added] == [game["id"]]
    status, body = await get(f"{http(server)}/api/lobby")
    assert status == 200 and json.loads(body)["games"][0]["id"] == game["id"]


async def test_a_private_room_by_code(server: Server) -> None:
    ann, bob, eve = await clients(server, "ann", "bob", "eve")
    created = await ann.request(t="private_create", colour="o", variant="3x3x3")
    assert len(created["code"].replace("-", "")) >= 16  # 80 bits in base32
    await eve.send(t="private_join", code="AAAA-BBBB-CCCC-DDDD")
    await eve.error("no_such_code")
    await bob.send(t="private_join", code=created["code"].lower())
    assert (await ann.expect("game"))["you"] == "o"
    assert (await bob.expect("game"))["you"] == "x"


async def test_a_private_room_is_cancelled_by_its_host(server: Server) -> None:
    ann, bob = await clients(server, "ann", "bob")
    created = await ann.request(t="private_create")
    closed = await ann.request(t="private_cancel")
    assert closed["t"] == "ack", closed
    await bob.send(t="private_join", code=created["code"])
    await bob.error("no_such_code")
    again = await ann.request(t="private_cancel")
    assert again["t"] == "error" and again["code"] == "not_queued", again
    queued = await ann.request(t="quick")  # waiting nowhere now: quick pairing is open
    assert queued["t"] == "queued", queued


async def test_the_server_restarted_mid_game_resumes_it(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db")
    await server.start()
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, clock={"initial": 60, "increment": 1})
    await play_out(ann, bob, game, ROW[:4])
    tokens = ann.token, bob.token
    await server.stop()
    await server.start()
    try:
        ann, bob = await server.client(), await server.client()
        assert game in (await ann.hello(token=tokens[0]))["games"]
        await bob.hello(token=tokens[1])
        state = await ann.request(t="watch", game=game)
        assert state["moves"] == [0, 16, 1, 17] and state["status"] == "playing"
        assert [seat["rating"] for seat in state["seats"]] == [1500, 1500]
        assert state["clocks"]["x"] > 55_000  # the downtime cost nobody anything
        await bob.request(t="watch", game=game)
        for ply, cell in list(enumerate(ROW))[4:]:
            await play(ann if ply % 2 == 0 else bob, game, cell, ply)
        assert (await bob.expect("end"))["result"] == "1-0"
    finally:
        await server.stop()


async def test_a_computer_seat_resumes_thinking_after_a_restart(tmp_path: Path) -> None:
    # A game stored with the computer to move, as a crash would leave it.
    path = tmp_path / "q.db"
    store = await SQLiteStore.open(path)
    _, token = await store.create_player("ann", 0.0)
    record = await store.create_game(
        variant="4x4x4", x=Seat.computer(2), o=Seat.human("ann"), clock=None, rated=False,
        now=0.0,
    )
    await store.close()
    server = Server(path)
    await server.start()
    try:
        ann = await server.client()
        welcome = await ann.hello(token=token)
        assert welcome["games"] == [record.id]
        state = await ann.request(t="watch", game=record.id)
        assert state["seats"][0] == {"name": "Computer (level 2)", "rating": None,
                                     "online": True, "ai": 2, "bot": False}
        moves = state["moves"]
        if not moves:  # the computer may not have moved yet when we looked
            moves = [(await ann.expect("move", ply=1))["cell"]]
        await play(ann, record.id, "4d4" if moves not in ([63], ["4d4"]) else "1a1", 1)
        assert (await ann.expect("move", ply=3))["side"] == "x"
    finally:
        await server.stop()


async def test_health_metrics_players_and_leaderboard(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob, rated=True)
    await play_out(ann, bob, game, ROW)
    end = await ann.expect("end")
    assert end["rating_change"]["x"] > 0 > end["rating_change"]["o"]
    base = http(server)
    status, body = await get(f"{base}/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, text = await get(f"{base}/metrics")
    assert status == 200
    assert "qubic_moves_total 7" in text and "qubic_connections 2" in text
    assert 'qubic_event_loop_lag_seconds{quantile="0.99"}' in text
    status, body = await get(f"{base}/api/players/ANN")
    player = json.loads(body)
    assert player["name"] == "ann" and player["wins"] == 1 and player["rating"] > 1500
    assert "token" not in body
    status, body = await get(f"{base}/api/leaderboard")
    assert [p["name"] for p in json.loads(body)["players"]][:2] == ["ann", "bob"]
    assert (await get(f"{base}/api/players/nobody"))[0] == 404
    assert (await get(f"{base}/api/games/nope"))[0] == 404


async def test_a_rematch_swaps_colours(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ROW)
    await ann.expect("end")
    await ann.send(t="rematch", game=game)
    await bob.expect("offer", kind="rematch")
    await bob.send(t="rematch", game=game)
    # (on a cluster the first game was handed on after it started: its new owner's state
    # came too, when the players opened it there again)
    again = await ann.expect("game", you="o")
    assert again["id"] != game
    assert (await bob.expect("game", you="x"))["id"] == again["id"]


async def test_a_rated_rematch_shows_new_ratings_and_its_spectators_follow(
    server: Server,
) -> None:
    ann, bob, cat = await clients(server, "ann", "bob", "cat")
    game = await start_private_game(server, ann, bob, rated=True)
    await cat.request(t="watch", game=game)
    await play_out(ann, bob, game, ROW)
    change = (await ann.expect("end"))["rating_change"]
    await cat.expect("end")
    await ann.send(t="rematch", game=game)
    await bob.expect("offer", kind="rematch")
    await bob.send(t="rematch", game=game)
    again = await ann.expect("game", you="o")  # (the first game's state again: you x)
    seats = {seat["name"]: seat["rating"] for seat in again["seats"]}
    assert seats["ann"] != 1500 and abs(seats["ann"] - (1500 + change["x"])) <= 1, seats
    assert seats["bob"] != 1500 and abs(seats["bob"] - (1500 + change["o"])) <= 1, seats
    told = await cat.expect("rematched")
    assert told["game"] == game and told["rematch"] == again["id"]
    late = await (await server.client("dan")).request(t="watch", game=game)
    assert late["rematch_game"] == again["id"]


async def test_chat_reaches_the_room_literally(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await ann.send(t="chat", game=game, text="[b]hi[/b] \\x1b[31m")
    line = await bob.expect("chat")
    assert line["text"] == "[b]hi[/b] \\x1b[31m" and line["name"] == "ann"
    await ann.send(t="chat", game=game, text="bad\x1b[31m")
    await ann.error("bad_chat")


async def test_the_token_goes_only_to_its_owner(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play_out(ann, bob, game, ROW)
    await bob.expect("end")
    assert ann.token and bob.token
    assert ann.token not in json.dumps(bob.seen)
    assert bob.token not in json.dumps(ann.seen)
    db = sqlite3.connect(server.path)
    dump = "\n".join(db.iterdump())
    db.close()
    assert ann.token not in dump and bob.token not in dump


@pytest.mark.parametrize("seconds", [0.0])
async def test_shutdown_says_goodbye(tmp_path: Path, seconds: float) -> None:
    server = Server(tmp_path / "q.db")
    await server.start()
    ann = await server.client("ann")
    assert server.running is not None
    await server.running.stop()
    server.running = None
    with pytest.raises(Exception):  # noqa: B017 - the socket is closed with a reason
        await ann.recv(5)
    assert ann.ws.close_code == 1001


async def test_a_catch_up_after_a_restart_is_not_fooled_by_the_versions_before_it(
        tmp_path: Path) -> None:
    """Presence and chat count versions as moves do, so a client can hold a version above
    the moves' count when the server restarts. The restored game's events must not reuse
    those numbers: ann, caught up ``since`` what she held, is told that bob (who has not come
    back) is away; she was told nothing, and kept him online."""
    server = Server(tmp_path / "q.db")
    await server.start()
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, ROW[0], 0)  # v1
    tokens = ann.token, bob.token
    await bob.ws.close()
    await ann.expect("presence", game=game, online=False)  # v2
    bob = await server.client()
    await bob.hello(token=tokens[1])
    await bob.request(t="watch", game=game)
    held = (await ann.expect("presence", game=game, online=True))["version"]  # v3
    await server.stop()
    await server.start()
    try:
        ann = await server.client()
        await ann.hello(token=tokens[0])
        caught = await ann.request(t="watch", game=game, since=held)
        told = [caught, *await ann.quiet(0.5)]
        bob_side = "o"
        away = [m for m in told if m["t"] == "game" and m["seats"][1]["online"] is False
                or m["t"] == "presence" and m["side"] == bob_side and m["online"] is False]
        assert away, told
    finally:
        await server.stop()
