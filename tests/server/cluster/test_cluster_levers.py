"""The host's levers on the three-node cluster (real Redis and PostgreSQL): ``qubic admin`` on
the shared database, and a moderator on one node, reach the players on every node through the
control channel: a ban, a kick, an announcement, a mute, a chat line removed."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from qubic_cli.main import main
from tests.eventually import eventually
from tests.server.cluster.test_cluster import move_to, owner, private_game
from tests.server.node.test_levers import closed_with
from tests.server.servers import Nodes


async def admin(nodes: Nodes, *argv: str) -> tuple[int, Any]:
    """``qubic admin ARGV --json`` on the cluster's database."""
    out, err = io.StringIO(), io.StringIO()

    def run() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return main(["admin", *argv, "--db", nodes.config["db_path"], "--json"])

    code = await asyncio.to_thread(run)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


async def test_a_ban_closes_the_players_connections_on_every_node_and_refuses_them_anywhere(
    nodes: Nodes,
) -> None:
    ann_a = await nodes.client("a", "ann")
    ann_c = await nodes.client("c", token=ann_a.token)
    bob = await nodes.client("b", "bob")
    code, _ = await admin(nodes, "ban", "ann", "--reason", "cheating")
    assert code == 0
    for connection in (ann_a, ann_c):
        assert "cheating" in (await closed_with(connection, "banned"))["message"]
    for node in "abc":
        refused = await (await nodes.client(node)).request(t="hello", token=ann_a.token)
        assert refused["code"] == "banned", (node, refused)
    assert (await bob.request(t="ping"))["t"] == "pong"


async def test_kick_and_announce_reach_every_node(nodes: Nodes) -> None:
    ann_b = await nodes.client("b", "ann")
    others = [await nodes.client(node, name) for node, name in (("a", "bob"), ("c", "eve"))]
    assert (await admin(nodes, "announce", "maintenance at noon"))[0] == 0
    for client in (ann_b, *others):
        assert (await client.expect("announce"))["text"] == "maintenance at noon"
    assert (await admin(nodes, "kick", "ann"))[0] == 0
    await closed_with(ann_b, "kicked")
    for client in others:
        assert (await client.request(t="ping"))["t"] == "pong"
    assert (await (await nodes.client("a")).hello(token=ann_b.token))["name"] == "ann"


async def test_a_moderator_on_one_node_mutes_and_removes_chat_in_a_game_held_on_another(
    nodes: Nodes,
) -> None:
    first = await nodes.client("a", "marta")
    assert (await admin(nodes, "grant", "marta", "moderator"))[0] == 0
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    held = await owner(nodes, game)
    elsewhere = [node for node in "abc" if node != held]
    bob = await move_to(nodes, elsewhere[0], bob, game)
    eve = await nodes.client(elsewhere[1], "eve")
    await eve.request(t="watch", game=game)
    mod = await nodes.client(elsewhere[1], token=first.token)
    await ann.request(t="chat", game=game, text="rude words")
    line = (await bob.expect("chat", text="rude words"))["line"]
    await eve.request(t="chat", game=game, text="spam from the stands")
    spam = (await eve.expect("chat", text="spam from the stands"))["line"]
    assert (await mod.request(t="remove_chat", game=game, line=line))["t"] == "ack"
    for client in (ann, bob):  # the players' chat, on two nodes
        assert (await client.expect("chat_removed", game=game))["line"] == line
    assert (await mod.request(t="remove_chat", game=game, line=spam))["t"] == "ack"
    assert (await eve.expect("chat_removed", game=game))["line"] == spam  # the spectators'
    assert (await mod.request(t="mute", name="ann", reason="rude"))["t"] == "ack"

    async def refused() -> bool:
        reply = await ann.request(t="chat", game=game, text="more")
        return reply["t"] == "error" and reply["code"] == "muted"

    await eventually(refused, "ann is muted")
    assert (await bob.request(t="chat", game=game, text="thanks"))["t"] == "ack"
    _, log = await admin(nodes, "audit")
    assert [(e["actor"], e["action"], e["target"]) for e in log[:3]] == [
        ("marta", "mute", "ann"), ("marta", "remove-chat", game), ("marta", "remove-chat", game)]


