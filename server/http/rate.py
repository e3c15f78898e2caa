"""Per-address request rates for the HTTP routes that make the server work for anyone who
asks, with no socket and no player to hold to the websocket's limits.

A group of routes (``/api/solve``; the puzzles; ``/api/players/{name}/games``) shares one
``Limits``: a token bucket per client address, ``rate`` requests a second and a burst of
five times that (``qubic serve --solve-rate``, ``--puzzles-rate``, ``--player-games-rate``).
A request past it is answered 429 ``rate_limited`` with ``Retry-After`` (whole seconds) and
costs nothing more; other addresses go on. The client's address is the one the websocket
counts (``ADDRESS_KEY``: ``X-Forwarded-For`` from a trusted proxy, else the peer), keyed as
every limit keys one (``server.game.addresses.address_key``: an IPv6 /64 is one address).

Each node counts its own requests: behind a load balancer a cluster of n nodes lets an
address ask up to n times the rate, which bounds the work each node does, which is what this
protects.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.game.addresses import address_key
from server.node.session import TokenBucket
from server.protocol import ErrorCode

ADDRESS_KEY = web.AppKey("client_address", object)  # request -> the client's address
BURST_SECONDS = 5  # a burst is this many seconds' worth
MAX_BUCKETS = 10_000  # addresses remembered per group; the oldest are forgotten past this

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Limits:
    """A token bucket per client address, forgetting the oldest past ``MAX_BUCKETS``."""

    def __init__(self, rate: float) -> None:
        self.rate, self.burst = rate, max(1, round(rate * BURST_SECONDS))
        self.buckets: dict[str, TokenBucket] = {}

    def wait(self, address: str, now: float) -> float | None:
        """None if ``address`` may ask now, else the seconds until it may (an IPv6 address
        asks for its whole /64: ``server.game.addresses.address_key``)."""
        address = address_key(address)
        bucket = self.buckets.pop(address, None) or TokenBucket(self.rate, self.burst)
        self.buckets[address] = bucket  # most recent last
        if len(self.buckets) > MAX_BUCKETS:
            self.buckets.pop(next(iter(self.buckets)))
        return None if bucket.take(now) else max(0.01, bucket.wait(now))


def client_of(request: web.Request) -> str:
    """The address a request is counted for (the app's ``ADDRESS_KEY``, else the peer)."""
    address_of = request.app.get(ADDRESS_KEY)
    return str(address_of(request)) if callable(address_of) else (request.remote or "")


def limited(limits: Limits, too_many: str, handler: Handler) -> Handler:
    """``handler`` behind ``limits``: past them, 429 ``rate_limited`` saying ``too_many``,
    with ``Retry-After``."""

    async def checked(request: web.Request) -> web.StreamResponse:
        wait = limits.wait(client_of(request), time.monotonic())
        if wait is not None:
            return web.json_response(
                {"code": ErrorCode.RATE_LIMITED.value, "message": too_many}, status=429,
                headers={"Retry-After": str(math.ceil(wait))})
        return await handler(request)

    checked.__doc__ = handler.__doc__
    return checked
