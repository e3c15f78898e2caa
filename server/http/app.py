"""The transport: aiohttp on one port for the websocket protocol, health, metrics and the API.

The only module that imports aiohttp. Each websocket connection gets a
:class:`~server.node.session.Session`, a reader loop (size and rate checks, decoding, dispatch to
the hub in order) and a ``SocketWriter`` that writes each loop turn's frames from the
session's outbox in one system call (no task per connection). ``start_server`` runs
everything inside the calling event loop, so the terminal client can embed a server;
``run`` is ``qubic serve``: it adds signal handling and a clean shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging
import signal
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from aiohttp import WSMsgType, web

from server.computer.local import ComputerMoves, ComputerPool
from server.errors import LimitReached, ProtocolError, ServerError
from server.http.api import HUB_KEY, add_api
from server.http.bot_api import add_bot_api
from server.http.config import CLOSE_WAIT, ServerConfig
from server.http.logs import AccessLogger
from server.http.loop import run as run_loop
from server.http.ops import add_ops_routes, start_ops_listener
from server.http.puzzles_api import add_puzzles
from server.http.rate import ADDRESS_KEY
from server.http.review import add_review
from server.http.solve import TRUTH_KEY, add_solve
from server.http.tournaments_api import add_tournaments
from server.http.web import add_web_client
from server.metrics import Metrics
from server.node.address_limits import AddressCounts, AddressLimits
from server.node.config import HubConfig
from server.node.hub import Hub
from server.node.membership import Membership
from server.node.session import CLOSE_BAD_DATA, CLOSE_POLICY, CLOSE_TOO_BIG, Session
from server.node.tournaments import Holding
from server.protocol import (
    MAX_FRAME_BYTES,
    ErrorCode,
    Move,
    decode_client_message,
    readable_id,
)
from server.store.base import Store
from server.store.factory import describe, open_store
from server.store.grouping import CommitWindow
from server.version import VERSION

if TYPE_CHECKING:
    from server.cluster.links import ClusterLinks

log = logging.getLogger(__name__)

TRANSPORT_MAX_BYTES = 64 * 1024  # frames past this are cut off by aiohttp itself (close 1009)
WRITE_BUFFER_LIMIT = 64 * 1024  # bytes the kernel has not taken yet: past this, frames wait
DRAIN_POLL = 0.02  # seconds between looks at a slow reader's socket
GC_THRESHOLDS = (700, 50, 100)
"""The collector's thresholds under ``qubic serve``: a middle collection after 50 young ones
and a full one after 100 middle ones (Python's: 10 and 10). Under load what outlives a young
collection is mostly a connection's waits, which die by reference counting; the older
collections walk them all, find nothing to free, and stall the event loop meanwhile
(docs/benchmarks-history.md, "The generators' collections, and the server's full ones")."""
CONFIG_KEY = web.AppKey("config", object)
PROXIES_KEY = web.AppKey("proxies", list)


@dataclass
class RunningServer:
    """A server started by :func:`start_server`; ``stop()`` shuts it down cleanly."""

    config: ServerConfig
    hub: Hub
    store: Store
    pool: ComputerMoves
    runner: web.AppRunner
    host: str
    port: int
    ops: web.AppRunner | None = None  # the metrics listener, when it listens apart
    ops_port: int | None = None

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    async def stop(self) -> None:
        """Stop taking connections and games, close every socket with a reason, flush the
        store and stop the computer players."""
        log.info("shutting down")
        await self.hub.close()
        await self.runner.shutdown()  # websockets get a close frame; handlers finish
        await self.runner.cleanup()
        if self.ops is not None:
            await self.ops.cleanup()
        await self.hub.limits.close()  # a cluster's count no longer holds this node's sockets
        await self.pool.close()
        await self.store.close()
        log.info("stopped")


async def start_server(config: ServerConfig, pool: ComputerMoves | None = None,
                       store: Store | None = None) -> RunningServer:
    """Open the store, start the computer players (the local pool warming in the background, or
    the fleet on Redis), resume unfinished games and listen (at once: a computer move waits
    for its players, nothing else does).

    Raises ``StoreError`` (with a message fit for a person) if the database cannot be used,
    ``ComputerError`` if Redis cannot be reached. ``pool`` replaces the default (tests give one
    with a warm-up of their own); ``store``, opened on ``config.db_path``, the one opened here
    (tests give one that wraps it), and is closed with the server.
    """
    if store is None:
        store = await open_store(config.db_path, synchronous=config.synchronous,  # type: ignore[arg-type]
                                 commit_interval=config.commit_interval,
                                 commit_max=config.commit_max, pacing=config.pacing)
    try:
        if pool is None:
            pool = await _computer_players(config)
    except BaseException:
        await store.close()
        raise
    try:
        await pool.start(wait=False)
        hub_config = HubConfig(grace=config.grace, ai_move_time=config.computer_move_time,
                               abandon_after=config.abandon_after,
                               reserved_names=config.reserved_names,
                               spectator_chat=config.spectator_chat,
                               bots_in_pairing=config.bots_in_pairing,
                               leaderboard_inactive=config.leaderboard_inactive_days * 86400)
        links = await _cluster_links(config)
        limits: AddressCounts | None = None
        try:
            metrics = Metrics(version=VERSION, error_codes=[code.value for code in ErrorCode])
            if isinstance(store, CommitWindow):  # SQLite's and PostgreSQL's group commit
                metrics.histograms["store_commit_seconds"] = (
                    lambda: (store.commit_buckets, store.commit_seconds))
            metrics.gauges["store_write_failures"] = lambda: store.write_failures
            pacer = getattr(store, "pacer", None)
            if pacer is not None:  # SQLite's paced loop (server.store.pacing)
                metrics.gauges["loop_commit_waits"] = lambda: pacer.commit_waits
                metrics.gauges["loop_commit_wait_seconds"] = lambda: pacer.commit_waited
                metrics.gauges["loop_naps"] = lambda: pacer.naps
                metrics.gauges["loop_nap_seconds"] = lambda: pacer.napped
                metrics.lag.paused = lambda: pacer.paused
            limits = await _address_limits(config, links, metrics)
            hub = Hub(store, pool, hub_config, metrics, limits, cluster=_membership(links),
                      tournament_holding=_tournament_holding(links))
            await hub.start()
        except BaseException:
            if limits is not None:
                await limits.close()
            if links is not None:
                await links.close()
            raise
        runner = web.AppRunner(
            make_app(hub, config), handle_signals=False, shutdown_timeout=2.0,
            access_log=logging.getLogger("qubic.access") if config.access_log else None,
            access_log_class=AccessLogger,
        )
        await runner.setup()
        site = web.TCPSite(runner, config.host, config.port)
        await site.start()
        ops = await start_ops_listener(hub, config)
    except BaseException:
        await pool.close()
        await store.close()
        raise
    host, port = runner.addresses[0][:2]
    players = ("a fleet on Redis" if config.redis_url
               else f"{pool.workers} computer-player processes")
    log.info("listening on http://%s:%d (websocket at /ws, %s)", host, port, players)
    log.info("database: %s", describe(config.db_path))
    if ops is not None:
        log.info("metrics on http://%s/metrics", config.metrics_listen)
    return RunningServer(config, hub, store, pool, runner, config.host, port,
                         *(ops or (None, None)))


def clustered(config: ServerConfig) -> bool:
    """Whether the server is a cluster node: Redis, and a database other nodes can share."""
    return config.redis_url is not None and config.db_path.startswith(
        ("postgresql://", "postgres://"))


async def _cluster_links(config: ServerConfig) -> ClusterLinks | None:
    if not clustered(config):
        return None
    from server.cluster.links import ClusterLinks, default_node_name

    assert config.redis_url is not None
    return await ClusterLinks.open(config.redis_url, config.node or default_node_name(),
                                   ttl=config.lease_ttl)


def _membership(links: ClusterLinks | None) -> Membership | None:
    """The node's part in the cluster that ``links`` reach, or None alone."""
    if links is None:
        return None
    from server.cluster.membership import ClusterMembership

    return ClusterMembership(links)


def _tournament_holding(links: ClusterLinks | None) -> Holding | None:
    """Which tournaments this node runs: in a cluster, those whose lease it holds
    (server/cluster/tournament_leases.py); alone, all of them."""
    if links is None:
        return None
    from server.cluster.tournament_leases import LeaseHolding

    return LeaseHolding(links.leases)


async def _address_limits(config: ServerConfig, links: ClusterLinks | None,
                          metrics: Metrics) -> AddressCounts:
    """The per-address limits: this process's own count, or a cluster node's share of one
    count in Redis (server/cluster/address_limits.py)."""
    if links is None:
        return AddressLimits(config.max_connections_per_address,
                             config.new_players_per_address,
                             config.password_attempts_per_address, config.reports_per_hour)
    from server.cluster.address_limits import RedisAddressLimits

    assert config.redis_url is not None
    limits = await RedisAddressLimits.open(
        config.redis_url, links.node, max_connections=config.max_connections_per_address,
        new_players=config.new_players_per_address, ttl=config.lease_ttl, prefix=links.prefix,
        metrics=metrics, password_attempts=config.password_attempts_per_address,
        reports=config.reports_per_hour)
    links.bus.watch_over(limits.redis)  # its idle connections dropped when Redis goes
    return limits


async def _computer_players(config: ServerConfig) -> ComputerMoves:
    """The local pool of computer players, or with ``redis_url`` the fleet of ``qubic worker``s."""
    if config.redis_url is None:
        return ComputerPool(config.computer_workers, nice=config.computer_nice)
    from server.computer.fleet import Fleet, open_redis

    return Fleet(await open_redis(config.redis_url))


def run(config: ServerConfig) -> None:
    """``qubic serve``: run until SIGINT or SIGTERM, then shut down cleanly; with
    ``drain_after``, first tell every player the server restarts in that many seconds, start no
    new game, and wait that long (or for a second signal)."""

    async def main() -> None:
        server = await start_server(config)
        # What exists now (imports, the compiled kernel, resumed games) lives as long as the
        # process: move it out of the collector's reach, so full collections walk only what
        # games and connections allocate. Measured with bench/load.py, 1,000 games.
        gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"Qubic server on {server.http_url} — websocket {server.ws_url}", flush=True)
        await stop.wait()
        if config.drain_after > 0:  # say so first, then wait (a second signal cuts it short)
            stop.clear()
            server.hub.drain(config.drain_after)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), config.drain_after)
        await server.stop()

    run_loop(main, config.event_loop)


