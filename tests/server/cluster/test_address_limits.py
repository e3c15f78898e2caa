"""Per-address limits counted once for a cluster, in Redis (server/cluster/address_limits.py).

On a real Redis: the nodes' ``RedisAddressLimits`` share one bucket of new players and one
count of connections per address; a connection closed on one node frees its place on
another; a node killed with SIGKILL stops counting once its entry expires; a node stopping
cleanly leaves nothing behind; with Redis stopped each node falls back to its own count
(counted in /metrics) and counts the cluster again once Redis is back, emptied; and
behind a trusted proxy the forwarded address is the one counted on every node. Nothing
waits a fixed time: each step waits for a condition, with a generous deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from server.cluster.address_limits import FAILED_OPEN, RedisAddressLimits
from server.metrics import Metrics
from tests.eventually import eventually
from tests.server.cluster.test_cluster_failover import Node
from tests.server.cluster.test_cluster_redis import three_nodes
from tests.server.servers import Client, Nodes
from tests.services import RedisServer

ADDRESS = "198.51.100.7"


@contextlib.asynccontextmanager
async def limits_on(url: str, *names: str, **options: object
                    ) -> AsyncIterator[list[RedisAddressLimits]]:
    """One ``RedisAddressLimits`` per node name, as each node of a cluster opens them."""
    made: list[RedisAddressLimits] = []
    try:
        for name in names:
            made.append(await RedisAddressLimits.open(url, name, **options))  # type: ignore[arg-type]
        yield made
    finally:
        for limits in made:
            await limits.close()


async def keys(url: str) -> dict[str, dict[str, str]]:
    """Every hash under ``qubic:limits:``, read as text."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        found: dict[str, dict[str, str]] = {}
        async for key in client.scan_iter("qubic:limits:*"):
            if await client.type(key) == "hash":
                found[key] = dict(await client.hgetall(key))  # type: ignore[arg-type]
        return found
    finally:
        await client.aclose()


# -- the scripts, node by node ----------------------------------------------------------------


async def test_new_players_of_one_address_share_one_bucket_on_every_node(redis_url: str) -> None:
    async with limits_on(redis_url, "a", "b", new_players=2) as (a, b):
        assert await a.add_player(ADDRESS, 0.0) is None
        assert await b.add_player(ADDRESS, 0.0) is None
        # the third, on either node: one token back every 30 minutes
        assert await a.add_player(ADDRESS, 0.0) == pytest.approx(1800.0, abs=1.0)
        assert await b.add_player(ADDRESS, 0.0) == pytest.approx(1800.0, abs=1.0)
        assert await b.add_player("198.51.100.8", 0.0) is None  # another address: its own
        client = aioredis.Redis.from_url(redis_url)
        try:
            # the bucket is gone once it would be full again: both tokens back in an hour
            assert 3_500_000 < await client.pttl(f"qubic:limits:new:{ADDRESS}") <= 3_600_000
        finally:
            await client.aclose()
        # a refusal by the cluster gives the node's own bucket its token back
        assert a.local.new_player(ADDRESS, 0.0) is None


async def test_a_players_reports_share_one_bucket_on_every_node(redis_url: str) -> None:
    async with limits_on(redis_url, "a", "b", reports=2) as (a, b):
        assert await a.add_report("ann", 0.0) is None
        assert await b.add_report("ann", 0.0) is None
        # the third, on either node: one back every 30 minutes
        assert await a.add_report("ann", 0.0) == pytest.approx(1800.0, abs=1.0)
        assert await b.add_report("ann", 0.0) == pytest.approx(1800.0, abs=1.0)
        assert await b.add_report("bob", 0.0) is None  # another player: their own
        assert "qubic:limits:report:ann" in await keys(redis_url)
        # a refusal by the cluster gives the node's own bucket its token back
        assert a.local.report("ann", 0.0) is None


async def test_connections_of_one_address_are_counted_over_every_node(redis_url: str) -> None:
    async with limits_on(redis_url, "a", "b", "c", max_connections=2) as (a, b, c):
        assert await a.add_connection(ADDRESS) and await b.add_connection(ADDRESS)
        assert not await c.add_connection(ADDRESS)
        assert not await a.add_connection(ADDRESS)
        assert await c.add_connection("198.51.100.8")
        assert (await keys(redis_url))["qubic:limits:conn:a"] == {ADDRESS: "1"}
        await a.remove_connection(ADDRESS)  # closed on a: c may open one now
        assert "qubic:limits:conn:a" not in await keys(redis_url)
        assert await c.add_connection(ADDRESS)
        assert not await b.add_connection(ADDRESS)
    assert await keys(redis_url) == {}  # each node stopping takes its count out


