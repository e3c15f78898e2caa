"""The limits per client address and per player that one node counts itself
(``AddressLimits``), and the interface the transport and the hub ask them through
(``AddressCounts``: a cluster's ``server.cluster.address_limits`` counts once in Redis).
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from server.game.addresses import address_key
from server.node.rates import TokenBucket
from server.protocol import CHAT_BURST, CHAT_PER_SECOND

LOGIN_ATTEMPTS_PER_NAME = (10, 120.0)  # password attempts on one name: at once, back an hour
LOGIN_ATTEMPTS_PER_ADDRESS = (30, 360.0)  # password attempts from one address: the same
LOGIN_REFILL = 12  # either bucket takes back 12 times its burst an hour
REPORTS_PER_HOUR = 10  # reports one player may make: at once, and back an hour


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