def make_app(hub: Hub, config: ServerConfig) -> web.Application:
    app = web.Application()
    app[HUB_KEY] = hub
    app[CONFIG_KEY] = config
    app[PROXIES_KEY] = [ipaddress.ip_network(p, strict=False) for p in config.trusted_proxies]
    app.router.add_get("/ws", websocket)
    add_ops_routes(app, config)  # /health, and /metrics unless it listens apart (ops.py)
    add_api(app, config.player_games_rate)  # /api/* (server/http/api.py)
    add_puzzles(app, config.puzzles_rate)  # /api/puzzles/* (server/http/puzzles_api.py)
    add_bot_api(app)  # the bot API (server/http/bot_api.py, docs/bots.md)
    add_tournaments(app)  # /api/tournaments* (server/http/tournaments_api.py)
    # /api/solve (server/http/solve.py); its worker process is made when first asked
    add_solve(app, hub.truth, config.solve_rate)
    add_review(app)  # /api/games/{id}/review (server/http/review.py)
    app[ADDRESS_KEY] = lambda request: client_address(
        request.remote or "", request.headers.getall("X-Forwarded-For", []), app[PROXIES_KEY])
    app.on_cleanup.append(_close_truth)
    add_web_client(app)  # the browser client at / (server/http/web.py)
    return app


