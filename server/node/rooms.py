"""The games this node holds: their rooms, locks, clocks, persistence and catch-up.

Every change to a room happens under its lock in three steps: the pure ``GameRoom`` decides,
the store commits (nothing is told before it is durable), then the room's messages are
published as one batch on the game's bus topic for ``Delivery``. A write the store refuses
puts the room back as the record holds it. The rooms talk to the lobby through ``Listing``,
hold their games through ``Ownership`` and answer one session through ``Replies``
(``server.node.room_interfaces``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from engine import O, X
from server.defaults import GRACE
from server.engine_pool.local import ComputerMoves
from server.errors import RoomError, StoreError
from server.game.records import GameRecord, GameStatus, Seat, TimeControl
from server.game.room import COMPUTER, Audience, GameRoom, Outbound, RoomSeat
from server.game.room_state import RESULTS
from server.metrics import Metrics
from server.node.bus import Bus, drain
from server.node.computer_turns import ComputerTurns
from server.node.delivery import EPOCH_BITS, Delivery, Peer, game_topic, pack
from server.node.room_interfaces import Listing, Ownership, Replies, SoleOwnership
from server.node.session import Session
from server.protocol import (
    Ack,
    ClockSpec,
    ErrorCode,
    GameEnd,
    MovePlayed,
    RatingChange,
    ServerMessage,
    TakenBack,
    with_ref,
)
from server.store.base import Store
from server.tasks import stop_tasks

log = logging.getLogger(__name__)

class RoomMoved(RoomError):
    """The room was let go (a cluster's hand-off or lost lease) while the request waited
    for its lock: the request goes to wherever the game is now."""

    code = "internal"


FINISHED_KEPT = 600.0  # seconds a finished game stays open for rematches and late viewers


@dataclass(frozen=True)
class HubConfig:
    grace: float = GRACE  # seconds a dropped player keeps the seat before a claim is allowed
    ai_move_time: float = 1.0  # seconds the computer thinks per move (less on a short clock)
    abandon_after: float = 600.0  # seconds with no human in a game before it is ended
    reserved_names: tuple[str, ...] = ()  # refused to new players, beside RESERVED_NAMES
    spectator_chat: bool = True  # spectators may chat (among themselves)
    leaderboard_inactive: float = 90 * 86400.0  # seconds without a rated game; 0: never


def time_control(clock: ClockSpec | None) -> TimeControl | None:
    return None if clock is None else TimeControl(float(clock.initial), float(clock.increment))


def clock_spec(clock: TimeControl | None) -> ClockSpec | None:
    return None if clock is None else ClockSpec(int(clock.initial), int(clock.increment))


Action = Callable[[GameRoom, str, float], list[Outbound]]


class Rooms:
    """The rooms of the games this server holds; see the module docstring."""

    def __init__(
        self, store: Store, pool: ComputerMoves, config: HubConfig, metrics: Metrics,
        delivery: Delivery, bus: Bus, listing: Listing, ownership: Ownership | None = None,
        replies: Replies | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.metrics = metrics
        self.delivery = delivery
        self.bus = bus
        self.published: dict[str, int] = {}  # game -> batches published (their sequence)
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._publisher: asyncio.Task[None] | None = None
        self.listing = listing
        self.ownership: Ownership = SoleOwnership() if ownership is None else ownership
        self.replies: Replies = delivery if replies is None else replies
        self.node = delivery.node
        # game -> player -> the peers with it open (a player is present while one is)
        self.openers: dict[str, dict[str, set[tuple[str, int]]]] = {}
        self.rooms: dict[str, GameRoom] = {}
        self.locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.flag_timers: dict[str, asyncio.TimerHandle] = {}
        self.finished: set[str] = set()  # games whose end has been handled
        self.rematched: set[str] = set()  # games whose rematch has been started
        self.computer = ComputerTurns(pool, metrics, config.ai_move_time, self.deliver,
                                      self._computer_played, self.after_change)
        self.closing = False
        self.ended_listeners: list[Callable[[GameRoom], None]] = []  # told as a game ends
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

    async def drain(self) -> None:
        """Wait until every batch made so far is published."""
        if self._publisher is not None:
            await self._outbox.join()

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
            await stop_tasks([self._publisher])  # it publishes: a cancel can be lost there
            await asyncio.sleep(0)  # the bus's own delivery turn

    def forget_name(self, name: str) -> None:
        """``name`` no longer names the player seated under it here (renamed or deleted): the
        seats of the games this node holds stop answering to it, so a newcomer who takes the
        name is a stranger to them (no seat, no rematch, not the players' chat)."""
        gone = f"{name}\u2060#gone"  # no player can be called so: names refuse U+2060
        for room in self.rooms.values():
            if any(seat.player == name for seat in room.seats):
                room.seats = tuple(replace(seat, player=gone) if seat.player == name else seat
                                   for seat in room.seats)  # type: ignore[assignment]

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
        if room.over:
            self.finished.add(room.id)  # its end was handled before it was forgotten
            self._forget_later(room)
        return room

    async def player_rating(self, name: str, *, stored: bool = False) -> float:
        """A player's rating: as a session here knows it, or with ``stored`` (or no session
        here) as the store holds it, which a game's end updates before anyone hears of it."""
        rating = None if stored else self.delivery.rating(name)
        if rating is not None:
            return rating
        record = await self.store.get_player(name)
        return record.rating if record is not None else 1500.0

    async def _restore(self, record: GameRecord, now: float) -> GameRoom:
        """A stored game's room, its human seats showing their ratings as the store holds
        them (a session here may not have heard yet of the game that changed them: a
        rematch that another node starts is restored here at once).

        A game the record holds active on a board already decided (a line, full, or dead:
        a database written before the last move and the end were one transaction)
        is ended in the store first, as its last move ended it."""
        ratings = {}
        for seat in (record.x, record.o):
            if seat.player is not None:
                ratings[seat.player] = await self.player_rating(seat.player, stored=True)
        room = GameRoom.restore(record, now, self.config.grace, ratings)
        outcome = room.board.outcome() if record.status is GameStatus.ACTIVE else None
        if outcome is not None:
            log.warning("game %s: stored active on a decided board (ply %d); ending it",
                        record.id, room.board.ply)
            record = await self.store.finish_game(
                record.id, result=RESULTS[outcome.winner], reason=outcome.termination.value,
                now=record.moves[-1].at if record.moves else time.time(),
                winning_line=outcome.line, fence=self.ownership.token(record.id),
            )
            self.metrics.count("games_finished")
            room = GameRoom.restore(record, now, self.config.grace, ratings)
        room.spectator_chat = self.config.spectator_chat
        room.listed = record.listed
        return room

    async def start_game(
        self, seats: tuple[RoomSeat, RoomSeat], variant: str, clock: ClockSpec | None,
        rated: bool, ref: object = None, requester: Session | None = None, listed: bool = True,
        tournament: str | None = None,
    ) -> GameRoom:
        """Record a new game (of ``tournament``, if given), open it for its players'
        connections and send them its state."""
        stored = [
            Seat.computer(s.computer_level) if s.computer_level is not None
            else Seat.human(s.player)
            for s in seats
        ]
        record = await self.store.create_game(
            variant=variant, x=stored[X], o=stored[O], clock=time_control(clock),
            rated=rated, now=time.time(), listed=listed, tournament=tournament,
        )
        room = GameRoom(record.id, seats, variant, clock, rated, self.config.grace)
        room.tournament = tournament
        room.spectator_chat = self.config.spectator_chat
        room.listed = listed
        self.rooms[room.id] = room
        if not listed:
            self.listing.unlist(room.id)
        self.metrics.count("games_started")
        now = self._loop.time()
        async with self.locks[room.id]:  # a cluster's hand-off of the game waits for this
            await self.ownership.started(room)
            seq = self.published[room.id] = (self.ownership.token(room.id) or 0) << EPOCH_BITS
            for seat in seats:
                sessions = self.delivery.of_player(seat.player)
                for session in sessions:
                    self._opened(room.id, Peer.of(session, self.node))
                    await self.delivery.open(session, room.id, seq)
                if seat.computer_level is None and sessions:
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

    async def watch(
        self, peer: Peer, game_id: str, since: int | None, ref: str | int | None,
        ack: bool = True,
    ) -> None:
        """``peer`` opens the game (its node has opened it pending in ``Delivery``): its
        seat is taken again or it watches; it gets a catch-up and then an ``ack``."""
        room = await self.get(game_id)
        async with self.locks[room.id]:
            self._still_here(room)
            self._opened(room.id, peer)
            events = room.join(peer.name, peer.name, self._loop.time(), since, peer.moderator)
            replied = not ack
            for event in events:
                if event.audience is Audience.PLAYER and hasattr(event.message, "ref"):
                    event.message.ref = ref
                    replied = True
            # a catch-up: its events, then the ack that says it is complete
            self.deliver(room, events, only=peer, reply=None if replied else Ack(ref=ref))
        self.listing.relist(room)
        self.after_change(room)

    def _present(self, room: GameRoom, peer: Peer, now: float) -> list[Outbound]:
        """A seated player acting on the game from a connection that has it open is
        present, whatever the room believed (a room reloaded after a lost state started with
        everyone away, and moving must bring the mover back)."""
        if not peer.has_open or not peer.name or room.side_of(peer.name) is None:
            return []
        opened = self.openers.get(room.id, {}).get(peer.name)
        if opened is not None and (peer.node, peer.session) in opened:
            return []
        self._opened(room.id, peer)
        return room.connected(peer.name, now)

    def _still_here(self, room: GameRoom) -> None:
        if self.rooms.get(room.id) is not room:
            raise RoomMoved(f"game {room.id} has moved; try again")

    def _opened(self, game_id: str, peer: Peer) -> None:
        self.openers.setdefault(game_id, {}).setdefault(peer.name, set()).add(
            (peer.node, peer.session))

    def leave(self, peer: Peer, game_id: str, now: float) -> None:
        """``peer`` closes the game (unwatched, or the connection is gone); its player is
        gone from it once no connection of theirs on any node has it open."""
        by_player = self.openers.get(game_id)
        opened = None if by_player is None else by_player.get(peer.name)
        if opened is None:
            return
        opened.discard((peer.node, peer.session))
        if opened:
            return  # another connection of the same player still has it open
        del by_player[peer.name]  # type: ignore[union-attr]
        room = self.rooms.get(game_id)
        if room is None or not peer.name:
            return
        self.deliver(room, room.leave(peer.name, now))
        self.listing.relist(room)

    def reply(self, peer: Peer, message: ServerMessage) -> None:
        """Send one message to one session, on whichever node it is."""
        self.replies.send_to(peer, message)

    # -- playing ---------------------------------------------------------------------------

    async def act(self, peer: Peer, game_id: str, ref: object, action: Action) -> None:
        """Run a room action under its lock: decide, persist, deliver, then follow up."""
        room = await self.get(game_id)
        async with self.locks[room.id]:
            self._still_here(room)
            now = self._loop.time()
            back = self._present(room, peer, now)
            try:
                events = back + await self._persist(room, action(room, peer.name, now))
            except Exception:
                if back and self.rooms.get(room.id) is room:
                    self.deliver(room, back)  # back, whatever became of the request
                raise
            ack = None if ref is None else Ack(ref=ref)  # type: ignore[arg-type]
            if ack is not None and peer.has_open:
                self.deliver(room, events, only=peer, reply=ack)  # after the events
            else:  # it hears none of the events: the ack's order does not matter
                self.deliver(room, events)
                if ack is not None:
                    self.reply(peer, ack)
        self.after_change(room)

    async def hint(self, peer: Peer, game_id: str, ref: str | int | None) -> None:
        """Reply with the engine's suggested move (see ``ComputerTurns.hint``)."""
        room = await self.get(game_id)
        suggestion = await self.computer.hint(room, peer.name)
        self.reply(peer, with_ref(suggestion, ref))

    async def _computer_played(self, room: GameRoom, ply: int, move: int) -> bool:
        """Play the computer's ``move`` for ``ply``; False if the game has moved on."""
        async with self.locks[room.id]:
            if room.over or room.board.ply != ply or self.rooms.get(room.id) is not room:
                return False
            events = room.move(COMPUTER, move, ply, self._loop.time())
            events = await self._persist(room, events)
            self.deliver(room, events)
        return True

    async def _persist(self, room: GameRoom, events: list[Outbound]) -> list[Outbound]:
        """Commit what ``events`` record before anyone hears of them; if the store refuses,
        nobody hears of them and the room is put back as the record holds it.

        A write whose outcome is unknown (the connection lost at the commit: code
        ``store_unavailable``) is looked up in the record: if it is there, it stands and is
        told as if the store had answered (never ``store_unavailable`` for a move that was
        stored)."""
        try:
            return await self._commit(room, events)
        except StoreError as error:
            try:
                record = await self.store.get_game(room.id)
            except StoreError:
                record = None
            if error.code == ErrorCode.STORE_UNAVAILABLE and record is not None \
                    and _holds(record, room, events):
                log.warning("game %s: the store said %s, but the write is there", room.id,
                            error)
                if record.status is GameStatus.FINISHED:
                    return await self._rated(room, events, record)
                return events
            await self._put_back(room, record)
            raise

    async def _put_back(self, room: GameRoom, record: GameRecord | None) -> None:
        """``room`` decided something the store refused to keep (a full disk, a database
        gone), which nobody has heard: put in its place the room ``record`` holds (the
        game read again after the refusal), with its players, spectators and chat, so play
        goes on from what everyone was told once the store takes writes again. If the
        record could not be read either, the room is let go and loaded afresh when next
        asked for."""
        if self.rooms.get(room.id) is not room:
            return  # moved on meanwhile (dropped, handed over)
        if record is None:
            self.rooms.pop(room.id, None)
            return
        try:
            restored = await self._restore(record, self._loop.time())
        except StoreError:  # a decided board whose end cannot be written yet
            if self.rooms.get(room.id) is room:
                self.rooms.pop(room.id, None)
            return
        if self.rooms.get(room.id) is not room:
            return
        restored.carry_over(room)
        self.rooms[room.id] = restored
        log.info("game %s: a write was refused; the room is back at ply %d", room.id,
                    restored.board.ply)
        self.after_change(restored)

    async def _commit(self, room: GameRoom, events: list[Outbound]) -> list[Outbound]:
        """Write what ``events`` record: the move, a take-back, the end of the game. A move
        that ends the game is written with the end (and the ratings) in one transaction."""
        played = any(isinstance(e.message, MovePlayed) for e in events)
        move = room.last_move_record(time.time()) if played else None
        for taken in (e.message for e in events if isinstance(e.message, TakenBack)):
            await self.store.take_back(room.id, taken.ply, fence=self.ownership.token(room.id))
            self.metrics.count("takebacks")
        end = next((e.message for e in events if isinstance(e.message, GameEnd)), None)
        if move is not None and (end is None or end.result == "*"):
            await self.store.record_move(room.id, move, fence=self.ownership.token(room.id))
            self.metrics.count("moves")
        if end is None:
            return events
        if end.result == "*":
            await self.store.abort_game(room.id, reason=end.reason, now=time.time(),
                                        fence=self.ownership.token(room.id))
        else:
            record = await self.store.finish_game(
                room.id, result=end.result, reason=end.reason, now=time.time(),
                winning_line=end.line, fence=self.ownership.token(room.id), move=move,
            )
            if move is not None:
                self.metrics.count("moves")
        self.metrics.count("games_finished")
        log.info("game %s ended %s (%s) after %d moves", room.id, end.result, end.reason,
                 room.board.ply)
        if end.result == "*":
            return events
        return await self._rated(room, events, record)

    async def _rated(self, room: GameRoom, events: list[Outbound], record: GameRecord
                     ) -> list[Outbound]:
        """``events`` with the rating change of the finished game ``record``, if rated; the
        players' sessions here learn their new ratings."""
        if record.x_rating_change is None or record.o_rating_change is None:
            return events
        for seat in room.seats:
            player = await self.store.get_player(seat.player)
            if player is not None:
                self.delivery.refresh(seat.player, player)
        change = RatingChange(x=round(record.x_rating_change), o=round(record.o_rating_change))
        return room.set_rating_change(change, events)

    def deliver(
        self, room: GameRoom, events: Iterable[Outbound], only: Peer | None = None,
        reply: ServerMessage | None = None, force: bool = False,
    ) -> None:
        """Publish ``events`` (and ``reply`` to ``only``) as the room's next batch (with
        ``force``, an empty one too)."""
        events = list(events)
        if not events and reply is None and not force:
            return
        seq = self.published[room.id] = self.published.get(room.id, 0) + 1
        self._outbox.put_nowait((game_topic(room.id),
                                 pack(seq, events, only, reply, self.node)))
        if self._publisher is None:
            self._publisher = self._loop.create_task(self._publish(), name="rooms-publisher")

    async def _publish(self) -> None:
        """Publish the batches in the order they were made (one task: the bus keeps it)."""
        while True:
            batches = await drain(self._outbox)  # what queued meanwhile: one round trip
            try:
                await self.bus.publish_many(batches)
            except Exception:
                log.exception("events for %s were not published",
                              ", ".join(topic for topic, _ in batches))
            finally:
                for _ in batches:
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
                self.ownership.ended(room)
                self.listing.relist(room)
                self._forget_later(room)
                for listener in self.ended_listeners:
                    listener(room)
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
            if self.rooms.get(room.id) is not room:
                return
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
                if self.rooms.get(room.id) is not room or room.over \
                        or room.abandoned_since() != since:
                    continue  # dropped (handed off, lease lost), ended or rejoined meanwhile
                log.info("game %s: abandoned at ply %d", room.id, room.board.ply)
                events = await self._persist(room, room.abandon(now))
                self.deliver(room, events)
            self.after_change(room)

    def _forget_later(self, room: GameRoom) -> None:
        def forget() -> None:
            if self.rooms.get(room.id) is room and room.over:
                self.drop(room.id)
                self.listing.forget(room.id)
                self.delivery.forget(room.id)
                self.ownership.forgotten(room.id)

        self._loop.call_later(FINISHED_KEPT, forget)

    def drop(self, game_id: str) -> None:
        """Let the game go at once: no timer, no computer search, no room (it ended long
        ago, or in a cluster this node no longer holds its lease: the game itself goes on,
        so the lobby is not told to forget it)."""
        handle = self.flag_timers.pop(game_id, None)
        if handle is not None:
            handle.cancel()
        self.computer.cancel(game_id)
        self.rooms.pop(game_id, None)
        lock = self.locks.get(game_id)
        if lock is not None and not lock.locked():
            del self.locks[game_id]
        self.finished.discard(game_id)
        self.rematched.discard(game_id)
        self.published.pop(game_id, None)
        self.openers.pop(game_id, None)

    async def hold(self, record: GameRecord, first_version: int, first_batch: int) -> GameRoom:
        """Hold a stored game someone else held: its room as after a restart, everyone away
        until they rejoin, its events versioned from ``first_version`` and its batches
        numbered from ``first_batch``, and an empty first batch that tells every
        ``Delivery`` with the game open who holds it now."""
        room = await self._restore(record, self._loop.time())
        room.renumber_from(first_version)
        self.rooms[room.id] = room
        self.published[room.id] = first_batch
        if not record.listed:
            self.listing.unlist(room.id)
        if room.over:
            self.finished.add(room.id)
            self._forget_later(room)
        self.deliver(room, [], force=True)
        self.after_change(room)
        return room

    async def _start_rematch(self, room: GameRoom) -> None:
        """Start the rematch, its players at their ratings now (the game just rated changed
        them), and tell the finished game's room, spectators too, where it went."""
        x, o = [
            seat if seat.computer_level is not None
            # from the store: a session's copy learns the new rating only when the end
            # reaches it, which on another node may be after both asked for the rematch
            else replace(seat, rating=round(await self.player_rating(seat.player, stored=True)))
            for seat in room.rematch_seats()
        ]
        rematch = await self.start_game((x, o), room.board.geometry.name, room.clock_spec,
                                        room.rated, listed=room.listed)  # private stays so
        async with self.locks[room.id]:
            if self.rooms.get(room.id) is room:
                self.deliver(room, room.rematch_started(rematch.id))


def _holds(record: GameRecord, room: GameRoom, events: list[Outbound]) -> bool:
    """Whether ``record`` (read after a write whose outcome is unknown) holds what ``events``
    wrote: the room's last move, and its end if they end the game (a take-back is not
    looked for: it is told as refused)."""
    if any(isinstance(e.message, TakenBack) for e in events):
        return False
    if any(isinstance(e.message, MovePlayed) for e in events):
        ply = room.board.ply
        if len(record.moves) < ply or record.moves[ply - 1].cell != room.board.moves[-1]:
            return False
    end = next((e.message for e in events if isinstance(e.message, GameEnd)), None)
    if end is None:
        return record.status is GameStatus.ACTIVE
    return record.status is not GameStatus.ACTIVE and (record.result or "*") == end.result
