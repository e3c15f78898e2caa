"""Limits: the per-connection token bucket, and per-address connections and new players,
with the client address taken from X-Forwarded-For only behind a trusted proxy."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
import websockets

from server.http.app import ServerConfig, client_address
from server.node.address_limits import AddressLimits
from server.node.rates import TokenBucket
from server.node.session import Session
from tests.server.servers import Client, Server


def test_the_default_bucket_passes_30_frames_then_refills_10_a_second() -> None:
    for bucket in (Session().bucket, TokenBucket(ServerConfig().rate, ServerConfig().burst)):
        assert all(bucket.take(64.0) for _ in range(30))
        assert not bucket.take(64.0)
        assert bucket.wait(64.0) == pytest.approx(0.1)
        assert bucket.take(64.125) and not bucket.take(64.125)  # 1.25 tokens in 0.125 s
        assert sum(bucket.take(65.125) for _ in range(20)) == 10  # one second: ten more
        assert sum(bucket.take(1000.0) for _ in range(40)) == 30  # never more than the burst


def test_a_bucket_says_how_long_until_the_next_token() -> None:
    bucket = TokenBucket(rate=0.5, burst=1)
    assert bucket.wait(0.0) == 0 and bucket.take(0.0)
    assert bucket.wait(0.0) == pytest.approx(2.0)
    assert bucket.wait(1.5) == pytest.approx(0.5)
    assert bucket.full(2.0)


def test_connections_per_address_are_counted_and_given_back() -> None:
    limits = AddressLimits(max_connections=2)
    assert limits.connect("a") and limits.connect("a") and not limits.connect("a")
    assert limits.connect("b")
    limits.disconnect("a")
    assert limits.connect("a") and not limits.connect("a")
    assert AddressLimits().connect("a")  # 0: no limit


def test_new_players_per_address_refill_over_an_hour() -> None:
    limits = AddressLimits(new_players=2)
    assert limits.new_player("a", 0.0) is None and limits.new_player("a", 0.0) is None
    assert limits.new_player("a", 0.0) == pytest.approx(1800.0)
    assert limits.new_player("b", 0.0) is None
    assert limits.new_player("a", 1800.0) is None
    assert AddressLimits().new_player("a", 0.0) is None


PROXIES = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("127.0.0.1")]


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("203.0.113.9", ["198.51.100.7"], "203.0.113.9"),  # not a proxy: the header is ignored
        ("127.0.0.1", [], "127.0.0.1"),
        ("127.0.0.1", ["198.51.100.7"], "198.51.100.7"),
        ("127.0.0.1", ["6.6.6.6, 198.51.100.7"], "198.51.100.7"),  # the client wrote 6.6.6.6
        ("127.0.0.1", ["6.6.6.6", "198.51.100.7, 10.1.2.3"], "198.51.100.7"),  # two proxies
        ("127.0.0.1", ["10.1.2.3"], "10.1.2.3"),  # only proxies: the farthest one
        ("127.0.0.1", ["garbage"], "127.0.0.1"),
        ("127.0.0.1", ["198.51.100.7\n"], "198.51.100.7"),
        ("127.0.0.1", ["2001:db8::1"], "2001:db8::1"),
    ],
)
def test_the_client_address_is_the_rightmost_untrusted_hop(
    peer: str, forwarded: list[str], expected: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == expected
    assert client_address(peer, forwarded, []) == peer


async def _connect(server: Server, forwarded: str | None = None) -> Client:
    assert server.running is not None
    headers = None if forwarded is None else {"X-Forwarded-For": forwarded}
    ws = await websockets.connect(server.running.ws_url, additional_headers=headers)
    server.clients.append(ws)
    return Client(ws)


async def _refused(client: Client, code: str) -> None:
    error = await client.error(code)
    assert error["ref"] is None
    await client.ws.wait_closed()
    assert client.ws.close_code == 1008


async def test_one_address_opens_only_so_many_connections(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db", max_connections_per_address=2)
    await server.start()
    try:
        first, _ = await _connect(server), await _connect(server)
        await _refused(await _connect(server), "too_many_connections")
        await first.ws.close()
        await first.ws.wait_closed()
        for _attempt in range(50):  # the server counts the close when its handler ends
            third = await _connect(server)
            reply = await third.request(t="ping")
            if reply["t"] == "pong":
                break
        else:
            pytest.fail("a closed connection was never given back")
    finally:
        await server.stop()


async def test_one_address_makes_only_so_many_players_and_may_still_log_in(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "q.db", new_players_per_address=2)
    await server.start()
    try:
        ann = await server.client("ann")
        await server.client("bob")
        eve = await server.client()
        refused = await eve.request(t="hello", name="eve")
        assert refused["code"] == "too_many_players" and refused["retry_in"] > 0
        back = await server.client()
        assert (await back.hello(token=ann.token))["name"] == "ann"
    finally:
        await server.stop()


async def test_forwarded_addresses_count_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    server = Server(tmp_path / "q.db", max_connections_per_address=1,
                    trusted_proxies=("127.0.0.1",))
    await server.start()
    try:
        a = await _connect(server, "198.51.100.7")
        b = await _connect(server, "198.51.100.8")
        for client in (a, b):
            assert (await client.request(t="ping"))["t"] == "pong"
        await _refused(await _connect(server, "6.6.6.6, 198.51.100.7"), "too_many_connections")
    finally:
        await server.stop()
    untrusted = Server(tmp_path / "u.db", max_connections_per_address=1)
    await untrusted.start()
    try:
        await _connect(untrusted, "198.51.100.7")
        await _refused(await _connect(untrusted, "198.51.100.8"), "too_many_connections")
    finally:
        await untrusted.stop()
