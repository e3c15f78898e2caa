"""Game requests from a session to the game's room, wherever the room is held.

A request about one game reaches its owner as a typed ``RoomRequest`` with the requesting
session as a ``Peer``. The ``Router`` keeps the session's side (opening the game before a
watch, the unwatch's ``ack``) and passes the request to its ``Owners``: ``Here`` on the
embedded server, which carries it out in one ``match`` over its type; a cluster node forwards
the same typed value to the game's owner node, where ``Here`` carries it out.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import partial
from typing import Protocol, assert_never, get_args

import msgspec

from server.errors import RoomError, ServerError
from server.game.room import Change, GameRoom
from server.node.chat_removal import remove_chat_line
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
    RemoveChat,
    Resign,
    RoomAction,
    TakeBack,
    Unwatch,
    Watch,
)

__all__ = ["Here", "Join", "Leave", "Owners", "Peer", "RoomRequest", "Router", "Unavailable",
           "room_action"]


def room_action(room: GameRoom, name: str, now: float, message: RoomAction) -> Change:
    """What ``message`` of the player ``name`` changes in ``room``: the room's method it
    calls (one case per request: mypy checks that every room action has one)."""
    match message:
        case Move():
            return room.move(name, message.cell, message.ply, now)
        case Chat():
            return Change(room.chat(name, message.text, now))
        case Resign():
            return room.resign(name, now)
        case DrawOffer():
            return room.offer_draw(name, now)
        case DrawAccept():
            return room.accept_draw(name, now)
        case DrawDecline():
            return Change(room.decline_draw(name, now))
        case Abort():
            return room.abort(name, now)
        case Claim():
            return room.claim(name, now)
        case Rematch():
            return Change(room.ask_rematch(name, now))
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


ROOM_ACTIONS = get_args(RoomAction)
"""The room's actions' types, for ``isinstance``."""

RoomRequest = Watch | Hint | RoomAction | Join | Leave | RemoveChat
"""What a game's owner carries out for a session, the same typed value on every node (a
cluster forwards it as it is). A moderator's ``remove_chat`` is one: only the holder knows who
said the line (``server.node.chat_removal``)."""


class Owners(Protocol):
    """Where the game requests of this node's sessions are carried out: on the embedded
    server, here (``Here``); on a cluster node, at each game's owner node
    (``server.cluster.forwarding.Forwarding``)."""

    def carry_out(self, peer: Peer, request: RoomRequest) -> Awaitable[None]:
        """Carry ``request`` of ``peer`` out (a refusal raises ``ServerError``)."""

    def leave(self, peer: Peer, game_id: str) -> None:
        """``peer`` closed the game: its owner hears of it (in time, if elsewhere)."""

    async def games_of(self, name: str) -> list[str]:
        """The games going on with ``name`` in a seat."""


class Here:
    """The rooms held on this node, as ``Owners``: every request carried out at once."""

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms

    def carry_out(self, peer: Peer, request: RoomRequest) -> Awaitable[None]:
        """A room action (most requests: a move) is the rooms' ``act``, returned to be
        awaited by the caller (no coroutine of its own between); the others ``_carry_out``."""
        if type(request) is Move or isinstance(request, ROOM_ACTIONS):
            return self.rooms.act(peer, request.game, request.id,
                                  partial(room_action, message=request))
        return self._carry_out(peer, request)

    async def _carry_out(self, peer: Peer, request: RoomRequest) -> None:
        """One case per request type (mypy checks that every one has its case)."""
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
            case RemoveChat():
                await remove_chat_line(rooms, peer, request)
            case _:
                await rooms.act(peer, request.game, request.id,
                                partial(room_action, message=request))

    def leave(self, peer: Peer, game_id: str) -> None:
        self.rooms.leave(peer, game_id, self.rooms.now())

    async def games_of(self, name: str) -> list[str]:
        return self.rooms.games_of(name)


class Router:
    """The game requests of the sessions here: the session's side (opening the game for a
    watch, the unwatch), then the request to its game's ``owners``."""

    def __init__(self, delivery: Delivery, owners: Owners, node: str = "") -> None:
        self.delivery = delivery
        self.owners = owners
        self.node = node

    def request(self, session: Session, message: GameRequest) -> Awaitable[None]:
        """Carry out a game request of ``session``: a hint or a room action (a move) is its
        owners' ``carry_out``, handed back to be awaited (no coroutine of its own between)."""
        match message:
            case Watch():
                return self._watch(session, message)
            case Unwatch():
                return self._unwatch(session, message)
            case _:  # a hint, or one of the room's actions
                has_open = message.game in session.rooms  # (Delivery.has_open, less a call)
                return self.owners.carry_out(Peer.of(session, self.node, has_open), message)

    async def _watch(self, session: Session, message: Watch) -> None:
        game_id = message.game
        already = self.delivery.has_open(session, game_id)
        await self.delivery.open(session, game_id, PENDING)
        try:
            await self.owners.carry_out(Peer.of(session, self.node, True), message)
        except BaseException:
            if not already:
                self.delivery.close(session, game_id)
            raise

    async def _unwatch(self, session: Session, message: Unwatch) -> None:
        if message.game not in session.rooms:
            raise RoomError("you do not have this game open", ErrorCode.NOT_ALLOWED)
        self.leave(session, message.game)
        session.send(Ack(ref=message.id))

    async def remove_chat(self, session: Session, message: RemoveChat) -> None:
        """A moderator's ``remove_chat``, to the game's holder (who acks it)."""
        has_open = self.delivery.has_open(session, message.game)
        await self.owners.carry_out(Peer.of(session, self.node, has_open), message)

    def leave(self, session: Session, game_id: str) -> None:
        """``session`` closes the game (unwatched, or the connection is gone)."""
        self.delivery.close(session, game_id)
        self.owners.leave(Peer.of(session, self.node), game_id)

    async def games_of(self, name: str) -> list[str]:
        """The games going on with ``name`` in a seat (for the welcome)."""
        return await self.owners.games_of(name)


class Unavailable(ServerError):
    """A request that needs another node cannot be carried out now (Redis unreachable, or
    the game's owner did not answer in time); ``retry_in`` seconds is when trying again is
    likely to work (another node has taken the game over by then)."""

    code = ErrorCode.UNAVAILABLE

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in