async def test_a_64_is_one_address_for_the_clusters_counts(redis_url: str) -> None:
    """Issue 36 item 6: each IPv6 address of one /64 counts against the same limits."""
    async with limits_on(redis_url, "a", "b", max_connections=2, new_players=1,
                         password_attempts=1) as (a, b):
        assert await a.add_connection("2001:db8::1") and await b.add_connection("2001:db8::2")
        assert not await b.add_connection("2001:db8::3")
        assert (await keys(redis_url))["qubic:limits:conn:a"] == {"2001:db8::/64": "1"}
        await a.remove_connection("2001:db8::1")
        assert await b.add_connection("2001:db8::4")
        assert await a.add_player("2001:db8::1", 0.0) is None
        assert await b.add_player("2001:db8::9", 0.0) is not None
        assert await b.add_player("::ffff:198.51.100.7", 0.0) is None
        assert await a.add_player(ADDRESS, 0.0) is not None  # the same IPv4 address
        assert await a.add_login_attempt("2001:db8::1", "ann", 0.0) is None
        assert await b.add_login_attempt("2001:db8::2", "bob", 0.0) is not None


async def test_without_a_limit_on_connections_nothing_goes_to_redis(redis_url: str) -> None:
    async with limits_on(redis_url, "a", new_players=1) as (a,):
        assert all([await a.add_connection(ADDRESS) for _ in range(5)])
        client = aioredis.Redis.from_url(redis_url)
        try:
            assert await client.keys("qubic:limits:*") == []
        finally:
            await client.aclose()


# -- Redis stopped ----------------------------------------------------------------------------


async def test_with_redis_stopped_each_node_keeps_its_own_limit_then_counts_again(
    redis_factory: Callable[[], RedisServer],
) -> None:
    redis = redis_factory()
    metrics = Metrics()
    async with limits_on(redis.url, "a", "b", max_connections=2, new_players=1, ttl=0.6,
                         metrics=metrics) as (a, b):
        assert await a.add_connection(ADDRESS)
        await asyncio.to_thread(redis.stop)
        # fails open to each node's own count: a has one more, b two; new players likewise
        assert await a.add_connection(ADDRESS) and not await a.add_connection(ADDRESS)
        assert await b.add_connection(ADDRESS) and await b.add_connection(ADDRESS)
        assert not await b.add_connection(ADDRESS)
        assert await a.add_player(ADDRESS, 0.0) is None
        assert await a.add_player(ADDRESS, 0.0) == pytest.approx(3600.0)
        assert await b.add_player(ADDRESS, 0.0) is None
        assert a.failed_open == 2 and b.failed_open == 3  # the node's own refusals ask nobody
        assert f"qubic_{FAILED_OPEN}_total 5" in metrics.render()
        await b.remove_connection(ADDRESS)  # lost on Redis: b writes its count afresh later
        await asyncio.to_thread(redis.start)  # empty
        await eventually(lambda: _counted(redis.url, {"a": 2, "b": 1}), "both nodes' counts again")
        async with limits_on(redis.url, "c", max_connections=2) as (c,):
            assert not await c.add_connection(ADDRESS)  # 3 open over the cluster
            await a.remove_connection(ADDRESS)
            await a.remove_connection(ADDRESS)
            await b.remove_connection(ADDRESS)
            assert await c.add_connection(ADDRESS)


async def test_after_a_failure_the_checks_do_not_wait_for_redis_until_a_third_of_the_ttl(
    redis_factory: Callable[[], RedisServer],
) -> None:
    redis = redis_factory()
    async with limits_on(redis.url, "a", max_connections=3, new_players=3, ttl=600.0) as (a,):
        await asyncio.to_thread(redis.stop)
        assert await a.add_connection(ADDRESS)  # Redis fails: from here on, 200 s without it
        await asyncio.to_thread(redis.start)
        assert await a.add_connection(ADDRESS) and await a.add_player(ADDRESS, 0.0) is None
        await a.remove_connection(ADDRESS)
        assert a.failed_open == 3
        assert await keys(redis.url) == {}  # none of it reached Redis (nor a node's entry)


async def _counted(url: str, expected: dict[str, int], address: str = ADDRESS) -> bool:
    found = await keys(url)
    return all(found.get(f"qubic:limits:conn:{node}") == {address: str(n)}
               for node, n in expected.items())


# -- on a cluster -----------------------------------------------------------------------------


class Opener:
    """Opens websockets to nodes (with a forwarded-for header if asked) and closes them all."""

    def __init__(self) -> None:
        self.opened: list[ClientConnection] = []

    async def admitted(self, ws_url: str, forwarded: str | None = None) -> Client | None:
        """The connection if the node let it in (it answers a ping), else None (refused with
        ``too_many_connections``)."""
        headers = None if forwarded is None else {"X-Forwarded-For": forwarded}
        ws = await websockets.connect(ws_url, additional_headers=headers)
        self.opened.append(ws)
        client = Client(ws)
        with contextlib.suppress(ConnectionClosed):  # refused, it may be closed already
            await ws.send('{"t": "ping", "id": 1}')
        reply = await client.recv()
        if reply["t"] == "pong":
            return client
        assert reply["code"] == "too_many_connections", reply
        return None

    async def close(self) -> None:
        for ws in self.opened:
            await ws.close()


