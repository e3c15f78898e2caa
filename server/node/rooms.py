"""The games this node holds: their rooms and locks, and the players' requests on them.

Every change to a room happens under its lock in three steps: the pure ``GameRoom`` decides
(a ``Change``: messages and the ``Write`` to keep), ``GameWrites`` commits the write (nothing
is told before it is durable), then the ``Publisher`` publishes the messages as one batch on
the game's bus topic for ``Delivery``. A write the store refuses puts the room back as the
record holds it. ``Openers`` knows who has each game open, and ``Upkeep`` what follows each
change (the clock's flag, the computer's turn, the end, the rematch, abandoned games). The
rooms talk to the lobby through ``Listing``, hold their games through ``Ownership`` and
answer one session through ``Replies`` (``server.node.room_interfaces``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from engine import O, X
from server.computer.local import ComputerMoves
from server.errors import RoomError, StoreError
from server.game.lobby import time_control
from server.game.records import GameRecord, GameStatus, Seat
from server.game.room import Audience, Change, GameRoom, Outbound, RoomSeat
from server.metrics import Metrics
from server.node.bus import Bus
from server.node.config import HubConfig
from server.node.delivery import Delivery, Peer
from server.node.game_writes import GameWrites
from server.node.openers import Openers
from server.node.publisher import Publisher
from server.node.room_interfaces import Ownership, Replies, SoleOwnership, Told
from server.node.room_lock import RoomLock
from server.node.session import Session
from server.node.upkeep import Upkeep
from server.protocol import Ack, ClockSpec, ErrorCode, ServerMessage, with_ref
from server.store.base import Store

log = logging.getLogger(__name__)


class RoomMoved(RoomError):
    """The room was let go (a cluster's hand-off or lost lease) while the request waited
    for its lock: the request goes to wherever the game is now."""

    code = "internal"


RESTART_VERSION_BITS = 20  # more events than one server's life gives a game in a second
RESTART_EPOCH = 1_735_689_600  # 2025-01-01: the restarts' seconds count from here


def restart_version(wall: float) -> int:
    """The version a game resumed at a restart numbers its events above: the restart's
    second, shifted past any count of events a game can have had in the seconds before.
    Presence and other events count versions as moves do, so a client may hold a version
    above the moves' count; a resumed game numbered from its moves would say a version
    again that meant something else before, and a catch-up ``since`` it would miss what
    changed (the seats now away). A cluster's new owner does the same with its lease's
    token (``server.cluster.ownership.ADOPTED_VERSION_BITS``)."""
    return max(0, int(wall) - RESTART_EPOCH) << RESTART_VERSION_BITS


Decide = Callable[[GameRoom, str, float], Change]
"""A request to carry out on a room: the room, the acting player and the time in, its
``Change`` out."""


class Rooms:
    """The rooms of the games this server holds; see the module docstring."""

    def __init__(
        self, store: Store, pool: ComputerMoves, config: HubConfig, metrics: Metrics,
        delivery: Delivery, bus: Bus, listing: Told, ownership: Ownership | None = None,
        replies: Replies | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.metrics = metrics
        self.delivery = delivery
        self.listing = listing
        self.ownership: Ownership = SoleOwnership() if ownership is None else ownership
        self.replies: Replies = delivery if replies is None else replies
        self.held: dict[str, GameRoom] = {}  # game -> its room, for every game held here
        self.locks: dict[str, RoomLock] = defaultdict(RoomLock)
        self.closing = False
        self.publisher = Publisher(bus, delivery.node)
        self.openers = Openers()
        self.writes = GameWrites(store, metrics, self.ownership, delivery, self._put_back)
        self.upkeep = Upkeep(self, pool, metrics, config, self.publisher, listing,
                             self.ownership, delivery)
        self._loop = asyncio.get_event_loop()

    # -- life cycle ------------------------------------------------------------------------

    async def resume(self) -> None:
        """Resume every unfinished game from the store."""
        self._loop = asyncio.get_running_loop()
        now = self._loop.time()
        base = restart_version(time.time())
        for record in await self.store.unfinished_games():
            room = await self._restore(record, now)
            room.renumber_from(base)  # a catch-up from before the restart gets the game
            self.held[room.id] = room
            if not record.listed:  # a private room's or the computer's game, or not known
                self.listing.unlist(room.id)
            self.upkeep.after_change(room)
            log.info("resumed game %s at ply %d", room.id, room.board.ply)

    async def close(self) -> None:
        """Stop the clocks' timers and the computer's searches; pause every room; publish
        what was decided (before the sessions close)."""
        self.closing = True
        await self.upkeep.close()
        now = self._loop.time()
        for room in self.held.values():
            room.pause(now)
        await self.publisher.close()

    def forget_name(self, name: str, renamed: str | None = None) -> None:
        """``name`` no longer names the player seated under it here (``renamed``, or deleted):
        the seats of the games this node holds stop answering to it, so a newcomer who takes
        the name is a stranger to them (no seat, no rematch, not the players' chat), and answer
        to the player's new name instead (as the game read again from the database does)."""
        gone = f"{name}\u2060#gone"  # no player can be called so: names refuse U+2060
        for room in self.held.values():
            if any(seat.player in (name, gone) for seat in room.seats):
                room.seats = tuple(  # type: ignore[assignment]
                    seat if seat.player not in (name, gone)
                    else replace(seat, player=renamed, name=renamed) if renamed is not None
                    else replace(seat, player=gone)
                    for seat in room.seats)

    def now(self) -> float:
        """The event loop's clock, which rooms and clocks run on."""
        return self._loop.time()

    # -- finding and making rooms ----------------------------------------------------------

    def games_of(self, name: str) -> list[str]:
        """The games going on with ``name`` in a seat."""
        return [
            room.id for room in self.held.values()
            if not room.over and room.side_of(name) is not None
        ]

    async def get(self, game_id: str) -> GameRoom:
        """The game's room, loaded from the store if this server does not hold it."""
        room = self.held.get(game_id)
        if room is not None:
            return room
        record = await self.store.get_game(game_id)
        if record is None:
            raise RoomError(f"no game {game_id}", ErrorCode.NO_SUCH_GAME)
        room = await self._restore(record, self._loop.time())
        self.held[room.id] = room
        if not record.listed:
            self.listing.unlist(room.id)
        if room.over:
            self.upkeep.ended(room, told=False)  # its end was handled before it was let go
        return room

    async def player_rating(self, name: str, *, stored: bool = False) -> float:
        """A player's rating (``GameWrites.rating``)."""
        return await self.writes.rating(name, stored=stored)

    async def player_seat(self, name: str) -> RoomSeat:
        """``name``'s seat in a new game: their rating as a session here knows it, else as
        the store holds it (``player_rating``), and whether they are a bot as the store holds
        it (a grant reaches the sessions later)."""
        return (await self.player_seats(name))[0]

    async def player_seats(self, *names: str) -> list[RoomSeat]:
        """``player_seat`` of each name, read from the store at once (a game's two seats:
        one trip to the store's reader, not two)."""
        records = await self.store.get_players(names)
        seats = []
        for name in names:
            record = records[name]
            rating = self.delivery.rating(name)
            if rating is None:
                rating = record.rating if record is not None else 1500.0
            seats.append(RoomSeat(name, name, round(rating),
                                  bot=record is not None and record.bot))
        return seats

    async def _restore(self, record: GameRecord, now: float) -> GameRoom:
        """A stored game's room, its human seats showing their ratings as the store holds
        them (a session here may not have heard yet of the game that changed them: a
        rematch that another node starts is restored here at once). A game the record holds
        active on a board already decided is ended in the store first."""
        ratings, bots = {}, set()
        for seat in (record.x, record.o):
            if seat.player is not None:
                player = await self.store.get_player(seat.player)
                ratings[seat.player] = 1500.0 if player is None else player.rating
                if player is not None and player.bot:
                    bots.add(seat.player)
        room = GameRoom.restore(record, now, self.config.grace, ratings, bots)
        outcome = room.board.outcome() if record.status is GameStatus.ACTIVE else None
        if outcome is not None:
            record = await self.writes.settled(record, outcome)
            room = GameRoom.restore(record, now, self.config.grace, ratings, bots)
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
        self.held[room.id] = room
        if not listed:
            self.listing.unlist(room.id)
        self.metrics.count("games_started")
        now = self._loop.time()
        async with self.locks[room.id]:  # a cluster's hand-off of the game waits for this
            await self.ownership.started(room)
            seq = self.publisher.first_of_epoch(room.id, self.ownership.token(room.id))
            if tournament is not None:  # paired, not asking: one may have gone since
                for side, seat in enumerate(seats):
                    if not self.delivery.of_player(seat.player):
                        room.starts_away(side, now)
            for seat in seats:
                sessions = self.delivery.of_player(seat.player)
                for session in sessions:
                    self.openers.opened(room.id, Peer.of(session, self.delivery.node))
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
        self.upkeep.after_change(room)
        return room

    async def hold(self, record: GameRecord, first_version: int, first_batch: int) -> GameRoom:
        """Hold a stored game someone else held: its room as after a restart, everyone away
        until they rejoin, its events versioned from ``first_version`` and its batches
        numbered from ``first_batch``, and an empty first batch that tells every
        ``Delivery`` with the game open who holds it now."""
        room = await self._restore(record, self._loop.time())
        room.renumber_from(first_version)
        self.held[room.id] = room
        self.publisher.number_from(room.id, first_batch)
        if not record.listed:
            self.listing.unlist(room.id)
        if room.over:
            self.upkeep.ended(room, told=False)
        self.publisher.deliver(room, [], force=True)
        self.upkeep.after_change(room)
        return room

    def drop(self, game_id: str) -> None:
        """Let the game go at once: no timer, no computer search, no room (it ended long
        ago, or in a cluster this node no longer holds its lease: the game itself goes on,
        so the lobby is not told to forget it)."""
        self.upkeep.drop(game_id)
        self.held.pop(game_id, None)
        lock = self.locks.get(game_id)
        if lock is not None and not lock.locked():
            del self.locks[game_id]
        self.publisher.forget(game_id)
        self.openers.forget(game_id)

    # -- the players' requests -------------------------------------------------------------

    async def watch(
        self, peer: Peer, game_id: str, since: int | None, ref: str | int | None,
        ack: bool = True,
    ) -> None:
        """``peer`` opens the game (its node has opened it pending in ``Delivery``): its
        seat is taken again or it watches; it gets a catch-up and then an ``ack``."""
        room = await self.get(game_id)
        async with self.locks[room.id]:
            self._still_here(room)
            self.openers.opened(room.id, peer)
            events = room.join(peer.name, peer.name, self._loop.time(), since, peer.moderator)
            replied = not ack
            for event in events:
                if event.audience is Audience.PLAYER and hasattr(event.message, "ref"):
                    event.message.ref = ref
                    replied = True
            # a catch-up: its events, then the ack that says it is complete
            self.publisher.deliver(room, events, only=peer,
                                   reply=None if replied else Ack(ref=ref))
        self.listing.relist(room)
        self.upkeep.after_change(room)

    def leave(self, peer: Peer, game_id: str, now: float) -> None:
        """``peer`` closes the game (unwatched, or the connection is gone); its player is
        gone from it once no connection of theirs on any node has it open."""
        if not self.openers.closed(game_id, peer) \
                and self.openers.player_has_open(game_id, peer.name):
            return  # another connection of theirs has it open
        # (a connection this node never heard open is gone too: on a cluster, a player's
        # open travels from their node, and the connection may close before it arrives)
        room = self.held.get(game_id)
        if room is None or not peer.name:
            return
        self.publisher.deliver(room, room.leave(peer.name, now))
        self.listing.relist(room)

    async def act(self, peer: Peer, game_id: str, ref: object, decide: Decide) -> None:
        """Run a room request under its lock: decide, persist, deliver, then follow up."""
        room = self.held.get(game_id) or await self.get(game_id)  # (held: a call less)
        lock = self.locks[room.id]
        if not lock.take():  # (``async with``, less the calls of a free lock's)
            await lock.acquire()
        try:
            if self.held.get(room.id) is not room:  # (_still_here, written out)
                raise RoomMoved(f"game {room.id} has moved; try again")
            now = self._loop.time()
            # known to have it open (the mover, nearly always): not away, nothing to say
            back = [] if self.openers.has_open(room.id, peer) else \
                self._present(room, peer, now)
            try:
                events = back + await self.writes.write(room, decide(room, peer.name, now))
            except Exception:
                if back and self.held.get(room.id) is room:
                    self.publisher.deliver(room, back)  # back, whatever became of the request
                raise
            ack = None if ref is None else Ack(ref=ref)  # type: ignore[arg-type]
            if ack is not None and peer.has_open:
                self.publisher.deliver(room, events, only=peer, reply=ack)  # after the events
            else:  # it hears none of the events: the ack's order does not matter
                self.publisher.deliver(room, events)
                if ack is not None:
                    self.reply(peer, ack)
        finally:
            lock.release()
        self.upkeep.after_change(room)

    async def step(self, room: GameRoom, decide: Callable[[], Change | None]) -> bool:
        """Carry out ``decide`` (a timer's or the computer's request) on ``room`` under its
        lock, if the room is still held here and it decides something; whether it did."""
        async with self.locks[room.id]:
            if self.held.get(room.id) is not room:
                return False
            change = decide()
            if change is None:
                return False
            self.publisher.deliver(room, await self.writes.write(room, change))
        return True

    async def hint(self, peer: Peer, game_id: str, ref: str | int | None) -> None:
        """Reply with the engine's suggested move (see ``ComputerTurns.hint``)."""
        room = await self.get(game_id)
        suggestion = await self.upkeep.computer.hint(room, peer.name)
        self.reply(peer, with_ref(suggestion, ref))

    def reply(self, peer: Peer, message: ServerMessage) -> None:
        """Send one message to one session, on whichever node it is."""
        self.replies.send_to(peer, message)

    def _present(self, room: GameRoom, peer: Peer, now: float) -> list[Outbound]:
        """A seated player acting on the game from a connection that has it open is
        present, whatever the room believed (a room reloaded after a lost state started with
        everyone away, and moving must bring the mover back)."""
        if not peer.has_open or not peer.name or room.side_of(peer.name) is None:
            return []
        if self.openers.has_open(room.id, peer):
            return []
        self.openers.opened(room.id, peer)
        return room.connected(peer.name, now)

    def _still_here(self, room: GameRoom) -> None:
        if self.held.get(room.id) is not room:
            raise RoomMoved(f"game {room.id} has moved; try again")

    # -- persistence -----------------------------------------------------------------------

    async def _put_back(self, room: GameRoom, record: GameRecord | None) -> None:
        """``room`` decided something the store refused to keep (a full disk, a database
        gone), which nobody has heard: put in its place the room ``record`` holds (the
        game read again after the refusal), with its players, spectators and chat, so play
        goes on from what everyone was told once the store takes writes again. If the
        record could not be read either, the room is let go and loaded afresh when next
        asked for."""
        if self.held.get(room.id) is not room:
            return  # moved on meanwhile (dropped, handed over)
        if record is None:
            self.held.pop(room.id, None)
            return
        try:
            restored = await self._restore(record, self._loop.time())
        except StoreError:  # a decided board whose end cannot be written yet
            if self.held.get(room.id) is room:
                self.held.pop(room.id, None)
            return
        if self.held.get(room.id) is not room:
            return
        restored.carry_over(room)
        self.held[room.id] = restored
        log.info("game %s: a write was refused; the room is back at ply %d", room.id,
                 restored.board.ply)
        self.upkeep.after_change(restored)