async def _close_truth(app: web.Application) -> None:
    await app[TRUTH_KEY].close()


# -- the websocket ---------------------------------------------------------------------------


async def websocket(request: web.Request) -> web.StreamResponse:
    hub = request.app[HUB_KEY]
    config: ServerConfig = request.app[CONFIG_KEY]  # type: ignore[assignment]
    # Text frames come as bytes, checked for UTF-8 by our decoder: aiohttp's own check fails
    # the connection from its reader, which then drops it without reading the client's answer,
    # so frames the client sent meanwhile reset the connection and can cost the client our
    # close frame (it sees 1006). Failed here, the close handshake is a whole one.
    # Pings and pongs come to us too (autoping off), so each takes a token from the rate
    # limit like any frame: aiohttp answering them itself let 3,000 pings a second through.
    # The heartbeat is ours (``SocketWriter.beat``): aiohttp's reset a timer on every frame.
    ws = web.WebSocketResponse(
        max_msg_size=TRANSPORT_MAX_BYTES, compress=False, decode_text=False, autoping=False,
    )
    address = client_address(request.remote or "", request.headers.getall("X-Forwarded-For", []),
                             request.app[PROXIES_KEY])
    # counted before the handshake ends: once a client has its socket, every node counts it
    admitted = await hub.limits.add_connection(address)
    try:
        await ws.prepare(request)
    except BaseException:
        if admitted:
            await hub.limits.remove_connection(address)
        raise
    transport = request.transport
    assert transport is not None  # prepared: the handshake is done
    writer = SocketWriter(ws, transport, config.close_wait, hub.metrics, config.heartbeat)
    session = Session(address, config.max_queue, config.rate, config.burst,
                      config.max_queue_bytes, writer)
    if not admitted:
        hub.refuse(session, LimitReached(
            f"at most {hub.limits.max_connections} connections from one address",
            ErrorCode.TOO_MANY_CONNECTIONS))
        session.close(CLOSE_POLICY, "too many connections from your address")
        await writer.close(session)
        return ws
    hub.connected(session)
    try:
        # The frames are read in a task of the connection's own: a frame's arrival (and a
        # move's commit) resumes that coroutine alone, not aiohttp's handler chain above it.
        await asyncio.get_running_loop().create_task(read_frames(ws, session, hub, writer))
    finally:
        hub.disconnected(session)
        await hub.limits.remove_connection(address)
        if not session.closed:
            session.close(1000, "")
        await writer.close(session)
    return ws


