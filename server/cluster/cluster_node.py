"""A node of the cluster: many ``qubic serve`` nodes on one Redis and one PostgreSQL serve any game.

``ClusterNode`` builds the node's delivery and rooms over itself (their ``Followers``,
``Ownership`` and ``Replies``, each passed on to its part), then its parts over them:
``ClusterOwnership``, ``ClusterLobby`` and ``Forwarding``. It listens on the node's topic and
the ``cluster`` topic, publishes the parts' messages in order, and every ttl/3 runs the upkeep
(deadlines, heartbeat, leases, sweep, the bus's lag).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from server.cluster.forwarding import Forwarding
from server.cluster.links import ClusterLinks
from server.cluster.lobby import ClusterLobby
from server.cluster.messages import (
    CLUSTER_TOPIC,
    Echo,
    Envelope,
    Forward,
    HandOff,
    Leaving,
    Reply,
    Started,
    decode_envelope,
    encode_message,
)
from server.cluster.ownership import ClusterOwnership
from server.errors import BusError, ServerError
from server.game.room import GameRoom
from server.metrics import Metrics
from server.node.bus import Subscription, next_batch
from server.node.delivery import Peer
from server.node.membership import MakeDelivery, MakeRooms
from server.node.routing import Here
from server.node.session import Session
from server.protocol import ServerMessage
from server.tasks import stop_tasks

log = logging.getLogger(__name__)


class ClusterNode:
    """A node of the cluster; see the module docstring. ``delivery`` and ``rooms`` are the
    hub's; ``owners`` is where the hub's router sends game requests; ``lobby`` the hub's
    lobby, this node's side of the cluster's one lobby."""

    def __init__(
        self, links: ClusterLinks, metrics: Metrics, make_delivery: MakeDelivery,
        make_rooms: MakeRooms,
    ) -> None:
        self.node = links.node
        self.links = links
        self.bus = links.bus
        self.leases = links.leases
        self.redis = links.redis
        self.metrics = metrics
        self.ttl = links.leases.ttl
        self.lag = 0.0  # seconds the last echo took through Redis
        self._outbox: asyncio.Queue[tuple[str, Envelope]] = asyncio.Queue()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[Any]] = []
        self._subscriptions: list[Subscription] = []
        # the node's parts, this node's cluster side their Followers, Ownership and Replies
        # (each passed on to the part of it built over them below)
        self.delivery = make_delivery(followers=self)
        self.rooms = make_rooms(self.delivery, ownership=self, replies=self)
        self.ownership = ClusterOwnership(self.rooms, links, self._publish, self._spawn)
        self.lobby = ClusterLobby(self.rooms, self.delivery, links, self.ownership, metrics)
        self.owners = Forwarding(Here(self.rooms), self.delivery, self.ownership, metrics,
                                 self._publish, self._spawn, self.lobby.started_ref)

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)

    # -- the node's parts' interfaces, passed on ---------------------------------------------

    def owner_changed(self, game_id: str) -> None:  # Delivery's Followers
        self.owners.new_owner(game_id)

    def owner_heard(self, game_id: str, node: str) -> None:
        self.owners.owner_heard(game_id, node)

    def rejoin(self, game_id: str, sessions: list[Session]) -> None:
        self.owners.rejoin(game_id, sessions)

    def replied(self, session: int, frame: bytes) -> None:
        self.owners.awaiting.answered(session, frame)

    def send_to(self, peer: Peer, message: ServerMessage) -> None:  # the rooms' Replies
        self.owners.send_to(peer, message)

    def token(self, game_id: str) -> int | None:  # the rooms' Ownership
        return self.ownership.token(game_id)

    async def started(self, room: GameRoom) -> None:
        await self.ownership.started(room)

    def ended(self, room: GameRoom) -> None:
        self.ownership.ended(room)

    def forgotten(self, game_id: str) -> None:
        self.ownership.forgotten(game_id)

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on this node's topic and the cluster's, beat, and start the upkeep."""
        self._subscriptions = [
            await self.bus.subscribe(f"node:{self.node}", self._on_node_message),
            await self.bus.subscribe(CLUSTER_TOPIC, self._on_cluster_message),
        ]
        await self.ownership.beat()
        await self.ownership.live_nodes()
        self.bus.on_resume(self._resumed)
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._upkeep(), name="cluster-upkeep"),
            loop.create_task(self._send_replies(), name="cluster-replies"),
        ]
        log.info("node %s joined the cluster (lease ttl %.1f s)", self.node, self.ttl)

    async def hand_over(self) -> None:
        """SIGTERM: stop renewing, then hand every game over (``ClusterOwnership``)."""
        await stop_tasks(self._loops[:1])  # for sure: a cancel can be lost in a publish
        await self.ownership.hand_over()

    async def close(self) -> None:
        await stop_tasks(self._loops)  # the replies' loop publishes: a cancel can be lost there
        for subscription in self._subscriptions:
            with contextlib.suppress(BusError, RedisError, OSError):
                await subscription.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.links.close()

    # -- the bus ----------------------------------------------------------------------------

    def _publish(self, topic: str, envelope: Envelope) -> None:
        self._outbox.put_nowait((topic, envelope))

    async def _send_replies(self) -> None:
        """Publish forwards and replies in the order they were made (one task); a request of
        a session here that cannot be sent is answered ``unavailable`` at once."""
        while True:
            queued = await next_batch(self._outbox)  # what queued meanwhile: one round trip
            try:
                await self.bus.publish_many(
                    [(topic, encode_message(envelope)) for topic, envelope in queued])
            except BusError as exc:
                log.warning("%d messages (for %s) were lost: %s", len(queued),
                            ", ".join(topic for topic, _ in queued), exc)
                for _, envelope in queued:
                    if isinstance(envelope, Forward):
                        self.owners.not_sent(envelope, exc)

    def _on_node_message(self, topic: str, data: bytes) -> None:
        envelope = decode_envelope(data)
        if isinstance(envelope, Forward):
            self._spawn(self.owners.remote(envelope), f"forwarded-{envelope.game}")
        elif isinstance(envelope, Reply):
            self.owners.replied(envelope)
        elif isinstance(envelope, HandOff):
            self._spawn(self.ownership.claim(envelope.game), f"handed-{envelope.game}")
        elif isinstance(envelope, Echo):
            self.lag = asyncio.get_running_loop().time() - envelope.sent

    def _on_cluster_message(self, topic: str, data: bytes) -> None:
        envelope = decode_envelope(data)
        if isinstance(envelope, Started) and envelope.node != self.node:
            self.owners.started_elsewhere(envelope)
        elif isinstance(envelope, Leaving) and envelope.node != self.node:
            self._spawn(self.ownership.after_leaving(envelope), f"leaving-{envelope.node}")

    def _resumed(self) -> None:
        """The bus was cut off and is back: what was published meanwhile is lost, so every
        session here that has a game open gets its state afresh from the owner, and the games
        lost here meanwhile are claimed again."""
        self.owners.resync()
        self.ownership.reclaim()

    # -- upkeep: heartbeat, leases, sweeping, lag --------------------------------------------

    async def _upkeep(self) -> None:
        loop = asyncio.get_running_loop()
        ownership = self.ownership
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:  # on its own: the leases are renewed whatever becomes of it
                self.owners.check_deadlines()
            except Exception:
                log.exception("cluster upkeep: the forwarded requests' deadlines failed")
                self.metrics.count("cluster_upkeep_failures")
            try:  # a Redis that stops answering holds none of it past the ttl
                await asyncio.wait_for(ownership.beat(), self.ttl)
                await ownership.renew()  # (each lease call has its own timeout)
                await asyncio.wait_for(ownership.sweep(), self.ttl)
                ownership.reclaim()
                self._publish(f"node:{self.node}", Echo(loop.time()))
            except (RedisError, OSError, BusError, TimeoutError) as exc:
                log.warning("cluster upkeep failed: %s", exc)
                self.metrics.count("cluster_upkeep_failures")
                ownership.expire()
            except Exception:
                log.exception("cluster upkeep failed")
                self.metrics.count("cluster_upkeep_failures")

    # -- what the node tells -----------------------------------------------------------------

    def register_gauges(self, gauges: dict[str, Callable[[], float]]) -> None:
        ownership = self.ownership
        gauges[f'cluster_node{{node="{self.node}"}}'] = lambda: 1
        gauges["cluster_games_owned"] = lambda: len(ownership.held)
        gauges["cluster_bus_lag_seconds"] = lambda: self.lag
        gauges["cluster_requests_forwarded"] = lambda: self.owners.forwarded
        gauges["cluster_claims"] = lambda: ownership.claims
        gauges["cluster_games_handed_off"] = lambda: ownership.handed_off
        gauges["cluster_leases_lost"] = lambda: ownership.lost
        gauges["cluster_nodes_dead"] = lambda: len(ownership.dead)

    def health(self) -> dict[str, object]:
        return {"node": self.node, "games_owned": len(self.ownership.held),
                "bus_lag_ms": round(self.lag * 1000, 2), "bus_connected": self.bus.connected}


def _log_failure(task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    error = task.exception()
    if error is not None and not isinstance(error, ServerError | RedisError | OSError):
        log.error("cluster task %s failed", task.get_name(), exc_info=error)
    elif error is not None:
        log.warning("cluster task %s: %s", task.get_name(), error)
