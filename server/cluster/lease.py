"""Game ownership leases with fencing tokens, on Redis, for cluster mode.

Each game has at most one owner node at a time: the node holding its lease, a Redis key
``{prefix}lease:{game}`` whose value is ``"{token}:{node}"`` and which expires after ``ttl``
seconds unless renewed. Acquiring is ``SET NX PX`` done in a Lua script that also takes the
next fencing token from one counter (``INCR {prefix}fence``); renewing and releasing are Lua
compare-and-set on the value, so a node can only extend or drop a lease that is still its own.

A lease can be lost without its holder noticing at once (a pause, a partition, an expiry
between renewals), so the lease alone never decides who may write. The holder passes the
lease's token with every write to PostgreSQL (``Store.record_move(..., fence=token)``), and the
store refuses a token older than the newest it has seen for that game: a node that lost its
lease cannot write a move once the new owner has written (Kleppmann's fencing, "How to do
distributed locking", 2016). The holder also stops by itself at ``Lease.expires`` (counted
from before its request was sent, minus a margin for clock drift), so it normally never
relies on the store to stop it.

If Redis restarts empty, the counter would start again from 1. ``acquire`` therefore takes a
``floor``: the game's fencing token in PostgreSQL (``GameRecord.fence``), and never hands out
a token at or below it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.errors import BusError
from server.redis_io.clients import client_for

DEFAULT_TTL = 5.0
HOLDER_TIMEOUT = 2.0
"""Seconds a request waits to learn a game's holder before it is refused (``LeaseError``:
``unavailable``): a paused Redis does not hold requests for its whole pause. The
other calls wait up to the ttl (a burst of claims after a node's death queues for
connections; past the ttl the lease would be worth nothing anyway)."""
DRIFT = 0.01  # the share of a lease's time the holder gives up for clock-rate differences

ACQUIRE = """
local held = redis.call('GET', KEYS[1])
if held then
  local token, node = string.match(held, '^(%d+):(.*)$')
  if node ~= ARGV[1] then
    return {0, node}
  end
end
local token = redis.call('INCR', KEYS[2])
local floor = tonumber(ARGV[3])
if token <= floor then
  token = floor + 1
  redis.call('SET', KEYS[2], token)
end
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
return {token, ARGV[1]}
"""
"""KEYS: the lease, the fence counter. ARGV: node, ttl in ms, floor. Returns {token, holder}
with token 0 when another node holds the lease. A node that holds the lease already gets a
new token too: it takes the game up afresh (a hand-off to it, or its own game reloaded after
it lost the game's state), and its writes and batches must be told from the earlier ones
(its batches' sequence restarts under the new token)."""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

TRANSFER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], token .. ':' .. ARGV[2], 'PX', ARGV[3])
  return token
