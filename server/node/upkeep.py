"""What follows each change to a room held here: the clock's flag timer, the computer's turn,
the end (the lobby and the ownership told, the room forgotten ``FINISHED_KEPT`` seconds
later, the rematch started once both asked), and the sweep that ends abandoned games.

``Upkeep`` decides nothing about a game itself: each change it makes (a flag fall, the
computer's move, an abandonment, the rematch's notice) is a room request carried out by
the rooms' ``step`` under the room's lock, like a player's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, Protocol

from server.computer.local import ComputerMoves
from server.game.room import COMPUTER, Change, GameRoom, RoomSeat
from server.metrics import Metrics
from server.node.computer_turns import ComputerTurns
from server.node.config import HubConfig
from server.node.delivery import Delivery
from server.node.publisher import Publisher
from server.node.room_interfaces import Ownership, Told
from server.protocol import ClockSpec

log = logging.getLogger(__name__)

FINISHED_KEPT = 600.0  # seconds a finished game stays open for rematches and late viewers


class HeldRooms(Protocol):
    """What the upkeep asks of the rooms (``server.node.rooms.Rooms``)."""

    held: dict[str, GameRoom]
    closing: bool

    def now(self) -> float: ...

    async def step(self, room: GameRoom, decide: Callable[[], Change | None]) -> bool:
        """Carry out ``decide`` on ``room`` under its lock if the room is still held here and
        it decides something; whether it did."""

    async def start_game(self, seats: tuple[RoomSeat, RoomSeat], variant: str,
                         clock: ClockSpec | None, rated: bool, *, listed: bool) -> GameRoom: ...

    async def player_rating(self, name: str, *, stored: bool = False) -> float: ...

    def drop(self, game_id: str) -> None: ...


class Upkeep:
    """The follow-ups of the rooms held here; see the module docstring."""

    def __init__(self, rooms: HeldRooms, pool: ComputerMoves, metrics: Metrics,
                 config: HubConfig, publisher: Publisher, listing: Told,
                 ownership: Ownership, delivery: Delivery) -> None:
        self.rooms = rooms
        self.abandon_after = config.abandon_after
        self.listing = listing
        self.ownership = ownership
        self.delivery = delivery
        self.flag_timers: dict[str, asyncio.TimerHandle] = {}
        self.finished: set[str] = set()  # games whose end has been handled
        self.rematched: set[str] = set()  # games whose rematch has been started
        self.computer = ComputerTurns(pool, metrics, config.ai_move_time, publisher.deliver,
                                      self._computer_played, self.after_change)
        self._tasks: set[asyncio.Task[None]] = set()

    def after_change(self, room: GameRoom) -> None:
        """Set the game's flag timer and the computer's turn, or handle its end."""
        handle = self.flag_timers.pop(room.id, None)
        if handle is not None:
            handle.cancel()
        if self.rooms.closing:
            return
        if room.end is not None:  # over (the property is a call more, after every change)
            self.computer.cancel(room.id)
            if room.id not in self.finished:
                self.ended(room)
            if room.rematch_agreed and room.id not in self.rematched:
                self.rematched.add(room.id)
                self._spawn(self._start_rematch(room), f"rematch-{room.id}")
            return
        flag_at = None if room.clock is None else room.flag_at()
        if flag_at is not None:
            loop = asyncio.get_running_loop()
            self.flag_timers[room.id] = loop.call_at(
                flag_at + 0.001, lambda: self._spawn(self._flag(room), f"flag-{room.id}")
            )
        if room.computer_to_move:
            self.computer.start(room)

    def ended(self, room: GameRoom, *, told: bool = True) -> None:
        """``room``'s end is handled (with ``told``: the ownership and the lobby hear of it,
        else it was handled before the room was last let go); it is forgotten later."""
        self.finished.add(room.id)
        if told:
            self.ownership.ended(room)
            self.listing.relist(room)
            self.listing.ended(room)
        asyncio.get_running_loop().call_later(FINISHED_KEPT, self._forget, room)

    def _forget(self, room: GameRoom) -> None:
        if self.rooms.held.get(room.id) is room and room.over:
            self.rooms.drop(room.id)
            self.listing.forget(room.id)
            self.delivery.forget(room.id)
            self.ownership.forgotten(room.id)

    async def _flag(self, room: GameRoom) -> None:
        if await self.rooms.step(room, lambda: room.check_flag(self.rooms.now())):
            self.after_change(room)

    async def _computer_played(self, room: GameRoom, ply: int, move: int) -> bool:
        """Play the computer's ``move`` for ``ply``; False if the game has moved on."""
        def decide() -> Change | None:
            if room.over or room.board.ply != ply:
                return None
            return room.move(COMPUTER, move, ply, self.rooms.now())

        return await self.rooms.step(room, decide)

    async def end_abandoned(self, now: float) -> None:
        """End each game that no human has had open for ``abandon_after`` seconds."""
        for room in list(self.rooms.held.values()):
            since = room.abandoned_since()
            if since is None or now - since < self.abandon_after:
                continue

            def decide(room: GameRoom = room, since: float = since) -> Change | None:
                if room.over or room.abandoned_since() != since:
                    return None  # ended or rejoined meanwhile
                log.info("game %s: abandoned at ply %d", room.id, room.board.ply)
                return room.abandon(now)

            if await self.rooms.step(room, decide):  # not if dropped meanwhile
                self.after_change(room)

    async def _start_rematch(self, room: GameRoom) -> None:
        """Start the rematch, its players at their ratings now (the game just rated changed
        them), and tell the finished game's room, spectators too, where it went."""
        x, o = [
            seat if seat.computer_level is not None
            # from the store: a session's copy learns the new rating only when the end
            # reaches it, which on another node may be after both asked for the rematch
            else replace(seat, rating=round(await self.rooms.player_rating(seat.player,
                                                                          stored=True)))
            for seat in room.rematch_seats()
        ]
        rematch = await self.rooms.start_game((x, o), room.board.geometry.name,
                                              room.clock_spec, room.rated,
                                              listed=room.listed)  # private stays so
        await self.rooms.step(room, lambda: Change(room.rematch_started(rematch.id)))

    def drop(self, game_id: str) -> None:
        """No timer, no computer search, nothing remembered for the game."""
        handle = self.flag_timers.pop(game_id, None)
        if handle is not None:
            handle.cancel()
        self.computer.cancel(game_id)
        self.finished.discard(game_id)
        self.rematched.discard(game_id)

    async def close(self) -> None:
        """Stop the timers, the follow-ups under way and the computer's searches."""
        for handle in self.flag_timers.values():
            handle.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(self.computer.close(), *self._tasks, return_exceptions=True)

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
