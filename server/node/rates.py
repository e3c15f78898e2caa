"""Per-address rates for the work anyone may ask of the server (the solver, the puzzles, a
player's games): the key an address is counted under, and a token bucket per key.

An IPv6 address is counted by its /64, the prefix one host or household is given (RFC 6177,
and what lichess and most careful servers count as one client): a client that owns a /64 has
2^64 addresses to hop between, and would otherwise have a rate of its own on each. An IPv4
address (an IPv4-mapped IPv6 one too) is counted alone.
"""

from __future__ import annotations

import ipaddress

from server.node.session import TokenBucket

IPV6_PREFIX = 64  # the bits of an IPv6 address that name one client
BURST_SECONDS = 5  # a burst is this many seconds' worth
MAX_BUCKETS = 10_000  # keys remembered per group; the oldest are forgotten past this


def address_key(address: str) -> str:
    """The key ``address`` is counted under: an IPv6 address's /64 (``2001:db8:1:2::/64``),
    else the address itself (IPv4, an IPv4-mapped IPv6 address as its IPv4, or anything that
    is not an address, as given)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


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