@pytest_asyncio.fixture
async def opener() -> AsyncIterator[Opener]:
    made = Opener()
    try:
        yield made
    finally:
        await made.close()


async def test_a_connection_closed_on_one_node_frees_its_place_on_another(
    redis_url: str, postgres_url: str, opener: Opener,
) -> None:
    nodes = Nodes(redis_url, postgres_url, max_connections_per_address=2)
    try:
        await nodes.start()
        url = {name: nodes[name].ws_url for name in "abc"}
        first = await opener.admitted(url["a"])
        assert first is not None and await opener.admitted(url["b"]) is not None
        assert await opener.admitted(url["c"]) is None
        await first.ws.close()

        async def let_in() -> bool:  # the count is given back when a's handler ends
            return await opener.admitted(url["c"]) is not None

        await eventually(let_in, "a connection on c once the one on a closed")
        assert await opener.admitted(url["b"]) is None
    finally:
        await opener.close()
        await nodes.stop()


async def test_behind_a_trusted_proxy_the_forwarded_address_is_counted_on_every_node(
    redis_url: str, postgres_url: str, opener: Opener,
) -> None:
    nodes = Nodes(redis_url, postgres_url, max_connections_per_address=2,
                  trusted_proxies=("127.0.0.1",))
    try:
        await nodes.start()
        url = {name: nodes[name].ws_url for name in "abc"}
        assert await opener.admitted(url["a"], ADDRESS) is not None
        # a client's own entry left of the address the proxy saw changes nothing
        assert await opener.admitted(url["b"], f"203.0.113.5, {ADDRESS}") is not None
        assert await opener.admitted(url["c"], ADDRESS) is None
        assert await opener.admitted(url["c"], "198.51.100.8") is not None
        assert await opener.admitted(url["c"]) is not None  # the proxy's own address
        counted = await keys(redis_url)
        assert counted["qubic:limits:conn:a"] == {ADDRESS: "1"}
        assert counted["qubic:limits:conn:c"] == {"198.51.100.8": "1", "127.0.0.1": "1"}
    finally:
        await opener.close()
        await nodes.stop()


async def test_a_killed_node_s_connections_stop_counting(
    tmp_path: Path, redis_url: str, postgres_url: str, opener: Opener,
) -> None:
    killed = Node(tmp_path, "k", redis_url, postgres_url)
    killed.args += ["--max-connections-per-address", "2"]
    nodes = Nodes(redis_url, postgres_url, names="a", max_connections_per_address=2)
    try:
        killed.start()
        await nodes.start()
        assert await opener.admitted(killed.ws_url) is not None
        assert await opener.admitted(killed.ws_url) is not None
        assert await opener.admitted(nodes["a"].ws_url) is None
        killed.kill()  # SIGKILL: nothing taken out of Redis

        async def let_in() -> bool:
            return await opener.admitted(nodes["a"].ws_url) is not None

        await eventually(let_in, "a connection on a once k's entry has expired")
        await eventually(lambda: _gone(redis_url, "qubic:limits:conn:k"), "k's count swept")
    finally:
        killed.kill()
        await opener.close()
        await nodes.stop()


async def _gone(url: str, key: str) -> bool:
    return key not in await keys(url)


async def test_with_redis_stopped_each_node_lets_an_address_in_up_to_its_own_limit(
    redis_factory: Callable[[], RedisServer], postgres_url: str, opener: Opener,
) -> None:
    async with three_nodes(redis_factory(), postgres_url,
                           max_connections_per_address=1) as outage:
        nodes = outage.nodes
        assert await opener.admitted(nodes["a"].ws_url) is not None
        assert await opener.admitted(nodes["b"].ws_url) is None  # one for the cluster
        await outage.stop_redis()
        assert await opener.admitted(nodes["b"].ws_url) is not None  # b's own count: 0
        assert await opener.admitted(nodes["b"].ws_url) is None  # b's own count: 1
        assert await opener.admitted(nodes["a"].ws_url) is None  # a's own count: 1
        async with aiohttp.ClientSession() as http, \
                http.get(nodes["b"].http_url + "/metrics") as reply:
            assert f"qubic_{FAILED_OPEN}_total 1" in await reply.text()
        await outage.start_redis()  # empty: each node writes its count afresh
        await eventually(lambda: _counted(outage.redis.url, {"a": 1, "b": 1}, "127.0.0.1"),
                    "both counts again")
        assert await opener.admitted(nodes["c"].ws_url) is None
        await opener.close()
