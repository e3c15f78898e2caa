"""Cluster mode: many ``qubic serve`` nodes on one Redis and one PostgreSQL serve any game.

Each game has one owner at a time: the node holding its lease (``server.lease``). A node
that gets a request for a game it does not own sends it over the bus to the owner's topic
``node:{id}`` (``Forward``: the request's frame, the player, the origin node and session);
the owner carries it out and its batch reaches every node's ``Delivery`` on ``game:{id}``,
a reply for one session only on that session's node (a ``Reply`` on the origin's topic when
it is not in a batch). lila-ws keeps sockets and games apart the same way; Colyseus's
``remoteRoomCall`` forwards ``{id, sessionId}`` like ``Forward``.

No owner: the node claims the game: it takes the lease with the game's fencing token in
PostgreSQL as floor, raises the game's fence in the store *before* loading it
(``Store.claim``: the old owner's writes are refused from that moment), loads it and acts. A
lost race forwards to the winner. The new owner's first batch (an empty one of a newer
epoch) tells every node, whose ``Delivery`` then rejoins its sessions with it.

Liveness, all in Redis under the prefix: ``node:{id}`` (a heartbeat key that expires after
the lease ttl), the set ``nodes``, ``owned:{id}`` (the games a node holds) and
``playing:{name}`` (a player's unfinished games, for the welcome on any node). Every ttl/3 a
node beats, renews its leases in one pipeline (a lost lease drops the room at once: its
timers, its computer search) and sweeps: a node whose heartbeat is gone is dead, and each of
its games is claimed by the live node that rendezvous hashing picks, once its lease has
expired. On SIGTERM (``hand_over``) a node finishes the changes in flight, releases its
leases and says ``Leaving`` on the ``cluster`` topic, so the others claim at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import socket
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.bus import BusError, RedisBus, Subscription, connect
from server.delivery import PENDING, Delivery, Peer
from server.errors import RoomError, ServerError, StoreError
from server.lease import Lease, LeaseError, Leases
from server.metrics import Metrics
from server.protocol import (
    ClientMessage,
    ErrorCode,
    ServerMessage,
    Watch,
    encode,
    error_message,
)
from server.room import COMPUTER, GameRoom
from server.rooms import RoomMoved, Rooms
from server.routing import JOIN, Asked, Awaiting, Router, Unavailable
from server.session import Session
from server.store import GameStatus
from server.waiting import stop_tasks

log = logging.getLogger(__name__)

DEFAULT_LEASE_TTL = 3.0  # seconds: a dead node's games are taken over about this much later
MAX_HOPS = 4  # a request forwarded more often than this (ownership moving) is refused
CLUSTER_TOPIC = "cluster"


def default_node_name() -> str:
    """``host-pid-random``: unique for every process, readable in logs and metrics."""
    host = socket.gethostname().split(".")[0].replace(":", "-") or "node"
    return f"{host}-{os.getpid()}-{secrets.token_hex(2)}"


# -- messages between nodes ------------------------------------------------------------------


class Envelope(msgspec.Struct, tag_field="k", array_like=True):
    """A message on a node's topic or the cluster topic."""


class Forward(Envelope, tag="f"):
    """A session's game request, for the game's owner."""

    kind: str  # "act", "watch", "hint", "leave" or JOIN
    game: str
    frame: bytes  # the client's request as it sent it (empty for leave and join)
    node: str  # the session's node ...
    session: int  # ... and its id there
    name: str
    has_open: bool
    hops: int = 0


class Reply(Envelope, tag="r"):
    """A message for one session on the receiving node (a reply outside a game's batch)."""

    session: int
    frame: bytes
    failed_watch: str | None = None  # the game a refused watch had opened (pending) here


class Started(Envelope, tag="s"):
    """A game started on ``node`` with these players: open it for their sessions here."""

    node: str
    game: str
    players: list[str]


class Leaving(Envelope, tag="l"):
    """``node`` is shutting down and has released these games' leases: claim them now."""

    node: str
    games: list[str]


