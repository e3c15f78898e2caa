"""The hub: sessions, game rooms, the lobby, matchmaking, computer seats and the store.

Transport-agnostic: a connection is a :class:`~server.session.Session` whose ``send`` queues
frames; ``server.app`` feeds decoded client messages to :meth:`Hub.handle`. Every change to
a room happens under that room's lock in three steps: the pure ``GameRoom`` decides, the store
commits (a move is acknowledged and broadcast only after it is durable), then the hub
delivers the room's addressed messages. Timers flag clocks; computer seats ask the
``AIPool`` and drop answers that come back for a position that has moved on.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial

from engine import O, X
from server.ai_pool import AIError, AIJob, ComputerMoves
from server.errors import LimitReached, RoomError, ServerError
from server.matchmaking import Matchmaker, Pairing
from server.metrics import Metrics
from server.protocol import Abort as AbortMessage
from server.protocol import (
    AcceptSeek,
    Ack,
    AIThinking,
    CancelQuick,
    CancelSeek,
    Chat,
    ClientMessage,
    ClockSpec,
    DrawAccept,
    DrawDecline,
    DrawOffer,
    EngineStatus,
    ErrorCode,
    GameEnd,
    GameSummary,
    Hello,
    Lobby,
    LobbyDelta,
    LobbySub,
    LobbyUnsub,
    Move,
    MovePlayed,
    Ping,
    PlayAI,
    Pong,
    PrivateCreate,
    PrivateCreated,
    PrivateJoin,
    Queued,
    Quick,
    RatingChange,
    Rematch,
    Resign,
    Seek,
    SeekInfo,
    Seeking,
    Unwatch,
    Watch,
    Welcome,
    encode,
    error_message,
)
from server.protocol import Claim as ClaimMessage
from server.room import COMPUTER, Audience, GameRoom, Outbound, RoomSeat, computer_seat
from server.session import CLOSE_GOING_AWAY, AddressLimits, Session
from server.store import GameRecord, GameStatus, PlayerRecord, Seat, Store, TimeControl

log = logging.getLogger(__name__)

FINISHED_KEPT = 600.0  # seconds a finished game stays open for rematches and late viewers
PAIRING_INTERVAL = 1.0  # seconds between quick-pairing rounds
LOBBY_GAMES_SHOWN = 100
AI_RETRY_DELAY = 1.0  # seconds before asking a failing AI pool again
ENGINE_POLL = 0.5  # seconds between progress reports while the engine is being prepared
ENGINE_READY = "the engine is ready"


@dataclass(frozen=True)
class HubConfig:
    grace: float = 60.0  # seconds a dropped player keeps the seat before a claim is allowed
    ai_move_time: float = 1.0  # seconds the computer thinks per move (less on a short clock)
    abandon_after: float = 600.0  # seconds with no human in a game before it is ended


def _time_control(clock: ClockSpec | None) -> TimeControl | None:
    return None if clock is None else TimeControl(float(clock.initial), float(clock.increment))


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank), 0 when there are none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _clock_spec(clock: TimeControl | None) -> ClockSpec | None:
    return None if clock is None else ClockSpec(int(clock.initial), int(clock.increment))


def _seed(game_id: str) -> int:
    return int.from_bytes(hashlib.sha256(game_id.encode()).digest()[:4], "big")


class Hub:
    """Everything the server knows that is not on disk; see the module docstring."""

    def __init__(
        self, store: Store, pool: ComputerMoves, config: HubConfig | None = None,
        metrics: Metrics | None = None, limits: AddressLimits | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.config = config or HubConfig()
        self.metrics = metrics or Metrics()
        self.matchmaker = Matchmaker()
        self.limits = limits or AddressLimits()
        self.rooms: dict[str, GameRoom] = {}
        self.sessions: set[Session] = set()
        self._by_player: dict[str, set[Session]] = defaultdict(set)
        self._audience: dict[str, set[Session]] = defaultdict(set)
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._flag_timers: dict[str, asyncio.TimerHandle] = {}
        self._ai_tasks: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._lobby: set[Session] = set()
        self._listed: dict[str, None] = {}  # the games the lobby shows, oldest first
        self._unlisted: set[str] = set()  # private-room and computer games: never shown
        self._online_shown = -1
        self._seeks_shown: list[str] = []  # seek ids the lobby has been told of
        self._finished: set[str] = set()  # games whose end has been handled
        self._rematched: set[str] = set()  # games whose rematch has been started
        self._closing = False
        self._loop = asyncio.get_event_loop()
        self._register_gauges()

    # -- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Resume every unfinished game from the store and start the periodic work."""
        self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        for record in await self.store.unfinished_games():
            room = await self._restore(record, now)
            self.rooms[room.id] = room
            self._unlisted.add(room.id)  # the store does not say which games were private
            self._after_change(room)
            log.info("resumed game %s at ply %d", room.id, room.board.ply)
        self.metrics.lag.start()
        self.metrics.gc.start()
        self._spawn(self._periodic(), "hub-periodic")

    async def close(self) -> None:
        """Stop taking work, stop the computer's searches and say goodbye to every client."""
        self._closing = True
        for handle in self._flag_timers.values():
            handle.cancel()
        for task in [*self._ai_tasks.values(), *self._tasks]:
            task.cancel()
        await asyncio.gather(*self._ai_tasks.values(), *self._tasks, return_exceptions=True)
        now = self._loop.time()
        for room in self.rooms.values():
            room.pause(now)
        for session in list(self.sessions):
            session.close(CLOSE_GOING_AWAY, "server shutting down")
        self.metrics.lag.stop()
        self.metrics.gc.stop()

    def _spawn(self, coro: object, name: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = self._loop.create_task(coro, name=name)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _periodic(self) -> None:
        while True:
            await asyncio.sleep(PAIRING_INTERVAL)
            now = self._loop.time()
            for pairing in self.matchmaker.pair_waiting_players(now):
                await self._start_pairing(pairing)
            self.matchmaker.expire(now)
            self._publish_online()
            await self._end_abandoned(now)

    # -- sessions --------------------------------------------------------------------------

    def connected(self, session: Session) -> None:
        self.sessions.add(session)
        self.metrics.count("connections")

    def disconnected(self, session: Session) -> None:
        """The connection is gone: leave its games (seats stay theirs for the grace period)."""
        self.sessions.discard(session)
        self._lobby.discard(session)
        name = session.name
        if name is None:
            return
        self._by_player[name].discard(session)
        if not self._by_player[name]:
            del self._by_player[name]
            self._withdraw(name)
        now = self._loop.time()
        for game_id in list(session.rooms):
            self._leave_room(session, game_id, now)

    def _leave_room(self, session: Session, game_id: str, now: float) -> None:
        session.rooms.discard(game_id)
        self._audience[game_id].discard(session)
        room = self.rooms.get(game_id)
        name = session.name
        if room is None or name is None:
            return
        if any(s.name == name for s in self._audience[game_id]):
            return  # another connection of the same player still has it open
        self._deliver(room, room.leave(name, now))
        self._relist(room)

    def _withdraw(self, name: str) -> None:
        place = self.matchmaker.withdraw(name)
        if place is not None:
            self._publish_seeks()

    # -- dispatch --------------------------------------------------------------------------

    async def handle(self, session: Session, message: ClientMessage) -> None:
        """Carry out one client request; a refusal becomes an ``error`` message to it."""
        handler = self._handlers.get(type(message))
        try:
            if self._closing:
                raise ServerError("the server is shutting down", ErrorCode.SHUTTING_DOWN)
            if not isinstance(message, Hello | Ping) and session.player is None:
                raise ServerError("say hello first", ErrorCode.NOT_AUTHENTICATED)
            assert handler is not None, type(message)
            await handler(self, session, message)
        except ServerError as error:
            self.refuse(session, error, message.id)

    def refuse(self, session: Session, error: ServerError, ref: object = None) -> None:
        self.metrics.error(error.code)
        session.send(error_message(error, ref))  # type: ignore[arg-type]

    async def _hello(self, session: Session, message: Hello) -> None:
        if session.player is not None:
            raise ServerError("this connection has said hello", ErrorCode.ALREADY_AUTHENTICATED)
        if message.token is not None:
            player = await self.store.authenticate(message.token, message.name)
            if player is None:
                raise ServerError("no player has this token", ErrorCode.BAD_TOKEN)
            token = message.token
        else:
            assert message.name is not None
            wait = self.limits.new_player(session.peer, self._loop.time())
            if wait is not None:
                raise LimitReached("too many new players from your address",
                                   ErrorCode.TOO_MANY_PLAYERS, wait)
            player, token = await self.store.create_player(message.name, time.time())
            log.info("new player %s", player.name)
        session.player = player
        self._by_player[player.name].add(session)
        games = [
            room.id for room in self.rooms.values()
            if not room.over and room.side_of(player.name) is not None
        ]
        session.send(
            Welcome(name=player.name, token=token, rating=round(player.rating), games=games,
                    ref=message.id)
        )

    async def _ping(self, session: Session, message: Ping) -> None:
        session.send(Pong(ref=message.id))

    # -- lobby -----------------------------------------------------------------------------

    async def _lobby_sub(self, session: Session, message: LobbySub) -> None:
        self._lobby.add(session)
        session.lobby = True
        session.send(
            Lobby(seeks=[self._seek_info(s) for s in self.matchmaker.seeks()],
                  games=self._live_games(), online=len(self._by_player), ref=message.id)
        )

    async def _lobby_unsub(self, session: Session, message: LobbyUnsub) -> None:
        self._lobby.discard(session)
        session.lobby = False
        session.send(Ack(ref=message.id))

    def _seek_info(self, seek: object) -> SeekInfo:
        return SeekInfo(
            id=seek.id, name=seek.seeker,  # type: ignore[attr-defined]
            rating=None if seek.rating is None else round(seek.rating),  # type: ignore[attr-defined]
            variant=seek.variant, clock=_clock_spec(seek.clock),  # type: ignore[attr-defined]
            rated=seek.rated, colour=seek.colour,  # type: ignore[attr-defined]
        )

    def _summary(self, room: GameRoom) -> GameSummary:
        return GameSummary(
            id=room.id, variant=room.board.geometry.name,  # type: ignore[arg-type]
            clock=room.clock_spec, rated=room.rated, x=room.seats[X].name,
            o=room.seats[O].name, ply=room.board.ply,
        )

    def _live_games(self) -> list[GameSummary]:
        """The games the lobby lists: public, going on, with a human player in them."""
        listed = [self.rooms[game_id] for game_id in self._listed]
        return [self._summary(room) for room in listed[-LOBBY_GAMES_SHOWN:]]

    def _relist(self, room: GameRoom) -> None:
        """Add ``room`` to the lobby's list or take it off, as it now should be."""
        show = room.id not in self._unlisted and not room.over and room.anyone_in
        if show == (room.id in self._listed):
            return
        if show:
            self._listed[room.id] = None
            self._to_lobby(LobbyDelta(games_added=[self._summary(room)]))
        else:
            del self._listed[room.id]
            self._to_lobby(LobbyDelta(games_removed=[room.id]))

    def _to_lobby(self, delta: LobbyDelta) -> None:
        frame = encode(delta)
        for session in self._lobby:
            session.send_raw(frame)

    def _publish_seeks(self) -> None:
        """Send the lobby the full list of seeks as removed-and-added (seeks are few)."""
        if not self._lobby:
            return
        seeks = [self._seek_info(s) for s in self.matchmaker.seeks()]
        shown = set(self._seeks_shown)
        ids = {s.id for s in seeks}
        removed = [s for s in self._seeks_shown if s not in ids]
        added = [s for s in seeks if s.id not in shown]
        self._seeks_shown = [s.id for s in seeks]
        if removed or added:
            self._to_lobby(LobbyDelta(seeks_added=added, seeks_removed=removed))

    def _publish_online(self) -> None:
        online = len(self._by_player)
        if online != self._online_shown and self._lobby:
            self._online_shown = online
            self._to_lobby(LobbyDelta(online=online))

    # -- seeks, quick pairing, private rooms, the computer ---------------------------------

    def _rating(self, session: Session) -> float:
        assert session.player is not None
        return session.player.rating

    async def _seek(self, session: Session, message: Seek) -> None:
        seek = self.matchmaker.create_seek(
            session.name or "", message.variant, _time_control(message.clock), message.rated,
            message.colour, self._loop.time(), self._rating(session),
        )
        session.send(Seeking(seek=self._seek_info(seek), ref=message.id))
        self._publish_seeks()

    async def _cancel_seek(self, session: Session, message: CancelSeek) -> None:
        self.matchmaker.cancel_seek(message.seek, session.name or "")
        session.send(Ack(ref=message.id))
        self._publish_seeks()

    async def _accept_seek(self, session: Session, message: AcceptSeek) -> None:
        pairing = self.matchmaker.accept_seek(message.seek, session.name or "")
        self._publish_seeks()
        await self._start_pairing(pairing, ref=message.id, requester=session)

    async def _quick(self, session: Session, message: Quick) -> None:
        self.matchmaker.join_pool(
            session.name or "", message.variant, _time_control(message.clock),
            self._rating(session), self._loop.time(),
        )
        session.send(Queued(variant=message.variant, clock=message.clock, ref=message.id))
        for pairing in self.matchmaker.pair_waiting_players(self._loop.time()):
            await self._start_pairing(pairing)

    async def _cancel_quick(self, session: Session, message: CancelQuick) -> None:
        self.matchmaker.leave_pool(session.name or "")
        session.send(Ack(ref=message.id))

    async def _private_create(self, session: Session, message: PrivateCreate) -> None:
        room = self.matchmaker.create_private_room(
            session.name or "", message.variant, _time_control(message.clock), message.rated,
            message.colour, self._loop.time(),
        )
        session.send(PrivateCreated(code=room.code, variant=message.variant,
                                    clock=message.clock, ref=message.id))

    async def _private_join(self, session: Session, message: PrivateJoin) -> None:
        pairing = self.matchmaker.join_private_room(message.code, session.name or "",
                                                    self._loop.time())
        await self._start_pairing(pairing, ref=message.id, requester=session)

    async def _play_ai(self, session: Session, message: PlayAI) -> None:
        name = session.name or ""
        if self.matchmaker.waiting_in(name) is not None:
            self._withdraw(name)
        human = RoomSeat(name, name, round(self._rating(session)))
        computer = computer_seat(message.level)
        colour = message.colour
        if colour == "random":
            colour = "x" if _seed(f"{name}{time.time()}") % 2 else "o"
        seats = (human, computer) if colour == "x" else (computer, human)
        await self._start_game(seats, message.variant, message.clock, rated=False,
                               ref=message.id, requester=session, listed=False)

    async def _start_pairing(
        self, pairing: Pairing, ref: object = None, requester: Session | None = None
    ) -> None:
        x = RoomSeat(pairing.x, pairing.x, round(await self._player_rating(pairing.x)))
        o = RoomSeat(pairing.o, pairing.o, round(await self._player_rating(pairing.o)))
        await self._start_game((x, o), pairing.variant, _clock_spec(pairing.clock),
                               rated=pairing.rated, ref=ref, requester=requester,
                               listed=not pairing.private)

    async def _player_rating(self, name: str) -> float:
        for session in self._by_player.get(name, ()):
            if session.player is not None:
                return session.player.rating
        record = await self.store.get_player(name)
        return record.rating if record is not None else 1500.0

    async def _start_game(
        self, seats: tuple[RoomSeat, RoomSeat], variant: str, clock: ClockSpec | None,
        rated: bool, ref: object = None, requester: Session | None = None, listed: bool = True,
    ) -> GameRoom:
        stored = [
            Seat.computer(s.ai_level) if s.ai_level is not None else Seat.human(s.player)
            for s in seats
        ]
        record = await self.store.create_game(
            variant=variant, x=stored[X], o=stored[O], clock=_time_control(clock),
            rated=rated, now=time.time(),
        )
        room = GameRoom(record.id, seats, variant, clock, rated, self.config.grace)
        self.rooms[room.id] = room
        if not listed:
            self._unlisted.add(room.id)
        self.metrics.count("games_started")
        now = self._loop.time()
        for seat in seats:
            for session in list(self._by_player.get(seat.player, ())):
                self._open_room(session, room)
            if seat.ai_level is None and seat.player in self._by_player:
                snapshot = room.snapshot(seat.player, now)
                for session in self._by_player[seat.player]:
                    if session is requester:
                        snapshot.ref = ref  # type: ignore[assignment]
                    session.send(snapshot)
                    snapshot.ref = None
        self._relist(room)
        log.info("game %s: %s vs %s (%s)", room.id, seats[X].name, seats[O].name, variant)
        self._after_change(room)
        return room

    def _open_room(self, session: Session, room: GameRoom) -> None:
        session.rooms.add(room.id)
        self._audience[room.id].add(session)

    # -- watching --------------------------------------------------------------------------

    async def _room(self, game_id: str) -> GameRoom:
        room = self.rooms.get(game_id)
        if room is not None:
            return room
        record = await self.store.get_game(game_id)
        if record is None:
            raise RoomError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
        room = await self._restore(record, self._loop.time())
        self.rooms[room.id] = room
        self._unlisted.add(room.id)
        if record.status is not GameStatus.ACTIVE:
            self._finished.add(room.id)  # its end was handled before it was forgotten
            self._forget_later(room)
        return room

    async def _restore(self, record: GameRecord, now: float) -> GameRoom:
        """A stored game's room, its human seats showing their current ratings."""
        ratings = {}
        for seat in (record.x, record.o):
            if seat.player is not None:
                ratings[seat.player] = await self._player_rating(seat.player)
        return GameRoom.restore(record, now, self.config.grace, ratings)

    async def _watch(self, session: Session, message: Watch) -> None:
        room = await self._room(message.game)
        name = session.name or ""
        async with self._locks[room.id]:
            self._open_room(session, room)
            events = room.join(name, name, self._loop.time(), message.since)
            replied = False
            for event in events:
                if event.audience is Audience.PLAYER and hasattr(event.message, "ref"):
                    event.message.ref = message.id  # type: ignore[union-attr]
                    replied = True
            self._deliver(room, events, only=session)
            if not replied:  # a catch-up: its events, then the ack that says it is complete
                session.send(Ack(ref=message.id))
        self._relist(room)
        self._after_change(room)

    async def _unwatch(self, session: Session, message: Unwatch) -> None:
        if message.game not in session.rooms:
            raise RoomError("you do not have this game open", ErrorCode.NOT_ALLOWED)
        self._leave_room(session, message.game, self._loop.time())
        session.send(Ack(ref=message.id))

    # -- playing ---------------------------------------------------------------------------

    async def _act(
        self, session: Session, game_id: str, ref: object,
        action: Callable[[GameRoom, str, float], list[Outbound]],
    ) -> None:
        """Run a room action under its lock: decide, persist, deliver, then follow up."""
        room = await self._room(game_id)
        name = session.name or ""
        async with self._locks[room.id]:
            events = action(room, name, self._loop.time())
            events = await self._persist(room, events)
            self._deliver(room, events)
            if ref is not None:
                session.send(Ack(ref=ref))  # type: ignore[arg-type]
        self._after_change(room)

    async def _move(self, session: Session, message: Move) -> None:
        await self._act(session, message.game, message.id,
                        lambda room, name, now: room.move(name, message.cell, message.ply, now))

    async def _resign(self, session: Session, message: Resign) -> None:
        await self._act(session, message.game, message.id, GameRoom.resign)

    async def _draw_offer(self, session: Session, message: DrawOffer) -> None:
        await self._act(session, message.game, message.id, GameRoom.offer_draw)

    async def _draw_accept(self, session: Session, message: DrawAccept) -> None:
        await self._act(session, message.game, message.id, GameRoom.accept_draw)

    async def _draw_decline(self, session: Session, message: DrawDecline) -> None:
        await self._act(session, message.game, message.id, GameRoom.decline_draw)

    async def _abort(self, session: Session, message: AbortMessage) -> None:
        await self._act(session, message.game, message.id, GameRoom.abort)

    async def _claim(self, session: Session, message: ClaimMessage) -> None:
        await self._act(session, message.game, message.id, GameRoom.claim)

    async def _rematch(self, session: Session, message: Rematch) -> None:
        await self._act(session, message.game, message.id, GameRoom.ask_rematch)

    async def _chat(self, session: Session, message: Chat) -> None:
        await self._act(session, message.game, message.id,
                        lambda room, name, now: room.chat(name, message.text, now))

    async def _persist(self, room: GameRoom, events: list[Outbound]) -> list[Outbound]:
        """Commit what ``events`` record before anyone hears of them."""
        if any(isinstance(e.message, MovePlayed) for e in events):
            await self.store.record_move(room.id, room.last_move_record(time.time()))
            self.metrics.count("moves")
        end = next((e.message for e in events if isinstance(e.message, GameEnd)), None)
        if end is None:
            return events
        self.metrics.count("games_finished")
        log.info("game %s ended %s (%s) after %d moves", room.id, end.result, end.reason,
                 room.board.ply)
        if end.result == "*":
            await self.store.abort_game(room.id, reason=end.reason, now=time.time())
            return events
        record = await self.store.finish_game(
            room.id, result=end.result, reason=end.reason, now=time.time(),
            winning_line=end.line,
        )
        if record.x_rating_change is None or record.o_rating_change is None:
            return events
        await self._refresh_players(room)
        change = RatingChange(x=round(record.x_rating_change), o=round(record.o_rating_change))
        return room.set_rating_change(change, events)

    async def _refresh_players(self, room: GameRoom) -> None:
        for seat in room.seats:
            record: PlayerRecord | None = await self.store.get_player(seat.player)
            for session in self._by_player.get(seat.player, ()):
                if record is not None:
                    session.player = record

    def _deliver(
        self, room: GameRoom, events: Iterable[Outbound], only: Session | None = None
    ) -> None:
        """Send each message to its audience among the sessions that have the room open."""
        audience = self._audience.get(room.id, set())
        for event in events:
            frame = encode(event.message)
            if event.audience is Audience.ROOM:
                targets: Iterable[Session] = audience
            elif event.audience is Audience.PLAYER:
                targets = [only] if only is not None else [
                    s for s in audience if s.name == event.player
                ]
            else:
                targets = [s for s in audience if s.name != event.player]
            for session in targets:
                session.send_raw(frame)

    # -- after every change: clocks, the computer, the end ----------------------------------

    def _after_change(self, room: GameRoom) -> None:
        handle = self._flag_timers.pop(room.id, None)
        if handle is not None:
            handle.cancel()
        if self._closing:
            return
        if room.over:
            task = self._ai_tasks.pop(room.id, None)
            if task is not None:
                task.cancel()
            if room.id not in self._finished:
                self._finished.add(room.id)
                self._relist(room)
                self._forget_later(room)
            if room.rematch_agreed and room.id not in self._rematched:
                self._rematched.add(room.id)
                self._spawn(self._start_rematch(room), f"rematch-{room.id}")
            return
        flag_at = room.flag_at()
        if flag_at is not None:
            self._flag_timers[room.id] = self._loop.call_at(
                flag_at + 0.001, lambda: self._spawn(self._flag(room), f"flag-{room.id}")
            )
        if room.computer_to_move and room.id not in self._ai_tasks:
            task = self._loop.create_task(self._computer_moves(room), name=f"ai-{room.id}")
            self._ai_tasks[room.id] = task

    async def _flag(self, room: GameRoom) -> None:
        async with self._locks[room.id]:
            events = await self._persist(room, room.check_flag(self._loop.time()))
            self._deliver(room, events)
        self._after_change(room)

    async def _end_abandoned(self, now: float) -> None:
        """End each game that no human has had open for ``config.abandon_after`` seconds."""
        limit = self.config.abandon_after
        for room in list(self.rooms.values()):
            since = room.abandoned_since()
            if since is None or now - since < limit:
                continue
            async with self._locks[room.id]:
                if room.over or room.abandoned_since() != since:
                    continue
                log.info("game %s: abandoned at ply %d", room.id, room.board.ply)
                events = await self._persist(room, room.abandon(now))
                self._deliver(room, events)
            self._after_change(room)

    def _forget_later(self, room: GameRoom) -> None:
        def forget() -> None:
            if self.rooms.get(room.id) is room and room.over:
                del self.rooms[room.id]
                self._locks.pop(room.id, None)
                self._finished.discard(room.id)
                self._rematched.discard(room.id)
                self._unlisted.discard(room.id)
                for session in self._audience.pop(room.id, set()):
                    session.rooms.discard(room.id)

        self._loop.call_later(FINISHED_KEPT, forget)

    async def _start_rematch(self, room: GameRoom) -> None:
        await self._start_game(room.rematch_seats(), room.board.geometry.name, room.clock_spec,
                               room.rated)

    def _ai_time(self, room: GameRoom) -> float:
        budget = self.config.ai_move_time
        if room.clock is not None:
            left = room.clock.time_left(room.board.turn, self._loop.time())
            budget = min(budget, max(0.05, left / 20 + room.clock.increment / 2))
        return budget

    async def _await_engine(self, room: GameRoom) -> None:
        """Tell the game's players why the computer waits (its engine's first-start
        preparation and how far it has got, or no worker in the fleet) until it is ready, or
        has failed (then ``decide`` says so and is retried)."""
        shown = -1.0
        while not self.pool.ready:
            progress = round(self.pool.progress, 2)
            if progress != shown:
                shown = progress
                status = EngineStatus(game=room.id, state=self.pool.waiting_state,
                                      progress=progress, message=self.pool.waiting_message)
                self._deliver(room, [Outbound(status)])
            try:
                await asyncio.wait_for(self.pool.wait_ready(), ENGINE_POLL)
            except TimeoutError:
                continue
            except AIError:
                return
        ready = EngineStatus(game=room.id, state="ready", progress=1.0, message=ENGINE_READY)
        self._deliver(room, [Outbound(ready)])

    async def _computer_moves(self, room: GameRoom) -> None:
        """Ask the pool for the computer's move and play it, unless the game has moved on."""
        try:
            side = room.computer_side
            assert side is not None
            ply = room.board.ply
            level = room.seats[side].ai_level
            if not self.pool.ready:
                await self._await_engine(room)
            self._deliver(room, [Outbound(AIThinking(game=room.id, ply=ply))])
            job = AIJob(room.board.geometry.name, tuple(room.board.moves), f"level{level}",
                        seed=_seed(room.id) + ply, time=self._ai_time(room))
            started = self._loop.time()
            while True:
                try:
                    decision = await self.pool.decide(job)
                    break
                except AIError as error:
                    log.error("game %s: no computer move yet (%s); retrying", room.id, error)
                    self.metrics.error(error.code)
                    notice = error_message(
                        AIError("the computer cannot move right now; it will try again"),
                    )
                    self._deliver(room, [Outbound(notice)])
                    await asyncio.sleep(AI_RETRY_DELAY)
            self.metrics.count("ai_moves")
            async with self._locks[room.id]:
                if room.over or room.board.ply != ply:
                    self.metrics.count("ai_stale_results")
                    return
                events = room.move(COMPUTER, decision.move, ply, self._loop.time())
                events = await self._persist(room, events)
                self._deliver(room, events)
            log.debug("game %s: computer played after %.3f s (depth %d)", room.id,
                      self._loop.time() - started, decision.depth)
        finally:
            if self._ai_tasks.get(room.id) is asyncio.current_task():
                del self._ai_tasks[room.id]
        self._after_change(room)

    # -- metrics ---------------------------------------------------------------------------

    def _register_gauges(self) -> None:
        gauges = self.metrics.gauges
        gauges["connections"] = lambda: len(self.sessions)
        gauges["players_online"] = lambda: len(self._by_player)
        gauges['games{state="playing"}'] = lambda: sum(not r.over for r in self.rooms.values())
        gauges['games{state="over"}'] = lambda: sum(r.over for r in self.rooms.values())
        gauges["ai_queue"] = lambda: self.pool.queued
        gauges["ai_busy"] = lambda: self.pool.busy
        gauges["ai_workers"] = lambda: self.pool.workers
        gauges["ai_ready"] = lambda: int(self.pool.ready)
        gauges["ai_latency_seconds_last"] = lambda: self.pool.last_latency
        gauges["lobby_subscribers"] = lambda: len(self._lobby)
        for q in (0.5, 0.99):
            gauges[f'ai_latency_seconds{{quantile="{q}"}}'] = partial(self._latency, q)
        for name in self.pool.figures():
            gauges[name] = partial(self._figure, name)

    def _latency(self, q: float) -> float:
        return _quantile(self.pool.latencies, q)

    def _figure(self, name: str) -> float:
        return self.pool.figures()[name]

    _handlers: dict[type, Callable[..., Awaitable[None]]] = {}


Hub._handlers = {
    Hello: Hub._hello, Ping: Hub._ping, LobbySub: Hub._lobby_sub, LobbyUnsub: Hub._lobby_unsub,
    Seek: Hub._seek, CancelSeek: Hub._cancel_seek, AcceptSeek: Hub._accept_seek,
    Quick: Hub._quick, CancelQuick: Hub._cancel_quick, PrivateCreate: Hub._private_create,
    PrivateJoin: Hub._private_join, PlayAI: Hub._play_ai, Watch: Hub._watch,
    Unwatch: Hub._unwatch, Move: Hub._move, Resign: Hub._resign, DrawOffer: Hub._draw_offer,
    DrawAccept: Hub._draw_accept, DrawDecline: Hub._draw_decline, AbortMessage: Hub._abort,
    ClaimMessage: Hub._claim, Rematch: Hub._rematch, Chat: Hub._chat,
}
