"""Per-address limits counted once for a whole cluster, in Redis: a cluster node's
``AddressCounts`` (``server.node.address_limits``). Each check is one Lua script (check and count in
one atomic step); the node's own ``AddressLimits`` is the floor, and the count while Redis is
away (the limits then fail open to it). docs/cluster.md describes the keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from server.defaults import LEASE_TTL
from server.errors import BusError
from server.game.addresses import address_key
from server.metrics import Metrics
from server.node.address_limits import (
    LOGIN_ATTEMPTS_PER_ADDRESS,
    REPORTS_PER_HOUR,
    AddressLimits,
)

log = logging.getLogger(__name__)

TIMEOUT = 1.0  # seconds each try of a call waits for Redis (two tries, then it fails open)
FAILED_OPEN = "address_limit_checks_failed_open"  # the /metrics counter

# Redis's clock in milliseconds, so every node's script agrees whatever the nodes' clocks say.
_NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# KEYS: the nodes' set, this node's hash. ARGV: address, limit, this node, the hashes' prefix.
# 1 if the connection is let in (and counted), 0 if the address has its most open already.
_CONNECT = _NOW_MS + """
local total = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
for _, node in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')) do
  if node ~= ARGV[3] then
    total = total + (tonumber(redis.call('HGET', ARGV[4] .. node, ARGV[1])) or 0)
  end
end
if total >= tonumber(ARGV[2]) then
  return 0
end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return 1
"""

# KEYS: this node's hash. ARGV: address.
_DISCONNECT = """
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
"""

# KEYS: the nodes' set, this node's hash. ARGV: this node, ttl (ms), the hashes' prefix.
# Deletes the hashes of nodes whose time has passed, renews this node's; 1 if this node was
# not listed (new, expired, or Redis emptied): its caller writes its hash afresh.
_RENEW = _NOW_MS + """
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
for _, node in ipairs(dead) do
  redis.call('DEL', ARGV[3] .. node)
end
if #dead > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
end
return redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
"""

# KEYS: the address's bucket (or a reporter's). ARGV: burst, refill per second. nil if a new
# player (a report) may be made
# (and a token is taken), else the seconds until one may, rounded up to 0.1 s (a string: Redis
# would cut a Lua number to an integer). TokenBucket's arithmetic, on Redis's clock.
_NEW_PLAYER = _NOW_MS + """
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
if tokens < 1 then
  return tostring(math.ceil((1 - tokens) / rate * 10) / 10)
end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000))
return nil
"""

# KEYS: the name's bucket, the address's bucket. ARGV: for each, burst and refill per second
# (burst 0: no limit). nil if the attempt may be made (a token taken from each), else the
# seconds until it may (as _NEW_PLAYER).
_LOGIN = _NOW_MS + """
local wait = 0
local after = {}
for i = 1, 2 do
  local burst = tonumber(ARGV[2 * i - 1])
  local rate = tonumber(ARGV[2 * i])
  if burst > 0 then
    local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
    local tokens = tonumber(state[1]) or burst
    local at = tonumber(state[2]) or now
    tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
    if tokens < 1 then
      wait = math.max(wait, math.ceil((1 - tokens) / rate * 10) / 10)
    end
    after[i] = {tokens - 1, burst, rate}
  end
end
if wait > 0 then
  return tostring(wait)
end
for i, bucket in pairs(after) do
  redis.call('HSET', KEYS[i], 'tokens', tostring(bucket[1]), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil((bucket[2] - bucket[1]) / bucket[3] * 1000))
