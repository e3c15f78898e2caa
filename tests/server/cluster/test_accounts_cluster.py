"""Accounts on a three-node cluster with real Redis and PostgreSQL (issue 27): a device
logged in on one node, revoked from another, is refused at the next hello on every node;
password guesses are counted once for the cluster; ``qubic admin reset-password`` closes the
player's sockets on every node, and a ban refuses their token on every node's HTTP routes.

Closing a revoked device's socket on another node than the revoking one goes through the
control channel (``Hub.drop_devices`` on every node): test_cluster_levers.py shows it."""

from __future__ import annotations

import aiohttp

from tests.server.cluster.test_cluster_levers import admin
from tests.server.node.test_accounts_e2e import closed_as_revoked
from tests.server.servers import Nodes

PASSWORD = "correct horse battery"


async def test_a_revoked_token_is_refused_on_every_node(nodes: Nodes) -> None:
    ann = await nodes.client("a", "ann")
    assert (await ann.request(t="set_password", password=PASSWORD))["t"] == "password_set"
    laptop = await nodes.client("b")
    welcome = await laptop.request(t="login", name="ann", password=PASSWORD, device="laptop")
    assert welcome["t"] == "welcome"
    devices = (await ann.request(t="sessions"))["devices"]
    assert [d["label"] for d in devices] == [None, "laptop"]
    reply = await ann.request(t="revoke", others=True)
    assert reply["revoked"] == 1
    for node in "abc":
        client = await nodes.client(node)
        refused = await client.request(t="hello", token=welcome["token"])
        assert refused["code"] == "token_revoked", (node, refused)
    assert (await (await nodes.client("c")).hello(token=ann.token))["name"] == "ann"


async def test_password_guesses_are_counted_once_for_the_cluster(nodes: Nodes) -> None:
    ann = await nodes.client("a", "ann")
    await ann.request(t="set_password", password=PASSWORD)
    guessers = [await nodes.client(node) for node in "abc"]
    codes = [(await guessers[i % 3].request(t="login", name="ann", password=f"guess {i}"))
             ["code"] for i in range(11)]
    assert codes == ["bad_credentials"] * 10 + ["too_many_attempts"]
    for guesser in guessers:
        refused = await guesser.request(t="login", name="ann", password=PASSWORD)
        assert refused["code"] == "too_many_attempts" and refused["retry_in"] > 0


async def test_reset_password_and_a_ban_reach_every_node_socket_and_route(nodes: Nodes) -> None:
    """``qubic admin reset-password`` closes the player's sockets on every node; a banned
    player's token is refused on every node's HTTP routes."""
    ann_a = await nodes.client("a", "ann")
    assert (await ann_a.request(t="set_password", password=PASSWORD))["t"] == "password_set"
    ann_c = await nodes.client("c")
    assert (await ann_c.request(t="login", name="ann", password=PASSWORD))["t"] == "welcome"
    code, out = await admin(nodes, "reset-password", "ann")
    assert code == 0 and out["devices_logged_out"] == 2
    for connection in (ann_a, ann_c):
        await closed_as_revoked(connection)
    bob = await nodes.client("b", "bob")
    assert (await admin(nodes, "ban", "bob", "--reason", "abuse"))[0] == 0
    async with aiohttp.ClientSession() as http:
        for node in "abc":
            url = f"{nodes[node].http_url}/api/puzzles/history"
            async with http.get(url, headers={"Authorization": f"Bearer {bob.token}"}) as reply:
                assert (reply.status, (await reply.json())["code"]) == (403, "banned"), node
