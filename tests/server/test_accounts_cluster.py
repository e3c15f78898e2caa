"""Accounts on a three-node cluster with real Redis and PostgreSQL (issue 27): a device
logged in on one node, revoked from another, is refused at the next hello on every node;
password guesses are counted once for the cluster.

Closing a revoked device's socket on another node than the revoking one goes through the
control channel (``Hub.drop_devices`` on every node): test_cluster_levers.py shows it."""

from __future__ import annotations

from conftest import Nodes

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
