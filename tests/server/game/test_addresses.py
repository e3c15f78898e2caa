"""Issue 36 item 6: an IPv6 /64 is one address, for every limit and every ban.

The key itself (pure), then each place that keys by address: one server's limits, the HTTP
rates, address bans, and a real server behind a trusted proxy (connections and new players).
The cluster's count is in tests/server/cluster/test_address_limits.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import websockets

from server.game.addresses import address_in, address_key, ban_network
from server.http.rate import Limits
from server.node import levers
from server.node.address_limits import AddressLimits
from server.store import lever_records as ops
from server.store.base import Store
from tests.eventually import eventually
from tests.server.servers import Client, Server


@pytest.mark.parametrize(("address", "key"), [
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
    ("::ffff:203.0.113.7", "203.0.113.7"),
    ("203.0.113.7", "203.0.113.7"),
    ("::1", "::/64"),
    ("fe80::1%eth0", "fe80::/64"),
    ("", ""),
    ("2001:db8:1:2::/64", "2001:db8:1:2::/64"),  # a key is its own key
])
def test_an_address_is_keyed_by_its_holder(address: str, key: str) -> None:
    assert address_key(address) == key
    assert address_key(key) == key


def test_a_ban_holds_a_lone_ipv6_address_as_its_64() -> None:
    assert ban_network("2001:db8::1") == "2001:db8::/64"
    assert ban_network("2001:db8::1/96") == "2001:db8::/64"
    assert ban_network("2001:db8::/48") == "2001:db8::/48"  # wider: as written
    assert ban_network("::ffff:203.0.113.7") == "203.0.113.7"
    assert ban_network("203.0.113.9/24") == "203.0.113.0/24"
    assert address_in("2001:db8::1", "2001:db8::beef")  # an older ban's lone address
    assert address_in("2001:db8::/48", "2001:db8:0:7::1")
    assert not address_in("2001:db8::/64", "2001:db8:0:1::1")
    assert address_in("203.0.113.7", "::ffff:203.0.113.7")
    assert not address_in("203.0.113.7", "2001:db8::1")
    assert not address_in("::/0", "203.0.113.7")  # an IPv6 network holds no IPv4 address
    with pytest.raises(ValueError):
        ban_network("ann")


def test_one_servers_limits_count_a_64_as_one_address() -> None:
    limits = AddressLimits(max_connections=2, new_players=1)
    assert limits.connect("2001:db8::1") and limits.connect("2001:db8::2")
    assert not limits.connect("2001:db8::ffff:3")
    assert limits.connect("2001:db8:0:1::1")  # the next /64: another holder
    limits.disconnect("2001:db8::2")
    assert limits.connect("2001:db8::4")
    assert limits.new_player("2001:db8::1", 0.0) is None
    assert limits.new_player("2001:db8::5", 0.0) is not None
    assert limits.new_player("::ffff:203.0.113.7", 0.0) is None
    assert limits.new_player("203.0.113.7", 0.0) is not None  # the same IPv4 address
    burst = limits.login_per_address[0]
    assert all(limits.login_attempt(f"2001:db8::{n:x}", f"n{n}", 0.0) is None
               for n in range(burst))
    assert limits.login_attempt("2001:db8::abcd", "other", 0.0) is not None


def test_the_http_rates_count_a_64_as_one_address() -> None:
    limits = Limits(rate=1.0)
    assert all(limits.wait(f"2001:db8::{n:x}", 0.0) is None for n in range(limits.burst))
    assert limits.wait("2001:db8::ffff", 0.0) is not None
    assert limits.wait("2001:db8:0:1::1", 0.0) is None


async def test_an_address_ban_holds_the_64(store: Store) -> None:
    banned = await levers.ban(store, "host", address="2001:db8::1", reason="flood")
    assert banned.address == "2001:db8::/64"
    now = time.time()
    for address, held in (("2001:db8::1", True), ("2001:db8::abcd:1", True),
                          ("2001:db8:0:1::1", False)):
        assert bool(await store.query(ops.sanctions_of(None, address, now))) is held, address
    assert await levers.unban(store, "host", address="2001:db8::77") == 1  # the same /64


async def _connect(server: Server, forwarded: str) -> Client:
    assert server.running is not None
    ws = await websockets.connect(server.running.ws_url,
                                  additional_headers={"X-Forwarded-For": forwarded})
    server.clients.append(ws)
    return Client(ws)


async def test_behind_a_proxy_one_64_gets_one_addresss_connections_and_players(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "q.db", max_connections_per_address=2,
                    new_players_per_address=1, trusted_proxies=("127.0.0.1",))
    await server.start()
    try:
        first = await _connect(server, "2001:db8::1")
        assert (await first.request(t="hello", name="ann"))["t"] == "welcome"
        second = await _connect(server, "2001:db8::2")
        refused = await second.request(t="hello", name="bob")
        assert refused["code"] == "too_many_players"
        third = await _connect(server, "2001:db8::3")
        assert (await third.error("too_many_connections"))["ref"] is None
        await third.ws.wait_closed()
        assert third.ws.close_code == 1008
        elsewhere = await _connect(server, "2001:db8:0:1::1")
        assert (await elsewhere.request(t="hello", name="cleo"))["t"] == "welcome"
    finally:
        await server.stop()


async def test_behind_a_proxy_the_access_log_shows_the_client(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 36 item 9: the access log's address is the one the limits count, not the
    proxy's."""
    import aiohttp

    server = Server(tmp_path / "q.db", access_log=True, trusted_proxies=("127.0.0.1",))
    await server.start()
    assert server.running is not None
    try:
        with caplog.at_level("INFO", logger="qubic.access"):
            async with aiohttp.ClientSession() as http, http.get(
                    server.running.http_url + "/health",
                    headers={"X-Forwarded-For": "2001:db8::7"}) as response:
                assert response.status == 200
            lines = await eventually(  # written once the response has gone out
                lambda: [r for r in caplog.records if r.name == "qubic.access"],
                "the access log's line", every=0.02)
    finally:
        await server.stop()
    assert [(r.address, r.path) for r in lines] == [("2001:db8::7", "/health")]  # type: ignore[attr-defined]
