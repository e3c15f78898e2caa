"""A player is an id, a name is a label, end to end (issue 36, items 5 and 9): after
``qubic admin delete-player`` or ``rename`` a newcomer who says ``hello`` as any name the
player's records carry gets none of them; an ongoing private game is listed to its players
only, over the websocket and the HTTP API."""

from __future__ import annotations

from typing import Any

from tests.eventually import eventually
from tests.server.node.test_levers import admin, closed_with, connected_moderator, get
from tests.server.servers import Client, Server, start_private_game


async def finished_game(server: Server, a: Client, b: Client) -> str:
    """A rated private game between ``a`` (X) and ``b``: two moves, then ``b`` resigns."""
    game = await start_private_game(server, a, b, rated=True)
    for mover, cell, ply in ((a, "1a1", 0), (b, "1b1", 1)):
        moved = await mover.request(t="move", game=game, cell=cell, ply=ply)
        assert moved["t"] == "ack", moved
    await b.request(t="resign", game=game)
    await a.expect("end", game=game)
    return game


async def history(client: Client, name: str) -> dict[str, Any]:
    return await client.request(t="player_games", name=name)


async def holds_nothing(server: Server, name: str, reports: list[dict[str, Any]]) -> None:
    """A newcomer says ``hello`` as ``name``: refused, or a fresh account holding nothing."""
    newcomer = await server.client()
    welcome = await newcomer.request(t="hello", name=name)
    if welcome["t"] == "error":
        assert welcome["code"] in ("name_taken", "name_reserved"), welcome
        return
    assert (welcome["rating"], welcome["games"], welcome["roles"]) == (1500, [], [])
    page = await history(newcomer, name)
    assert page["t"] == "player_games" and page["games"] == [] and page["ratings"] == []
    assert page["player"]["games"] == 0 and page["player"]["rating"] == 1500
    assert all(name not in (r["by"], r["name"]) for r in reports)
    assert (await newcomer.request(t="chat", game="nothing", text="hi"))["code"] != "muted"
    exported = (await admin(server, "export-player", name))[1]
    assert (exported["games"], exported["reports"], exported["sanctions"]) == ([], [], [])