async def test_a_moderator_elsewhere_cannot_remove_an_admins_line_and_nothing_is_logged(
    nodes: Nodes,
) -> None:
    """The rank is checked where the line is: a moderator on a node that does not hold the
    game is refused (``not_moderator``) for an admin's line, which stays, and no removal is
    audited; the moderator's own line goes, acknowledged after it is gone."""
    first = await nodes.client("a", "marta")
    boss = await nodes.client("a", "boss")
    assert (await admin(nodes, "grant", "marta", "moderator"))[0] == 0
    assert (await admin(nodes, "grant", "boss", "admin"))[0] == 0
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    held = await owner(nodes, game)
    elsewhere = next(node for node in "abc" if node != held)
    mod = await nodes.client(elsewhere, token=first.token)
    boss = await nodes.client(elsewhere, token=boss.token)
    for watcher in (mod, boss):
        await watcher.request(t="watch", game=game)
    await boss.request(t="chat", game=game, text="the admin says")
    said = (await boss.expect("chat", text="the admin says"))["line"]
    await mod.request(t="chat", game=game, text="the moderator says")
    own = (await mod.expect("chat", text="the moderator says"))["line"]
    refused = await mod.request(t="remove_chat", game=game, line=said)
    assert (refused["t"], refused.get("code")) == ("error", "not_moderator")
    assert (await mod.request(t="remove_chat", game=game, line=own))["t"] == "ack"
    assert (await boss.expect("chat_removed", game=game))["line"] == own
    _, log = await admin(nodes, "audit")
    removals = [e for e in log if e["action"] == "remove-chat"]
    assert [(e["actor"], e["detail"]) for e in removals] == [("marta", f"line {own}")]
    snapshot = await boss.request(t="watch", game=game)
    assert [line["text"] for line in snapshot["chat"]] == ["the admin says"]


async def test_a_revoked_devices_socket_on_another_node_is_closed(nodes: Nodes) -> None:
    """Accounts' revoke closes the device's connections on every node: at once on the
    revoking node, through the control channel on the others."""
    ann = await nodes.client("a", "ann")
    password = "correct horse battery"
    assert (await ann.request(t="set_password", password=password))["t"] == "password_set"
    laptop = await nodes.client("b")
    welcome = await laptop.request(t="login", name="ann", password=password, device="laptop")
    assert welcome["t"] == "welcome"
    assert (await ann.request(t="revoke", others=True))["revoked"] == 1
    await laptop.error("token_revoked")
    with pytest.raises(ConnectionClosed):
        while True:
            await laptop.recv(10)
    assert laptop.ws.close_code == 4001
    assert (await ann.request(t="ping"))["t"] == "pong"  # the revoking device stays


async def test_a_moderator_on_a_node_that_does_not_hold_the_game_reads_and_removes_the_players_chat(
    nodes: Nodes,
) -> None:
    """The players' chat reaches a moderator watching from another node than the game's
    (and its state there shows both chats); a spectator beside it reads only theirs."""
    first = await nodes.client("a", "marta")
    assert (await admin(nodes, "grant", "marta", "moderator"))[0] == 0
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    held = await owner(nodes, game)
    elsewhere = [node for node in "abc" if node != held]
    await ann.request(t="chat", game=game, text="said before")
    await bob.expect("chat", text="said before")
    eve = await nodes.client(elsewhere[0], "eve")
    mod = await nodes.client(elsewhere[0], token=first.token)
    state = await mod.request(t="watch", game=game)
    assert [(c["text"], c["side"]) for c in state["chat"]] == [("said before", "x")]
    assert (await eve.request(t="watch", game=game))["chat"] == []
    await ann.request(t="chat", game=game, text="rude words")
    line = (await mod.expect("chat", text="rude words"))["line"]
    await eve.request(t="chat", game=game, text="from the stands")
    assert (await eve.expect("chat"))["text"] == "from the stands"  # not the players' line
    assert (await mod.expect("chat", text="from the stands"))["side"] is None
    assert (await mod.request(t="remove_chat", game=game, line=line))["t"] == "ack"
    for client in (ann, bob, mod):
        assert (await client.expect("chat_removed", game=game))["line"] == line
