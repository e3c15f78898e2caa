"""Help against the computer on a real server: a hint, and a takeback that spectators see,
a catch-up replays and a restart keeps; refused in games between people."""

from __future__ import annotations

from engine import Board
from tests.server.servers import Server, play, start_private_game


async def test_a_hint_then_a_takeback_against_the_computer(server: Server) -> None:
    ann, eve = await server.client("ann"), await server.client("eve")
    state = await ann.request(t="play_ai", level=1, colour="x", variant="4x4x4")
    game = state["id"]
    hint = await ann.request(t="hint", game=game)
    assert hint["t"] == "hint" and hint["game"] == game and hint["ply"] == 0
    assert Board("4x4x4").is_legal(hint["cell"]) and len(hint["notation"]) == 3
    watched = await eve.request(t="watch", game=game)
    assert watched["t"] == "game"
    await play(ann, game, hint["notation"], 0)
    reply = await ann.expect("move", ply=2)
    seen = reply["version"]
    taken = await ann.request(t="takeback", game=game)
    assert taken["t"] == "ack"
    event = await ann.expect("takeback")
    assert (event["ply"], event["by"], event["version"]) == (0, "x", seen + 1)
    assert (await eve.expect("takeback"))["version"] == seen + 1
    refused = await eve.request(t="takeback", game=game)
    assert (refused["t"], refused["code"]) == ("error", "spectator")
    # a client that saw the computer's reply catches up with the takeback
    late = await server.client()
    await late.hello(token=ann.token)
    caught = await late.request(t="watch", game=game, since=seen)
    assert caught["t"] == "ack" and late.inbox[0]["t"] == "takeback"
    again = await ann.request(t="takeback", game=game)
    assert (again["t"], again["code"]) == ("error", "not_allowed")  # nothing of ann's left
    await play(ann, game, "4d4", 0)
    await ann.expect("move", ply=2)
    await ann.request(t="takeback", game=game)
    await server.stop()
    await server.start()
    ann = await server.client()
    await ann.hello(token=late.token)
    resumed = await ann.request(t="watch", game=game)
    assert resumed["moves"] == [] and resumed["you"] == "x"


async def test_no_hint_or_takeback_in_a_game_between_people(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    for request in ("hint", "takeback"):
        refused = await bob.request(t=request, game=game)
        assert (refused["t"], refused["code"]) == ("error", "not_allowed"), refused
