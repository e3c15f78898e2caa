"""What the rooms keep in the store: each ``Change``'s ``Write`` (a move, a take-back, the
end with its ratings) committed before anyone hears of it, and the stored games and
players' ratings the rooms read back.

A write whose outcome is unknown (the connection lost at the commit: code
``store_unavailable``) is looked up in the record: if it is there, it stands and is told as
if the store had answered (never ``store_unavailable`` for a move that was stored). After any
other refusal the rooms put the room back as the record, read after it, holds it, and the
refusal is raised.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from engine import Outcome
from server.errors import StoreError
from server.game.records import GameRecord, GameStatus
from server.game.room import MOVED, Change, GameRoom, Outbound, Write
from server.game.room_state import RESULTS
from server.metrics import Metrics
from server.node.delivery import Delivery
from server.node.room_interfaces import Ownership
from server.protocol import ErrorCode, RatingChange
from server.store.base import Store

log = logging.getLogger(__name__)


PutBack = Callable[[GameRoom, GameRecord | None], Awaitable[None]]
"""Put a room back as the record (read after a refused write; None: unreadable) holds it
(``Rooms._put_back``)."""


class GameWrites:
    """The rooms' writes and reads of the store; see the module docstring."""

    def __init__(self, store: Store, metrics: Metrics, ownership: Ownership,
                 delivery: Delivery, put_back: PutBack) -> None:
        self.store = store
        self.metrics = metrics
        self.ownership = ownership
        self.delivery = delivery  # its sessions learn their players' new ratings
        self.put_back = put_back

    async def write(self, room: GameRoom, change: Change) -> list[Outbound]:
        """Commit ``change``'s write; its events to tell (the end rated, if it was). If the
        store refuses, the room is put back as the record holds it (``put_back``) and the
        store's error raised: nobody hears of the events."""
        write = change.write
        if write is None:
            return change.events
        try:
            if write is MOVED:  # a move that does not end the game: the commonest by far
                await self.store.record_move(room.id, room.last_move_record(time.time()),
                                             fence=self.ownership.token(room.id))
                self.metrics.counters["moves"] += 1
                return change.events
            return await self._commit(room, change.events, write)
        except StoreError as error:
            try:
                record = await self.store.get_game(room.id)
            except StoreError:
                record = None
            if error.code == ErrorCode.STORE_UNAVAILABLE and record is not None \
                    and _holds(record, room, write):
                log.warning("game %s: the store said %s, but the write is there", room.id,
                            error)
                if record.status is GameStatus.FINISHED:
                    return await self._rated(room, change.events, record)
                return change.events
            await self.put_back(room, record)
            raise error from None

    async def _commit(self, room: GameRoom, events: list[Outbound], write: Write
                      ) -> list[Outbound]:
        """Keep ``write``: the move, a take-back, the end of the game. A move that ends the
        game is written with the end (and the ratings) in one transaction."""
        fence = self.ownership.token(room.id)
        move = room.last_move_record(time.time()) if write.moved else None
        if write.taken_back is not None:
            await self.store.take_back(room.id, write.taken_back, fence=fence)
            self.metrics.count("takebacks")
        end = write.end
        if move is not None and (end is None or end.result == "*"):
            await self.store.record_move(room.id, move, fence=fence)
            self.metrics.count("moves")
        if end is None:
            return events
        if end.result == "*":
            await self.store.abort_game(room.id, reason=end.reason, now=time.time(),
                                        fence=fence)
        else:
            record = await self.store.finish_game(
                room.id, result=end.result, reason=end.reason, now=time.time(),
                winning_line=end.line, fence=fence, move=move,
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

    async def settled(self, record: GameRecord, outcome: Outcome) -> GameRecord:
        """``record`` held active on a board already decided (a line, full, or dead: a
        database written before the last move and the end were one transaction), ended in
        the store as its last move ended it."""
        log.warning("game %s: stored active on a decided board (ply %d); ending it",
                    record.id, len(record.moves))
        settled = await self.store.finish_game(
            record.id, result=RESULTS[outcome.winner], reason=outcome.termination.value,
            now=record.moves[-1].at if record.moves else time.time(),
            winning_line=outcome.line, fence=self.ownership.token(record.id),
        )
        self.metrics.count("games_finished")
        return settled

    async def rating(self, name: str, *, stored: bool = False) -> float:
        """A player's rating: as a session here knows it, or with ``stored`` (or no session
        here) as the store holds it, which a game's end updates before anyone hears of it."""
        rating = None if stored else self.delivery.rating(name)
        if rating is not None:
            return rating
        player = await self.store.get_player(name)
        return player.rating if player is not None else 1500.0


def _holds(record: GameRecord, room: GameRoom, write: Write) -> bool:
    """Whether ``record`` (read after a write whose outcome is unknown) holds ``write``: the
    room's last move, and the end if it ends the game (a take-back is not looked for: it is
    told as refused)."""
    if write.taken_back is not None:
        return False
    if write.moved:
        ply = room.board.ply
        if len(record.moves) < ply or record.moves[ply - 1].cell != room.board.moves[-1]:
            return False
    end = write.end
    if end is None:
        return record.status is GameStatus.ACTIVE
    return record.status is not GameStatus.ACTIVE and (record.result or "*") == end.result
