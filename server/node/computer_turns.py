"""The computer's turns: asking the engine for a move and handing it to the room.

``ComputerTurns`` runs one task per game whose computer seat is to move. It asks the
``ComputerMoves`` (the local ``ComputerPool`` or the Redis fleet) for a move, tells the game's
players while the engine is being prepared or failing (on a cold engine it first asks for a
move that needs no compiled kernel: ``ComputerMoves.quick``), and hands the answer to the rooms'
``play`` callback, which plays it under the room's lock unless the game has moved on. It
holds no game state of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable

from engine import format_cell
from server.computer.local import ComputerError, ComputerJob, ComputerMoves
from server.errors import RoomError
from server.game.room import GameRoom, Outbound
from server.metrics import Metrics
from server.protocol import ComputerThinking, EngineStatus, ErrorCode, Suggestion, error_message

log = logging.getLogger(__name__)

COMPUTER_RETRY_DELAY = 1.0  # seconds before asking failing computer players again
ENGINE_POLL = 0.5  # seconds between progress reports while the engine is being prepared
ENGINE_READY = "the engine is ready"
HINT_PLAYER = "level8"  # who suggests a move for a hint ...
HINT_TIME = 0.5  # ... in this many seconds


def seed(text: str) -> int:
    """A stable 32-bit number for ``text`` (a game's id: its computer's random choices)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


class ComputerTurns:
    """One task per game where the computer is to move; see the module docstring."""

    def __init__(
        self,
        pool: ComputerMoves,
        metrics: Metrics,
        move_time: float,
        deliver: Callable[[GameRoom, list[Outbound]], None],
        play: Callable[[GameRoom, int, int], Awaitable[bool]],
        after: Callable[[GameRoom], None],
    ) -> None:
        self.pool = pool
        self.metrics = metrics
        self.move_time = move_time  # seconds the computer thinks per move (less on a clock)
        self._deliver = deliver
        self._play = play  # plays (room, ply, move) under the room's lock; False if stale
        self._after = after  # what the rooms do after every change
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._positions: dict[str, tuple[int, ...]] = {}  # the moves each task searches after
        self.hinting: set[str] = set()  # games with a hint being worked out

    def start(self, room: GameRoom) -> None:
        """Start the computer thinking in ``room`` unless it already is, for this position: a
        search for an older one (before a takeback and a new move) is called off."""
        position = tuple(room.board.moves)
        if room.id in self.tasks and self._positions.get(room.id) == position:
            return
        self.cancel(room.id)
        loop = asyncio.get_running_loop()
        self._positions[room.id] = position
        self.tasks[room.id] = loop.create_task(self._turn(room), name=f"ai-{room.id}")

    async def hint(self, room: GameRoom, player: str) -> Suggestion:
        """The engine's move for ``player`` in ``room``'s position (a casual game against the
        computer, the player's turn: ``GameRoom.check_hint``), one hint at a time per game, from
        the same pool as the computer's moves with a short budget."""
        room.check_hint(player)
        if room.id in self.hinting:
            raise RoomError("a hint is being worked out", ErrorCode.NOT_ALLOWED)
        ply = room.board.ply
        job = ComputerJob(room.board.geometry.name, tuple(room.board.moves), HINT_PLAYER,
                    seed=seed(room.id) + ply, time=HINT_TIME)
        self.hinting.add(room.id)
        try:
            decision = await self.pool.decide(job)
        finally:
            self.hinting.discard(room.id)
        self.metrics.count("hints")
        return Suggestion(game=room.id, ply=ply, cell=decision.move,
                          notation=format_cell(decision.move, room.board.geometry))

    def cancel(self, game_id: str) -> None:
        task = self.tasks.pop(game_id, None)
        self._positions.pop(game_id, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _budget(self, room: GameRoom) -> float:
        budget = self.move_time
        if room.clock is not None:
            left = room.clock.time_left(room.board.turn, asyncio.get_running_loop().time())
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
            except ComputerError:
                return
        ready = EngineStatus(game=room.id, state="ready", progress=1.0, message=ENGINE_READY)
        self._deliver(room, [Outbound(ready)])

    async def _turn(self, room: GameRoom) -> None:
        """Ask the pool for the computer's move and play it, unless the game has moved on."""
        try:
            side = room.computer_side
            assert side is not None
            ply = room.board.ply
            level = room.seats[side].computer_level

            def job() -> ComputerJob:  # its time from the clock as it is now
                return ComputerJob(room.board.geometry.name, tuple(room.board.moves),
                                   f"level{level}", seed=seed(room.id) + ply,
                                   time=self._budget(room))

            # a cold engine: the level's move if it needs no compiled kernel, else wait
            decision = await self.pool.quick(job()) if not self.pool.ready else None
            if decision is None and not self.pool.ready:
                await self._await_engine(room)
            self._deliver(room, [Outbound(ComputerThinking(game=room.id, ply=ply))])
            while decision is None:
                try:
                    decision = await self.pool.decide(job())
                except ComputerError as error:
                    log.error("game %s: no computer move yet (%s); retrying", room.id, error)
                    self.metrics.error(error.code)
                    notice = error_message(
                        ComputerError("the computer cannot move right now; it will try again"),
                    )
                    self._deliver(room, [Outbound(notice)])
                    await asyncio.sleep(COMPUTER_RETRY_DELAY)
            self.metrics.count("ai_moves")
            if not await self._play(room, ply, decision.move):
                self.metrics.count("ai_stale_results")
                return
            log.debug("game %s: computer played at depth %d", room.id, decision.depth)
        finally:
            if self.tasks.get(room.id) is asyncio.current_task():
                del self.tasks[room.id]
                self._positions.pop(room.id, None)
        self._after(room)
