"""Cluster mode's lobby: one lobby for every node, run by one node at a time.

The lobby is one more owned thing, the way lila keeps one lobby actor: the node holding the
lease ``lobby`` (``server.cluster.lease``, with a fencing token as for games) runs today's ``Lobby``
(seeks, pools with their rating windows, private codes, challenges, the live list, who is
online) in a ``Holding``. Every node, the holder too, talks to it over the bus:

- ``lobby:requests`` (nodes -> holder): ``Ask``, a session's lobby request (its node, its id
  there, its player and rating, the client's frame), and ``Report``, what a node has to say:
  the players connected to it and the games it owns that the lobby lists (changes as they
  happen, everything every ``REPORT_EVERY`` seconds and whenever the holder changes). One
  topic, so a node's report and its session's request reach the holder in the order sent.
- ``lobby`` (holder -> nodes): ``Answer`` (a request's replies, for one session; the answer to
  ``lobby_sub`` carries the snapshot and makes the session a subscriber *there*, so it gets
  exactly the deltas published after its snapshot), ``Tell`` (to every connection of one
  player: a challenge), ``Delta`` (to every subscriber), ``Holder`` (a new holder: report
  everything) and ``Vacant`` (the holder stopped: take the lease now).

The holder processes everything in one queue, so per-player limits (one seek or pool place,
three games against the computer, three challenges) hold across nodes. A pairing's game is
started by the holder, which owns it; ``Started`` (``server.cluster.forwarding``) opens it for the
players' sessions on their nodes. After each change, and before a pairing's game starts,
the holder writes the lobby's state (seeks, pools, private codes, challenges) to the Redis
hash ``lobby:state``, fenced by its token (a Lua compare: an older holder's write is refused
and it steps down). The next holder restores it; presence and listings come back with the
nodes' reports. A request whose answer has not come after ``2 x ttl`` (the holder died, or
the lobby changed hands) gets the error ``unavailable`` (with ``retry_in``), "the lobby did not
answer; try again".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import msgspec
from redis.exceptions import RedisError

from server.cluster.lease import Lease, LeaseError
from server.cluster.topology import Cluster
from server.errors import BusError, ServerError
from server.game.challenges import Challenges
from server.game.matchmaking import Matchmaker
from server.game.records import GameStatus
from server.game.room import GameRoom
from server.node.bus import Subscription, drain
from server.node.delivery import Delivery
from server.node.lobby import Lobby
from server.node.rooms import Rooms
from server.node.routing import Unavailable
from server.node.session import Session
from server.protocol import (
    AcceptSeek,
    Ack,
    CancelQuick,
    CancelSeek,
    Challenge,
    ChallengeAccept,
    ChallengeCancel,
    ChallengeDecline,
    ClientMessage,
    GameSummary,
    LobbySub,
    LobbyUnsub,
    PlayAI,
    PrivateCreate,
    PrivateJoin,
    Quick,
    Seek,
    ServerMessage,
    decode_client_message,
    encode,
    error_message,
)
from server.protocol import Lobby as LobbySnapshot
from server.tasks import stop_tasks, wait_event

log = logging.getLogger(__name__)

LOBBY_LEASE = "lobby"
REQUESTS_TOPIC = "lobby:requests"
LOBBY_TOPIC = "lobby"
PRESENCE_EVERY = 0.25  # seconds between looks at who connected or left here
REPORT_EVERY = 2.0  # seconds between full reports (they also mend anything the bus lost)
SETTLE = 1.0  # seconds a new holder waits for the reports before resending the lobby

# -- messages -------------------------------------------------------------------------------


class LobbyEnvelope(msgspec.Struct, tag_field="k", array_like=True):
    """A message on the lobby's topics."""


class Ask(LobbyEnvelope, tag="a"):
    """A session's lobby request, for the holder."""

    node: str
    session: int
    seq: int  # the asking node's count, to match the answer
    name: str
    rating: float
    frame: bytes


