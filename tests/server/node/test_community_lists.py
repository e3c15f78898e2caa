"""Issue 27, items 5, 10, 11 and 12 end to end: real clients against a real server (SQLite).

A player's history over the websocket and the HTTP API, the two chats of a game, reserved
and look-alike names, and a leaderboard of players who play rated games.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.server.servers import Client, Nodes, Server, play, start_private_game


def http_get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def get(server: Server, path: str) -> tuple[int, Any]:
    assert server.running is not None
    return await asyncio.to_thread(http_get, server.running.http_url + path)


async def rated_win(server: Server, x: Client, o: Client) -> str:
    """A rated 4x4 game that ``x`` wins along the first row; returns its id."""
    game = await start_private_game(server, x, o, variant="4x4", rated=True)
    for ply, cell in enumerate(("a1", "a2", "b1", "b2", "c1", "c2", "d1")):
        await play(x if ply % 2 == 0 else o, game, cell, ply)
    await x.expect("end", game=game)
    await o.expect("end", game=game)
    return game


# -- item 11: names --------------------------------------------------------------------------


async def test_reserved_and_look_alike_names_are_refused_to_newcomers(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db", reserved_names=("boss",))
    await server.start()
    try:
        ann = await server.client("ann")
        for name in ("Admin", "adm1n", "ad_min", "MODERATOR", "Computer-Level-3", "level8",
                     "master", "qubic", "r00t", "B0SS"):
            newcomer = await server.client()
            refused = await newcomer.request(t="hello", name=name)
            assert (refused["t"], refused["code"]) == ("error", "name_reserved"), name
        for name in ("ANN", "Ann"):  # the same name as ann's, folded
            newcomer = await server.client()
            refused = await newcomer.request(t="hello", name=name)
            assert refused["code"] == "name_taken", name
        bill = await server.client("bill")
        for look_alike in ("BI11", "bi1l", "BiLL"):
            newcomer = await server.client()
            assert (await newcomer.request(t="hello", name=look_alike))["code"] == "name_taken"
        # a returning player is never refused; nor is a name that only holds a reserved word
        again = await server.client()
        assert (await again.hello(token=ann.token))["name"] == "ann"
        assert (await (await server.client()).hello("administrators"))["name"] == "administrators"
        assert bill.name == "bill"
    finally:
        await server.stop()


# -- item 5: a player's history ----------------------------------------------------------------


async def test_a_players_games_over_the_websocket_and_http_alike(server: Server) -> None:
    ann, bob, cleo = [await server.client(n) for n in ("ann", "bob", "cleo")]
    first = await rated_win(server, ann, bob)
    second = await rated_win(server, bob, ann)
    computer = await cleo.request(t="play_ai", level=2, variant="4x4", colour="x")
    await cleo.request(t="resign", game=computer["id"])
    page = await cleo.request(t="player_games", name="ANN", limit=1)
    assert page["t"] == "player_games" and page["player"]["name"] == "ann"
    assert (page["player"]["wins"], page["player"]["losses"]) == (1, 1)
    (newest,) = page["games"]
    assert (newest["id"], newest["side"], newest["x"], newest["result"]) == (
        second, "o", "bob", "1-0")
    assert newest["moves"] == [0, 4, 1, 5, 2, 6, 3] and newest["rating_change"] < 0
    assert page["next"] == second
    older = await cleo.request(t="player_games", name="ann", before=page["next"])
    assert [g["id"] for g in older["games"]] == [first] and older["next"] is None
    assert older["games"][0]["rating_change"] > 0 and older["games"][0]["side"] == "x"
    # the rating after each rated game, oldest first: its history, ending at today's rating
    ratings = [point["rating"] for point in page["ratings"]]
    assert len(ratings) == 2 and ratings[-1] == page["player"]["rating"]
    assert ratings[0] == 1500 + older["games"][0]["rating_change"]
    # HTTP gives the same page
    status, body = await get(server, "/api/players/ann/games?limit=1")
    assert status == 200
    assert {key: body[key] for key in ("player", "games", "next", "ratings")} == {
        key: page[key] for key in ("player", "games", "next", "ratings")}
    status, body = await get(server, f"/api/players/ann/games?before={second}")
    assert status == 200 and [g["id"] for g in body["games"]] == [first]
    # the computer's game, from cleo's side
    mine = await cleo.request(t="player_games", name="cleo")
    assert [(g["o"], g["o_ai"], g["side"], g["result"]) for g in mine["games"]] == [
        ("Computer (level 2)", 2, "x", "*")]  # resigned before a move: called off
    # refusals
    assert (await cleo.request(t="player_games", name="nobody"))["code"] == "no_such_player"
    refused = await cleo.request(t="player_games", name="cleo", before=first)
    assert refused["code"] == "no_such_game"
    assert (await cleo.request(t="player_games", name="ann", limit=51))["code"] == "bad_message"
    for path, status_wanted, code in (
        ("/api/players/nobody/games", 404, "no_such_player"),
        (f"/api/players/cleo/games?before={first}", 404, "no_such_game"),
        ("/api/players/ann/games?limit=x", 400, "bad_message"),
        ("/api/players/ann/games?before=a%0A", 400, "bad_message"),
    ):
        status, body = await get(server, path)
        assert (status, body["code"]) == (status_wanted, code), path


# -- item 12: the leaderboard ------------------------------------------------------------------


async def test_the_leaderboard_shows_players_with_rated_games_lately(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db")
    await server.start()
    try:
        ann, bob, cleo, dan = [await server.client(n) for n in ("ann", "bob", "cleo", "dan")]
        await rated_win(server, ann, bob)
        casual = await start_private_game(server, cleo, dan, variant="4x4")
        await cleo.request(t="resign", game=casual)
        status, body = await get(server, "/api/leaderboard")
        assert status == 200 and [p["name"] for p in body["players"]] == ["ann", "bob"]
    finally:
        await server.stop()
    # the same players, on a server whose host drops a player after 1e-9 days (86 µs)
    # without a rated game: their games ended well before this request
    server = Server(tmp_path / "q.db", leaderboard_inactive_days=1e-9)
    await server.start()
    try:
        status, body = await get(server, "/api/leaderboard")
        assert status == 200 and body["players"] == []
    finally:
        await server.stop()


# -- item 10: the two chats --------------------------------------------------------------------


def chat_texts(client: Client) -> list[str]:
    return [m["text"] for m in client.seen if m["t"] == "chat"]


async def test_players_and_spectators_each_have_their_chat(server: Server) -> None:
    ann, bob, cleo, dan = [await server.client(n) for n in ("ann", "bob", "cleo", "dan")]
    game = await start_private_game(server, ann, bob)
    for spectator in (cleo, dan):
        await spectator.request(t="watch", game=game)
    assert (await ann.request(t="chat", game=game, text="good luck"))["t"] == "ack"
    await bob.expect("chat", text="good luck", side="x")
    assert (await cleo.request(t="chat", game=game, text="x is lost"))["t"] == "ack"
    said = await dan.expect("chat", text="x is lost")
    assert said["side"] is None and said["name"] == "cleo"
    # a last line of each chat, heard by everyone it is for: what came before it has come
    await bob.request(t="chat", game=game, text="thanks")
    await ann.expect("chat", text="thanks")
    await dan.request(t="chat", game=game, text="agreed")
    await cleo.expect("chat", text="agreed")
    for player in (ann, bob):
        assert chat_texts(player) == ["good luck", "thanks"]
    for spectator in (cleo, dan):
        assert chat_texts(spectator) == ["x is lost", "agreed"]
    # opening the game again: each gets the last lines of its own chat only
    eve = await server.client("eve")
    state = await eve.request(t="watch", game=game)
    assert [line["text"] for line in state["chat"]] == ["x is lost", "agreed"]
    assert state["spectator_chat"] is True
    back = await server.client()
    await back.hello(token=ann.token)
    state = await back.request(t="watch", game=game)
    assert [line["text"] for line in state["chat"]] == ["good luck", "thanks"]


async def test_a_host_can_turn_spectators_chat_off(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db", spectator_chat=False)
    await server.start()
    try:
        ann, bob, cleo = [await server.client(n) for n in ("ann", "bob", "cleo")]
        game = await start_private_game(server, ann, bob)
        state = await cleo.request(t="watch", game=game)
        assert state["spectator_chat"] is False
        refused = await cleo.request(t="chat", game=game, text="hello players")
        assert refused["code"] == "spectator_chat_off"
        assert (await ann.request(t="chat", game=game, text="hi bob"))["t"] == "ack"
        await bob.expect("chat", text="hi bob")
    finally:
        await server.stop()


# -- on a cluster: the chats' audiences and a player's history on every node ----------------------


async def test_the_two_chats_and_a_history_across_nodes(nodes: Nodes) -> None:
    """The players on nodes a and b, a spectator on each of b and c: each line reaches its
    own chat's listeners on every node, and any node answers ``player_games``."""
    ann, bob = await nodes.client("a", "ann"), await nodes.client("b", "bob")
    created = await ann.request(t="private_create", colour="x")
    await bob.send(t="private_join", code=created["code"])
    game = (await ann.expect("game"))["id"]
    await bob.expect("game", id=game)
    cleo, dan = await nodes.client("b", "cleo"), await nodes.client("c", "dan")
    for spectator in (cleo, dan):
        assert (await spectator.request(t="watch", game=game))["t"] == "game"
    assert (await ann.request(t="chat", game=game, text="from x"))["t"] == "ack"
    await bob.expect("chat", text="from x")
    assert (await dan.request(t="chat", game=game, text="from c"))["t"] == "ack"
    await cleo.expect("chat", text="from c")
    await bob.request(t="chat", game=game, text="last of the players")
    await ann.expect("chat", text="last of the players")
    await cleo.request(t="chat", game=game, text="last of the spectators")
    await dan.expect("chat", text="last of the spectators")
    for player in (ann, bob):
        assert chat_texts(player) == ["from x", "last of the players"]
    for spectator in (cleo, dan):
        assert chat_texts(spectator) == ["from c", "last of the spectators"]
    await ann.request(t="resign", game=game)  # before two moves: called off
    for node in "abc":
        asker = await nodes.client(node)
        page = await asker.request(t="hello", name=f"asker{node}")
        assert page["t"] == "welcome"
        history = await asker.request(t="player_games", name="ANN")
        assert [g["id"] for g in history["games"]] == [game], node
