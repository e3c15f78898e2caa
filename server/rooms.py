"""The games this server owns: their rooms, locks, clocks, persistence and catch-up.

Every change to a room happens under that room's lock in three steps: the pure ``GameRoom``
decides, the store commits (a move is acknowledged and broadcast only after it is durable),
then the room's addressed messages are published as one batch on the game's bus topic, in
order, for ``Delivery`` to send to the sessions that have it open (see ``server.delivery``).
Timers flag clocks; ``ComputerTurns`` plays the computer's seats; a finished game stays open
for ``FINISHED_KEPT`` seconds (rematches, late viewers) and is then forgotten. The lobby
hears of each game that should be listed or unlisted through the ``Listing`` interface.

In a cluster this is the part that runs on a game's owner node (the holder of its lease).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from engine import O, X
from server.ai_pool import ComputerMoves
from server.bus import Bus
from server.computer import ComputerTurns
from server.delivery import Delivery, game_topic, pack
from server.errors import RoomError
from server.metrics import Metrics
from server.protocol import (
    Ack,
    ClockSpec,
    ErrorCode,
    GameEnd,
    Hint,
    MovePlayed,
    RatingChange,
    ServerMessage,
    TakenBack,
    Unwatch,
    Watch,
    with_ref,
)
from server.room import COMPUTER, Audience, GameRoom, Outbound, RoomSeat
from server.session import Session
from server.store import GameRecord, GameStatus, Seat, Store, TimeControl

log = logging.getLogger(__name__)

FINISHED_KEPT = 600.0  # seconds a finished game stays open for rematches and late viewers


@dataclass(frozen=True)
class HubConfig:
    grace: float = 60.0  # seconds a dropped player keeps the seat before a claim is allowed
    ai_move_time: float = 1.0  # seconds the computer thinks per move (less on a short clock)
    abandon_after: float = 600.0  # seconds with no human in a game before it is ended


def time_control(clock: ClockSpec | None) -> TimeControl | None:
    return None if clock is None else TimeControl(float(clock.initial), float(clock.increment))


def clock_spec(clock: TimeControl | None) -> ClockSpec | None:
    return None if clock is None else ClockSpec(int(clock.initial), int(clock.increment))


Action = Callable[[GameRoom, str, float], list[Outbound]]


class Listing(Protocol):
    """What the rooms tell the lobby about the games it may list."""

    def relist(self, room: GameRoom) -> None:
        """``room`` has changed: list it or take it off as it now should be."""

    def unlist(self, game_id: str) -> None:
        """Never list this game (private rooms, the computer's games, games stored unlisted)."""

    def forget(self, game_id: str) -> None:
        """The game is gone from this server."""


class _NoListing:
    def relist(self, room: GameRoom) -> None:
        pass

    def unlist(self, game_id: str) -> None:
        pass

    def forget(self, game_id: str) -> None:
        pass


class Rooms:
    """The rooms of the games this server holds; see the module docstring."""

    def __init__(
        self, store: Store, pool: ComputerMoves, config: HubConfig, metrics: Metrics,
        delivery: Delivery, bus: Bus,
    ) -> None:
        self.store = store
        self.config = config
        self.metrics = metrics
        self.delivery = delivery
        self.bus = bus
        self.published: dict[str, int] = {}  # game -> batches published (their sequence)
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._publisher: asyncio.Task[None] | None = None
        self.listing: Listing = _NoListing()  # the lobby, once it exists
        self.rooms: dict[str, GameRoom] = {}
        self.locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.flag_timers: dict[str, asyncio.TimerHandle] = {}
        self.finished: set[str] = set()  # games whose end has been handled
        self.rematched: set[str] = set()  # games whose rematch has been started
        self.computer = ComputerTurns(pool, metrics, config.ai_move_time, self.deliver,
                                      self._computer_played, self.after_change)
        self.closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_event_loop()

    # -- life cycle ------------------------------------------------------------------------

    async def resume(self) -> None:
        """Resume every unfinished game from the store."""
        self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        for record in await self.store.unfinished_games():
            room = await self._restore(record, now)
            self.rooms[room.id] = room
            if not record.listed:  # a private room's or the computer's game, or not known
                self.listing.unlist(room.id)
            self.after_change(room)
            log.info("resumed game %s at ply %d", room.id, room.board.ply)

    async def close(self) -> None:
        """Stop the clocks' timers and the computer's searches; pause every room."""
        self.closing = True
        for handle in self.flag_timers.values():
            handle.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(self.computer.close(), *self._tasks, return_exceptions=True)
        now = self._loop.time()
        for room in self.rooms.values():
            room.pause(now)
        if self._publisher is not None:
            await self._outbox.join()  # what was decided is said before the sessions close
            self._publisher.cancel()
            await asyncio.gather(self._publisher, return_exceptions=True)
            await asyncio.sleep(0)  # the bus's own delivery turn

    def now(self) -> float:
        """The event loop's clock, which rooms and clocks run on."""
        return self._loop.time()

    def _spawn(self, coro: object, name: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = self._loop.create_task(coro, name=name)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- finding and making rooms ----------------------------------------------------------

    def games_of(self, name: str) -> list[str]:
        """The games going on with ``name`` in a seat."""
        return [
            room.id for room in self.rooms.values()
            if not room.over and room.side_of(name) is not None
        ]

    async def get(self, game_id: str) -> GameRoom:
        """The game's room, loaded from the store if this server does not hold it."""
        room = self.rooms.get(game_id)
        if room is not None:
            return room
        record = await self.store.get_game(game_id)
        if record is None:
            raise RoomError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
        room = await self._restore(record, self._loop.time())
        self.rooms[room.id] = room
        if not record.listed:
            self.listing.unlist(room.id)
        if record.status is not GameStatus.ACTIVE:
            self.finished.add(room.id)  # its end was handled before it was forgotten
            self._forget_later(room)
        return room

    async def player_rating(self, name: str) -> float:
        rating = self.delivery.rating(name)
        if rating is not None:
            return rating
        record = await self.store.get_player(name)
        return record.rating if record is not None else 1500.0

    async def _restore(self, record: GameRecord, now: float) -> GameRoom:
        """A stored game's room, its human seats showing their current ratings."""
        ratings = {}
        for seat in (record.x, record.o):
            if seat.player is not None:
                ratings[seat.player] = await self.player_rating(seat.player)
        return GameRoom.restore(record, now, self.config.grace, ratings)

    async def start_game(
        self, seats: tuple[RoomSeat, RoomSeat], variant: str, clock: ClockSpec | None,
        rated: bool, ref: object = None, requester: Session | None = None, listed: bool = True,
    ) -> GameRoom:
        """Record a new game, open it for its players' connections and send them its state."""
        stored = [
            Seat.computer(s.ai_level) if s.ai_level is not None else Seat.human(s.player)
            for s in seats
        ]
        record = await self.store.create_game(
            variant=variant, x=stored[X], o=stored[O], clock=time_control(clock),
            rated=rated, now=time.time(), listed=listed,
        )
        room = GameRoom(record.id, seats, variant, clock, rated, self.config.grace)
        self.rooms[room.id] = room
        if not listed:
            self.listing.unlist(room.id)
        self.metrics.count("games_started")
        now = self._loop.time()
        for seat in seats:
            sessions = self.delivery.of_player(seat.player)
            for session in sessions:
                await self.delivery.open(session, room.id, 0)
            if seat.ai_level is None and sessions:
                snapshot = room.snapshot(seat.player, now)
                for session in sessions:
                    if session is requester:
                        snapshot.ref = ref  # type: ignore[assignment]
                    session.send(snapshot)
                    snapshot.ref = None
        self.listing.relist(room)
        log.info("game %s: %s vs %s (%s)", room.id, seats[X].name, seats[O].name, variant)
        self.after_change(room)
        return room

    # -- watching --------------------------------------------------------------------------

    async def watch(self, session: Session, message: Watch) -> None:
        room = await self.get(message.game)
        name = session.name or ""
        async with self.locks[room.id]:
            await self.delivery.open(session, room.id, self.published.get(room.id, 0))
            events = room.join(name, name, self._loop.time(), message.since)
            replied = False
            for event in events:
                if event.audience is Audience.PLAYER and hasattr(event.message, "ref"):
                    event.message.ref = message.id  # type: ignore[union-attr]
                    replied = True
            # a catch-up: its events, then the ack that says it is complete
            self.deliver(room, events, only=session,
                         reply=None if replied else Ack(ref=message.id))
        self.listing.relist(room)
        self.after_change(room)

    async def unwatch(self, session: Session, message: Unwatch) -> None:
        if message.game not in session.rooms:
            raise RoomError("you do not have this game open", ErrorCode.NOT_ALLOWED)
        self.leave(session, message.game, self._loop.time())
        session.send(Ack(ref=message.id))

    def leave(self, session: Session, game_id: str, now: float) -> None:
        """``session`` closes the game (unwatched, or the connection is gone)."""
        elsewhere = self.delivery.close(session, game_id)
        room = self.rooms.get(game_id)
        name = session.name
        if room is None or name is None or elsewhere:
            return  # elsewhere: another connection of the same player still has it open
        self.deliver(room, room.leave(name, now))
        self.listing.relist(room)

    # -- playing ---------------------------------------------------------------------------

    async def act(self, session: Session, game_id: str, ref: object, action: Action) -> None:
        """Run a room action under its lock: decide, persist, deliver, then follow up."""
        room = await self.get(game_id)
        name = session.name or ""
        async with self.locks[room.id]:
            events = action(room, name, self._loop.time())
            events = await self._persist(room, events)
            ack = None if ref is None else Ack(ref=ref)  # type: ignore[arg-type]
            if ack is not None and self.delivery.has_open(session, room.id):
                self.deliver(room, events, only=session, reply=ack)  # after the events
            else:  # it hears none of the events: the ack's order does not matter
                self.deliver(room, events)
                if ack is not None:
                    session.send(ack)
        self.after_change(room)

    async def hint(self, session: Session, message: Hint) -> None:
        """Reply with the engine's suggested move (see ``ComputerTurns.hint``)."""
        room = await self.get(message.game)
        suggestion = await self.computer.hint(room, session.name or "")
        session.send(with_ref(suggestion, message.id))

    async def _computer_played(self, room: GameRoom, ply: int, move: int) -> bool:
        """Play the computer's ``move`` for ``ply``; False if the game has moved on."""
        async with self.locks[room.id]:
            if room.over or room.board.ply != ply:
                return False
            events = room.move(COMPUTER, move, ply, self._loop.time())
            events = await self._persist(room, events)
            self.deliver(room, events)
        return True

    async def _persist(self, room: GameRoom, events: list[Outbound]) -> list[Outbound]:
        """Commit what ``events`` record before anyone hears of them."""
        if any(isinstance(e.message, MovePlayed) for e in events):
            await self.store.record_move(room.id, room.last_move_record(time.time()))
            self.metrics.count("moves")
        for taken in (e.message for e in events if isinstance(e.message, TakenBack)):
            await self.store.take_back(room.id, taken.ply)
            self.metrics.count("takebacks")
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
        for seat in room.seats:
            player = await self.store.get_player(seat.player)
            if player is not None:
                self.delivery.refresh(seat.player, player)
        change = RatingChange(x=round(record.x_rating_change), o=round(record.o_rating_change))
        return room.set_rating_change(change, events)

    def deliver(
        self, room: GameRoom, events: Iterable[Outbound], only: Session | None = None,
        reply: ServerMessage | None = None,
    ) -> None:
        """Publish ``events`` (and ``reply`` to ``only``) as the room's next batch."""
        events = list(events)
        if not events and reply is None:
            return
        seq = self.published[room.id] = self.published.get(room.id, 0) + 1
        self._outbox.put_nowait((game_topic(room.id), pack(seq, events, only, reply)))
        if self._publisher is None:
            self._publisher = self._loop.create_task(self._publish(), name="rooms-publisher")

    async def _publish(self) -> None:
        """Publish the batches in the order they were made (one task: the bus keeps it)."""
        while True:
            topic, batch = await self._outbox.get()
            try:
                await self.bus.publish(topic, batch)
            except Exception:
                log.exception("events for %s were not published", topic)
            finally:
                self._outbox.task_done()

    # -- after every change: clocks, the computer, the end ----------------------------------

    def after_change(self, room: GameRoom) -> None:
        handle = self.flag_timers.pop(room.id, None)
        if handle is not None:
            handle.cancel()
        if self.closing:
            return
        if room.over:
            self.computer.cancel(room.id)
            if room.id not in self.finished:
                self.finished.add(room.id)
                self.listing.relist(room)
                self._forget_later(room)
            if room.rematch_agreed and room.id not in self.rematched:
                self.rematched.add(room.id)
                self._spawn(self._start_rematch(room), f"rematch-{room.id}")
            return
        flag_at = room.flag_at()
        if flag_at is not None:
            self.flag_timers[room.id] = self._loop.call_at(
                flag_at + 0.001, lambda: self._spawn(self._flag(room), f"flag-{room.id}")
            )
        if room.computer_to_move:
            self.computer.start(room)

    async def _flag(self, room: GameRoom) -> None:
        async with self.locks[room.id]:
            events = await self._persist(room, room.check_flag(self._loop.time()))
            self.deliver(room, events)
        self.after_change(room)

    async def end_abandoned(self, now: float) -> None:
        """End each game that no human has had open for ``config.abandon_after`` seconds."""
        limit = self.config.abandon_after
        for room in list(self.rooms.values()):
            since = room.abandoned_since()
            if since is None or now - since < limit:
                continue
            async with self.locks[room.id]:
                if room.over or room.abandoned_since() != since:
                    continue
                log.info("game %s: abandoned at ply %d", room.id, room.board.ply)
                events = await self._persist(room, room.abandon(now))
                self.deliver(room, events)
            self.after_change(room)

    def _forget_later(self, room: GameRoom) -> None:
        def forget() -> None:
            if self.rooms.get(room.id) is room and room.over:
                del self.rooms[room.id]
                self.locks.pop(room.id, None)
                self.finished.discard(room.id)
                self.rematched.discard(room.id)
                self.listing.forget(room.id)
                self.delivery.forget(room.id)
                self.published.pop(room.id, None)

        self._loop.call_later(FINISHED_KEPT, forget)

    async def _start_rematch(self, room: GameRoom) -> None:
        await self.start_game(room.rematch_seats(), room.board.geometry.name, room.clock_spec,
                              room.rated)
