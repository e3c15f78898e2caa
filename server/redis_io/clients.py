"""Clients of Redis for the cluster and the engine fleet: a pool that waits, and a first PING."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.errors import BusError

POOL_SIZE = 64  # connections a node's client opens to Redis at most; more callers wait
POOL_WAIT = 10.0  # seconds a caller waits for one of them before it fails


def client_for(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """A client for Redis at ``url`` whose callers wait for a free connection (up to
    ``POOL_WAIT``) when ``POOL_SIZE`` are busy: a burst of calls (a dead node's games taken
    over at once) queues instead of failing on redis-py's plain pool (``Too many
    connections`` past 100)."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=POOL_SIZE, timeout=POOL_WAIT, socket_connect_timeout=timeout,
        socket_keepalive=True)
    return aioredis.Redis.from_pool(pool)


async def connect(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """A client for Redis at ``url`` (``client_for``) that has answered a PING; raises
    ``BusError`` if Redis cannot be reached within ``timeout`` seconds."""
    client = client_for(url, timeout)
    try:
        await asyncio.wait_for(client.ping(), timeout)
    except (RedisError, OSError, TimeoutError) as exc:
        await client.aclose()
        raise BusError(f"cannot reach Redis at {url}: {exc}") from None
    return client