class Report(LobbyEnvelope, tag="p"):
    """What a node tells the holder: players connected there (with their ratings) and
    gone, the games it owns that the lobby lists and those it no longer lists; ``full``:
    this is everything (anything else reported from the node before is gone)."""

    node: str
    players: list[tuple[str, float]]
    left: list[str]
    games: list[bytes]  # GameSummary as JSON
    hidden: list[str]
    full: bool = False


class Answer(LobbyEnvelope, tag="A"):
    """The holder's replies to one request, for its session."""

    node: str
    session: int
    seq: int
    frames: list[bytes]
    subscribe: bool = False
    started: bool = False  # a game-starting request of a session on another node succeeded


class Tell(LobbyEnvelope, tag="T"):
    """A message for every connection of one player."""

    name: str
    frame: bytes


class Delta(LobbyEnvelope, tag="D"):
    """A message for every lobby subscriber (a ``lobby_delta``, or a fresh ``lobby``)."""

    frame: bytes


class Holder(LobbyEnvelope, tag="H"):
    """``node`` holds the lobby now: every node reports everything to it."""

    node: str


class Vacant(LobbyEnvelope, tag="V"):
    """The holder stopped and released the lease: take it now."""

    node: str


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Ask | Report | Answer | Tell | Delta | Holder | Vacant).decode
_summary_decoder = msgspec.json.Decoder(GameSummary)

STARTING = (AcceptSeek, PrivateJoin, PlayAI, ChallengeAccept)
"""The requests whose reply is the new game's ``game`` message."""

REQUESTS: dict[type, str] = {
    LobbySub: "subscribe", Seek: "seek", CancelSeek: "cancel_seek",
    AcceptSeek: "accept_seek", Quick: "quick", CancelQuick: "cancel_quick",
    PrivateCreate: "private_create", PrivateJoin: "private_join", PlayAI: "play_ai",
    Challenge: "challenge", ChallengeAccept: "challenge_accept",
    ChallengeDecline: "challenge_decline", ChallengeCancel: "challenge_cancel",
}

STATE_WRITE = """
local held = redis.call('HGET', KEYS[1], 'token')
if held and tonumber(held) > tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'state', ARGV[2])
return 1
"""
"""KEYS: the state hash. ARGV: the holder's token, the state. 0: a newer holder wrote."""


class _Rating(msgspec.Struct):
    rating: float


class RemoteCaller:
    """A session on another node as the holder's ``Lobby`` sees it: its replies are kept
    for the ``Answer``."""

    def __init__(self, name: str, rating: float) -> None:
        self.name: str | None = name
        self.player: _Rating | None = _Rating(rating)
        self.frames: list[bytes] = []

    def send(self, message: ServerMessage) -> None:
        self.frames.append(encode(message))


class ClusterPresence:
    """Who is online on every node, as the nodes report it to the holder."""

    def __init__(self, publish: Any) -> None:
        self.players: dict[str, dict[str, float]] = {}  # name -> node -> rating
        self.nodes: defaultdict[str, set[str]] = defaultdict(set)  # node -> names
        self._publish = publish

    @property
    def online(self) -> int:
        return len(self.players)

    def names(self) -> Iterable[str]:
        return self.players

    def rating(self, name: str) -> float | None:
        for rating in self.players.get(name, {}).values():
            return rating
        return None

    def is_online(self, name: str) -> bool:
        return name in self.players

    def tell(self, name: str, frame: bytes) -> None:
        self._publish(Tell(name, frame))

    def here(self, node: str, name: str, rating: float) -> None:
        self.players.setdefault(name, {})[node] = rating
        self.nodes[node].add(name)

    def left(self, node: str, name: str) -> bool:
        """``name`` has no connection on ``node`` any more; whether they are gone."""
        self.nodes[node].discard(name)
        on = self.players.get(name)
        if on is None:
            return False
        on.pop(node, None)
        if on:
            return False
        del self.players[name]
        return True

    def only(self, node: str, names: set[str]) -> list[str]:
        """``node`` has exactly ``names``: the players now gone everywhere."""
        return [n for n in list(self.nodes.get(node, ())) if n not in names and self.left(node, n)]


