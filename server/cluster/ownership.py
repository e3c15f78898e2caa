"""Cluster mode's game ownership: which node holds each game, and taking games over.

A game's owner is the node holding its lease (``server.cluster.lease``). ``ClusterOwnership``
is the rooms' ``Ownership`` on a cluster node (a new game's lease, the fencing token every
write carries, the lease let go when the room is forgotten), claims a game that has no owner
(fence raised in the store before loading it), beats, renews, sweeps dead nodes and hands its
games over at SIGTERM. docs/cluster.md describes the keys and the takeover.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from server.cluster.lease import Lease, LeaseError
from server.cluster.messages import (
    CLUSTER_TOPIC,
    Envelope,
    HandOff,
    Leaving,
    Started,
    encode_message,
)
from server.errors import BusError, RoomError, ServerError, StoreError
from server.game.records import GameStatus
from server.game.room import COMPUTER, GameRoom
from server.node.delivery import EPOCH_BITS
from server.node.room_lock import RoomLock
from server.node.rooms import Rooms
from server.node.routing import Unavailable
from server.protocol import ErrorCode

if TYPE_CHECKING:
    from server.cluster.links import ClusterLinks

log = logging.getLogger("server.cluster.cluster_node")  # one name for the cluster's log lines


ADOPTED_VERSION_BITS = 20
"""A game taken over under fencing token t numbers its events from t << 20: an owner says
fewer than a million versions of a game (moves, chat, presence) before the next takes over."""

def rendezvous(game_id: str, nodes: Iterable[str]) -> str:
    """The node among ``nodes`` that takes ``game_id`` over (highest random weight): every
    node computes the same one, and a node's going moves only its own games."""

    def weight(node: str) -> int:
        return int.from_bytes(hashlib.sha1(f"{node}|{game_id}".encode()).digest()[:8], "big")

    return max(nodes, key=weight)


