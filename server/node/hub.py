"""The hub: one node's parts, built and wired at construction, and each client request sent
to its part in one typed dispatch (``hello`` and ``ping`` here, a ``LobbyRequest`` to the
lobby, a ``GameRequest`` to the router, the others to accounts, reviews, moderation and
puzzles). A cluster node is given a ``Membership`` (``server.node.membership``), whose
``join`` builds the node's delivery and rooms (from the hub's builders) and its cluster side.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from functools import partial
from typing import assert_never

from server.computer.local import ComputerMoves
from server.computer.truth import TruthPool
from server.errors import LimitReached, ServerError
from server.game.names import ReservedNames
from server.game.records import PlayerRecord
from server.game.room import GameRoom
from server.metrics import Metrics, percentile
from server.node.accounts import Accounts
from server.node.address_limits import AddressCounts, AddressLimits
from server.node.bots import refuse_pairing
from server.node.bus import Bus, LocalBus
from server.node.config import HubConfig
from server.node.control import Control
from server.node.control_actions import DropDevices, encode_action
from server.node.delivery import Delivery
from server.node.lobby import Lobby
from server.node.lobby_interfaces import LobbyService
from server.node.membership import Joined, Membership
from server.node.moderation import Moderation
from server.node.profiles import answer_player_games
from server.node.puzzles import Puzzles
from server.node.reviews import Reviews
from server.node.rooms import Rooms
from server.node.routing import Here, Router
from server.node.session import CLOSE_GOING_AWAY, CLOSE_REVOKED, Session
from server.node.tournaments import Holding, TournamentsService
from server.protocol import (
    AccountRequest,
    Announce,
    Chat,
    ClientMessage,
    ErrorCode,
    GameRequest,
    Hello,
    LobbyRequest,
    MatchmakingRequest,
    ModerationRequest,
    Move,
    Ping,
    PlayerGames,
    Pong,
    PuzzleRequest,
    Rematch,
    RequestId,
    ReviewGame,
    SessionOpening,
    TournamentRequest,
    Welcome,
    error_message,
)
from server.store.base import Store

log = logging.getLogger(__name__)

PAIRING_INTERVAL = 1.0  # seconds between quick-pairing rounds
ABANDON_CHECK = 10.0  # seconds between looks for abandoned games, at most

class Hub:
    """One server's parts and the dispatch of requests to them; see the module docstring."""

    def __init__(
        self, store: Store, pool: ComputerMoves, config: HubConfig | None = None,
        metrics: Metrics | None = None, limits: AddressCounts | None = None,
        bus: Bus | None = None, cluster: Membership | None = None,
        tournament_holding: Holding | None = None,
    ) -> None:
        self.pool = pool
        self.config = config or HubConfig()
        self.metrics = metrics or Metrics()
        self.limits: AddressCounts = limits or AddressLimits()
        self._own_bus = bus is None and cluster is None
        if cluster is not None:
            bus = cluster.bus
        self.bus: Bus = LocalBus() if bus is None else bus  # between the rooms and delivery
        # The rooms' Listing is the hub, which passes each call to the lobby, built after the
        # rooms (it starts games in them).
        self.cluster: Joined | None = None  # this node's cluster side
        self.delivery: Delivery
        self.rooms: Rooms
        self.router: Router
        self.lobby: LobbyService
        if cluster is None:
            self.delivery = Delivery(self.bus)
            self.rooms = Rooms(store, pool, self.config, self.metrics, self.delivery, self.bus,
                               listing=self)
            self.router = Router(self.delivery, Here(self.rooms))
            self.lobby = Lobby(self.rooms, self.delivery)
        else:  # the cluster builds the delivery and the rooms over its side of them
            self.cluster = cluster.join(
                partial(Delivery, self.bus, cluster.node),
                partial(Rooms, store, pool, self.config, self.metrics, bus=self.bus,
                        listing=self),
                self.metrics)
            self.delivery, self.rooms = self.cluster.delivery, self.cluster.rooms
            self.router = Router(self.delivery, self.cluster.owners, cluster.node)
            self.lobby = self.cluster.lobby
        self.accounts = Accounts(store, self.limits, self._open, self._drop_everywhere)
        self.draining = False  # a restart was announced: no new games
        self.reserved = ReservedNames(self.config.reserved_names)
        self.truth = TruthPool()  # the solver's worker: /api/solve and reviews (made when asked)
        self.reviews = Reviews(store, self.truth)
        # the host's levers, and a device's revoke, on every node (server.node.control)
        self.control = Control(self.rooms, self.announce, self.drop_devices)
        self.moderation = Moderation(self.control, self.limits, self.router)
        self.puzzles = Puzzles(store)  # server.node.puzzles
        # tournaments: the requests, live updates, and the director of those held here
        self.tournaments = TournamentsService(store, self.rooms, self.delivery, self.bus,
                                              tournament_holding)
        self._tasks: set[asyncio.Task[None]] = set()
        self._register_gauges()

    # -- the parts' state, as server.http.app, server.http.api and the tests read it -----

    @property
    def store(self) -> Store:
        return self.rooms.store

    @property
    def sessions(self) -> set[Session]:
        return self.delivery.sessions

    @property
    def _by_player(self) -> dict[str, set[Session]]:
        return self.delivery.by_player

    # -- the rooms' Listing: the lobby's --------------------------------------------------

    def relist(self, room: GameRoom) -> None:
        self.lobby.relist(room)

    def unlist(self, game_id: str) -> None:
        self.lobby.unlist(game_id)

    def forget(self, game_id: str) -> None:
        self.lobby.forget(game_id)

    def ended(self, room: GameRoom) -> None:
        self.tournaments.game_ended(room)

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Resume every unfinished game from the store (in a cluster: join it, and take
        games over as their owners go) and start the periodic work."""
        if self.cluster is not None:
            await self.cluster.start()
        else:
            await self.rooms.resume()
        await self.lobby.start()
        await self.control.start()
        await self.tournaments.start()
        self.metrics.lag.start()
        self.metrics.gc.start()
        task = asyncio.get_running_loop().create_task(self._periodic(), name="hub-periodic")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop taking work, stop the computer's searches and say goodbye to every client
        (in a cluster, first hand every game over to the other nodes)."""
        self.rooms.closing = True
        await self.control.close()
        await self.tournaments.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.lobby.close()  # in a cluster: another node takes the lobby, then the games
        if self.cluster is not None:
            await self.cluster.hand_over()
        await self.reviews.close()
        await self.rooms.close()
        await self.delivery.close_all(CLOSE_GOING_AWAY, "server shutting down")
        if self.cluster is not None:
            await self.cluster.close()
        if self._own_bus:
            await self.bus.close()
        self.accounts.close()
        self.metrics.lag.stop()
        self.metrics.gc.stop()

    async def _periodic(self) -> None:
        # Abandoned games are looked for less often than pairing runs: the look walks every
        # room (a few per cent of the loop's time at 1,000 games, once a second), and a game
        # ended a twentieth of ``abandon_after`` late (30 s of 600 by default) loses nothing.
        every = max(PAIRING_INTERVAL, min(ABANDON_CHECK, self.config.abandon_after / 20))
        next_look = self.rooms.now() + every
        while True:
            await asyncio.sleep(PAIRING_INTERVAL)
            now = self.rooms.now()
            await self.lobby.tick(now)
            if now >= next_look:
                next_look = now + every
                await self.rooms.upkeep.end_abandoned(now)

    # -- sessions --------------------------------------------------------------------------

    def connected(self, session: Session) -> None:
        self.delivery.connected(session)
        self.metrics.count("connections")

    def disconnected(self, session: Session) -> None:
        """The connection is gone: leave its games (seats stay theirs for the grace period)."""
        last = self.delivery.disconnected(session)
        self.lobby.unsubscribed(session)
        self.tournaments.disconnected(session)
        if session.name is None:
            return
        if last:
            self.lobby.gone(session.name)
        for game_id in list(session.rooms):
            self.router.leave(session, game_id)

    # -- dispatch --------------------------------------------------------------------------

    async def handle(self, session: Session, message: ClientMessage) -> None:
        """Carry out one client request; a refusal becomes an ``error`` message to it."""
        try:
            if self.rooms.closing:
                raise ServerError("the server is shutting down", ErrorCode.SHUTTING_DOWN)
            if self.draining and isinstance(message, MatchmakingRequest | Rematch):
                raise ServerError("the server restarts soon: no new games until it is back",
                                  ErrorCode.SHUTTING_DOWN)
            player = session.player
            if player is None and not isinstance(message, SessionOpening | Ping):
                raise ServerError("say hello first", ErrorCode.NOT_AUTHENTICATED)
            if player is not None and player.bot:
                refuse_pairing(player, message, self.config.bots_in_pairing)
            if type(message) is Chat:
                self.moderation.check_chat(session)
                assert session.name is not None  # said hello (above)
                wait = await self.limits.add_chat(session.name, self.rooms.now())
                if wait is not None:  # one player's lines, over all their sockets and nodes
                    raise LimitReached("you are chatting too fast: wait a moment",
                                       ErrorCode.CHAT_TOO_FAST, wait)
            # most requests are moves: straight to the router (one coroutine less)
            if type(message) is Move or isinstance(message, GameRequest):
                await self.router.request(session, message)
            else:
                await self._dispatch(session, message)
        except ServerError as error:
            self.refuse(session, error, message.id)

    async def _dispatch(self, session: Session, message: ClientMessage) -> None:
        """Pass ``message`` to the part whose job it is (mypy checks that each has one)."""
        if isinstance(message, GameRequest):  # first: most requests are moves
            await self.router.request(session, message)
        elif isinstance(message, LobbyRequest):
            await self.lobby.handle(session, message)
        elif isinstance(message, Hello):
            await self._hello(session, message)
        elif isinstance(message, Ping):
            await self._ping(session, message)
        elif isinstance(message, AccountRequest):
            await self.accounts.handle(session, message)
        elif isinstance(message, PlayerGames):
            session.send(await answer_player_games(self.store, message, session.name))
        elif isinstance(message, ReviewGame):
            self.reviews.handle(session, message)
        elif isinstance(message, ModerationRequest):
            await self.moderation.handle(session, message)
        elif isinstance(message, PuzzleRequest):
            await self.puzzles.handle(session, message)
        elif isinstance(message, TournamentRequest):
            await self.tournaments.handle(session, message)
        else:
            assert_never(message)

    def announce(self, text: str, restart_in: float | None = None) -> int:
        """Say ``text`` to every session here; returns how many heard it."""
        message = Announce(text=text, restart_in=restart_in)
        sessions = list(self.delivery.sessions)
        for session in sessions:
            session.send(message)
        return len(sessions)

    def drain(self, seconds: float) -> None:
        """Before a restart: tell every player the server restarts in ``seconds``, and start
        no new game from now on (games going on are played until the shutdown, and resume
        after it as after any restart)."""
        self.draining = True
        self.tournaments.draining = True  # nobody is paired either
        told = self.announce(f"The server restarts in {seconds:g} seconds: games going on "
                             "will resume when it is back. No new games until then.", seconds)
        log.info("draining: %d connections told the server restarts in %g s", told, seconds)

    def refuse(self, session: Session, error: ServerError, ref: object = None) -> None:
        self.metrics.error(error.code)
        session.send(error_message(error, ref))  # type: ignore[arg-type]

    async def _hello(self, session: Session, message: Hello) -> None:
        if session.player is not None:
            raise ServerError("this connection has said hello", ErrorCode.ALREADY_AUTHENTICATED)
        if message.token is not None:  # the store says bad_token or token_revoked
            opened = await self.store.open_session(message.token, message.name, time.time(),
                                                   session.peer)
            player, token, device = opened.player, message.token, opened.device
        else:
            assert message.name is not None
            if message.name in self.reserved:
                raise ServerError(f"the name {message.name!r} is reserved: choose another",
                                  ErrorCode.NAME_RESERVED)
            await self.moderation.admit(session, None)  # a banned address makes no player
            wait = await self.limits.add_player(session.peer, self.rooms.now())
            if wait is not None:
                raise LimitReached("too many new players from your address",
                                   ErrorCode.TOO_MANY_PLAYERS, wait)
            issued = await self.store.register(message.name, time.time(), session.peer)
            player, token, device = issued.player, issued.token, issued.device
            # A new player sits in no game: a seat here under the name is a renamed or deleted
            # player's whose lever this node has not acted on yet.
            self.rooms.forget_name(player.name)
            log.info("new player %s from %s", player.name, session.peer,
                     extra={"player": player.name, "address": session.peer})
        await self._open(session, player, token, device, message.id)

    async def _open(self, session: Session, player: PlayerRecord, token: str, device: int,
                    ref: RequestId | None) -> None:
        """Open ``session`` as ``player`` on ``device`` (a hello, a login, a recovery) and
        welcome it."""
        if session.player is not None:
            raise ServerError("this connection has said hello", ErrorCode.ALREADY_AUTHENTICATED)
        roles = await self.attach(session, player, device)
        session.send(
            Welcome(name=player.name, token=token, rating=round(player.rating),
                    games=await self.router.games_of(player.name), ref=ref, roles=roles)
        )

    async def attach(self, session: Session, player: PlayerRecord, device: int, *,
                     follows: bool = True) -> list[str]:
        """``session`` is ``player``'s, opened with ``device``'s token (a hello, a login, a
        bot's stream): refused if banned, else counted online; returns their roles. Not
        ``follows``: the bot API's sessions (a request's, a stream's, whose lines carry no
        tournament update) follow none of the player's tournaments (no read of them for
        each request; still noted as connected: ``TournamentsService._note_seen``)."""
        roles = await self.moderation.admit(session, player.name)  # banned: refused here
        session.device = device
        self.delivery.identified(session, player)
        self.lobby.identified(session)
        if follows:
            self.tournaments.identified(session)
        return roles

    def drop_devices(self, player: str, devices: Collection[int]) -> int:
        """Close this node's sessions of ``player``'s ``devices`` (their tokens were
        revoked), each told ``token_revoked`` first; returns how many were closed. On a
        cluster every node must run it for a revoke to close every socket at once."""
        closed = 0
        for session in self.delivery.of_player(player):
            if session.device in devices:
                self.refuse(session, ServerError("this device was logged out",
                                                 ErrorCode.TOKEN_REVOKED))
                session.close(CLOSE_REVOKED, "this device was logged out")
                closed += 1
        return closed

    def _drop_everywhere(self, player: str, devices: Collection[int]) -> int:
        """``drop_devices`` here at once, and on every other node through the control channel
        (within a second); returns how many were closed here."""
        closed = self.drop_devices(player, devices)
        if devices:
            task = asyncio.get_running_loop().create_task(
                self._tell_nodes(DropDevices(name=player, devices=sorted(devices))))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return closed

    async def _tell_nodes(self, action: DropDevices) -> None:
        try:
            await self.store.apply(control=encode_action(action))
        except ServerError as error:
            log.warning("the other nodes were not told of a revoke: %s", error)

    async def _ping(self, session: Session, message: Ping) -> None:
        session.send(Pong(ref=message.id))

    # -- metrics ---------------------------------------------------------------------------

    def _register_gauges(self) -> None:
        gauges = self.metrics.gauges
        gauges["connections"] = lambda: len(self.delivery.sessions)
        gauges["players_online"] = lambda: self.delivery.online
        gauges['games{state="playing"}'] = lambda: sum(not r.over for r in self.rooms.held.values())
        gauges['games{state="over"}'] = lambda: sum(r.over for r in self.rooms.held.values())
        gauges["ai_queue"] = lambda: self.pool.queued
        gauges["ai_busy"] = lambda: self.pool.busy
        gauges["ai_workers"] = lambda: self.pool.workers
        gauges["ai_ready"] = lambda: int(self.pool.ready)
        gauges["ai_latency_seconds_last"] = lambda: self.pool.last_latency
        gauges["lobby_subscribers"] = lambda: len(self.lobby.subscribers)
        if self.cluster is not None:
            self.cluster.register_gauges(gauges)
        for q in (0.5, 0.99):
            gauges[f'ai_latency_seconds{{quantile="{q}"}}'] = partial(self._latency, q)
        for name in self.pool.figures():
            gauges[name] = partial(self._figure, name)

    def _latency(self, q: float) -> float:
        return percentile(self.pool.latencies, q)

    def _figure(self, name: str) -> float:
        return self.pool.figures()[name]