class SharedLobby(Lobby):
    """Today's lobby on the holder: presence from every node, and the computer games a
    player has going counted from the cluster's record of unfinished games."""

    def __init__(self, rooms: Rooms, delivery: Delivery, cluster: Cluster,
                 presence: ClusterPresence, matchmaker: Matchmaker,
                 challenges: Challenges) -> None:
        super().__init__(rooms, delivery, presence, matchmaker, challenges)
        self.cluster = cluster

    async def computer_games(self, name: str) -> int:
        playing = await self.cluster.redis.smembers(self.cluster.ownership.playing_key(name))
        going = 0
        for game_id in playing:
            game_id = game_id.decode() if isinstance(game_id, bytes) else game_id
            record = await self.rooms.store.get_game(game_id)
            if (record is not None and record.status is GameStatus.ACTIVE
                    and (record.x.is_computer or record.o.is_computer)):
                going += 1
        return going


class Holding:
    """This node holds the lobby: the lease, the ``SharedLobby`` and its one queue."""

    def __init__(self, node: ClusterLobby, lease: Lease, state: dict[str, Any] | None) -> None:
        self.node = node
        self.lease = lease
        loop = asyncio.get_running_loop()
        self.offset = time.time() - loop.time()  # wall clock minus loop clock, fixed
        matchmaker, challenges = Matchmaker(), Challenges()
        if state is not None:
            matchmaker.load(state["matchmaker"], -self.offset)
            challenges.load(state["challenges"])
        self.presence = ClusterPresence(node.publish)
        self.lobby = SharedLobby(node.rooms, node.delivery, node.cluster, self.presence,
                                 matchmaker, challenges)
        self.lobby.fan_out = lambda frame: node.publish(Delta(frame))
        self.lobby.checkpoint = self.persist
        self.games: dict[str, str] = {}  # listed game -> the node that reported it
        self.queue: asyncio.Queue[LobbyEnvelope | float] = asyncio.Queue()
        self.written = b"" if state is None else self._state()
        self.since = loop.time()
        self.settled = False
        self.worker = loop.create_task(self._work(), name="lobby-holder")

    async def stop(self, persist: bool) -> None:
        await stop_tasks([self.worker])
        if persist:
            with contextlib.suppress(ServerError, RedisError, OSError):
                await self.persist()

    def _state(self) -> bytes:
        lobby = self.lobby
        return _encode({"matchmaker": lobby.matchmaker.dump(-self.offset),
                        "challenges": lobby.challenges.dump()})

    async def persist(self) -> None:
        """Write the lobby's state if it changed; a newer holder's state stops this one."""
        state = self._state()
        if state == self.written:
            return
        written = await self.node.write_state(self.lease.token, state)
        if not written:
            self.node.step_down("a newer holder wrote the lobby's state")
            raise Unavailable("the lobby is changing hands; try again", self.node.ttl)
        self.written = state

    async def _work(self) -> None:
        while True:
            item = await self.queue.get()
            try:
                if isinstance(item, Ask):
                    await self._ask(item)
                elif isinstance(item, Report):
                    self._report(item)
                    await self.persist()
                elif isinstance(item, float):
                    await self._tick(item)
            except (ServerError, RedisError, OSError) as exc:
                log.warning("the lobby could not finish %s: %s", type(item).__name__, exc)
            except Exception:
                log.exception("the lobby failed on %s", type(item).__name__)

    async def _ask(self, ask: Ask) -> None:
        lobby, node = self.lobby, self.node
        if ask.name:
            self.presence.here(ask.node, ask.name, ask.rating)
        try:
            message: ClientMessage | None = decode_client_message(ask.frame)
        except ServerError:
            message = None
        local = node.delivery.session(ask.session) if ask.node == node.node else None
        caller: Session | RemoteCaller = local or RemoteCaller(ask.name, ask.rating)
        subscribe = isinstance(message, LobbySub)
        frames: list[bytes] = []
        if message is None:
            pass
        elif subscribe:
            frames.append(encode(lobby.snapshot(message.id)))
        else:
            try:
                await getattr(lobby, REQUESTS[type(message)])(caller, message)
                await self.persist()
            except ServerError as error:
                node.cluster.metrics.error(error.code)
                caller.send(error_message(error, message.id))  # type: ignore[arg-type]
        started = False
        if isinstance(caller, RemoteCaller):
            frames.extend(caller.frames)
            started = isinstance(message, STARTING) and not frames
        node.publish(Answer(ask.node, ask.session, ask.seq, frames, subscribe, started))

    def _report(self, report: Report) -> None:
        presence, lobby = self.presence, self.lobby
        for name, rating in report.players:
            presence.here(report.node, name, rating)
        gone = [name for name in report.left if presence.left(report.node, name)]
        if report.full:
            gone += presence.only(report.node, {name for name, _ in report.players})
        for name in gone:
            lobby.gone(name)
        shown = set()
        for frame in report.games:
            summary = _summary_decoder.decode(frame)
            self.games[summary.id] = report.node
            lobby.show(summary)
            shown.add(summary.id)
        hidden = list(report.hidden)
        if report.full:
            hidden += [g for g, n in self.games.items() if n == report.node and g not in shown]
        for game_id in hidden:
            if self.games.get(game_id) == report.node:
                del self.games[game_id]
                lobby.hide(game_id)

    def drop_node(self, node: str) -> None:
        """``node`` is gone: its players left, its games are off the list until their new
        owner lists them."""
        for name in self.presence.only(node, set()):
            self.lobby.gone(name)
        self.presence.nodes.pop(node, None)
        for game_id in [g for g, n in self.games.items() if n == node]:
            del self.games[game_id]
            self.lobby.hide(game_id)

    async def _tick(self, now: float) -> None:
        await self.lobby.tick(now)
        await self.persist()
        if not self.settled and now - self.since >= SETTLE:
            self.settled = True  # the reports are in: every subscriber gets the lobby afresh
            self.node.publish(Delta(encode(self.lobby.snapshot())))
        alive = await self.node.alive(set(self.presence.nodes) | set(self.games.values()))
        for node in set(self.presence.nodes) | set(self.games.values()):
            if node not in alive:
                log.warning("lobby: node %s is gone, its players with it", node)
                self.drop_node(node)


