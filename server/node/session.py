"""One client connection as the hub sees it: who it is, what it watches, and a bounded outbox.

The hub never touches a socket: ``send`` encodes once and queues the frame, and the session's
``Outlet`` (the transport, given at construction) is told when frames wait, then takes them
all (``take_frames``) and writes them in one system call. A full outbox (``max_queue`` frames
or ``max_queue_bytes`` bytes) closes the session as a slow consumer.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, deque
from typing import Protocol

import msgspec

from server.game.addresses import address_key
from server.game.records import PlayerRecord
from server.protocol import (
    CHAT_BURST,
    CHAT_PER_SECOND,
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_SECOND,
    encode,
)

CLOSE_GOING_AWAY = 1001
CLOSE_BAD_DATA = 1007  # RFC 6455: a text frame that is not UTF-8
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_TRY_AGAIN_LATER = 1013
DEFAULT_MAX_QUEUE = 512
DEFAULT_MAX_QUEUE_BYTES = 1 << 20
CLOSE_REVOKED = 4001  # the device's token was revoked (docs/protocol.md)
LOGIN_ATTEMPTS_PER_NAME = (10, 120.0)  # password attempts on one name: at once, back an hour
LOGIN_ATTEMPTS_PER_ADDRESS = (30, 360.0)  # password attempts from one address: the same
LOGIN_REFILL = 12  # either bucket takes back 12 times its burst an hour
REPORTS_PER_HOUR = 10  # reports one player may make: at once, and back an hour

_ids = itertools.count(1)


class TokenBucket:
    """``rate`` tokens a second up to ``burst``; each client frame takes one."""

    def __init__(self, rate: float = RATE_LIMIT_PER_SECOND, burst: int = RATE_LIMIT_BURST) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.updated: float | None = None

    def take(self, now: float) -> bool:
        """Spend a token if one is left at ``now``."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def wait(self, now: float) -> float:
        """Seconds from ``now`` until a token is there, rounded up to 0.1 s (0: one is now)."""
        self._refill(now)
        missing = max(0.0, 1.0 - self.tokens)
        return math.ceil(missing / self.rate * 10) / 10

    def full(self, now: float) -> bool:
        """Whether the bucket holds its whole burst at ``now``."""
        self._refill(now)
        return self.tokens >= self.burst

    def _refill(self, now: float) -> None:
        if self.updated is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now