end
return nil
"""


class RedisAddressLimits:
    """The ``AddressCounts`` of a cluster node: one count for the whole cluster in Redis; see
    the module docstring.

    The node's own count (``local``, an ``AddressLimits``) is kept too: it is the floor while
    Redis is away and what the node's hash is written afresh from.
    """

    def __init__(
        self, client: aioredis.Redis, node: str, *, max_connections: int = 0,
        new_players: int = 0, ttl: float = LEASE_TTL, prefix: str = "qubic:",
        metrics: Metrics | None = None, password_attempts: int = LOGIN_ATTEMPTS_PER_ADDRESS[0],
        reports: int = REPORTS_PER_HOUR,
    ) -> None:
        self.local = AddressLimits(max_connections, new_players, password_attempts, reports)
        self.max_connections = max_connections
        self.new_players = new_players
        self.reports = reports
        self.redis = client
        self.node = node
        self.ttl = ttl
        self.metrics = metrics or Metrics()
        self.failed_open = 0  # checks answered by this node's own count alone
        self.metrics.counters.setdefault(FAILED_OPEN, 0)  # in /metrics from the start
        self._nodes_key = f"{prefix}limits:nodes"
        self._conn_prefix = f"{prefix}limits:conn:"
        self._conn_key = self._conn_prefix + node
        self._new_prefix = f"{prefix}limits:new:"
        self._report_prefix = f"{prefix}limits:report:"
        self._chat_prefix = f"{prefix}limits:chat:"
        self._connect = client.register_script(_CONNECT)
        self._disconnect = client.register_script(_DISCONNECT)
        self._renew_script = client.register_script(_RENEW)
        self._new_player = client.register_script(_NEW_PLAYER)
        self._login = client.register_script(_LOGIN)
        self._login_prefix = f"{prefix}limits:login:"
        self._stale = True  # this node's hash may differ from its own count: write it afresh
        self._away = False  # Redis failed the last call (a warning logged)
        self._retry_at = 0.0  # while away, checks call Redis again from this time (loop's)
        self._closed = False
        self._renewing: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, url: str, node: str, **options: Any) -> RedisAddressLimits:
        """Limits on the Redis at ``url`` with a client of their own (each call waits at most
        ``TIMEOUT``; one retry at once, for a connection a Redis restart has cut), started.
        Raises ``BusError`` if Redis cannot be reached."""
        client = aioredis.Redis.from_url(
            url, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT,
            retry=Retry(NoBackoff(), 1))
        limits = cls(client, node, **options)
        try:
            await limits.start()
        except (RedisError, OSError) as exc:
            await client.aclose()
            raise BusError(f"cannot reach Redis at {url}: {exc}") from None
        return limits

    async def start(self) -> None:
        """List this node and renew it every ttl/3 (only with a limit on connections: the
        new players' buckets need no node)."""
        if self.max_connections:
            await self._renew()
            self._renewing = asyncio.get_running_loop().create_task(
                self._renew_forever(), name="address-limits-renew")

    async def add_connection(self, address: str) -> bool:
        if not self.max_connections:
            return True
        address = address_key(address)
        if not self.local.connect(address):  # this node's own count: the floor
            return False
        if self._closed:
            return True
        try:
            answered, admitted = await self._check(
                self._connect, keys=[self._nodes_key, self._conn_key],
                args=[address, self.max_connections, self.node, self._conn_prefix])
        except asyncio.CancelledError:  # never let in: maybe counted in Redis all the same
            self.local.disconnect(address)
            self._stale = True
            raise
        if not answered:
            return True
        if not admitted:
            self.local.disconnect(address)
        return bool(admitted)

    async def remove_connection(self, address: str) -> None:
        address = address_key(address)
        self.local.disconnect(address)
        if not self.max_connections or self._closed:
            return
        if self._skipping():
            self._stale = True
            return
        try:
            await self._disconnect(keys=[self._conn_key], args=[address])
        except (RedisError, OSError) as exc:
            self._stale = True
            self._failed(exc)
        except asyncio.CancelledError:  # the handler cancelled at shutdown: maybe not counted
            self._stale = True
            raise

    async def add_player(self, address: str, now: float) -> float | None:
        if not self.new_players:
            return None
        address = address_key(address)
        return await self._take_hourly(self.local.new_player(address, now), self.new_players,
                                       self._new_prefix, address, self.local.give_back_player)

    async def add_report(self, name: str, now: float) -> float | None:
        if not self.reports:
            return None
        return await self._take_hourly(self.local.report(name, now), self.reports,
                                       self._report_prefix, name, self.local.give_back_report)

    async def add_chat(self, name: str, now: float) -> float | None:
        wait = self.local.chat_line(name, now)  # this node's own bucket: the floor
        burst, rate = self.local.chat_lines
        if wait is not None or not burst or self._closed:
            return wait
        answered, answer = await self._check(
            self._new_player, keys=[self._chat_prefix + name], args=[burst, rate])
        if not answered or answer is None:
            return None
        self.local.give_back_chat(name)  # not said: this node's own bucket has it back
        return float(answer)

    async def _take_hourly(self, wait: float | None, per_hour: int, prefix: str, key: str,
                           give_back: Callable[[str], None]) -> float | None:
        """Take one from the cluster's bucket of ``per_hour`` (refilled at that many an hour)
        for ``key``, once this node's own (already taken from, ``wait`` its answer) has let it
        through: that one is the floor, and ``give_back`` returns its token if the cluster's
        refuses."""
        if wait is not None or self._closed:
            return wait
        answered, answer = await self._check(
            self._new_player, keys=[prefix + key], args=[per_hour, per_hour / 3600])
        if not answered or answer is None:
            return None
        give_back(key)  # not made: this node's own bucket has it back
        return float(answer)

    async def add_login_attempt(self, address: str, name: str, now: float) -> float | None:
        address = address_key(address)
        wait = self.local.login_attempt(address, name, now)  # this node's own buckets: the floor
        if wait is not None or self._closed:
            return wait
        (name_burst, name_hour), (address_burst, address_hour) = (
            self.local.login_per_name, self.local.login_per_address)
        answered, answer = await self._check(
            self._login, keys=[f"{self._login_prefix}name:{name}",
                               f"{self._login_prefix}address:{address}"],
            args=[name_burst, name_hour / 3600, address_burst, address_hour / 3600])
        if not answered or answer is None:
            return None
        self.local.give_back_login(address, name)  # not made: this node's own buckets have it back
        return float(answer)

    async def close(self) -> None:
        """Stop renewing and take this node's connections out of the count."""
        self._closed = True
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
        if self.max_connections:
            try:
                async with self.redis.pipeline(transaction=True) as pipe:
                    pipe.delete(self._conn_key)
                    pipe.zrem(self._nodes_key, self.node)
                    await pipe.execute()
            except (RedisError, OSError) as exc:
                log.warning("address limits: this node's connections stay counted in Redis "
                            "until its entry expires (%.1f s): %s", self.ttl, exc)
        await self.redis.aclose()

    # -- the node's entry and hash ------------------------------------------------------------

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self._renew()
            except (RedisError, OSError) as exc:
                self._stale = True
                self._failed(exc)

    async def _renew(self) -> None:
        """Renew this node's entry (dropping the dead nodes' hashes); write its hash afresh
        from its own count when it may be wrong."""
        listed_anew = await self._renew_script(
            keys=[self._nodes_key, self._conn_key],
            args=[self.node, int(self.ttl * 1000), self._conn_prefix])
        if listed_anew or self._stale:
            counts = {address: n for address, n in self.local.connections.items() if n > 0}
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.delete(self._conn_key)
                if counts:
                    pipe.hset(self._conn_key, mapping=counts)  # type: ignore[arg-type]
                await pipe.execute()
            self._stale = False
        self._back()

    # -- Redis away ------------------------------------------------------------------------

    async def _check(
        self, script: AsyncScript, *, keys: list[str], args: list[Any]
    ) -> tuple[bool, Any]:
        """Run a check's script: ``(True, its answer)``, or ``(False, None)`` when Redis is away
        (failed less than ttl/3 ago, or fails now) and the check fails open."""
        if self._skipping():
            self._fail_open()
            return False, None
        try:
            answer = await script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            self._fail_open(exc)
            return False, None
        self._back()
        return True, answer

    def _fail_open(self, exc: BaseException | None = None) -> None:
        self.failed_open += 1
        self.metrics.count(FAILED_OPEN)
        self._stale = True
        if exc is not None:
            self._failed(exc)

    def _skipping(self) -> bool:
        """Whether Redis failed less than ttl/3 ago: a check then answers from the node's own
        count at once rather than wait for Redis again (a circuit breaker); the renewal, or
        the first check after that time, tries Redis again."""
        return self._away and asyncio.get_running_loop().time() < self._retry_at

    def _failed(self, exc: BaseException) -> None:
        self._retry_at = asyncio.get_running_loop().time() + self.ttl / 3
        if not self._away:
            self._away = True
            log.warning("address limits: Redis failed (%s); each node counts only its own "
                        "connections and new players until it answers again",
                        str(exc) or type(exc).__name__)

    def _back(self) -> None:
        if self._away:
            self._away = False
            log.info("address limits: Redis answers again; limits count the whole cluster")
