"""``/health/ready`` on a cluster node (issue 28): 503 with its reason while Redis is stopped
(the bus is cut) and while PostgreSQL refuses connections, 200 again once each is back; the
liveness check answers throughout. Real Redis and PostgreSQL; nothing waits a fixed time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
import asyncpg

from tests.eventually import eventually
from tests.server.servers import Nodes
from tests.services import RedisServer


async def ready(node: Any) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(
            node.http_url + "/health/ready") as response:
        return response.status, await response.json()


async def until(node: Any, status: int) -> dict[str, Any]:
    """The body ``/health/ready`` answers once it answers ``status``."""

    async def answered() -> dict[str, Any] | None:
        got, body = await ready(node)
        return body if got == status else None

    return await eventually(answered, f"/health/ready answers {status}")


async def test_ready_follows_redis_and_postgresql(
        redis_factory: Callable[[], RedisServer], postgres_url: str) -> None:
    redis = redis_factory()
    nodes = Nodes(redis.url, postgres_url, names="a")
    await nodes.start()
    try:
        node = nodes["a"]
        assert await until(node, 200) == {"status": "ready"}

        await asyncio.to_thread(redis.stop)
        body = await until(node, 503)
        assert "the bus to the other nodes is cut" in body["reasons"]
        async with aiohttp.ClientSession() as session, session.get(
                node.http_url + "/health/live") as response:
            assert response.status == 200
        await asyncio.to_thread(redis.start)
        await until(node, 200)

        from urllib.parse import urlsplit

        database = urlsplit(postgres_url).path.lstrip("/")
        admin = postgres_url.replace(f"/{database}?", "/postgres?")
        conn = await asyncpg.connect(admin)
        try:  # PostgreSQL refuses this database: its sessions are ended, new ones refused
            await conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
            await conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                               " WHERE datname = $1", database)
            body = await until(node, 503)
            assert "the database does not answer" in body["reasons"]
        finally:
            await conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
            await conn.close()
        assert await until(node, 200) == {"status": "ready"}
    finally:
        if redis.process is None:
            await asyncio.to_thread(redis.start)
        await nodes.stop()
