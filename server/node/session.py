"""One client connection as the hub sees it: who it is, what it watches, and a bounded outbox.

The hub never touches a socket: ``send`` encodes once and queues the frame, and the session's
``Outlet`` (the transport, given at construction) is told when frames wait, then takes them
all (``take_frames``) and writes them in one system call. A full outbox (``max_queue`` frames
or ``max_queue_bytes`` bytes) closes the session as a slow consumer.
"""

from __future__ import annotations

import itertools
from typing import Protocol

import msgspec

from server.game.records import PlayerRecord
from server.node.rates import TokenBucket
from server.protocol import RATE_LIMIT_BURST, RATE_LIMIT_PER_SECOND, encode

CLOSE_GOING_AWAY = 1001
CLOSE_BAD_DATA = 1007  # RFC 6455: a text frame that is not UTF-8
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_TRY_AGAIN_LATER = 1013
DEFAULT_MAX_QUEUE = 512
DEFAULT_MAX_QUEUE_BYTES = 1 << 20
CLOSE_REVOKED = 4001  # the device's token was revoked (docs/protocol.md)

_ids = itertools.count(1)


class Outlet(Protocol):
    """The transport a session's frames go out through (``server.http.app.SocketWriter``)."""

    def frames_waiting(self, session: Session) -> None:
        """``session`` has frames to write (its first since the last write), or closes:
        write what it queued, then its close frame if it is closed."""

    def hang_up(self) -> None:
        """Drop the connection at once (a slow consumer: nothing queued would get through)."""


class Session:
    """A connection: its player once authenticated, the games it has open, its outbox, and
    the ``outlet`` its frames go out through (none: they stay queued, as in a test)."""

    def __init__(
        self,
        peer: str = "",
        max_queue: int = DEFAULT_MAX_QUEUE,
        rate: float = RATE_LIMIT_PER_SECOND,
        burst: int = RATE_LIMIT_BURST,
        max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES,
        outlet: Outlet | None = None,
    ) -> None:
        self.id = next(_ids)
        self.peer = peer
        self.player: PlayerRecord | None = None
        self.device: int | None = None  # the device whose token opened the session
        self.moderator = False  # its player was a moderator or admin at hello: sees both chats
        self.rooms: set[str] = set()
        self.lobby = False
        self.bucket = TokenBucket(rate, burst)
        self.close_code: int | None = None
        self.close_reason = ""
        self.outlet = outlet
        self._outbox: list[bytes] = []  # (a list: a new one a write costs less than a deque)
        self._max_queue = max_queue
        self._max_bytes = max_queue_bytes
        self.queued_bytes = 0  # the size of the frames in the outbox

    @property
    def name(self) -> str | None:
        return None if self.player is None else self.player.name

    @property
    def closed(self) -> bool:
        return self.close_code is not None

    def send(self, message: msgspec.Struct) -> None:
        """Queue one message for this client (dropped if the session is closing)."""
        self.send_raw(encode(message))

    def send_raw(self, frame: bytes) -> None:
        """Queue an encoded frame; a full outbox closes the session as a slow consumer."""
        if self.close_code is not None:  # closed (the property is a call a frame more)
            return
        outbox = self._outbox
        queued = self.queued_bytes + len(frame)
        if queued > self._max_bytes or (outbox and len(outbox) >= self._max_queue):
            self.close(CLOSE_TRY_AGAIN_LATER, "slow consumer: outgoing buffer full", abort=True)
            return
        self.queued_bytes = queued
        if outbox:
            outbox.append(frame)
            return
        outbox.append(frame)  # the first since the last write: the outlet is told once
        if self.outlet is not None:
            self.outlet.frames_waiting(self)

    def close(self, code: int, reason: str, *, abort: bool = False) -> None:
        """Ask the transport to close the connection after the frames already queued, or at
        once with ``abort`` (the client is not reading, so nothing queued would get through)."""
        if self.closed:
            return
        self.close_code, self.close_reason = code, reason
        if self.outlet is None:
            return
        if abort:
            self.outlet.hang_up()
        else:  # the transport writes what is queued, then closes
            self.outlet.frames_waiting(self)

    def take_frames(self) -> list[bytes]:
        """Every frame queued, oldest first, taken out of the outbox (which starts anew)."""
        frames, self._outbox = self._outbox, []
        self.queued_bytes = 0
        return frames

    def __repr__(self) -> str:
        return f"<Session {self.id} {self.name or '-'} {self.peer}>"
