"""Moderators read the players' chat (issue 27, item 8): a moderator or admin watching a game
is sent both chats, each line marked with its channel (``side``: the speaker's colour in the
players', null in the spectators'), live, in the game's state and in a catch-up, so a line of
either can be removed from the client. An ordinary spectator still reads only the spectators'.
One server (SQLite) here; the three-node cluster in test_cluster_levers.py."""

from __future__ import annotations

from tests.server.node.test_levers import admin, connected_moderator
from tests.server.servers import Server, start_private_game


async def test_a_moderator_watching_reads_both_chats_and_a_spectator_only_theirs(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    carl = await server.client("carl")
    await carl.request(t="watch", game=game)
    state = await mod.request(t="watch", game=game)
    assert state["t"] == "game" and state["you"] is None
    await ann.request(t="chat", game=game, text="between us players")
    await carl.request(t="chat", game=game, text="from the stands")
    players = await mod.expect("chat", text="between us players")
    assert (players["name"], players["side"]) == ("ann", "x")
    stands = await mod.expect("chat", text="from the stands")
    assert (stands["name"], stands["side"]) == ("carl", None)
    # the spectator: the first line of chat it is sent is its own (events arrive in order)
    assert (await carl.expect("chat"))["text"] == "from the stands"
    # the players: theirs only, as before
    assert (await bob.expect("chat"))["text"] == "between us players"
    await bob.request(t="chat", game=game, text="and mine")
    assert (await bob.expect("chat"))["text"] == "and mine"
    assert (await mod.expect("chat", text="and mine"))["side"] == "o"
    # a moderator who speaks does so in the spectators' chat
    await mod.request(t="chat", game=game, text="keep it friendly")
    assert (await carl.expect("chat"))["text"] == "keep it friendly"
    assert [(await ann.expect("chat"))["text"] for _ in range(2)] == \
        ["between us players", "and mine"]
    await ann.request(t="chat", game=game, text="good game")
    assert (await ann.expect("chat"))["text"] == "good game"  # not the moderator's line


async def test_a_moderator_removes_a_players_line_it_was_sent_and_is_told_it_went(
    server: Server,
) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await mod.request(t="watch", game=game)
    await ann.request(t="chat", game=game, text="something nasty")
    line = (await mod.expect("chat", text="something nasty"))["line"]
    assert (await mod.request(t="remove_chat", game=game, line=line))["t"] == "ack"
    for client in (ann, bob, mod):
        assert (await client.expect("chat_removed", game=game))["line"] == line


async def test_the_state_and_a_catch_up_show_a_moderator_both_chats(server: Server) -> None:
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    carl = await server.client("carl")
    await carl.request(t="watch", game=game)
    await ann.request(t="chat", game=game, text="players 1")
    await carl.request(t="chat", game=game, text="stands 1")
    await carl.expect("chat", text="stands 1")
    boss = await server.client("boss")
    assert (await admin(server, "grant", "boss", "admin"))[0] == 0
    again = await server.client()
    assert (await again.hello(token=boss.token))["roles"] == ["admin"]
    state = await again.request(t="watch", game=game)
    assert [(c["text"], c["side"]) for c in state["chat"]] == \
        [("players 1", "x"), ("stands 1", None)]
    dora = await server.client("dora")
    assert [c["text"] for c in (await dora.request(t="watch", game=game))["chat"]] == \
        ["stands 1"]
    # the admin closes the game, lines are said in both chats, and it reopens from its version
    version = state["version"]
    assert (await again.request(t="unwatch", game=game))["t"] == "ack"
    await bob.request(t="chat", game=game, text="players 2")
    await carl.request(t="chat", game=game, text="stands 2")
    await carl.expect("chat", text="stands 2")
    reply = await again.request(t="watch", game=game, since=version)
    assert reply["t"] == "ack"
    caught = [m for m in again.inbox if m["t"] == "chat"]
    # from the version it held: the lines said since that version (the first two may have
    # reached it already: a client keeps each `line` once)
    assert [(c["text"], c["side"]) for c in caught] == \
        [("players 1", "x"), ("stands 1", None), ("players 2", "o"), ("stands 2", None)]
    assert [c["line"] for c in caught] == [c["line"] for c in state["chat"]] + \
        [caught[2]["line"], caught[3]["line"]]
    assert (await dora.expect("chat"))["text"] == "stands 2"
