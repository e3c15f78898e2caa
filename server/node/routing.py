"""Game requests from a session to the game's room, wherever the room is held.

A request about one game reaches its owner as a typed ``RoomRequest`` with the requesting
session as a ``Peer``; ``Router.execute`` carries it out in one ``match`` over its type. The
embedded server's ``Router`` holds every room; a cluster forwards the same typed value to the
owner node. The session's side (opening the game before a watch, the unwatch's ``ack``) stays
on the session's node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import assert_never

import msgspec

from server.errors import RoomError, ServerError
from server.game.room import GameRoom, Outbound
from server.node.delivery import PENDING, Delivery, Peer
from server.node.rooms import Rooms
from server.node.session import Session
from server.protocol import (
    Abort,
    Ack,
    Chat,
    Claim,
    DrawAccept,
    DrawDecline,
    DrawOffer,
    ErrorCode,
    GameRequest,
    Hint,
    Move,
    Rematch,
    RequestId,
    Resign,
    RoomAction,
    TakeBack,
    Unwatch,
    Watch,
)

__all__ = ["Asked", "Awaiting", "Join", "Leave", "Peer", "RoomRequest", "Router", "Unavailable",
           "room_action"]


def room_action(room: GameRoom, name: str, now: float, message: RoomAction) -> list[Outbound]:
    """What ``message`` of the player ``name`` changes in ``room``: the room's method it
    calls (one case per request: mypy checks that every room action has one)."""
    match message:
        case Move():
            return room.move(name, message.cell, message.ply, now)
        case Chat():
            return room.chat(name, message.text, now)
        case Resign():
            return room.resign(name, now)
        case DrawOffer():
            return room.offer_draw(name, now)
        case DrawAccept():
            return room.accept_draw(name, now)
        case DrawDecline():
            return room.decline_draw(name, now)
        case Abort():
            return room.abort(name, now)
        case Claim():
            return room.claim(name, now)
        case Rematch():
            return room.ask_rematch(name, now)
        case TakeBack():
            return room.take_back(name, now)
        case _:
            assert_never(message)


class Join(msgspec.Struct, tag="join", tag_field="t", kw_only=True, gc=False):
    """Open a game for a session without an ``ack``: a rejoin with a new owner, or a game
    started elsewhere for a player here."""

    game: str
    id: None = None


class Leave(msgspec.Struct, tag="leave", tag_field="t", kw_only=True, gc=False):
    """A session closes the game (it unwatched, or its connection is gone)."""

    game: str
    id: None = None


RoomRequest = Watch | Hint | RoomAction | Join | Leave
"""What a game's owner carries out for a session, the same typed value on every node (a
cluster forwards it as it is)."""


class Router:
    """Game requests of the sessions here, carried out through ``rooms`` (the embedded
    server holds every room)."""

    def __init__(self, rooms: Rooms, delivery: Delivery, node: str = "") -> None:
        self.rooms = rooms
        self.delivery = delivery
        self.node = node

    async def request(self, session: Session, message: GameRequest) -> None:
        """Carry out a game request of ``session``."""
        game_id = message.game
        match message:
            case Watch():
                already = self.delivery.has_open(session, game_id)
                await self.delivery.open(session, game_id, PENDING)
                try:
                    await self.dispatch(Peer.of(session, self.node, True), message)
                except BaseException:
                    if not already:
                        self.delivery.close(session, game_id)
                    raise
            case Unwatch():
                if game_id not in session.rooms:
                    raise RoomError("you do not have this game open", ErrorCode.NOT_ALLOWED)
                self.leave(session, game_id)
                session.send(Ack(ref=message.id))
            case _:  # a hint, or one of the room's actions
                has_open = self.delivery.has_open(session, game_id)
                await self.dispatch(Peer.of(session, self.node, has_open), message)

    def leave(self, session: Session, game_id: str) -> None:
        """``session`` closes the game (unwatched, or the connection is gone)."""
        self.delivery.close(session, game_id)
        self.rooms.leave(Peer.of(session, self.node), game_id, self.rooms.now())

    async def dispatch(self, peer: Peer, request: RoomRequest) -> None:
        """Carry the request out here (the embedded server holds every room)."""
        await self.execute(peer, request)

    async def execute(self, peer: Peer, request: RoomRequest) -> None:
        """Carry the request out on the room held here (one case per request type: mypy
        checks that every one has its case)."""
        rooms = self.rooms
        match request:
            case Watch():
                await rooms.watch(peer, request.game, request.since, request.id)
            case Join():
                await rooms.watch(peer, request.game, None, None, ack=False)
            case Leave():
                rooms.leave(peer, request.game, rooms.now())
            case Hint():
                await rooms.hint(peer, request.game, request.id)
            case _:
                await rooms.act(peer, request.game, request.id,
                                partial(room_action, message=request))

    async def games_of(self, name: str) -> list[str]:
        """The games going on with ``name`` in a seat (for the welcome)."""
        return self.rooms.games_of(name)


class Unavailable(ServerError):
    """A request that needs another node cannot be carried out now (Redis unreachable, or
    the game's owner did not answer in time); ``retry_in`` seconds is when trying again is
    likely to work (another node has taken the game over by then)."""

    code = ErrorCode.UNAVAILABLE

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in


@dataclass(frozen=True)
class Asked:
    """A session's request sent to another node, not answered yet."""

    ref: RequestId
    game: str
    watch: bool  # a watch: the game opened pending here closes if it fails
    node: str  # where it was sent
    sent: float  # on the event loop's clock


class _Ref(msgspec.Struct):
    ref: RequestId | None = None  # in a reply


_ref_of = msgspec.json.Decoder(_Ref).decode


class Awaiting:
    """The origin's side of forwarded requests (Colyseus's ``remoteRoomCall`` rejects after
    a deadline the same way): each request of a session here that went to another node is
    kept until a reply to it (a frame with its ``ref``) reaches its session, so that one
    whose answer never comes (its owner died, or the bus lost it) can be answered with
    ``unavailable``. Requests without an ``id`` are not kept: nothing could match them."""

    def __init__(self) -> None:
        self._asked: dict[int, dict[RequestId, Asked]] = {}

    def __len__(self) -> int:
        return sum(len(asked) for asked in self._asked.values())

    def sent(self, session: int, asked: Asked) -> None:
        self._asked.setdefault(session, {})[asked.ref] = asked

    def answered(self, session: int, frame: bytes) -> None:
        """``frame`` goes to ``session``: if it replies to a request of it, that one is done."""
        asked = self._asked.get(session)
        if not asked:
            return
        try:
            ref = _ref_of(frame).ref
        except msgspec.DecodeError:
            return
        if ref is not None and asked.pop(ref, None) is not None and not asked:
            del self._asked[session]

    def moved(self, game: str, node: str) -> None:
        """``game``'s owner is ``node`` now: the requests about it sent to another node may
        never be answered (that node passed them on to an owner since deposed, or lost them),
        so they wait on nobody: answered ``unavailable`` at the short deadline if no answer
        comes by then."""
        for by_ref in self._asked.values():
            for ref, asked in by_ref.items():
                if asked.game == game and asked.node not in (node, ""):
                    by_ref[ref] = replace(asked, node="")

    def take(self, session: int, ref: RequestId | None) -> Asked | None:
        """The request ``ref`` of ``session``, no longer waited for (its sending failed)."""
        return None if ref is None else self._pop(session, ref)

    def expired(self, now: float, deadline: float, gone: Callable[[str], bool]
                ) -> list[tuple[int, Asked]]:
        """The requests given up now, oldest first: those without an answer ``deadline``
        seconds after they were sent whose node is ``gone`` (or the bus is), and any after
        three times ``deadline`` (their node lives, yet the request or its answer was lost)."""
        late = sorted(((session, asked) for session, by_ref in self._asked.items()
                       for asked in by_ref.values() if now - asked.sent >= deadline),
                      key=lambda item: item[1].sent)
        expired = [(session, asked) for session, asked in late
                   if gone(asked.node) or now - asked.sent >= 3 * deadline]
        for session, asked in expired:
            self._pop(session, asked.ref)
        return expired

    def _pop(self, session: int, ref: RequestId) -> Asked | None:
        by_ref = self._asked.get(session)
        if by_ref is None:
            return None
        asked = by_ref.pop(ref, None)
        if not by_ref:
            del self._asked[session]
        return asked
