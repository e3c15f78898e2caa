"""The cluster's one lobby, on the node that holds it: a ``Lobby`` over every node.

The node holding the lease ``lobby`` runs the embedded server's ``Lobby``
(``server.node.lobby``) in a ``Holding``, wired through its constructor to the cluster: its
presence is every node's (``ClusterOnlinePlayers``), its deltas go out on the bus (``Delta``), its
state is written to Redis before each game starts, and the games a player has going against
the computer are counted from the cluster's record. The nodes' asks and reports and the
holder's once-a-second round reach it through one queue, so per-player limits hold across
nodes. ``LobbyState`` is the lobby's state in Redis, written fenced by the holder's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Protocol

import msgspec
from redis.exceptions import RedisError

from server.cluster.lease import Lease
from server.cluster.links import ClusterLinks
from server.cluster.lobby_presence import ClusterOnlinePlayers
from server.cluster.messages import Answer, Ask, Delta, LobbyEnvelope, Report, Waiting
from server.cluster.ownership import ClusterOwnership
from server.errors import ServerError
from server.game.challenges import Challenges
from server.game.matchmaking import Matchmaker
from server.game.records import GameStatus
from server.metrics import Metrics
from server.node.delivery import Delivery
from server.node.lobby import Lobby
from server.node.rooms import Rooms
from server.node.routing import Unavailable
from server.node.session import Session
from server.protocol import (
    AcceptSeek,
    ChallengeAccept,
    ChallengeReceived,
    GameSummary,
    LobbySub,
    MatchmakingRequest,
    PlayAI,
    PrivateJoin,
    ServerMessage,
    decode_client_message,
    encode,
    error_message,
)
from server.tasks import stop_tasks

log = logging.getLogger(__name__)

SETTLE = 1.0  # seconds a new holder waits for the reports before resending the lobby

STARTING = (AcceptSeek, PrivateJoin, PlayAI, ChallengeAccept)
"""The requests whose reply is the new game's ``game`` message."""

STATE_WRITE = """
local held = redis.call('HGET', KEYS[1], 'token')
if held and tonumber(held) > tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'state', ARGV[2])
return 1
"""
"""KEYS: the state hash. ARGV: the holder's token, the state. 0: a newer holder wrote."""

_encode_state = msgspec.msgpack.Encoder().encode
_summary_decoder = msgspec.json.Decoder(GameSummary)


class LobbyState:
    """The lobby's state in the Redis hash ``lobby:state`` = {token, state}: msgpack of the
    seeks, pools, private codes and challenges, written by the holder under its token."""

    def __init__(self, links: ClusterLinks) -> None:
        self.redis = links.redis
        self.key = f"{links.prefix}lobby:state"
        self._write = links.redis.register_script(STATE_WRITE)

    async def token(self) -> int:
        """The token of the last holder that wrote (0: none has)."""
        return int(await self.redis.hget(self.key, "token") or 0)

    async def read(self) -> bytes | None:
        """The state written last, if any (``decode`` reads it)."""
        raw = await self.redis.hget(self.key, "state")
        return None if raw is None else raw if isinstance(raw, bytes) else raw.encode()

    @staticmethod
    def decode(raw: bytes) -> dict[str, Any]:
        """The state as ``Holding`` takes it (raises ``msgspec.DecodeError`` if unreadable)."""
        state: dict[str, Any] = msgspec.msgpack.decode(raw)
        return state

    async def write(self, token: int, state: bytes) -> bool:
        """Write ``state`` unless a holder with a newer token has written."""
        return bool(await self._write(keys=[self.key], args=[token, state]))


class LobbyNode(Protocol):
    """What a ``Holding`` needs of its node's side of the lobby (``ClusterLobby``)."""

    node: str
    ttl: float
    rooms: Rooms
    delivery: Delivery
    metrics: Metrics
    links: ClusterLinks
    ownership: ClusterOwnership
    state: LobbyState

    def publish(self, envelope: LobbyEnvelope) -> None:
        """Publish on the lobby's topics, in order."""

    def step_down(self, why: str) -> None:
        """Stop holding the lobby."""


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


def _request_of(frame: bytes) -> LobbySub | MatchmakingRequest | None:
    """The request an ``Ask`` carries (None: not a request at all)."""
    try:
        message = decode_client_message(frame)
    except ServerError:
        return None
    if isinstance(message, LobbySub | MatchmakingRequest):
        return message
    raise TypeError(f"{type(message).__name__} is not a request for the lobby's holder")