class KeyedLocks:
    """One lock per key, kept only while a task holds it or waits for it: its users are
    counted, since a lock just released may have a waiter about to take it."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()

    def __iter__(self) -> Iterator[str]:
        return iter(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.get(key) or self._locks.setdefault(key, asyncio.Lock())
        self._users[key] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]


class ClusterOwnership:
    """The games this node owns, the leases it renews, the nodes it finds dead and the games
    it takes over; see the module docstring. ``publish`` sends an envelope in order with the
    node's other messages, ``spawn`` runs a task the node cancels when it closes."""

    spread = True  # hand each new game to the node rendezvous hashing picks

    def __init__(
        self, rooms: Rooms, links: ClusterLinks, publish: Callable[[str, Envelope], None],
        spawn: Callable[[Any, str], None],
    ) -> None:
        self.rooms = rooms
        self.node = links.node
        self.bus = links.bus
        self.leases = links.leases
        self.redis = links.redis
        self.prefix = links.prefix
        self.ttl = links.leases.ttl
        self._publish = publish
        self._spawn = spawn
        self.held: dict[str, Lease] = {}  # the games this node owns, by their leases
        self.fences: dict[str, int] = {}  # each held game's token (a lost one's until it settles)
        self.owners: dict[str, str] = {}  # where other nodes' games open here were last found
        self.dead: set[str] = set()  # nodes found dead, whose games are being taken over
        self._known: set[str] = set()  # the nodes in the cluster's set at the last sweep
        self.alive: set[str] = {self.node}  # the live nodes at the last sweep
        self.handed_off = 0
        self.handing_over = False
        self.claims = 0
        self.lost = 0
        self._claiming = KeyedLocks()
        self._taking: set[str] = set()
        self._orphans: set[str] = set()  # games lost here while Redis was away: claim again
        self._nodes_key = f"{self.prefix}nodes"
        self._beat_key = f"{self.prefix}node:{self.node}"

    def _owned_key(self, node: str) -> str:
        return f"{self.prefix}owned:{node}"

    def playing_key(self, name: str) -> str:
        """The Redis set of ``name``'s unfinished games."""
        return f"{self.prefix}playing:{name}"

    # -- the rooms' side (server.node.rooms.Ownership) ------------------------------------------

    def token(self, game_id: str) -> int | None:
        """The game's lease token; a game not held here writes with -1, which the store
        refuses once anyone has claimed the game."""
        lease = self.held.get(game_id)
        if lease is not None:
            return lease.token
        return self.fences.get(game_id, -1)

    def found(self, game_id: str, node: str) -> None:
        """``node`` holds the game: remembered while a session here has the game open (its
        requests then go straight there), forgotten once none has (a cache, and it stays as
        small as the games open here)."""
        if game_id in self.rooms.delivery.audience:
            self.owners[game_id] = node
        else:
            self.owners.pop(game_id, None)

    async def started(self, room: GameRoom) -> None:
        lease = await self.leases.acquire(room.id)
        if lease is None:  # a fresh game id: nobody else can hold it
            raise ServerError("the new game's lease is taken", ErrorCode.INTERNAL)
        self._hold(lease)
        players = _players(room)
        await self._playing(room.id, players, True, owned=True)
        # at once, not through the outbox: it reaches other nodes before anything this
        # node says after the game has started (the lobby's answer to the request)
        await self.bus.publish(CLUSTER_TOPIC,
                               encode_message(Started(self.node, room.id, players)))
        target = rendezvous(room.id, self.alive)
        if self.spread and target != self.node:  # spread: the lobby starts every game
            self._spawn(self._hand_off(room.id, target), f"hand-off-{room.id}")

    async def _hand_off(self, game_id: str, node: str) -> None:
        """Give a game this node holds to ``node``: under the room's lock (no change in
        flight), the lease passes to ``node`` in one step and the room is dropped here; then
        ``node`` is told, loads the game and announces itself as the new owner."""
        try:
            async with self.rooms.locks[game_id]:
                lease = self.held.get(game_id)
                if lease is None or not self.owns(game_id):
                    return
                await self.rooms.publisher.flush()  # what this node decided is published first
                if await self.leases.transfer(lease, node) is None:
                    return
                del self.held[game_id]
                self.fences.pop(game_id, None)  # nothing in flight: a later write is stale (-1)
                self.rooms.drop(game_id)
                self.found(game_id, node)
        finally:
            if game_id not in self.rooms.held:  # handed off, or lost meanwhile
                self.rooms.drop(game_id)  # its lock too, free now (drop keeps a held one)
        self.handed_off += 1
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(self._owned_key(node), game_id)  # swept from there should node be dead
            pipe.srem(self._owned_key(self.node), game_id)
            await pipe.execute()
        self._publish(f"node:{node}", HandOff(game_id))

    def ended(self, room: GameRoom) -> None:
        self._spawn(self._playing(room.id, _players(room), False), f"ended-{room.id}")

    async def _playing(self, game_id: str, players: list[str], playing: bool,
                       owned: bool = False) -> None:
        """Add the game to (or take it from) its players' ``playing`` sets; with ``owned``,
        to this node's ``owned`` set too (a new game's: written before a hand-off takes it
        out, which a write of its own, spawned, might follow)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            if owned:
                pipe.sadd(self._owned_key(self.node), game_id)
            for name in players:
                key = self.playing_key(name)
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

    def owns(self, game_id: str) -> bool:
        lease = self.held.get(game_id)
        return (not self.handing_over and lease is not None and game_id in self.rooms.held
                and lease.valid())

    # -- who holds a game, and claiming it ---------------------------------------------------

    async def holder(self, game_id: str) -> str | None:
        """The node holding the game's lease, None if nobody does; ``Unavailable`` if
        Redis cannot be reached."""
        try:
            held = await self.leases.holder(game_id)
        except LeaseError as exc:
            raise Unavailable(f"the cluster cannot be reached: {exc}", self.ttl) from None
        return None if held is None else held[0]

    async def claim(self, game_id: str, *, only_active: bool = False) -> bool:
        """Take the game over if nobody holds it: lease (above the store's fence), claim in
        the store, load. Whether this node holds it now."""
        async with self._claiming.hold(game_id):
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
            self._spawn(self.redis.sadd(self._owned_key(self.node), game_id), "owned")
            self.claims += 1
            # its events versioned above any an earlier owner (an older token) can have said
            room = await self.rooms.hold(record, lease.token << ADOPTED_VERSION_BITS,
                                         lease.token << EPOCH_BITS)
            log.info("took over game %s at ply %d", room.id, room.board.ply)
            if not room.over:  # the sets are lost with a Redis restart: made again here
                self._spawn(self._playing(game_id, _players(room), True), f"playing-{game_id}")
            return True

    def lose(self, game_id: str) -> None:
        """The game's lease is gone: stop acting as its owner at once, then try to claim it
        again (after a Redis restart nobody holds it; else its new owner keeps it)."""
        log.warning("node %s lost the lease of game %s", self.node, game_id)
        self.lost += 1
        del self.held[game_id]
        lock = self.rooms.locks.get(game_id)
        self.rooms.drop(game_id)
        if lock is None or not lock.locked():
            self.fences.pop(game_id, None)
        else:  # a write in flight keeps its token (the store takes it unless someone claimed)
            self._spawn(self._settle(game_id, lock), f"settle-{game_id}")
        self._orphans.add(game_id)  # until someone holds it (the upkeep tries again)
        self._spawn(self._take_over(game_id, self.node), f"reclaim-{game_id}")

    async def _settle(self, game_id: str, lock: RoomLock) -> None:
        """The write in flight when the game's lease was lost has ended: its token and the
        room's lock go, unless the game is held here again meanwhile."""
        async with lock:
            pass
        if game_id not in self.held:
            self.fences.pop(game_id, None)
            if game_id not in self.rooms.held:
                self.rooms.drop(game_id)

    def reclaim(self) -> None:
        """Claim again the games lost here while Redis was away."""
        for game_id in list(self._orphans):
            self._spawn(self._take_over(game_id, self.node), f"reclaim-{game_id}")

    async def _take_over(self, game_id: str, node: str) -> None:
        """Claim a game ``node`` held (an unfinished one); forget it from ``node``'s set once
        someone else than ``node`` holds it or it needs no owner."""
        if game_id in self._taking or self.handing_over:
            return
        self._taking.add(game_id)
        try:
            holder = await self.holder(game_id)
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

    # -- liveness: heartbeat, leases, sweeping ------------------------------------------------

    async def beat(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self._beat_key, b"1", px=max(1, round(self.ttl * 1000)))
            pipe.sadd(self._nodes_key, self.node)
            await pipe.execute()

    async def renew(self) -> None:
        leases = list(self.held.values())
        renewed = await self.leases.renew_all(leases)
        for old, new in zip(leases, renewed, strict=True):
            if self.held.get(old.game_id) is not old:
                continue  # released or replaced meanwhile
            if new is not None:
                self.held[old.game_id] = new
            else:
                self.lose(old.game_id)

    def expire(self) -> None:
        """Redis cannot be reached: drop every game whose lease has run out."""
        now = asyncio.get_running_loop().time()
        for game_id, lease in list(self.held.items()):
            if not lease.valid(now):
                self.lose(game_id)

    async def live_nodes(self) -> set[str]:
        """The nodes in the cluster's set whose heartbeat is there (this one always)."""
        nodes = [_text(n) for n in await self.redis.smembers(self._nodes_key)]
        beats = await self.redis.mget([f"{self.prefix}node:{n}" for n in nodes]) if nodes \
            else []
        alive = {node for node, beat in zip(nodes, beats, strict=True) if beat is not None}
        alive.add(self.node)
        self._known = set(nodes)
        self.alive = alive
        return alive

    async def sweep(self) -> None:
        """Claim this node's share of the games of nodes whose heartbeat has stopped."""
        alive = await self.live_nodes()
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

    async def after_leaving(self, leaving: Leaving) -> None:
        """Another node has left (SIGTERM): claim this node's share of its games now."""
        self._forget_node(leaving.node)
        alive = await self.live_nodes()
        alive.discard(leaving.node)
        for game_id in leaving.games:
            if rendezvous(game_id, alive) == self.node:
                self._spawn(self._take_over(game_id, leaving.node), f"takeover-{game_id}")

    def _forget_node(self, node: str) -> None:
        for game_id, owner in list(self.owners.items()):
            if owner == node:
                del self.owners[game_id]
        rooms, now = self.rooms, self.rooms.now()  # its connections leave their games
        for game_id, peer in rooms.openers.on_node(node):
            rooms.leave(peer, game_id, now)

    async def hand_over(self) -> None:
        """SIGTERM: finish the changes in flight, release every lease and tell the other
        nodes, which claim the games at once."""
        self.handing_over = True
        games = list(self.held)
        for game_id in games:
            lock = self.rooms.locks.get(game_id)
            if lock is None:
                self.rooms.drop(game_id)
                continue
            async with lock:  # a change in flight finishes (persisted and published) first
                self.rooms.drop(game_id)
        await self.rooms.publisher.flush()
        leases = [self.held.pop(game_id) for game_id in games]
        try:
            await asyncio.gather(*(self.leases.release(lease) for lease in leases))
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.delete(self._owned_key(self.node), self._beat_key)
                pipe.srem(self._nodes_key, self.node)
                await pipe.execute()
            await self.bus.publish(CLUSTER_TOPIC, encode_message(Leaving(self.node, games)))
        except (RedisError, OSError, BusError) as exc:
            log.warning("could not hand the games over (%s): they are taken over in %.1f s",
                        exc, self.ttl)
        log.info("node %s handed %d games over", self.node, len(games))

    # -- what the node tells -----------------------------------------------------------------

    async def games_of(self, name: str) -> list[str]:
        """``name``'s unfinished games: those held here, then the cluster's record of them."""
        games = self.rooms.games_of(name)
        try:
            playing = await self.redis.smembers(self.playing_key(name))
        except (RedisError, OSError):
            return games
        return games + sorted(g for g in map(_text, playing) if g not in games)


def _players(room: GameRoom) -> list[str]:
    return [seat.player for seat in room.seats if seat.player != COMPUTER]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