end
return 0
"""
"""KEYS: the lease, the fence counter. ARGV: the held value, the new holder, ttl in ms.
Returns the new holder's token, or 0 if the lease was no longer the caller's."""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


@dataclass(frozen=True)
class Lease:
    """Ownership of one game by one node, with the fencing token its writes carry.

    ``expires`` is on the event loop's clock (``loop.time()``): the holder must not act as
    owner after it unless a renewal moved it.
    """

    game_id: str
    node: str
    token: int
    expires: float

    @property
    def value(self) -> str:
        return f"{self.token}:{self.node}"

    def valid(self, now: float | None = None) -> bool:
        if now is None:
            now = asyncio.get_running_loop().time()
        return now < self.expires


class LeaseError(BusError):
    """Redis cannot be reached to take, renew or give up a lease."""


class Leases:
    """The leases one node takes on Redis; open with ``await Leases.open(url, node)``."""

    def __init__(
        self, client: aioredis.Redis, node: str, *, ttl: float = DEFAULT_TTL, prefix: str = "qubic:"
    ) -> None:
        if ":" in node:
            raise ValueError("a node's name cannot contain ':'")
        self.client = client
        self.node = node
        self.ttl = ttl
        self.prefix = prefix
        self._fence_key = f"{prefix}fence"
        self._acquire = client.register_script(ACQUIRE)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)
        self._transfer = client.register_script(TRANSFER)

    @classmethod
    async def open(
        cls, url: str, node: str, *, ttl: float = DEFAULT_TTL, prefix: str = "qubic:"
    ) -> Leases:
        client = client_for(url)
        try:
            await client.ping()
        except (RedisError, OSError) as exc:
            await client.aclose()
            raise LeaseError(f"cannot reach Redis at {url}: {exc}") from None
        return cls(client, node, ttl=ttl, prefix=prefix)

    async def close(self) -> None:
        await self.client.aclose()

    def key(self, game_id: str) -> str:
        return f"{self.prefix}lease:{game_id}"

    def _deadline(self, sent: float) -> float:
        return sent + self.ttl * (1 - DRIFT)

    async def acquire(self, game_id: str, *, floor: int = 0) -> Lease | None:
        """Take the game's lease under a new fencing token if no other node holds it (if
        this node does, the lease is taken again under a new token: the old one is stale
        from then on).

        ``floor`` is the highest fencing token the game's record has seen; the new token is
        above it. Returns None if another node holds the lease.
        """
        sent = asyncio.get_running_loop().time()
        token, _holder = await self._call(
            self._acquire, [self.key(game_id), self._fence_key],
            [self.node, self._ms(), floor],
        )  # fmt: skip
        if not token:
            return None
        return Lease(game_id, self.node, int(token), self._deadline(sent))

    async def renew(self, lease: Lease) -> Lease | None:
        """The lease extended by ``ttl`` from now, or None if it is no longer ours (it
        expired, and perhaps another node took it): stop acting as the game's owner."""
        sent = asyncio.get_running_loop().time()
        key = self.key(lease.game_id)
        renewed = await self._call(self._renew, [key], [lease.value, self._ms()])
        return replace(lease, expires=self._deadline(sent)) if renewed else None

    async def renew_all(self, leases: list[Lease]) -> list[Lease | None]:
        """``renew`` for many leases in one round trip (a pipeline), in the same order."""
        if not leases:
            return []
        sent = asyncio.get_running_loop().time()
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for lease in leases:
                    await self._renew(
                        keys=[self.key(lease.game_id)], args=[lease.value, self._ms()], client=pipe
                    )
                results = await asyncio.wait_for(pipe.execute(), max(self.ttl, 1.0))
        except (RedisError, OSError, TimeoutError) as exc:
            raise LeaseError(f"cannot renew leases on Redis: {exc}") from exc
        return [
            replace(lease, expires=self._deadline(sent)) if renewed else None
            for lease, renewed in zip(leases, results, strict=True)
        ]

    async def release(self, lease: Lease) -> bool:
        """Give the lease up (at shutdown, or to hand the game over); False if it was no
        longer ours."""
        return bool(await self._call(self._release, [self.key(lease.game_id)], [lease.value]))

    async def transfer(self, lease: Lease, node: str) -> int | None:
        """Hand the lease to ``node`` at once, under a new fencing token (returned), so no
        other node can take the game in between; None if the lease was no longer ours. The
        new holder takes it up with ``acquire``, which gives it a newer token still."""
        token = await self._call(
            self._transfer, [self.key(lease.game_id), self._fence_key],
            [lease.value, node, self._ms()],
        )  # fmt: skip
        return int(token) or None

    async def holder(self, game_id: str) -> tuple[str, int] | None:
        """The node holding the game's lease and its token, or None."""
        try:
            value = await asyncio.wait_for(self.client.get(self.key(game_id)),
                                           HOLDER_TIMEOUT)
        except (RedisError, OSError, TimeoutError) as exc:
            raise LeaseError(f"cannot read a lease on Redis: {exc}") from exc
        if value is None:
            return None
        token, node = (value.decode() if isinstance(value, bytes) else value).split(":", 1)
        return node, int(token)

    def _ms(self) -> int:
        return max(1, round(self.ttl * 1000))

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        try:
            return await asyncio.wait_for(script(keys=keys, args=args), max(self.ttl, 1.0))
        except (RedisError, OSError, TimeoutError) as exc:
            raise LeaseError(f"cannot reach Redis for a lease: {exc}") from exc
