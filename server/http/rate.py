"""Per-address request rates for the HTTP routes that make the server work for anyone who
asks, with no socket and no player to hold to the websocket's limits.

A group of routes (``/api/solve``; the puzzles; ``/api/players/{name}/games``) shares one
``Limits`` (``server.node.rates``): a token bucket per client address (an IPv6 /64 counted
as one address), ``rate`` requests a second and a burst of five times that (``qubic serve
--solve-rate``, ``--puzzles-rate``, ``--player-games-rate``). A request past it is answered
429 ``rate_limited`` with ``Retry-After`` (whole seconds) and costs nothing more; other
addresses go on. The client's address is the one the websocket counts (``ADDRESS_KEY``:
``X-Forwarded-For`` from a trusted proxy, else the peer).

Each node counts its own requests: behind a load balancer a cluster of n nodes lets an
address ask up to n times the rate, which bounds the work each node does, which is what this
protects.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.node.rates import Limits
from server.protocol import ErrorCode

ADDRESS_KEY = web.AppKey("client_address", object)  # request -> the client's address

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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
