"""Issue 36 item 6: a player's ban holds the addresses their devices were seen from lately, so
the banned player cannot come back at once as ``target1b``, ``target-1`` or on a new device.

In the store (SQLite and PostgreSQL): which addresses a ban holds, and for how long. On a real
server behind a trusted proxy (so that each client has an address of its own): a new name, a
``login`` and a ``recover`` from a held address (its /64) are refused with ``banned``; a
player already on that address plays on; lifting the ban frees it. On the cluster: a ban holds
the address on every node at once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from server.node import levers
from server.store import lever_records as ops
from server.store.base import Store
from tests.server.node.test_levers import admin
from tests.server.servers import Client, Nodes, Server

HELD = "2001:db8:1:2::10"  # the banned player's address
SAME_64 = "2001:db8:1:2::99"
ELSEWHERE = "2001:db8:1:3::1"
DAY = 86400.0


async def test_a_ban_holds_the_addresses_the_players_devices_were_seen_from_lately(
    store: Store,
) -> None:
    now = time.time()
    await store.register("target1", now - 3600, HELD)
    await store.add_device("target1", "old laptop", now - 10 * DAY, "198.51.100.20")
    await store.add_device("target1", "on the host", now, "127.0.0.1")
    await store.register("bystander", now, "203.0.113.5")
    assert await store.query(ops.ban_holding(SAME_64, now)) is None  # no ban yet
    await levers.ban(store, "host", name="target1", reason="cheating", seconds=3600)
    held = await store.query(ops.ban_holding(SAME_64, now))
    assert held is not None and held.name == "target1" and held.expires is not None
    for free in (ELSEWHERE, "198.51.100.20",  # seen 10 days before the ban: not held
                 "203.0.113.5", "127.0.0.1", "::1", ""):
        assert await store.query(ops.ban_holding(free, now)) is None, free
    assert await store.query(ops.ban_holding(HELD, now + 2 * 3600)) is None  # expired
    assert await levers.unban(store, "host", name="target1") == 1
    assert await store.query(ops.ban_holding(HELD, now)) is None  # lifted


async def _from(server: Server, address: str) -> Client:
    """A connection that the server sees coming from ``address`` (through its proxy)."""
    assert server.running is not None
    ws = await websockets.connect(server.running.ws_url,
                                  additional_headers={"X-Forwarded-For": address})
    server.clients.append(ws)
    return Client(ws)


async def _hello(client: Client, **fields: Any) -> dict[str, Any]:
    return await client.request(t="hello", **fields)


async def test_a_banned_players_address_gets_no_new_name_login_or_recovery(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "q.db", trusted_proxies=("127.0.0.1",))
    await server.start()
    try:
        target = await _from(server, HELD)
        assert (await _hello(target, name="target1"))["t"] == "welcome"
        roommate = await _from(server, "2001:db8:1:2::20")  # shares the /64
        roommate_token = (await _hello(roommate, name="roommate"))["token"]
        bystander = await _from(server, "203.0.113.5")
        assert (await _hello(bystander, name="bystander"))["t"] == "welcome"
        codes = (await bystander.request(t="set_password", password="correct horse 1"))
        recovery = codes["recovery_codes"][0]

        code, _ = await admin(server, "ban", "target1", "--for", "2h", "--reason", "cheating")
        assert code == 0
        for name in ("target1b", "target-1", "target1_", "someone"):
            refused = await _hello(await _from(server, SAME_64), name=name)
            assert refused["code"] == "banned", name
            assert "cheating" not in refused["message"]  # the banned player's, not theirs
        login = await (await _from(server, SAME_64)).request(
            t="login", name="bystander", password="correct horse 1")
        assert login["code"] == "banned"
        recover = await (await _from(server, SAME_64)).request(
            t="recover", name="bystander", recovery_code=recovery, password="battery staple 2")
        assert recover["code"] == "banned"
        # a player already on the address plays on; elsewhere is free
        back = await _hello(await _from(server, "2001:db8:1:2::20"), token=roommate_token)
        assert back["t"] == "welcome"
        assert (await _hello(await _from(server, ELSEWHERE), name="target1b"))["t"] == "welcome"
        login = await (await _from(server, "203.0.113.5")).request(
            t="login", name="bystander", password="correct horse 1")
        assert login["t"] == "welcome"
        # the recovery code was not spent by the refusal
        assert (await admin(server, "unban", "target1"))[0] == 0
        recovered = await (await _from(server, SAME_64)).request(
            t="recover", name="bystander", recovery_code=recovery, password="battery staple 2")
        assert recovered["t"] == "welcome"
        assert (await _hello(await _from(server, SAME_64), name="target1c"))["t"] == "welcome"
    finally:
        await server.stop()


@pytest.fixture
async def proxied_nodes(redis_url: str, postgres_url: str) -> Any:
    cluster = Nodes(redis_url, postgres_url, trusted_proxies=("127.0.0.1",))
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()


async def test_on_a_cluster_a_ban_holds_the_address_on_every_node_at_once(
    proxied_nodes: Nodes,
) -> None:
    from tests.server.cluster.test_cluster_levers import admin as cluster_admin

    nodes = proxied_nodes

    async def from_(node: str, address: str) -> Client:
        ws = await websockets.connect(nodes[node].ws_url,
                                      additional_headers={"X-Forwarded-For": address})
        nodes.clients.append(ws)
        return Client(ws)

    assert (await _hello(await from_("a", HELD), name="target1"))["t"] == "welcome"
    assert (await cluster_admin(nodes, "ban", "target1", "--reason", "cheating"))[0] == 0
    for node in "abc":  # read from the shared database: no node waits for the channel
        refused = await _hello(await from_(node, SAME_64), name=f"target1{node}")
        assert refused["code"] == "banned", node
    welcome = await _hello(await from_("b", ELSEWHERE), name="target1x")
    assert welcome["t"] == "welcome"