class HandOff(Envelope, tag="h"):
    """The receiving node now holds this game's lease (``Leases.transfer``): load it."""

    game: str


class Echo(Envelope, tag="e"):
    """A node's message to itself, to measure the bus's lag."""

    sent: float


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Forward | Reply | Started | Leaving | HandOff | Echo).decode


def rendezvous(game_id: str, nodes: Iterable[str]) -> str:
    """The node among ``nodes`` that takes ``game_id`` over (highest random weight): every
    node computes the same one, and a node's going moves only its own games."""

    def weight(node: str) -> int:
        return int.from_bytes(hashlib.sha1(f"{node}|{game_id}".encode()).digest()[:8], "big")

    return max(nodes, key=weight)


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


class Cluster(Router):
    """A node of the cluster: routing, ownership and takeover; see the module docstring."""

    spread = True  # hand each new game to the node rendezvous hashing picks

    def __init__(
        self, rooms: Rooms, delivery: Delivery, links: ClusterLinks, metrics: Metrics
    ) -> None:
        super().__init__(rooms, delivery, links.node)
        self.links = links
        self.bus = links.bus
        self.leases = links.leases
        self.redis = links.redis
        self.metrics = metrics
        self.ttl = links.leases.ttl
        self.held: dict[str, Lease] = {}  # the games this node owns, by their leases
        self.fences: dict[str, int] = {}  # the last token of each game held here
        self.owners: dict[str, str] = {}  # where other nodes' games were last found
        self.dead: set[str] = set()  # nodes found dead, whose games are being taken over
        self._known: set[str] = set()  # the nodes in the cluster's set at the last sweep
        self.alive: set[str] = {self.node}  # the live nodes at the last sweep
        self.handed_off = 0
        self.handing_over = False
        # the id of the request of a session here that started a game (the lobby knows it)
        self.started_ref: Callable[[Session], str | int | None] = lambda session: None
        self.lag = 0.0  # seconds the last echo took through Redis
        self.forwarded = 0
        self.claims = 0
        self.lost = 0
        self._claiming: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._taking: set[str] = set()
        self._orphans: set[str] = set()  # games lost here while Redis was away: claim again
        self._outbox: asyncio.Queue[tuple[str, Envelope]] = asyncio.Queue()
        self.awaiting = Awaiting()  # this node's requests sent to another node
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[Any]] = []
        self._subscriptions: list[Subscription] = []
        p = links.prefix
        self._nodes_key = f"{p}nodes"
        self._beat_key = f"{p}node:{self.node}"
        rooms.ownership = self
        rooms.send_to = self.send_to
        delivery.on_new_owner = self._new_owner
        delivery.on_reply = self.awaiting.answered

    def _owned_key(self, node: str) -> str:
        return f"{self.links.prefix}owned:{node}"

    def _playing_key(self, name: str) -> str:
        return f"{self.links.prefix}playing:{name}"

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on this node's topic and the cluster's, beat, and start the upkeep."""
        self._subscriptions = [
            await self.bus.subscribe(f"node:{self.node}", self._on_node_message),
            await self.bus.subscribe(CLUSTER_TOPIC, self._on_cluster_message),
        ]
        await self._beat()
        await self._alive()
        self.bus.on_resume(self._resumed)
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._upkeep(), name="cluster-upkeep"),
            loop.create_task(self._send_replies(), name="cluster-replies"),
        ]
        log.info("node %s joined the cluster (lease ttl %.1f s)", self.node, self.ttl)

    async def hand_over(self) -> None:
        """SIGTERM: finish the changes in flight, release every lease and tell the other
        nodes, which claim the games at once."""
        self.handing_over = True
        for task in self._loops[:1]:
            task.cancel()
        games = list(self.held)
        for game_id in games:
            lock = self.rooms.locks.get(game_id)
            if lock is None:
                self.rooms.drop(game_id)
                continue
            async with lock:  # a change in flight finishes (persisted and published) first
                self.rooms.drop(game_id)
        await self.rooms.drain()
        leases = [self.held.pop(game_id) for game_id in games]
        try:
            await asyncio.gather(*(self.leases.release(lease) for lease in leases))
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.delete(self._owned_key(self.node), self._beat_key)
                pipe.srem(self._nodes_key, self.node)
                await pipe.execute()
            await self.bus.publish(CLUSTER_TOPIC, _encode(Leaving(self.node, games)))
        except (RedisError, OSError, BusError) as exc:
            log.warning("could not hand the games over (%s): they are taken over in %.1f s",
                        exc, self.ttl)
        log.info("node %s handed %d games over", self.node, len(games))

    async def close(self) -> None:
        await stop_tasks(self._loops)  # the replies' loop publishes: a cancel can be lost there
        for subscription in self._subscriptions:
            with contextlib.suppress(BusError, RedisError, OSError):
                await subscription.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.links.close()

    # -- Ownership (the rooms' side) --------------------------------------------------------

    def token(self, game_id: str) -> int | None:
        """The game's lease token; a game not held here writes with -1, which the store
        refuses once anyone has claimed the game."""
        lease = self.held.get(game_id)
        if lease is not None:
            return lease.token
        return self.fences.get(game_id, -1)

    async def started(self, room: GameRoom) -> None:
        lease = await self.leases.acquire(room.id)
        if lease is None:  # a fresh game id: nobody else can hold it
            raise ServerError("the new game's lease is taken", ErrorCode.INTERNAL)
        self._hold(lease)
        players = _players(room)
        await self._playing(room.id, players, True)
        # at once, not through the outbox: it reaches other nodes before anything this
        # node says after the game has started (the lobby's answer to the request)
        await self.bus.publish(CLUSTER_TOPIC, _encode(Started(self.node, room.id, players)))
        target = rendezvous(room.id, self.alive)
        if self.spread and target != self.node:  # spread: the lobby starts every game
            self._spawn(self._hand_off(room.id, target), f"hand-off-{room.id}")

    async def _hand_off(self, game_id: str, node: str) -> None:
        """Give a game this node holds to ``node``: under the room's lock (no change in
        flight), the lease passes to ``node`` in one step and the room is dropped here; then
        ``node`` is told, loads the game and announces itself as the new owner."""
        async with self.rooms.locks[game_id]:
            lease = self.held.get(game_id)
            if lease is None or not self.owns(game_id):
                return
            await self.rooms.drain()  # what this node decided is published before the new owner
            if await self.leases.transfer(lease, node) is None:
                return
            del self.held[game_id]
            self.rooms.drop(game_id)
            self.owners[game_id] = node
        self.handed_off += 1
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(self._owned_key(node), game_id)  # swept from there should node be dead
            pipe.srem(self._owned_key(self.node), game_id)
            await pipe.execute()
        self._publish(f"node:{node}", HandOff(game_id))

    def ended(self, room: GameRoom) -> None:
        self._spawn(self._playing(room.id, _players(room), False), f"ended-{room.id}")

    async def _playing(self, game_id: str, players: list[str], playing: bool) -> None:
        """Add the game to (or take it from) its players' ``playing`` sets."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in players:
                key = self._playing_key(name)
                (pipe.sadd if playing else pipe.srem)(key, game_id)
            await pipe.execute()

    def forgotten(self, game_id: str) -> None:
        lease = self.held.pop(game_id, None)
        self.fences.pop(game_id, None)
        if lease is not None:
            self._spawn(self._release(lease), f"release-{game_id}")

    async def _release(self, lease: Lease) -> None:
        await self.leases.release(lease)
        await self.redis.srem(self._owned_key(self.node), lease.game_id)

    def _hold(self, lease: Lease) -> None:
        self.held[lease.game_id] = lease
        self.fences[lease.game_id] = lease.token
        self.owners.pop(lease.game_id, None)
        self._spawn(self.redis.sadd(self._owned_key(self.node), lease.game_id), "owned")

    def owns(self, game_id: str) -> bool:
        lease = self.held.get(game_id)
        return (not self.handing_over and lease is not None and game_id in self.rooms.rooms
                and lease.valid())

    # -- routing (the sessions' side) -------------------------------------------------------

    async def dispatch(
        self, peer: Peer, kind: str, game_id: str, message: ClientMessage | None
    ) -> None:
        frame = b"" if message is None else encode(message)
        forward = Forward(kind, game_id, frame, peer.node, peer.session, peer.name,
                          peer.has_open)
        await self.route(forward, message)

    def leave(self, session: Session, game_id: str) -> None:
        self.delivery.close(session, game_id)
        peer = Peer.of(session, self.node)
        if self.owns(game_id):
            self.rooms.leave(peer, game_id, self.rooms.now())
        else:
            self._spawn(self.dispatch(peer, "leave", game_id, None), f"leave-{game_id}")

    async def route(self, forward: Forward, message: ClientMessage | None) -> None:
        """Carry the request out here if this node owns the game, else send it to the
        owner; with no owner, claim the game first. Refusals raise ``ServerError``; with
        the bus cut off, ``Unavailable`` (even here: nobody would hear what changed)."""
        game_id = forward.game
        if not self.bus.connected and forward.kind != "leave":
            raise Unavailable("the cluster cannot be reached (Redis); try again", self.ttl)
        for _ in range(3):
            if self.owns(game_id):
                peer = Peer(forward.node, forward.session, forward.name, forward.has_open)
                try:
                    await self.execute(peer, forward.kind, game_id, message)
                except RoomMoved:
                    continue  # handed off or lost while it waited for the room's lock
                except StoreError as error:
                    if error.code == "fenced" and game_id in self.held:
                        self._lose(game_id)  # another node has claimed it: stop at once
                    raise
                return
            holder = self.owners.get(game_id) if forward.hops == 0 else None
            if holder is None:
                holder = await self._holder(game_id)
            if holder is not None and holder != self.node:
                if forward.hops >= MAX_HOPS:
                    raise Unavailable("the game is changing hands; try again", self.ttl)
                self.owners[game_id] = holder
                self.forwarded += 1
                hop = msgspec.structs.replace(forward, hops=forward.hops + 1)
                if forward.node == self.node and message is not None and message.id is not None \
                        and forward.kind != "leave":
                    now = asyncio.get_running_loop().time()
                    self.awaiting.sent(forward.session,
                                       Asked(message.id, forward.kind, game_id, holder, now))
                self._publish(f"node:{holder}", hop)
                return
            if forward.kind == "leave":
                return  # nobody holds it: there is nobody to tell
            if self.handing_over:
                raise ServerError("the server is shutting down", ErrorCode.SHUTTING_DOWN)
            await self.claim(game_id)
        raise Unavailable("the game's owner cannot be reached; try again", self.ttl)

    async def _holder(self, game_id: str) -> str | None:
        try:
            held = await self.leases.holder(game_id)
        except LeaseError as exc:
            raise Unavailable(f"the cluster cannot be reached: {exc}", self.ttl) from None
        return None if held is None else held[0]

    async def claim(self, game_id: str, *, only_active: bool = False) -> bool:
        """Take the game over if nobody holds it: lease (above the store's fence), claim in
        the store, load. Whether this node holds it now."""
        async with self._claiming[game_id]:
            if self.owns(game_id):
                return True
            record = await self.rooms.store.get_game(game_id)
            if record is None:
                raise RoomError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
            if only_active and record.status is not GameStatus.ACTIVE:
                return False
            try:
                lease = await self.leases.acquire(game_id, floor=record.fence)
            except LeaseError as exc:
                raise Unavailable(f"the cluster cannot be reached: {exc}", self.ttl) from None
            if lease is None:
                return False
            try:
                record = await self.rooms.store.claim(game_id, fence=lease.token)
            except StoreError:
                await self.leases.release(lease)
                raise
            if only_active and record.status is not GameStatus.ACTIVE:
                await self.leases.release(lease)
                return False
            self.rooms.drop(game_id)  # whatever was left of an earlier hold
            self._hold(lease)
            self.claims += 1
            room = await self.rooms.adopt(record, lease.token)
            if not room.over:  # the sets are lost with a Redis restart: made again here
                self._spawn(self._playing(game_id, _players(room), True), f"playing-{game_id}")
            return True

    def send_to(self, peer: Peer, message: ServerMessage, failed_watch: str | None = None
                ) -> None:
        """Send one message to one session, here or on its node."""
        if peer.node == self.node:
            session = self.delivery.session(peer.session)
            if session is not None:
                session.send(message)
            return
        self._publish(f"node:{peer.node}", Reply(peer.session, encode(message), failed_watch))

    def _publish(self, topic: str, envelope: Envelope) -> None:
        self._outbox.put_nowait((topic, envelope))

    async def _send_replies(self) -> None:
        """Publish forwards and replies in the order they were made (one task); a request of
        a session here that cannot be sent is answered ``unavailable`` at once."""
        while True:
            topic, envelope = await self._outbox.get()
            try:
                await self.bus.publish(topic, _encode(envelope))
            except BusError as exc:
                log.warning("a message for %s was lost: %s", topic, exc)
                if isinstance(envelope, Forward) and envelope.node == self.node:
                    asked = self.awaiting.take(envelope.session, envelope.frame)
                    if asked is not None:
                        self._unavailable(envelope.session, asked, "the cluster cannot be "
                                          f"reached: {exc}")

    def _check_deadlines(self) -> None:
        """Answer ``unavailable`` to requests sent to another node that had no answer in
        time (``Awaiting.expired``)."""
        def gone(node: str) -> bool:
            return not self.bus.connected or node not in self.alive or node in self.dead

        for session, asked in self.awaiting.expired(asyncio.get_running_loop().time(),
                                                    2 * self.ttl, gone):
            self._unavailable(session, asked, "the game's owner did not answer (it may have "
                              "stopped; another node takes the game over)")

    def _unavailable(self, session_id: int, asked: Asked, why: str) -> None:
        session = self.delivery.session(session_id)
        if session is None:
            return
        error = Unavailable(why, self.ttl)
        self.metrics.error(error.code)
        session.send(error_message(error, asked.ref))
        if asked.kind == "watch" and self.delivery.audience.get(asked.game, {}).get(
                session) == PENDING:
            self.delivery.close(session, asked.game)

    async def _remote(self, forward: Forward) -> None:
        """A request forwarded from another node (or bounced back to this one)."""
        message = None
        try:
            if forward.frame:
                from server.protocol import decode_client_message

                message = decode_client_message(forward.frame)
            await self.route(forward, message)
        except ServerError as error:
            self.metrics.error(error.code)
            peer = Peer(forward.node, forward.session, forward.name)
            ref = None if message is None else message.id
            failed = forward.game if forward.kind == "watch" else None
            if forward.kind not in ("leave", JOIN):
                self.send_to(peer, error_message(error, ref), failed)  # type: ignore[arg-type]

    # -- the bus ----------------------------------------------------------------------------

    def _on_node_message(self, topic: str, data: bytes) -> None:
        envelope = _decode(data)
        if isinstance(envelope, Forward):
            self._spawn(self._remote(envelope), f"forwarded-{envelope.game}")
        elif isinstance(envelope, Reply):
            self.awaiting.answered(envelope.session, envelope.frame)
            session = self.delivery.session(envelope.session)
            if session is None:
                return
            session.send_raw(envelope.frame)
            game_id = envelope.failed_watch
            if game_id is not None and self.delivery.audience.get(game_id, {}).get(
                    session) == PENDING:
                self.delivery.close(session, game_id)
        elif isinstance(envelope, HandOff):
            self._spawn(self.claim(envelope.game), f"handed-{envelope.game}")
        elif isinstance(envelope, Echo):
            self.lag = asyncio.get_running_loop().time() - envelope.sent

    def _on_cluster_message(self, topic: str, data: bytes) -> None:
        envelope = _decode(data)
        if isinstance(envelope, Started) and envelope.node != self.node:
            for name in envelope.players:
                for session in self.delivery.of_player(name):
                    self._spawn(self._join(session, envelope.game), f"join-{envelope.game}")
        elif isinstance(envelope, Leaving) and envelope.node != self.node:
            self._spawn(self._after_leaving(envelope), f"leaving-{envelope.node}")

    async def _join(self, session: Session, game_id: str, pending: bool = True) -> None:
        """Open the game for a session here with its owner (a catch-up comes, no ack)."""
        if pending:
            await self.delivery.open(session, game_id, PENDING)
        if self.handing_over or session.closed:
            return
        peer = Peer.of(session, self.node, True)
        ref = self.started_ref(session) if pending else None
        if ref is None:
            await self.dispatch(peer, JOIN, game_id, None)
        else:  # its game as the reply to the request that started it, as on one node
            await self.dispatch(peer, "watch", game_id, Watch(game=game_id, id=ref))

    def _new_owner(self, game_id: str) -> None:
        """A game's batches come from a new owner: it has nobody present, so every session
        here that has the game open joins it again (and gets its state afresh)."""
        self.owners.pop(game_id, None)
        if self.handing_over:
            return
        for session in list(self.delivery.audience.get(game_id, {})):
            self._spawn(self._join(session, game_id, pending=False), f"rejoin-{game_id}")

    def _resumed(self) -> None:
        """The bus was cut off and is back: what was published meanwhile is lost, so every
        session here that has a game open gets its state afresh from the owner, and the games
        lost here meanwhile are claimed again."""
        for game_id in list(self.delivery.audience):
            self._new_owner(game_id)
        self._reclaim()

    def _reclaim(self) -> None:
        for game_id in list(self._orphans):
            self._spawn(self._take_over(game_id, self.node), f"reclaim-{game_id}")

    async def _after_leaving(self, leaving: Leaving) -> None:
        self._forget_node(leaving.node)
        alive = await self._alive()
        alive.discard(leaving.node)
        for game_id in leaving.games:
            if rendezvous(game_id, alive) == self.node:
                self._spawn(self._take_over(game_id, leaving.node), f"takeover-{game_id}")

    def _forget_node(self, node: str) -> None:
        for game_id, owner in list(self.owners.items()):
            if owner == node:
                del self.owners[game_id]
        self.rooms.node_gone(node)

    # -- upkeep: heartbeat, leases, sweeping, lag --------------------------------------------

    async def _upkeep(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.ttl / 3)
            self._check_deadlines()
            try:
                await self._beat()
                await self._renew()
                await self._sweep()
                self._reclaim()
                self._publish(f"node:{self.node}", Echo(loop.time()))
            except (RedisError, OSError, BusError) as exc:
                log.warning("cluster upkeep failed: %s", exc)
                self._expire()
            except Exception:
                log.exception("cluster upkeep failed")

    async def _beat(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self._beat_key, b"1", px=max(1, round(self.ttl * 1000)))
            pipe.sadd(self._nodes_key, self.node)
            await pipe.execute()

    async def _renew(self) -> None:
        leases = list(self.held.values())
        renewed = await self.leases.renew_all(leases)
        for old, new in zip(leases, renewed, strict=True):
            if self.held.get(old.game_id) is not old:
                continue  # released or replaced meanwhile
            if new is not None:
                self.held[old.game_id] = new
            else:
                self._lose(old.game_id)

    def _expire(self) -> None:
        """Redis cannot be reached: drop every game whose lease has run out."""
        now = asyncio.get_running_loop().time()
        for game_id, lease in list(self.held.items()):
            if not lease.valid(now):
                self._lose(game_id)

    def _lose(self, game_id: str) -> None:
        """The game's lease is gone: stop acting as its owner at once, then try to claim it
        again (after a Redis restart nobody holds it; else its new owner keeps it)."""
        log.warning("node %s lost the lease of game %s", self.node, game_id)
        self.lost += 1
        del self.held[game_id]
        self.rooms.drop(game_id)
        self._orphans.add(game_id)  # until someone holds it (the upkeep tries again)
        self._spawn(self._take_over(game_id, self.node), f"reclaim-{game_id}")

    async def _alive(self) -> set[str]:
        nodes = [_text(n) for n in await self.redis.smembers(self._nodes_key)]
        beats = await self.redis.mget([f"{self.links.prefix}node:{n}" for n in nodes]) if nodes \
            else []
        alive = {node for node, beat in zip(nodes, beats, strict=True) if beat is not None}
        alive.add(self.node)
        self._known = set(nodes)
        self.alive = alive
        return alive

    async def _sweep(self) -> None:
        """Claim this node's share of the games of nodes whose heartbeat has stopped."""
        alive = await self._alive()
        for node in self._known - alive:
            if node not in self.dead:
                log.warning("node %s is gone: taking its games over", node)
                self.dead.add(node)
                self._forget_node(node)
            games = [_text(g) for g in await self.redis.smembers(self._owned_key(node))]
            if not games:
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.srem(self._nodes_key, node)
                    pipe.delete(self._owned_key(node))
                    await pipe.execute()
                self.dead.discard(node)
                continue
            for game_id in games:
                if rendezvous(game_id, alive) == self.node:
                    self._spawn(self._take_over(game_id, node), f"takeover-{game_id}")
        self.dead &= self._known

    async def _take_over(self, game_id: str, node: str) -> None:
        """Claim a game ``node`` held (an unfinished one); forget it from ``node``'s set once
        someone else than ``node`` holds it or it needs no owner."""
        if game_id in self._taking or self.handing_over:
            return
        self._taking.add(game_id)
        try:
            holder = await self._holder(game_id)
            if holder == node and node != self.node:
                return  # its lease has not run out yet: the next sweep tries again
            if holder is None:
                await self.claim(game_id, only_active=True)
            self._orphans.discard(game_id)
            if node != self.node:
                await self.redis.srem(self._owned_key(node), game_id)
        except RoomError:  # no such game
            self._orphans.discard(game_id)
            await self.redis.srem(self._owned_key(node), game_id)
        finally:
            self._taking.discard(game_id)

    # -- what the node tells -----------------------------------------------------------------

    async def games_of(self, name: str) -> list[str]:
        games = self.rooms.games_of(name)
        try:
            playing = await self.redis.smembers(self._playing_key(name))
        except (RedisError, OSError):
            return games
        return games + sorted(g for g in map(_text, playing) if g not in games)

    def register_gauges(self, gauges: dict[str, Callable[[], float]]) -> None:
        gauges[f'cluster_node{{node="{self.node}"}}'] = lambda: 1
        gauges["cluster_games_owned"] = lambda: len(self.held)
        gauges["cluster_bus_lag_seconds"] = lambda: self.lag
        gauges["cluster_requests_forwarded"] = lambda: self.forwarded
        gauges["cluster_claims"] = lambda: self.claims
        gauges["cluster_games_handed_off"] = lambda: self.handed_off
        gauges["cluster_leases_lost"] = lambda: self.lost
        gauges["cluster_nodes_dead"] = lambda: len(self.dead)

    def health(self) -> dict[str, object]:
        return {"node": self.node, "games_owned": len(self.held),
                "bus_lag_ms": round(self.lag * 1000, 2), "bus_connected": self.bus.connected}


def _players(room: GameRoom) -> list[str]:
    return [seat.player for seat in room.seats if seat.player != COMPUTER]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _log_failure(task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    error = task.exception()
    if error is not None and not isinstance(error, ServerError | RedisError | OSError):
        log.error("cluster task %s failed", task.get_name(), exc_info=error)
    elif error is not None:
        log.warning("cluster task %s: %s", task.get_name(), error)
