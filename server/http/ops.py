"""What an operator's tools read: ``/health`` (and its ``/live`` and ``/ready``) and
``/metrics``, on the game's port or apart.

``/health/live`` answers 200 while the process answers: a supervisor restarts it otherwise.
``/health/ready`` answers 200 when the node can serve players: the database answers and takes
writes, on a cluster the bus to the other nodes is connected, and the server is not shutting
down; otherwise 503 with the reasons, so a load balancer sends players elsewhere. ``/health``
keeps its old answer (200 with figures) for the tools that read it.

By default both are on the port the players use. ``metrics_listen`` ("HOST:PORT") moves
``/metrics`` to a listener of its own (``/health`` stays on both, since a load balancer checks
the game's port), as Nakama and most servers do, so a firewall keeps it from the players; a
``metrics_token`` asks every ``/metrics`` request for ``Authorization: Bearer <token>`` (401
otherwise), wherever it is served.
"""

from __future__ import annotations

import hmac

from aiohttp import web

from server.http.api import HUB_KEY
from server.http.config import ServerConfig
from server.http.loop import loop_name
from server.node.hub import Hub
from server.protocol import ErrorCode
from server.version import VERSION

TOKEN_KEY = web.AppKey("metrics_token", str)


async def health(request: web.Request) -> web.Response:
    """The server answers: its version, connections, games and computer players (and on a
    cluster node, its node's figures)."""
    hub = request.app[HUB_KEY]
    return web.json_response({
        "status": "ok",
        "version": VERSION,
        "connections": len(hub.sessions),
        "games": sum(not room.over for room in hub.rooms.held.values()),
        "ai_workers": hub.pool.workers,
        "ai_ready": hub.pool.ready,
        "event_loop": loop_name(),
        **({} if hub.cluster is None else hub.cluster.health()),
    })


async def live(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "version": VERSION})


async def not_ready(hub: Hub) -> list[str]:
    """Why this node should not be sent players now (empty: it should)."""
    reasons = []
    if hub.rooms.closing:
        reasons.append("the server is shutting down")
    elif hub.draining:
        reasons.append("the server is draining before a restart")
    if hub.cluster is not None and not hub.cluster.health().get("bus_connected", True):
        reasons.append("the bus to the other nodes is cut")
    problem = await hub.store.check()
    if problem is not None:
        reasons.append(problem)
    return reasons


async def ready(request: web.Request) -> web.Response:
    reasons = await not_ready(request.app[HUB_KEY])
    if reasons:
        return web.json_response({"status": "unavailable", "reasons": reasons}, status=503)
    return web.json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    """The Prometheus exposition; behind the bearer token when the server has one."""
    token = request.app.get(TOKEN_KEY)
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return web.json_response(
                {"code": ErrorCode.NOT_AUTHENTICATED.value,
                 "message": "/metrics needs the metrics token: Authorization: Bearer <token>"},
                status=401, headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    hub = request.app[HUB_KEY]
    return web.Response(text=hub.metrics.render(), content_type="text/plain", charset="utf-8")


def add_ops_routes(app: web.Application, config: ServerConfig, *, apart: bool = False) -> None:
    """``/health`` always; ``/metrics`` here unless it has a listener of its own (``apart``
    is that listener's app)."""
    app.router.add_get("/health", health)
    app.router.add_get("/health/live", live)
    app.router.add_get("/health/ready", ready)
    if config.metrics_token:
        app[TOKEN_KEY] = config.metrics_token
    if apart or not config.metrics_listen:
        app.router.add_get("/metrics", metrics)


def split_address(address: str) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[v6]:PORT`` too) as a host and a port; ``ValueError`` otherwise."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


async def start_ops_listener(hub: Hub, config: ServerConfig) -> tuple[web.AppRunner, int] | None:
    """The metrics listener at ``config.metrics_listen`` (and its port), or None."""
    if not config.metrics_listen:
        return None
    host, port = split_address(config.metrics_listen)
    app = web.Application()
    app[HUB_KEY] = hub
    add_ops_routes(app, config, apart=True)
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, runner.addresses[0][1]
