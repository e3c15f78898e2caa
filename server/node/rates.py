"""Token buckets, and per-address rates for the work anyone may ask of the server (the
solver, the puzzles, a player's games): a token bucket per address, keyed as every limit keys one
(``server.game.addresses.address_key``: an IPv6 /64 is one address, the prefix one host or
household is given, RFC 6177).
"""

from __future__ import annotations

import math

from server.game.addresses import address_key
from server.protocol import RATE_LIMIT_BURST, RATE_LIMIT_PER_SECOND

BURST_SECONDS = 5  # a burst is this many seconds' worth
MAX_BUCKETS = 10_000  # keys remembered per group; the oldest are forgotten past this


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; each client frame takes one."""

    def __init__(self, rate: float = RATE_LIMIT_PER_SECOND, burst: int = RATE_LIMIT_BURST) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.updated: float | None = None

    def take(self, now: float) -> bool:
        """Spend a token if one is left at ``now`` (``_refill`` written out: every frame of
        every client comes here)."""
        tokens, updated = self.tokens, self.updated
        if updated is not None:
            tokens += (now - updated) * self.rate
            if tokens > self.burst:
                tokens = self.burst
        self.updated = now
        if tokens >= 1.0:
            self.tokens = tokens - 1.0
            return True
        self.tokens = tokens
        return False

    def wait(self, now: float) -> float:
        """Seconds from ``now`` until a token is there, rounded up to 0.1 s (0: one is now)."""
        self._refill(now)
        missing = max(0.0, 1.0 - self.tokens)
        return math.ceil(missing / self.rate * 10) / 10

    def full(self, now: float) -> bool:
        """Whether the bucket holds its whole burst at ``now``."""
        self._refill(now)
        return self.tokens >= self.burst

    def _refill(self, now: float) -> None:
        if self.updated is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now


class Limits:
    """A token bucket per client address (by ``address_key``), ``rate`` a second and a burst
    of ``BURST_SECONDS`` times that (at least ``burst``), forgetting the oldest past
    ``MAX_BUCKETS``."""

    def __init__(self, rate: float, burst: int | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(1, round(rate * BURST_SECONDS))
        self.buckets: dict[str, TokenBucket] = {}

    def wait(self, address: str, now: float) -> float | None:
        """None if ``address`` may ask now (a token is taken), else the seconds until it may."""
        key = address_key(address)
        bucket = self.buckets.pop(key, None) or TokenBucket(self.rate, self.burst)
        self.buckets[key] = bucket  # most recent last
        if len(self.buckets) > MAX_BUCKETS:
            self.buckets.pop(next(iter(self.buckets)))
        return None if bucket.take(now) else max(0.01, bucket.wait(now))
