"""A node's connections to Redis (the bus, the leases, a client for the keys) and its name."""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass

import redis.asyncio as aioredis

from server.cluster.bus import RedisBus
from server.cluster.lease import Leases
from server.defaults import LEASE_TTL
from server.redis_io.clients import connect

DEFAULT_LEASE_TTL = LEASE_TTL  # seconds: a dead node's games are taken over about this late


def default_node_name() -> str:
    """``host-pid-random``: unique for every process, readable in logs and metrics."""
    host = socket.gethostname().split(".")[0].replace(":", "-") or "node"
    return f"{host}-{os.getpid()}-{secrets.token_hex(2)}"


@dataclass
class ClusterLinks:
    """A node's connections to Redis: the bus, the leases and a client for the keys."""

    node: str
    bus: RedisBus
    leases: Leases
    redis: aioredis.Redis
    prefix: str

    @classmethod
    async def open(
        cls, url: str, node: str, *, ttl: float = DEFAULT_LEASE_TTL, prefix: str = "qubic:"
    ) -> ClusterLinks:
        """Connect to Redis at ``url``; raises ``BusError`` if it cannot be reached."""
        bus = await RedisBus.open(url, prefix=prefix)
        try:
            leases = await Leases.open(url, node, ttl=ttl, prefix=prefix)
            try:
                client = await connect(url)
            except BaseException:
                await leases.close()
                raise
        except BaseException:
            await bus.close()
            raise
        bus.watch_over(client)
        bus.watch_over(leases.client)
        return cls(node, bus, leases, client, prefix)

    async def close(self) -> None:
        await self.bus.close()
        await self.leases.close()
        await self.redis.aclose()
