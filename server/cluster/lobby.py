"""Cluster mode's lobby: one lobby for every node, run by one node at a time.

The lobby is one more owned thing, the way lila keeps one lobby actor: the node holding the
lease ``lobby`` (``server.cluster.lease``, with a fencing token as for games) runs the
embedded server's ``Lobby`` (seeks, pools with their rating windows, private codes,
challenges, the live list, who is online) in a ``Holding`` (``server.cluster.lobby_holder``).
On every node, the holder too, ``ClusterLobby`` is the hub's ``LobbyService``: a proxy that
talks to the holder over the bus (the messages are in ``server.cluster.messages``):

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
from collections.abc import Callable
from typing import Any

import msgspec
from redis.exceptions import RedisError

from server.cluster.lease import LeaseError
from server.cluster.links import ClusterLinks
from server.cluster.lobby_holder import STARTING, Holding, LobbyState
from server.cluster.messages import (
    LOBBY_TOPIC,
    REQUESTS_TOPIC,
    Answer,
    Ask,
    Delta,
    Holder,
    LobbyEnvelope,
    Report,
    Tell,
    Vacant,
    Waiting,
    decode_lobby,
    encode_message,
)
from server.cluster.ownership import ClusterOwnership
from server.errors import BusError
from server.game.lobby import game_summary
from server.game.room import GameRoom
from server.metrics import Metrics
from server.node.bus import Subscription, next_batch
from server.node.delivery import Delivery
from server.node.rooms import Rooms
from server.node.routing import Unavailable
from server.node.session import Session
from server.protocol import (
    Ack,
    ChallengeInfo,
    ChallengeReceived,
    LobbyRequest,
    LobbySnapshot,
    LobbySub,
    LobbyUnsub,
    MatchmakingRequest,
    encode,
    error_message,
)
from server.tasks import stop_tasks, wait_event

log = logging.getLogger(__name__)

LOBBY_LEASE = "lobby"
PRESENCE_EVERY = 0.25  # seconds between looks at who connected or left here
REPORT_EVERY = 2.0  # seconds between full reports (they also mend anything the bus lost)


class ClusterLobby:
    """A node's side of the one lobby (see the module docstring): its lobby subscribers,
    its requests sent to the holder and their answers, its reports, the lease, and the
    ``Holding`` while it holds the lobby. It is also the rooms' ``Listing`` here."""

    def __init__(self, rooms: Rooms, delivery: Delivery, links: ClusterLinks,
                 ownership: ClusterOwnership, metrics: Metrics) -> None:
        self.rooms = rooms
        self.delivery = delivery
        self.links = links
        self.ownership = ownership
        self.metrics = metrics
        self.node = links.node
        self.bus = links.bus
        self.ttl = links.leases.ttl
        self.state = LobbyState(links)
        self.holding: Holding | None = None
        self.subscribers: set[Session] = set()  # the sessions here that get the deltas
        self._seq = 0
        # requests sent to the holder: seq -> session id, request, when
        self._pending: dict[int, tuple[int, LobbySub | MatchmakingRequest, float]] = {}
        # sessions whose game-starting request succeeded, until their game's join: its id
        self._starting: dict[int, tuple[str | int, float]] = {}
        self._reported: dict[str, tuple[float, bool]] = {}  # here, as last reported: rating, bot
        self._api: dict[int, asyncio.Future[list[bytes]]] = {}  # _ask_holder's questions
        self._shown: dict[str, GameRoom] = {}  # the games here the lobby lists
        self._unlisted: set[str] = set()
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._subscriptions: list[Subscription] = []
        self._loops: list[asyncio.Task[Any]] = []
        self._wake = asyncio.Event()
        self._report_all = True
        self._closing = False

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._subscriptions = [
            await self.bus.subscribe(LOBBY_TOPIC, self._on_lobby),
            await self.bus.subscribe(REQUESTS_TOPIC, self._on_request),
        ]
        self.bus.on_resume(self._resumed)
        gauges = self.metrics.gauges
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
                await self.links.leases.release(holding.lease)
                await self.bus.publish(LOBBY_TOPIC, encode_message(Vacant(self.node)))
        await stop_tasks(self._loops)  # a cancel can be lost in the bus's publish
        for subscription in self._subscriptions:
            with contextlib.suppress(BusError, RedisError, OSError):
                await subscription.cancel()

    def _resumed(self) -> None:
        self._report_all = True  # the bus was cut off: whatever was said may be lost

    def publish(self, envelope: LobbyEnvelope) -> None:
        """Publish on the lobby's topics, in order (one task)."""
        topic = REQUESTS_TOPIC if isinstance(envelope, Ask | Report | Waiting) else LOBBY_TOPIC
        self._outbox.put_nowait((topic, encode_message(envelope)))

    async def _send(self) -> None:
        while True:
            queued = await next_batch(self._outbox)  # what queued meanwhile: one round trip
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
        leases = self.links.leases
        holding = self.holding
        if holding is not None:
            renewed = await leases.renew(holding.lease)
            if renewed is None:
                self.step_down("it lost the lease")
            else:
                holding.lease = renewed
            return
        if self._closing or self.ownership.handing_over:
            return
        lease = await leases.acquire(LOBBY_LEASE, floor=await self.state.token())
        if lease is None:
            return
        raw = await self.state.read()
        if self.holding is not None or self._closing:
            return
        try:
            self.holding = Holding(self, lease, None if raw is None else LobbyState.decode(raw))
        except (msgspec.DecodeError, KeyError, TypeError, ValueError):
            log.exception("the lobby's state in Redis cannot be read: starting it empty")
            self.holding = Holding(self, lease, None)
        log.info("node %s holds the lobby (token %d)", self.node, lease.token)
        self.publish(Holder(self.node))

    def step_down(self, why: str) -> None:
        holding, self.holding = self.holding, None
        if holding is None:
            return
        log.warning("node %s no longer holds the lobby: %s", self.node, why)
        holding.worker.cancel()

    # -- the bus ---------------------------------------------------------------------------

    def _on_request(self, topic: str, data: bytes) -> None:
        holding = self.holding
        if holding is None:
            return
        envelope = decode_lobby(data)
        if isinstance(envelope, Ask | Report | Waiting):
            holding.queue.put_nowait(envelope)

    def _on_lobby(self, topic: str, data: bytes) -> None:
        envelope = decode_lobby(data)
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

    async def handle(self, session: Session, message: LobbyRequest) -> None:
        """Every lobby request but ``lobby_unsub`` goes to the holder; its answer comes
        back on the bus (``_answered``)."""
        if isinstance(message, LobbyUnsub):
            self.unsubscribed(session)
            session.send(Ack(ref=message.id))
        else:
            await self._ask(session, message)

    def unsubscribed(self, session: Session) -> None:
        self.subscribers.discard(session)
        session.lobby = False

    async def _ask(self, session: Session, message: LobbySub | MatchmakingRequest) -> None:
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
        frames = await self._ask_holder(  # no session is 0
            lambda seq: Ask(self.node, 0, seq, "", 0.0, encode(LobbySub())))
        return msgspec.json.decode(frames[0], type=LobbySnapshot)

    async def challenges_to(self, name: str) -> list[ChallengeInfo]:
        """The challenges to ``name`` waiting for an answer, as the holder keeps them
        (``Waiting``); ``Unavailable`` if it does not answer in 2 x ttl."""
        if self.holding is not None:
            return await self.holding.lobby.challenges_to(name)
        frames = await self._ask_holder(lambda seq: Waiting(self.node, seq, name))
        return [msgspec.json.decode(frame, type=ChallengeReceived).challenge
                for frame in frames]

    async def _ask_holder(self, envelope: Callable[[int], Ask | Waiting]) -> list[bytes]:
        """Publish the question ``envelope`` makes of its ``seq`` and wait for its answer's
        frames (``Unavailable`` after 2 x ttl: the holder died, or the lobby changes hands)."""
        self._seq += 1
        seq, answer = self._seq, asyncio.get_running_loop().create_future()
        self._api[seq] = answer
        self.publish(envelope(seq))
        try:
            return await asyncio.wait_for(answer, 2 * self.ttl)
        except TimeoutError:
            raise Unavailable("the lobby did not answer; try again", self.ttl) from None
        finally:
            self._api.pop(seq, None)

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
                self.metrics.error(error.code)
                session.send(error_message(error, message.id))
        if self.holding is not None:
            self.holding.queue.put_nowait(now)

    def identified(self, session: Session) -> None:
        """A player said hello here: the holder hears of it now (challenges by name)."""
        name, player = session.name, session.player
        if name is None or player is None:
            return
        said = (player.rating, player.bot)
        if self._reported.get(name) == said:
            return
        self._reported[name] = said
        self.publish(Report(self.node, [(name, player.rating)], [], [], [],
                            bots=[name] if player.bot else []))

    def gone(self, name: str) -> None:
        """``name``'s last connection here closed: tell the holder now."""
        if self._reported.pop(name, None) is not None:
            self.publish(Report(self.node, [], [name], [], []))

    # -- reports ---------------------------------------------------------------------------

    def _report(self) -> None:
        """Tell the holder who connected or left here, or whose rating or bot role changed
        (a role granted or revoked reaches the sessions here, then the holder: within a
        second); everything, when due."""
        delivery = self.delivery
        here = {name: (delivery.rating(name) or 0.0, bool(delivery.is_bot(name)))
                for name in delivery.by_player}
        if self._report_all:
            self._report_all = False
            self._reported = here
            self._forget_moved()
            games = [encode(game_summary(room)) for room in self._shown.values()]
            self.publish(Report(self.node, _ratings(here), [], games, [], full=True,
                                bots=_bots(here)))
            return
        joined = {n: said for n, said in here.items() if self._reported.get(n) != said}
        left = [n for n in self._reported if n not in here]
        if joined or left:
            self._reported = here
            self.publish(Report(self.node, _ratings(joined), left, [], [], bots=_bots(joined)))

    def _forget_moved(self) -> None:
        """Games whose room is no longer here (handed off, lost) are no longer this node's to
        list: their new owner lists them, and the holder takes off what this full report
        leaves out. A game taken back here since is listed by its room now."""
        rooms = self.rooms.held
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
            self.publish(Report(self.node, [], [], [encode(game_summary(room))], []))
        else:
            del self._shown[room.id]
            self.publish(Report(self.node, [], [], [], [room.id]))

    def unlist(self, game_id: str) -> None:
        self._unlisted.add(game_id)

    def forget(self, game_id: str) -> None:
        self._unlisted.discard(game_id)
        if self._shown.pop(game_id, None) is not None:
            self.publish(Report(self.node, [], [], [], [game_id]))


def _ratings(players: dict[str, tuple[float, bool]]) -> list[tuple[str, float]]:
    return [(name, rating) for name, (rating, _bot) in players.items()]


def _bots(players: dict[str, tuple[float, bool]]) -> list[str]:
    """The bot accounts among ``players``."""
    return [name for name, (_rating, bot) in players.items() if bot]