class AddressLimits:
    """Limits per client address: open connections, and new players as a token bucket of
    ``new_players`` that refills at that many an hour. 0 turns a limit off. An address counts
    by its key (``server.game.addresses.address_key``): a whole IPv6 /64 as one address.

    This one counts in the process (one server): the transport and the hub ask it through
    its async methods, the ``AddressCounts`` a cluster node's
    ``server.cluster.address_limits.RedisAddressLimits`` answers for the whole cluster (with
    one of these as its own count)."""

    def __init__(self, max_connections: int = 0, new_players: int = 0,
                 password_attempts: int = LOGIN_ATTEMPTS_PER_ADDRESS[0],
                 reports: int = REPORTS_PER_HOUR) -> None:
        self.max_connections = max_connections
        self.new_players = new_players
        self.reports = reports  # a player's reports: at once, and back an hour; 0: no limit
        self.connections: Counter[str] = Counter()
        self._buckets: dict[str, TokenBucket] = {}
        self._reports: dict[str, TokenBucket] = {}  # by reporter's name
        self.login_per_name = LOGIN_ATTEMPTS_PER_NAME  # (burst, an hour); burst 0: no limit
        self.login_per_address = (password_attempts, password_attempts * float(LOGIN_REFILL))
        self._logins: dict[str, TokenBucket] = {}  # "name:<key>" and "address:<address>"
        self.chat_lines = (CHAT_BURST, CHAT_PER_SECOND)  # a player's (burst, per second)
        self._chats: dict[str, TokenBucket] = {}  # by speaker's name

    def connect(self, address: str) -> bool:
        """Count a new connection from ``address``, unless it has its most open already."""
        address = address_key(address)
        if self.max_connections and self.connections[address] >= self.max_connections:
            return False
        self.connections[address] += 1
        return True

    def disconnect(self, address: str) -> None:
        address = address_key(address)
        self.connections[address] -= 1
        if self.connections[address] <= 0:
            del self.connections[address]

    def new_player(self, address: str, now: float) -> float | None:
        """Count a new player made from ``address``: None if allowed, else the seconds to wait."""
        if not self.new_players:
            return None
        return _take(self._buckets, address_key(address), self.new_players, now)

    def report(self, name: str, now: float) -> float | None:
        """Count one ``report`` by the player ``name``: None if allowed, else the seconds
        to wait (a bucket of ``reports`` that refills at that many an hour)."""
        if not self.reports:
            return None
        return _take(self._reports, name, self.reports, now)

    def chat_line(self, name: str, now: float) -> float | None:
        """Count one chat line said by the player ``name``, on any of their sockets: None if
        allowed, else the seconds to wait (a bucket of ``chat_lines``)."""
        burst, rate = self.chat_lines
        if not burst:
            return None
        return _take_from(self._chats, name, burst, rate, now)

    def login_attempt(self, address: str, name: str, now: float) -> float | None:
        """Count one password attempt (``login``, ``recover``, a ``set_password`` with the
        current one) on the name ``name`` (its folded form) from ``address``: None if allowed,
        else the seconds until one would be. An attempt refused takes nothing."""
        buckets = [self._login_bucket(f"name:{name}", self.login_per_name, now),
                   self._login_bucket(f"address:{address_key(address)}",
                                      self.login_per_address, now)]
        held = [bucket for bucket in buckets if bucket is not None]
        wait = max((bucket.wait(now) for bucket in held), default=0.0)
        if wait > 0:
            return wait
        for bucket in held:
            bucket.take(now)
        return None

    def _login_bucket(self, key: str, limit: tuple[int, float], now: float) -> TokenBucket | None:
        burst, per_hour = limit
        if not burst:
            return None
        bucket = self._logins.get(key)
        if bucket is None:
            if len(self._logins) > 100_000:  # forget full buckets: they hold no information
                self._logins = {k: b for k, b in self._logins.items() if not b.full(now)}
            bucket = self._logins[key] = TokenBucket(per_hour / 3600, burst)
        return bucket

    def give_back_player(self, address: str) -> None:
        """A new player counted by ``new_player`` was not made after all (the cluster's
        count refused it): its token goes back."""
        self._buckets[address_key(address)].tokens += 1.0

    def give_back_report(self, name: str) -> None:
        """The same for a report counted by ``report``."""
        self._reports[name].tokens += 1.0

    def give_back_chat(self, name: str) -> None:
        """The same for a chat line counted by ``chat_line``."""
        self._chats[name].tokens += 1.0

    def give_back_login(self, address: str, name: str) -> None:
        """An attempt counted by ``login_attempt`` was not made after all (the cluster's
        count refused it): its tokens go back."""
        for key in (f"name:{name}", f"address:{address_key(address)}"):
            if key in self._logins:
                self._logins[key].tokens += 1.0

    async def add_login_attempt(self, address: str, name: str, now: float) -> float | None:
        """Count one password attempt on ``name`` from ``address`` (``login_attempt``); the
        cluster's count is Redis's."""
        return self.login_attempt(address, name, now)

    async def add_connection(self, address: str) -> bool:
        """Let a new connection from ``address`` in and count it, unless it has its most open."""
        return self.connect(address)

    async def remove_connection(self, address: str) -> None:
        """A connection counted by ``add_connection`` has closed."""
        self.disconnect(address)

    async def add_report(self, name: str, now: float) -> float | None:
        """Count one ``report`` by ``name`` (``report``); the cluster's count is Redis's."""
        return self.report(name, now)

    async def add_chat(self, name: str, now: float) -> float | None:
        """Count one chat line by ``name`` (``chat_line``); the cluster's count is Redis's."""
        return self.chat_line(name, now)

    async def add_player(self, address: str, now: float) -> float | None:
        """Count a new player made from ``address``: None if allowed, else the seconds to wait
        (``now``: the hub's clock; the cluster's count uses Redis's)."""
        return self.new_player(address, now)

    async def close(self) -> None:
        """Nothing to give back here; the cluster's count takes this node's out."""


def _take(buckets: dict[str, TokenBucket], key: str, per_hour: int, now: float) -> float | None:
    """Take a token from ``key``'s bucket (``per_hour`` at once, that many back an hour):
    None if there was one, else the seconds until there is."""
    return _take_from(buckets, key, per_hour, per_hour / 3600, now)


def _take_from(buckets: dict[str, TokenBucket], key: str, burst: int, rate: float,
               now: float) -> float | None:
    """Take a token from ``key``'s bucket (``burst`` at once, ``rate`` back a second): None
    if there was one, else the seconds until there is."""
    bucket = buckets.get(key)
    if bucket is None:
        if len(buckets) > 100_000:  # forget full buckets: they hold no information
            for full in [k for k, b in buckets.items() if b.full(now)]:
                del buckets[full]
        bucket = buckets[key] = TokenBucket(rate, burst)
    if bucket.take(now):
        return None
    return bucket.wait(now)


class AddressCounts(Protocol):
    """The limits per address and per player as the transport and the hub ask them: one
    server's own count (``AddressLimits``), or a cluster's one count (the cluster's
    ``RedisAddressLimits``). Each ``add_*`` counts one and answers None if allowed, else the
    seconds to wait (``add_connection``: whether it is let in)."""

    @property
    def max_connections(self) -> int: ...

    async def add_connection(self, address: str) -> bool: ...

    async def remove_connection(self, address: str) -> None: ...

    async def add_player(self, address: str, now: float) -> float | None: ...

    async def add_report(self, name: str, now: float) -> float | None: ...

    async def add_chat(self, name: str, now: float) -> float | None: ...

    async def add_login_attempt(self, address: str, name: str, now: float) -> float | None: ...

    async def close(self) -> None: ...


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
        self._outbox: deque[bytes] = deque()
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

    def take_frames(self) -> deque[bytes]:
        """Every frame queued, oldest first, taken out of the outbox (which starts anew)."""
        frames, self._outbox = self._outbox, deque()
        self.queued_bytes = 0
        return frames

    def __repr__(self) -> str:
        return f"<Session {self.id} {self.name or '-'} {self.peer}>"
