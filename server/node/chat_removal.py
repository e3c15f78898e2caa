"""A moderator's ``remove_chat``, carried out by the node that holds the game.

Only the game's holder knows who said a line, so the request travels there as a typed room
request (``server.node.routing``, and across nodes ``server.cluster.forwarding``), and the
rank is checked where the line is: a moderator removes a player's line or their own, an admin
anyone's (``not_moderator`` otherwise). The line is taken out under the room's lock, then
the removal is written to the audit log, then the moderator hears the ``ack``: an ``ack`` means
the line is gone and logged, on one node or many.
"""

from __future__ import annotations

from server.errors import ServerError
from server.game.room import Change
from server.node import levers
from server.node.control import MODERATORS, chat_author, shielded
from server.node.delivery import Peer
from server.node.rooms import Rooms
from server.protocol import Ack, ErrorCode, RemoveChat

__all__ = ["remove_chat_line"]


async def remove_chat_line(rooms: Rooms, peer: Peer, request: RemoveChat) -> None:
    """Take ``request.line`` out of ``request.game``, held here, if ``peer``'s rank allows."""
    room = await rooms.get(request.game)  # no_such_game for a game that is not
    author = chat_author(room, request.line, rooms.now())
    if author is None:
        raise ServerError(f"no chat line {request.line} in game {room.id}",
                          ErrorCode.NOT_ALLOWED)
    roles = await levers.roles_of(rooms.store, peer.name)
    if not roles & MODERATORS:  # (its node checked too; the rank may have changed since)
        raise ServerError("only a moderator may do that", ErrorCode.NOT_MODERATOR)
    if "admin" not in roles and await shielded(rooms.store, author, peer.name):
        raise ServerError("only an admin may act on a moderator or an admin",
                          ErrorCode.NOT_MODERATOR)
    line = request.line
    await rooms.act(Peer("", 0, ""), room.id, None,
                    lambda room, name, now: Change(room.remove_chat(line, now)))
    await levers.log_chat_removed(rooms.store, peer.name, room.id, line, request.reason)
    rooms.reply(peer, Ack(ref=request.id))
