"""Per-address rates for the work anyone may ask of the server (the solver, the puzzles, a
player's games): a token bucket per address, keyed as every limit keys one
(``server.game.addresses.address_key``: an IPv6 /64 is one address, the prefix one host or
household is given, RFC 6177).
"""

from __future__ import annotations

from server.game.addresses import address_key
from server.node.session import TokenBucket

BURST_SECONDS = 5  # a burst is this many seconds' worth
MAX_BUCKETS = 10_000  # keys remembered per group; the oldest are forgotten past this


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