STOPS = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED)
"""The frames that end ``async for frame in ws`` (``WebSocketResponse.__anext__``)."""


async def read_frames(ws: web.WebSocketResponse, session: Session, hub: Hub,
                      writer: SocketWriter) -> None:
    """Read the client's frames and carry each out, until the connection or the session
    closes; a refusal answers the frame, and a frame that breaks the rules closes it. Each
    frame tells the ``writer``'s heartbeat that the client is there."""
    loop = asyncio.get_running_loop()
    receive = ws.receive
    move_ack = hub.metrics.move_ack
    while True:
        frame = await receive()  # (not ``async for``: a call and a resume less a frame)
        if frame.type in STOPS or session.close_code is not None:  # (closed: a call less)
            break
        writer.heard = arrived = loop.time()
        if not session.bucket.take(arrived):
            ref = readable_id(frame.data) if frame.type is WSMsgType.TEXT else None
            hub.refuse(session, LimitReached("too many messages: slow down",
                                             ErrorCode.RATE_LIMITED,
                                             session.bucket.wait(loop.time())), ref)
            session.close(CLOSE_POLICY, "rate limit exceeded")
            break
        if frame.type is WSMsgType.PING:
            with contextlib.suppress(ConnectionError):  # gone meanwhile: the loop ends
                await ws.pong(frame.data)
            continue
        if frame.type is WSMsgType.PONG:
            continue
        if frame.type is WSMsgType.BINARY:
            hub.refuse(session, ProtocolError("send JSON in text frames, not binary",
                                              ErrorCode.BINARY_FRAME))
            continue
        if frame.type is not WSMsgType.TEXT:
            break
        try:
            message = decode_client_message(frame.data)
        except ProtocolError as error:
            if error.code == ErrorCode.BAD_UTF8:  # RFC 6455 8.1: fail the connection
                hub.metrics.error(error.code)
                session.close(CLOSE_BAD_DATA, "text frames must be UTF-8")
                break
            hub.refuse(session, error, error.ref)
            if error.code == ErrorCode.FRAME_TOO_LARGE:
                session.close(CLOSE_TOO_BIG, f"frames are limited to {MAX_FRAME_BYTES} bytes")
                break
            continue
        try:
            await hub.handle(session, message)
            if type(message) is Move:  # its ack (or refusal) is queued: the server's part
                move_ack.observe(loop.time() - arrived)
        except Exception:  # a bug costs this one request, never the connection or server
            log.exception("internal error handling %s on %s", type(message).__name__,
                          session)
            hub.refuse(session, ServerError("internal error", ErrorCode.INTERNAL),
                       message.id)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(peer: str, forwarded_for: list[str], proxies: list[Network]) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the rightmost
    ``X-Forwarded-For`` hop that is not a trusted proxy (hops left of it could be written by
    anyone). A malformed hop stops the walk at the last trusted address."""
    address = peer
    if not proxies:
        return address
    hops = [hop.strip() for header in forwarded_for for hop in header.split(",")]
    for hop in [peer, *reversed(hops)]:
        try:
            ip = ipaddress.ip_address(hop)
        except ValueError:
            return address
        address = str(ip)
        if not any(ip in network for network in proxies):
            return address
    return address


def frame_header(length: int) -> bytes:
    """The header of an unmasked, final websocket text frame of ``length`` bytes (RFC 6455
    5.2), as aiohttp writes it with compression off."""
    if length < 126:
        return SHORT_HEADERS[length]
    if length < 65536:
        return struct.pack("!BBH", 0x81, 126, length)
    return struct.pack("!BBQ", 0x81, 127, length)


PING = bytes((0x89, 0))
"""A websocket ping with no payload, as the server sends it (unmasked, final)."""

SHORT_HEADERS = tuple(bytes((0x81, length)) for length in range(126))
"""``frame_header`` of the frames shorter than 126 bytes (most of them: an ack, a move), read
from this table by ``SocketWriter.flush`` without a call."""


class SocketWriter:
    """Writes a session's outbox into its socket: the frames one loop turn queued go out in
    one ``transport.write`` (one ``send()``), each still its own websocket message.

    The first frame into an empty outbox schedules one ``flush`` for the end of the turn; no
    task waits per connection. A client that reads slowly (more than ``WRITE_BUFFER_LIMIT``
    bytes the kernel has not taken) gets no more until it catches up, looked at every
    ``DRAIN_POLL`` seconds, so its frames wait in the session's bounded outbox, where a full
    one closes it as a slow consumer. When the session closes, what it queued goes out first,
    then the close frame. aiohttp's own frames (pings, pongs, close) go through the same
    transport, each whole, so they interleave only between ours.
    """

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.BaseTransport,
                 close_wait: float = CLOSE_WAIT, metrics: Metrics | None = None,
                 heartbeat: float | None = None) -> None:
        # A write transport, though not always a subclass of asyncio's (uvloop's is not).
        self.transport = cast(asyncio.WriteTransport, transport)
        self.ws = ws
        self.close_wait, self.metrics = close_wait, metrics
        self.loop = asyncio.get_running_loop()
        self.scheduled = False
        self.closing: asyncio.Task[Any] | None = None
        self.heartbeat = heartbeat
        self.heard = self.loop.time()  # the last frame from the client (``read_frames``)
        self._pinged: float | None = None  # when the ping that waits for an answer went
        self._beat: asyncio.TimerHandle | None = None
        if heartbeat:
            self._beat = self.loop.call_at(self.heard + heartbeat, self.beat)

    def beat(self) -> None:
        """The heartbeat (RFC 6455 5.5.2): ``heartbeat`` seconds after the client's last
        frame, a ping; if nothing comes from it in half that again (a pong, or any frame),
        the connection is cut (1006: no close frame). A frame resets it by setting
        ``heard``, without a call: the timer looks at it when it fires."""
        assert self.heartbeat
        self._beat = None
        if self.ws.closed or self.transport.is_closing():
            return
        now, heard = self.loop.time(), self.heard
        if self._pinged is None or heard >= self._pinged:  # no ping waits for an answer
            due = heard + self.heartbeat
            if now < due:  # a frame came since the timer was set: wait on from it
                self._pinged = None
                self._beat = self.loop.call_at(due, self.beat)
                return
            self._pinged = now
            self.transport.write(PING)  # whole, between frames as every write of ours
            self._beat = self.loop.call_at(now + self.heartbeat / 2, self.beat)
            return
        log.debug("no pong in %g s: the connection is cut", self.heartbeat / 2)
        self.transport.close()  # as aiohttp's heartbeat did: the peer sees 1006

    def _stop_beat(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    def frames_waiting(self, session: Session) -> None:
        """The session's ``Outlet``: one ``flush`` at the end of the loop's turn."""
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.flush, session)

    def hang_up(self) -> None:
        self._stop_beat()
        self.transport.abort()

    def flush(self, session: Session) -> None:
        self.scheduled = False
        transport = self.transport
        if self.ws.closed or transport.is_closing():
            session.take_frames()  # the peer is gone: nothing more gets through
            return
        if transport.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
            self.scheduled = True
            self.loop.call_later(DRAIN_POLL, self.flush, session)
            return
        frames = session.take_frames()
        if frames:
            data = bytearray()
            for frame in frames:
                size = len(frame)
                data += SHORT_HEADERS[size] if size < 126 else frame_header(size)
                data += frame
            transport.write(data)
        if session.close_code is not None and self.closing is None:  # closed
            code, reason = session.close_code or 1000, session.close_reason.encode()
            self.closing = self.loop.create_task(self.ws.close(code=code, message=reason))

    async def close(self, session: Session) -> None:
        """Once ``session`` is closed: write what it queued and the close frame, waiting at
        most ``close_wait`` seconds for the peer (a goodbye cut short is counted)."""
        self._stop_beat()
        deadline = self.loop.time() + self.close_wait
        if self.closing is None and not self.ws.closed:
            self.flush(session)  # now, rather than at the end of the turn
        while self.closing is None and self.scheduled and self.loop.time() < deadline:
            await asyncio.sleep(DRAIN_POLL)  # a slow reader's last frames
        if self.closing is None:
            if not self.ws.closed:
                self.transport.abort()  # a reader too slow to take its last frames in time
                self._cut()
            return
        try:
            await asyncio.wait_for(self.closing, max(0.0, deadline - self.loop.time()))
        except TimeoutError:
            self._cut()  # the close frame went out; the peer's answer did not come in time
        except (ConnectionError, RuntimeError):
            pass

    def _cut(self) -> None:
        """Count a goodbye that did not finish: the peer sees the connection drop (1006)."""
        if self.metrics is not None:
            self.metrics.count("closes_cut_short")


# -- HTTP ------------------------------------------------------------------------------------