class Holding:
    """This node holds the lobby: the lease, the ``Lobby`` and its one queue."""

    def __init__(self, node: LobbyNode, lease: Lease, state: dict[str, Any] | None) -> None:
        self.node = node
        self.lease = lease
        loop = asyncio.get_running_loop()
        self.offset = time.time() - loop.time()  # wall clock minus loop clock, fixed
        matchmaker, challenges = Matchmaker(), Challenges()
        if state is not None:
            matchmaker.load(state["matchmaker"], -self.offset)
            challenges.load(state["challenges"])
        self.presence = ClusterOnlinePlayers(node.publish)
        self.lobby = Lobby(node.rooms, node.delivery, self.presence, matchmaker, challenges,
                           fan_out=lambda frame: node.publish(Delta(frame)),
                           checkpoint=self.persist, computer_games=self.computer_games)
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
        return _encode_state({"matchmaker": lobby.core.matchmaker.dump(-self.offset),
                              "challenges": lobby.core.challenges.dump()})

    async def persist(self) -> None:
        """Write the lobby's state if it changed; a newer holder's state stops this one."""
        state = self._state()
        if state == self.written:
            return
        written = await self.node.state.write(self.lease.token, state)
        if not written:
            self.node.step_down("a newer holder wrote the lobby's state")
            raise Unavailable("the lobby is changing hands; try again", self.node.ttl)
        self.written = state

    async def computer_games(self, name: str) -> int:
        """How many games against the computer ``name`` has going on any node: the games
        of their ``playing`` set in Redis that the store has as active."""
        node = self.node
        playing = await node.links.redis.smembers(node.ownership.playing_key(name))
        going = 0
        for game_id in playing:
            game_id = game_id.decode() if isinstance(game_id, bytes) else game_id
            record = await node.rooms.store.get_game(game_id)
            if (record is not None and record.status is GameStatus.ACTIVE
                    and (record.x.is_computer or record.o.is_computer)):
                going += 1
        return going

    async def _work(self) -> None:
        while True:
            item = await self.queue.get()
            try:
                if isinstance(item, Ask):
                    await self._ask(item)
                elif isinstance(item, Report):
                    self._report(item)
                    await self.persist()
                elif isinstance(item, Waiting):
                    challenges = await self.lobby.challenges_to(item.name)
                    frames = [encode(ChallengeReceived(challenge=c)) for c in challenges]
                    self.node.publish(Answer(item.node, 0, item.seq, frames))
                elif isinstance(item, float):
                    await self._tick(item)
            except (ServerError, RedisError, OSError) as exc:
                log.warning("the lobby could not finish %s: %s", type(item).__name__, exc)
            except Exception:
                log.exception("the lobby failed on %s", type(item).__name__)

    async def _ask(self, ask: Ask) -> None:
        """Carry out a session's request and answer it (to its node, for the session)."""
        lobby, node = self.lobby, self.node
        if ask.name:
            self.presence.here(ask.node, ask.name, ask.rating)
        message = _request_of(ask.frame)
        local = node.delivery.session(ask.session) if ask.node == node.node else None
        caller: Session | RemoteCaller = local or RemoteCaller(ask.name, ask.rating)
        frames: list[bytes] = []
        match message:
            case None:
                pass
            case LobbySub():  # its node makes the session a subscriber when the answer comes
                frames.append(encode(lobby.snapshot(message.id)))
            case _:
                try:
                    await lobby.decide(caller, message)
                    await self.persist()
                except ServerError as error:
                    node.metrics.error(error.code)
                    caller.send(error_message(error, message.id))
        started = False
        if isinstance(caller, RemoteCaller):
            frames.extend(caller.frames)
            started = isinstance(message, STARTING) and not frames
        subscribe = isinstance(message, LobbySub)
        node.publish(Answer(ask.node, ask.session, ask.seq, frames, subscribe, started))

    def _report(self, report: Report) -> None:
        presence, lobby = self.presence, self.lobby
        bots = set(report.bots)
        for name, rating in report.players:  # a player reported not a bot is none (revoked)
            presence.here(report.node, name, rating, name in bots)
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
        alive = await self._alive(set(self.presence.nodes) | set(self.games.values()))
        for node in set(self.presence.nodes) | set(self.games.values()):
            if node not in alive:
                log.warning("lobby: node %s is gone, its players with it", node)
                self.drop_node(node)

    async def _alive(self, nodes: set[str]) -> set[str]:
        """The nodes among ``nodes`` whose heartbeat is there."""
        here = self.node.node
        nodes.discard(here)
        names = sorted(nodes)
        links = self.node.links
        beats = await links.redis.mget([f"{links.prefix}node:{n}" for n in names]) \
            if names else []
        return {here} | {n for n, beat in zip(names, beats, strict=True) if beat}