class ClusterLobby(Lobby):
    """A node's side of the one lobby (see the module docstring): its lobby subscribers,
    its requests sent to the holder and their answers, its reports, the lease, and the
    ``Holding`` while it holds the lobby. It is also the rooms' ``Listing`` here."""

    def __init__(self, rooms: Rooms, delivery: Delivery, cluster: Cluster) -> None:
        super().__init__(rooms, delivery)
        self.cluster = cluster
        self.node = cluster.node
        self.bus = cluster.bus
        self.ttl = cluster.ttl
        self.holding: Holding | None = None
        self._state_key = f"{cluster.links.prefix}lobby:state"
        self._write = cluster.redis.register_script(STATE_WRITE)
        self._seq = 0
        # requests sent to the holder: seq -> session id, request, when
        self._pending: dict[int, tuple[int, ClientMessage, float]] = {}
        # sessions whose game-starting request succeeded, until their game's join: its id
        self._starting: dict[int, tuple[str | int, float]] = {}
        self._reported: dict[str, float] = {}  # the players here as last reported
        self._api: dict[int, asyncio.Future[list[bytes]]] = {}  # view's asks
        self._shown: dict[str, GameRoom] = {}  # the games here the lobby lists
        self._unlisted: set[str] = set()
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._subscriptions: list[Subscription] = []
        self._loops: list[asyncio.Task[Any]] = []
        self._wake = asyncio.Event()
        self._report_all = True
        self._closing = False
        cluster.router.started_ref = self.started_ref

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._subscriptions = [
            await self.bus.subscribe(LOBBY_TOPIC, self._on_lobby),
            await self.bus.subscribe(REQUESTS_TOPIC, self._on_request),
        ]
        self.bus.on_resume(self._resumed)
        gauges = self.cluster.metrics.gauges
        gauges["lobby_holder"] = lambda: int(self.holding is not None)
        gauges["lobby_requests_waiting"] = lambda: len(self._pending)
        loop = asyncio.get_running_loop()
        self._loops = [loop.create_task(self._upkeep(), name="lobby-upkeep"),
                       loop.create_task(self._send(), name="lobby-publisher")]

    async def close(self) -> None:
        """SIGTERM or the end: keep the lobby's state, give the lease up and say so, so
        another node takes the lobby at once."""
        self._closing = True
        holding, self.holding = self.holding, None
        if holding is not None:
            await holding.stop(persist=True)
            with contextlib.suppress(LeaseError, RedisError, OSError, BusError):
                await self.cluster.leases.release(holding.lease)
                await self.bus.publish(LOBBY_TOPIC, _encode(Vacant(self.node)))
        await stop_tasks(self._loops)  # a cancel can be lost in the bus's publish
        for subscription in self._subscriptions:
            with contextlib.suppress(BusError, RedisError, OSError):
                await subscription.cancel()

    def _resumed(self) -> None:
        self._report_all = True  # the bus was cut off: whatever was said may be lost

    def publish(self, envelope: LobbyEnvelope) -> None:
        """Publish on the lobby's topics, in order (one task)."""
        topic = REQUESTS_TOPIC if isinstance(envelope, Ask | Report) else LOBBY_TOPIC
        self._outbox.put_nowait((topic, _encode(envelope)))

    async def _send(self) -> None:
        while True:
            queued = await drain(self._outbox)  # what queued meanwhile: one round trip
            try:
                await self.bus.publish_many(queued)
            except BusError as exc:
                log.warning("%d lobby messages were lost: %s", len(queued), exc)

    # -- the lease -------------------------------------------------------------------------

    async def _upkeep(self) -> None:
        loop = asyncio.get_running_loop()
        last_lease = last_full = -1e9
        while True:
            now = loop.time()
            try:
                if now - last_lease >= self.ttl / 3:
                    last_lease = now
                    await self._hold()
                if now - last_full >= REPORT_EVERY:
                    last_full, self._report_all = now, True
                self._report()
            except (RedisError, OSError, BusError, LeaseError) as exc:
                log.warning("lobby upkeep failed: %s", exc)
                holding = self.holding
                if holding is not None and not holding.lease.valid():
                    self.step_down("its lease ran out")
            except Exception:
                log.exception("lobby upkeep failed")
            await wait_event(self._wake, PRESENCE_EVERY)
            self._wake.clear()

    async def _hold(self) -> None:
        """Renew the lobby's lease, or take it if nobody holds it."""
        leases = self.cluster.leases
        holding = self.holding
        if holding is not None:
            renewed = await leases.renew(holding.lease)
            if renewed is None:
                self.step_down("it lost the lease")
            else:
                holding.lease = renewed
            return
        if self._closing or self.cluster.ownership.handing_over:
            return
        token = await self.cluster.redis.hget(self._state_key, "token")
        lease = await leases.acquire(LOBBY_LEASE, floor=int(token or 0))
        if lease is None:
            return
        raw = await self.cluster.redis.hget(self._state_key, "state")
        if self.holding is not None or self._closing:
            return
        try:
            state = None if raw is None else msgspec.msgpack.decode(
                raw if isinstance(raw, bytes) else raw.encode())
            self.holding = Holding(self, lease, state)
        except (msgspec.DecodeError, KeyError, TypeError, ValueError):
            log.exception("the lobby's state in Redis cannot be read: starting it empty")
            self.holding = Holding(self, lease, None)
        self.matchmaker = self.holding.lobby.matchmaker
        log.info("node %s holds the lobby (token %d)", self.node, lease.token)
        self.publish(Holder(self.node))

    def step_down(self, why: str) -> None:
        holding, self.holding = self.holding, None
        if holding is None:
            return
        log.warning("node %s no longer holds the lobby: %s", self.node, why)
        self.matchmaker = Matchmaker()
        holding.worker.cancel()

    async def write_state(self, token: int, state: bytes) -> bool:
        return bool(await self._write(keys=[self._state_key], args=[token, state]))

    async def alive(self, nodes: set[str]) -> set[str]:
        """The nodes among ``nodes`` whose heartbeat is there."""
        nodes.discard(self.node)
        names = sorted(nodes)
        prefix = self.cluster.links.prefix
        beats = await self.cluster.redis.mget([f"{prefix}node:{n}" for n in names]) \
            if names else []
        return {self.node} | {n for n, beat in zip(names, beats, strict=True) if beat}

    # -- the bus ---------------------------------------------------------------------------

    def _on_request(self, topic: str, data: bytes) -> None:
        holding = self.holding
        if holding is None:
            return
        envelope = _decode(data)
        if isinstance(envelope, Ask | Report):
            holding.queue.put_nowait(envelope)

    def _on_lobby(self, topic: str, data: bytes) -> None:
        envelope = _decode(data)
        if isinstance(envelope, Answer):
            if envelope.node == self.node:
                self._answered(envelope)
        elif isinstance(envelope, Delta):
            for session in list(self.subscribers):
                session.send_raw(envelope.frame)
        elif isinstance(envelope, Tell):
            for session in self.delivery.of_player(envelope.name):
                session.send_raw(envelope.frame)
        elif isinstance(envelope, Holder):
            self._report_all = True
            self._wake.set()
        elif isinstance(envelope, Vacant) and envelope.node != self.node:
            self._wake.set()  # try the lease now

    def _answered(self, answer: Answer) -> None:
        waiting = self._api.pop(answer.seq, None)
        if waiting is not None and not waiting.done():
            waiting.set_result(answer.frames)
        asked = self._pending.pop(answer.seq, None)
        if asked is not None and answer.started and asked[1].id is not None:
            self._starting[asked[0]] = (asked[1].id, asked[2])  # its Started may be on its way
        session = self.delivery.session(answer.session)
        if session is None:
            return
        for frame in answer.frames:
            session.send_raw(frame)
        if answer.subscribe:
            self.subscribers.add(session)
            session.lobby = True

    # -- requests --------------------------------------------------------------------------

    def started_ref(self, session: Session) -> str | int | None:
        """The id of ``session``'s request that starts a game (accept, join, play the
        computer), if one is waiting for the holder: its ``game`` will carry it."""
        for seq, (session_id, message, _sent) in self._pending.items():
            if session_id == session.id and isinstance(message, STARTING) and message.id:
                del self._pending[seq]
                return message.id
        started = self._starting.pop(session.id, None)
        return None if started is None else started[0]

    async def _ask(self, session: Session, message: ClientMessage) -> None:
        self._seq += 1
        self._pending[self._seq] = (session.id, message, self.rooms.now())
        rating = 0.0 if session.player is None else session.player.rating
        self.publish(Ask(self.node, session.id, self._seq, session.name or "", rating,
                         encode(message)))

    async def view(self) -> LobbySnapshot:
        """The lobby as its holder shows it (for the HTTP API on any node): asked as a
        ``lobby_sub`` of no session; ``Unavailable`` if the holder does not answer in 2 x ttl."""
        if self.holding is not None:
            return self.holding.lobby.snapshot()
        self._seq += 1
        seq, answer = self._seq, asyncio.get_running_loop().create_future()
        self._api[seq] = answer
        self.publish(Ask(self.node, 0, seq, "", 0.0, encode(LobbySub())))  # no session is 0
        try:
            frames = await asyncio.wait_for(answer, 2 * self.ttl)
        except TimeoutError:
            raise Unavailable("the lobby did not answer; try again", self.ttl) from None
        finally:
            self._api.pop(seq, None)
        return msgspec.json.decode(frames[0], type=LobbySnapshot)

    async def subscribe(self, session: Session, message: LobbySub) -> None:
        await self._ask(session, message)

    async def unsubscribe(self, session: Session, message: LobbyUnsub) -> None:
        self.unsubscribed(session)
        session.send(Ack(ref=message.id))

    async def tick(self, now: float) -> None:
        """Say so to requests the holder has not answered in time; the holder's round."""
        timeout = 2 * self.ttl
        for session_id, (_ref, sent) in list(self._starting.items()):
            if now - sent >= timeout:
                del self._starting[session_id]
        for seq, (session_id, message, sent) in list(self._pending.items()):
            if now - sent < timeout:
                continue
            del self._pending[seq]
            session = self.delivery.session(session_id)
            if session is not None:
                error = Unavailable("the lobby did not answer (it may be changing hands); "
                                    "try again", self.ttl)
                self.cluster.metrics.error(error.code)
                session.send(error_message(error, message.id))  # type: ignore[arg-type]
        if self.holding is not None:
            self.holding.queue.put_nowait(now)

    def identified(self, session: Session) -> None:
        """A player said hello here: the holder hears of it now (challenges by name)."""
        name, player = session.name, session.player
        if name is None or player is None or self._reported.get(name) == player.rating:
            return
        self._reported[name] = player.rating
        self.publish(Report(self.node, [(name, player.rating)], [], [], []))

    def gone(self, name: str) -> None:
        """``name``'s last connection here closed: tell the holder now."""
        if self._reported.pop(name, None) is not None:
            self.publish(Report(self.node, [], [name], [], []))

    # -- reports ---------------------------------------------------------------------------

    def _report(self) -> None:
        """Tell the holder who connected or left here (everything, when due)."""
        here = {name: self.delivery.rating(name) or 0.0 for name in self.delivery.by_player}
        if self._report_all:
            self._report_all = False
            self._reported = here
            self._forget_moved()
            games = [encode(self.summary(room)) for room in self._shown.values()]
            self.publish(Report(self.node, list(here.items()), [], games, [], full=True))
            return
        joined = [(n, r) for n, r in here.items() if self._reported.get(n) != r]
        left = [n for n in self._reported if n not in here]
        if joined or left:
            self._reported = here
            self.publish(Report(self.node, joined, left, [], []))

    def _forget_moved(self) -> None:
        """Games whose room is no longer here (handed off, lost) are no longer this node's to
        list: their new owner lists them, and the holder takes off what this full report
        leaves out. A game taken back here since is listed by its room now."""
        rooms = self.rooms.rooms
        for game_id, room in list(self._shown.items()):
            here = rooms.get(game_id)
            if here is None or not self._listed_here(here):
                del self._shown[game_id]
            elif here is not room:
                self._shown[game_id] = here
        self._unlisted &= rooms.keys()

    # -- the rooms' Listing here -----------------------------------------------------------

    def _listed_here(self, room: GameRoom) -> bool:
        return room.id not in self._unlisted and not room.over and room.anyone_in

    def relist(self, room: GameRoom) -> None:
        show = self._listed_here(room)
        if show == (room.id in self._shown):
            return
        if show:
            self._shown[room.id] = room
            self.publish(Report(self.node, [], [], [encode(self.summary(room))], []))
        else:
            del self._shown[room.id]
            self.publish(Report(self.node, [], [], [], [room.id]))

    def unlist(self, game_id: str) -> None:
        self._unlisted.add(game_id)

    def forget(self, game_id: str) -> None:
        self._unlisted.discard(game_id)
        if self._shown.pop(game_id, None) is not None:
            self.publish(Report(self.node, [], [], [], [game_id]))

    def live_games(self) -> list[GameSummary]:
        holding = self.holding
        return [] if holding is None else holding.lobby.live_games()


def _forwarded(method: str) -> Any:
    async def forward(self: ClusterLobby, session: Session, message: ClientMessage) -> None:
        await self._ask(session, message)

    forward.__name__ = method
    forward.__doc__ = f"Send ``{method}`` to the lobby's holder (its answer comes back)."
    return forward


for _method in REQUESTS.values():  # every lobby request but lobby_unsub goes to the holder
    setattr(ClusterLobby, _method, _forwarded(_method))