async def test_after_a_deletion_no_name_of_the_players_records_opens_them(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await finished_game(server, ann, bob)
    assert (await bob.request(t="report", name="ann", reason="rude"))["t"] == "ack"
    assert (await admin(server, "mute", "ann", "--reason", "caps"))[0] == 0
    code, out = await admin(server, "delete-player", "ann")
    gone = out["games now under"]
    assert code == 0 and gone.startswith("deleted-")
    await closed_with(ann, "kicked")
    reports = (await mod.request(t="reports"))["reports"]
    assert [(r["by"], r["name"]) for r in reports] == [("bob", gone)]
    for name in ("ann", gone, gone.upper(), gone.replace("-", "_")):
        await holds_nothing(server, name, reports)
    page = await history(bob, "bob")
    assert [(g["id"], g["x"], g["o"]) for g in page["games"]] == [(game, gone, "bob")]
    url = server.running.http_url  # type: ignore[union-attr]
    assert (await get(f"{url}/api/players/{gone}/games"))[0] == 404
    assert (await get(f"{url}/api/games/{game}"))[1]["x"] == gone


async def test_after_a_rename_the_old_name_brings_nothing_to_its_next_holder(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await finished_game(server, ann, bob)
    assert (await bob.request(t="report", name="ann", reason="rude"))["t"] == "ack"
    assert (await admin(server, "mute", "ann", "--reason", "caps"))[0] == 0
    rating = (await history(bob, "ann"))["player"]["rating"]
    assert rating != 1500
    assert (await admin(server, "rename", "ann", "anna"))[0] == 0
    await closed_with(ann, "kicked")
    reports = (await mod.request(t="reports"))["reports"]
    assert [(r["by"], r["name"]) for r in reports] == [("bob", "anna")]
    await holds_nothing(server, "ann", reports)  # the old name, free now
    back = await server.client()
    assert (await back.hello(token=ann.token))["name"] == "anna"  # and still muted
    assert (await back.request(t="chat", game=game, text="hi"))["code"] == "muted"
    seen = await back.request(t="watch", game=game)  # the game still held here: her seat
    assert seen["t"] == "game" and seen["you"] == "x", seen
    anna = await history(bob, "anna")
    assert [g["id"] for g in anna["games"]] == [game] and anna["player"]["rating"] == rating
    sanctions = (await admin(server, "sanctions"))[1]
    assert [(s["kind"], s["name"]) for s in sanctions] == [("mute", "anna")]


async def test_an_ongoing_private_game_is_listed_to_its_players_only(server: Server) -> None:
    ann, bob, carl = [await server.client(n) for n in ("ann", "bob", "carl")]
    game = await start_private_game(server, ann, bob)
    url = server.running.http_url  # type: ignore[union-attr]
    for viewer in (ann, bob):
        assert [g["id"] for g in (await history(viewer, "ann"))["games"]] == [game]
    assert (await history(carl, "ann"))["games"] == []
    assert (await get(f"{url}/api/players/ann/games"))[1]["games"] == []
    refused = await carl.request(t="player_games", name="ann", before=game)
    assert refused["code"] == "no_such_game"
    await bob.request(t="resign", game=game)
    await ann.expect("end", game=game)
    assert [g["id"] for g in (await history(carl, "ann"))["games"]] == [game]  # over: shown
    assert [g["id"] for g in (await get(f"{url}/api/players/ann/games"))[1]["games"]] == [game]


async def test_a_newcomer_who_takes_a_renamed_name_at_once_is_neither_kicked_nor_seated(
    server: Server,
) -> None:
    """Found by the simulation (docs/simulation.md): the rename's close went by name, so a
    newcomer who took the freed name before the node acted was closed by it, and was muted by
    the mute the node kept under the name; and a finished game still held in memory seated
    whoever held the name, who could chat in the players' chat and ask for the rematch."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await finished_game(server, ann, bob)
    assert (await admin(server, "mute", "ann", "--reason", "caps"))[0] == 0

    async def muted() -> bool:
        return (await ann.request(t="chat", game=game, text="hi")).get("code") == "muted"

    await eventually(muted, "the node heard of the mute (its control poll)")
    assert (await admin(server, "rename", "ann", "anna"))[0] == 0
    newcomer = await server.client()
    assert (await newcomer.hello(name="ann"))["t"] == "welcome"  # before the node acts
    said = await newcomer.request(t="chat", game=game, text="hi")
    assert said.get("code") != "muted", said
    await closed_with(ann, "kicked")
    seen = await newcomer.request(t="watch", game=game)
    assert seen["t"] == "game" and seen["you"] is None, seen
    assert (await newcomer.request(t="rematch", game=game))["t"] == "error"
    assert (await newcomer.request(t="ping"))["t"] == "pong"  # still open: not kicked
    back = await server.client()  # and the renamed player sits where she sat (seed 36: the
    assert (await back.hello(token=ann.token))["name"] == "anna"  # held game's seat was lost)
    seen = await back.request(t="watch", game=game)
    assert seen["t"] == "game" and seen["you"] == "x", seen


async def test_a_private_games_rematch_is_private_too(server: Server) -> None:
    """Found by the simulation: a private room's rematch was started listed, so the lobby
    showed it and anyone could read its id and moves from the players' history."""
    ann, bob, carl = [await server.client(n) for n in ("ann", "bob", "carl")]
    game = await finished_game(server, ann, bob)
    for player in (ann, bob):
        assert (await player.request(t="rematch", game=game))["t"] == "ack"
    rematch = (await ann.expect("rematched", game=game))["rematch"]
    url = server.running.http_url  # type: ignore[union-attr]
    assert rematch not in [g["id"] for g in (await history(carl, "ann"))["games"]]
    assert rematch not in [g["id"] for g in (await get(f"{url}/api/players/ann/games"))[1]["games"]]
    assert rematch not in [g["id"] for g in (await get(f"{url}/api/lobby"))[1]["games"]]
    assert rematch in [g["id"] for g in (await history(ann, "ann"))["games"]]
