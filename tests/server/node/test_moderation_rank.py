"""Moderators act on those below them (issue 36, item 9): a moderator may not remove an admin's
chat line, nobody pulls a lever on themself, a ``remove_chat`` of a game or a line that does
not exist is refused and not audited, and a report of oneself or with a blank reason is
refused. A real server on SQLite and real websocket clients."""

from __future__ import annotations

from typing import Any

from qubic_cli.common import actor
from tests.eventually import eventually
from tests.server.node.test_levers import admin, connected_moderator
from tests.server.servers import Client, Server, start_private_game


def number(said: dict[str, Any]) -> int:
    """A chat line's number as ``remove_chat`` names it."""
    return int(said.get("line", said.get("version")))


async def said(speaker: Client, hearer: Client, game: str, text: str) -> int:
    assert (await speaker.request(t="chat", game=game, text=text))["t"] == "ack"
    return number(await hearer.expect("chat", text=text))


async def audited(server: Server) -> list[tuple[str, str]]:
    _, log = await admin(server, "audit")
    return [(e["action"], e["actor"]) for e in log if e["action"] != "grant"]


async def test_a_moderator_removes_a_players_line_and_their_own_but_not_an_admins(
        server: Server) -> None:
    mod = await connected_moderator(server)  # marta
    boss, ann = await server.client("boss"), await server.client("ann")
    assert (await admin(server, "grant", "boss", "admin"))[0] == 0
    game = await start_private_game(server, boss, ann)
    assert (await mod.request(t="watch", game=game))["t"] == "game"
    boss_line = await said(boss, mod, game, "the admin speaks")
    ann_line = await said(ann, mod, game, "ann speaks")
    own_line = await said(mod, mod, game, "the moderator speaks")
    refused = await mod.request(t="remove_chat", game=game, line=boss_line)
    assert refused["code"] == "not_moderator", refused
    assert await audited(server) == []
    for line in (ann_line, own_line):
        assert (await mod.request(t="remove_chat", game=game, line=line))["t"] == "ack"
    await ann.expect("chat_removed", game=game, line=ann_line)
    state = await mod.request(t="watch", game=game)
    assert [s["text"] for s in state["chat"]] == ["the admin speaks"]
    # an admin removes it (boss, from another connection: roles are read at hello)
    boss_admin = await server.client()
    await boss_admin.hello(token=boss.token)
    assert (await boss_admin.request(t="remove_chat", game=game, line=boss_line))["t"] == "ack"
    await ann.expect("chat_removed", game=game, line=boss_line)


async def test_a_moderators_action_on_an_admins_line_is_refused_where_the_game_is_held(
        server: Server) -> None:
    """The control action itself carries the rank: a node holding the game refuses it even
    when the moderator's node could not check (a cluster's other node)."""
    from server.node import levers

    boss, ann = await server.client("boss"), await server.client("ann")
    await admin(server, "grant", "boss", "admin")
    await connected_moderator(server)
    game = await start_private_game(server, boss, ann)
    line = await said(boss, ann, game, "the admin speaks")
    assert server.running is not None
    hub = server.running.hub
    await levers.remove_chat(hub.store, "marta", game, line, admin=False)
    await hub.control.poll()
    assert [s["text"] for s in (await ann.request(t="watch", game=game))["chat"]] == [
        "the admin speaks"]


async def test_remove_chat_of_a_game_or_line_that_does_not_exist_is_refused_unaudited(
        server: Server) -> None:
    mod = await connected_moderator(server)
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    refused = await mod.request(t="remove_chat", game="NoSuchGame12", line=3)
    assert refused["code"] == "no_such_game", refused
    refused = await mod.request(t="remove_chat", game=game, line=999)
    assert refused["code"] == "not_allowed", refused
    assert await audited(server) == []


async def test_nobody_pulls_a_lever_on_themself(server: Server) -> None:
    boss = await server.client("boss")
    await admin(server, "grant", "boss", "admin")
    again = await server.client()
    await again.hello(token=boss.token)
    for request in ({"t": "kick", "name": "boss"}, {"t": "mute", "name": "BOSS"},
                    {"t": "ban", "name": "boss", "reason": "oops"}):
        refused = await again.request(**request)
        assert refused["code"] == "not_allowed", (request, refused)
    assert (await again.request(t="ping"))["t"] == "pong"
    assert await audited(server) == []


async def test_a_report_of_oneself_or_without_a_reason_is_refused(server: Server) -> None:
    mod = await connected_moderator(server)
    ann = await server.client("ann")
    await server.client("bob")
    assert (await ann.request(t="report", name="Ann", reason="me"))["code"] == "not_allowed"
    assert (await ann.request(t="report", name="bob", reason=" \u3000 "))["code"] == \
        "bad_message"
    assert (await mod.request(t="reports"))["reports"] == []
    assert (await ann.request(t="report", name="bob", reason="rude"))["t"] == "ack"


async def test_a_revoked_moderator_stops_reading_the_players_chat_at_once(
        server: Server) -> None:
    mod = await connected_moderator(server)  # marta, watching with both chats
    ann, bob = await server.client("ann"), await server.client("bob")
    carl = await server.client("carl")
    game = await start_private_game(server, ann, bob)
    for watcher in (mod, carl):
        assert (await watcher.request(t="watch", game=game))["t"] == "game"
    await said(ann, mod, game, "players only")  # a moderator reads it
    assert (await admin(server, "revoke-role", "marta", "moderator"))[0] == 0
    assert server.running is not None
    sessions = server.running.hub.delivery.of_player("marta")
    await eventually(lambda: not any(s.moderator for s in sessions),
                     "the node heard of the revoked role (its control poll)")
    await ann.request(t="chat", game=game, text="not for marta")
    await said(carl, mod, game, "from the stands")  # after ann's, in order
    assert "not for marta" not in [m.get("text") for m in mod.seen]
    assert (await mod.request(t="reports"))["code"] == "not_moderator"


async def test_the_host_removes_a_chat_line_from_the_command_line(server: Server) -> None:
    """``qubic admin remove-chat ID LINE``: the node holding the game takes the line out (both
    players are told; a later ``watch`` does not show it), the audit log has it; a game that
    does not exist is refused."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    line = await said(ann, bob, game, "something rude")
    await said(bob, ann, game, "something kind")
    code, out = await admin(server, "remove-chat", game, str(line), "--reason", "rude")
    assert code == 0 and (out["game"], out["line"]) == (game, line)
    for client in (ann, bob):
        await client.expect("chat_removed", game=game, line=line)
    assert [s["text"] for s in (await bob.request(t="watch", game=game))["chat"]] == [
        "something kind"]
    assert [actor for action, actor in await audited(server) if action == "remove-chat"] == [
        actor()]
    code, said_back = await admin(server, "remove-chat", "NoSuchGame12", "3")
    assert code == 2 and "no game NoSuchGame12" in said_back
