"""Finding opponents: open seeks, quick-pairing pools and private rooms. Pure: time is passed in.

A player waits in at most one place at a time: one seek, one pool, or one private room that he
hosts. Asking to wait somewhere else first raises ``MatchmakingError`` (``too_many_seeks`` or
``already_queued``), so the client must cancel; the app calls ``Matchmaker.withdraw`` when a
player disconnects or starts a game. Accepting a seek or joining a private room pairs at once,
so it withdraws the accepting player from wherever he waited.

Players are identified by their names as the app passes them (one spelling per player).
Colours are ``"x"`` and ``"o"`` as on the wire; ``"random"`` is decided by the injected
``random.Random``, so tests and replays are deterministic.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import random
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from server.errors import MatchmakingError
from server.game.records import TimeControl

ColourChoice = Literal["x", "o", "random"]
PoolKey = tuple[str, TimeControl | None]
"""A quick-pairing pool: the variant and the clock (None: untimed)."""

PRIVATE_ROOM_TTL = 30 * 60.0  # seconds a private room waits for the friend to join


@dataclass(frozen=True)
class Pairing:
    """Two players matched for a game, colours decided: ``x`` moves first. A ``private``
    pairing (from a private room) makes a game the lobby does not list."""

    x: str
    o: str
    variant: str
    clock: TimeControl | None
    rated: bool
    private: bool = False


@dataclass(frozen=True)
class WaitingSeek:
    """An open challenge in the lobby that anyone may accept."""

    id: str
    seeker: str
    rating: float | None
    variant: str
    clock: TimeControl | None
    rated: bool
    colour: ColourChoice
    created: float


@dataclass(frozen=True)
class PrivateRoom:
    """A game waiting for the one friend who knows ``code``."""

    code: str
    host: str
    variant: str
    clock: TimeControl | None
    rated: bool
    colour: ColourChoice
    expires: float


@dataclass(frozen=True)
class RatingWindow:
    """How far apart two pool players' ratings may be: it widens while they wait."""

    initial: float = 100.0
    step: float = 50.0
    every: float = 5.0
    maximum: float = 500.0

    def at(self, waited: float) -> float:
        """The half-width of the window after waiting ``waited`` seconds."""
        steps = int(max(0.0, waited) // self.every)
        return min(self.maximum, self.initial + self.step * steps)


def _colours(chooser: str, other: str, choice: ColourChoice, rng: random.Random) -> tuple[str, str]:
    """``(x, o)`` when ``chooser`` asked for ``choice`` against ``other``."""
    if choice == "random":
        choice = "x" if rng.random() < 0.5 else "o"
    return (chooser, other) if choice == "x" else (other, chooser)


@dataclass(frozen=True)
class _Waiter:
    player: str
    rating: float
    since: float
    order: int  # breaks ties between players who joined at the same instant


class PairingPool:
    """Players waiting for a quick game of one variant and clock; quick games are rated."""

    def __init__(
        self,
        variant: str,
        clock: TimeControl | None,
        window: RatingWindow | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.variant = variant
        self.clock = clock
        self.window = window or RatingWindow()
        self._rng = rng or random.Random()
        self._waiters: dict[str, _Waiter] = {}
        self._order = itertools.count()

    def __contains__(self, player: str) -> bool:
        return player in self._waiters

    def __len__(self) -> int:
        return len(self._waiters)

    def join(self, player: str, rating: float, now: float) -> None:
        """Start waiting; raises ``MatchmakingError`` (``already_queued``) if already here."""
        if player in self._waiters:
            raise MatchmakingError(f"{player} already waits in this pool", "already_queued")
        self._waiters[player] = _Waiter(player, rating, now, next(self._order))

    def leave(self, player: str) -> bool:
        """Stop waiting; False if ``player`` was not waiting."""
        return self._waiters.pop(player, None) is not None

    def pair_waiting_players(self, now: float) -> list[Pairing]:
        """Pair whoever can be paired now, and take them out of the pool.

        Oldest waiters choose first, each the closest rating within both players' windows
        (the older of two equally close); a window widens with its owner's wait.
        """
        by_age = sorted(self._waiters.values(), key=lambda w: (w.since, w.order))
        by_rating = sorted(by_age, key=lambda w: w.rating)  # stable: older first among equals
        ratings = [w.rating for w in by_rating]
        window = {w.player: self.window.at(now - w.since) for w in by_age}
        paired: set[str] = set()
        pairings: list[Pairing] = []
        for waiter in by_age:
            if waiter.player in paired:
                continue
            reach = window[waiter.player]
            low = bisect.bisect_left(ratings, waiter.rating - reach)
            high = bisect.bisect_right(ratings, waiter.rating + reach)
            candidates = [
                other
                for other in by_rating[low:high]
                if other is not waiter
                and other.player not in paired
                and abs(other.rating - waiter.rating) <= window[other.player]
            ]
            best = min(
                candidates,
                key=lambda other: (abs(other.rating - waiter.rating), other.since, other.order),
                default=None,
            )
            if best is not None:
                paired.update((waiter.player, best.player))
                x, o = _colours(waiter.player, best.player, "random", self._rng)
                pairings.append(Pairing(x, o, self.variant, self.clock, rated=True))
        for player in paired:
            del self._waiters[player]
        return pairings


def new_private_code() -> str:
    """80 random bits from ``secrets`` in base32, grouped: ``"K7QD-M2XA-PLVE-34TB"``."""
    text = base64.b32encode(secrets.token_bytes(10)).decode()
    return "-".join(text[i : i + 4] for i in range(0, len(text), 4))


def _normalise_code(code: str) -> str:
    return code.replace("-", "").replace(" ", "").upper()


class Matchmaker:
    """The lobby's seeks, quick-pairing pools and private rooms, and who waits where.

    Private codes are looked up in a dict by their normalised text. A code is 80 random bits:
    even guessing a million codes a second with a thousand rooms open, finding one would take
    about 2^80 / 10^9 seconds, some 38 million years; the per-connection rate limit makes it
    far slower still. A dict lookup's timing can hint at hash collisions, never at a code.
    """

    def __init__(
        self,
        rng: random.Random | None = None,
        window: RatingWindow | None = None,
        private_ttl: float = PRIVATE_ROOM_TTL,
    ) -> None:
        self._rng = rng or random.Random()
        self._window = window or RatingWindow()
        self._private_ttl = private_ttl
        self._seeks: dict[str, WaitingSeek] = {}
        self._seek_ids = itertools.count(1)
        self._last_seek = 0
        self._pools: dict[PoolKey, PairingPool] = {}
        self._rooms: dict[str, PrivateRoom] = {}  # by normalised code
        self._waiting: dict[str, WaitingSeek | PoolKey | PrivateRoom] = {}

    def waiting_in(self, player: str) -> WaitingSeek | PoolKey | PrivateRoom | None:
        """Where ``player`` waits: his seek, his pool's key, his private room, or None."""
        return self._waiting.get(player)

    def withdraw(self, player: str) -> WaitingSeek | PoolKey | PrivateRoom | None:
        """Take ``player`` out of wherever he waits; returns what he left, or None."""
        place = self._waiting.pop(player, None)
        if isinstance(place, WaitingSeek):
            del self._seeks[place.id]
        elif isinstance(place, PrivateRoom):
            del self._rooms[_normalise_code(place.code)]
        elif place is not None:
            pool = self._pools[place]
            pool.leave(player)
            if not pool:
                del self._pools[place]
        return place

    def _check_free(self, player: str) -> None:
        place = self._waiting.get(player)
        if isinstance(place, WaitingSeek):
            raise MatchmakingError(f"{player} already has seek {place.id}", "too_many_seeks")
        if place is not None:
            raise MatchmakingError(f"{player} already waits for a game", "already_queued")

    # Seeks.

    def create_seek(
        self,
        seeker: str,
        variant: str,
        clock: TimeControl | None,
        rated: bool,
        colour: ColourChoice,
        now: float,
        rating: float | None = None,
    ) -> WaitingSeek:
        """Post an open challenge; ``rating`` is shown to others if given."""
        self._check_free(seeker)
        self._last_seek = next(self._seek_ids)
        seek_id = f"s{self._last_seek}"
        seek = WaitingSeek(seek_id, seeker, rating, variant, clock, rated, colour, now)
        self._seeks[seek_id] = seek
        self._waiting[seeker] = seek
        return seek

    def seeks(self) -> list[WaitingSeek]:
        """The open seeks, oldest first."""
        return sorted(self._seeks.values(), key=lambda seek: seek.created)

    def _seek(self, seek_id: str) -> WaitingSeek:
        seek = self._seeks.get(seek_id)
        if seek is None:
            raise MatchmakingError(f"no seek {seek_id}", "no_such_seek")
        return seek

    def cancel_seek(self, seek_id: str, player: str) -> WaitingSeek:
        """Withdraw ``player``'s own seek."""
        seek = self._seek(seek_id)
        if seek.seeker != player:
            raise MatchmakingError(f"seek {seek_id} is not yours", "not_allowed")
        self.withdraw(player)
        return seek

    def accept_seek(self, seek_id: str, player: str) -> Pairing:
        """Take up a seek: both players leave the lobby paired, colours decided."""
        seek = self._seek(seek_id)
        if seek.seeker == player:
            raise MatchmakingError("you cannot accept your own seek", "own_seek")
        self.withdraw(seek.seeker)
        self.withdraw(player)
        x, o = _colours(seek.seeker, player, seek.colour, self._rng)
        return Pairing(x, o, seek.variant, seek.clock, seek.rated)

    # Quick pairing.

    def join_pool(
        self, player: str, variant: str, clock: TimeControl | None, rating: float, now: float
    ) -> None:
        """Wait in the quick-pairing pool of ``variant`` and ``clock``."""
        self._check_free(player)
        key: PoolKey = (variant, clock)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = PairingPool(variant, clock, self._window, self._rng)
        pool.join(player, rating, now)
        self._waiting[player] = key

    def leave_pool(self, player: str) -> None:
        """Stop waiting in a pool; raises ``MatchmakingError`` (``not_queued``) if not in one."""
        place = self._waiting.get(player)
        if place is None or isinstance(place, WaitingSeek | PrivateRoom):
            raise MatchmakingError(f"{player} is not in a quick-pairing pool", "not_queued")
        self.withdraw(player)

    def pool_sizes(self) -> dict[PoolKey, int]:
        """How many players wait in each pool, for the lobby."""
        return {key: len(pool) for key, pool in self._pools.items()}

    def pair_waiting_players(self, now: float) -> list[Pairing]:
        """Pair what can be paired in every pool (call it every second or so)."""
        pairings: list[Pairing] = []
        for key, pool in list(self._pools.items()):
            for pairing in pool.pair_waiting_players(now):
                del self._waiting[pairing.x], self._waiting[pairing.o]
                pairings.append(pairing)
            if not pool:
                del self._pools[key]
        return pairings

    # Private rooms.

    def create_private_room(
        self,
        host: str,
        variant: str,
        clock: TimeControl | None,
        rated: bool,
        colour: ColourChoice,
        now: float,
    ) -> PrivateRoom:
        """Open a room that only the holder of its code can join, until it expires."""
        self._check_free(host)
        code = new_private_code()
        room = PrivateRoom(code, host, variant, clock, rated, colour, now + self._private_ttl)
        self._rooms[_normalise_code(code)] = room
        self._waiting[host] = room
        return room

    def join_private_room(self, code: str, player: str, now: float) -> Pairing:
        """Join the room of ``code`` (any case, dashes optional) and pair with its host."""
        room = self._rooms.get(_normalise_code(code))
        if room is None or room.expires <= now:
            raise MatchmakingError("no private room has this code", "no_such_code")
        if room.host == player:
            raise MatchmakingError("this is your own private room", "not_allowed")
        self.withdraw(room.host)
        self.withdraw(player)
        x, o = _colours(room.host, player, room.colour, self._rng)
        return Pairing(x, o, room.variant, room.clock, room.rated, private=True)

    def close_private_room(self, host: str) -> PrivateRoom:
        """Close ``host``'s private room before anyone joins; raises ``MatchmakingError``
        (``not_queued``) if he has none open."""
        place = self._waiting.get(host)
        if not isinstance(place, PrivateRoom):
            raise MatchmakingError(f"{host} has no private room open", "not_queued")
        self.withdraw(host)
        return place

    def expire(self, now: float) -> list[PrivateRoom]:
        """Close the private rooms whose time is up; returns them so hosts can be told."""
        expired = [room for room in self._rooms.values() if room.expires <= now]
        for room in expired:
            self.withdraw(room.host)
        return expired

    # Keeping it elsewhere (a cluster's next lobby holder restores it).

    def dump(self, now: float) -> dict[str, Any]:
        """Everything that waits, as plain data (times as offsets from ``now``)."""
        return {
            "seek": self._last_seek,
            "seeks": [[s.id, s.seeker, s.rating, s.variant, clock_list(s.clock), s.rated, s.colour,
                       s.created - now] for s in self._seeks.values()],
            "pools": [[key[0], clock_list(key[1]),
                       [[w.player, w.rating, w.since - now, w.order]
                        for w in pool._waiters.values()]]
                      for key, pool in self._pools.items()],
            "rooms": [[r.code, r.host, r.variant, clock_list(r.clock), r.rated, r.colour,
                       r.expires - now] for r in self._rooms.values()],
        }

    def load(self, state: dict[str, Any], now: float) -> None:
        """Take ``dump``'s data back (into an empty matchmaker), times counted from ``now``."""
        self._last_seek = state["seek"]
        self._seek_ids = itertools.count(self._last_seek + 1)
        for id_, seeker, rating, variant, clock, rated, colour, created in state["seeks"]:
            seek = WaitingSeek(id_, seeker, rating, variant, clock_of(clock), rated, colour,
                        now + created)
            self._seeks[seek.id] = seek
            self._waiting[seeker] = seek
        for variant, clock, waiters in state["pools"]:
            key: PoolKey = (variant, clock_of(clock))
            pool = self._pools[key] = PairingPool(variant, key[1], self._window, self._rng)
            for player, rating, since, order in waiters:
                pool._waiters[player] = _Waiter(player, rating, now + since, order)
                self._waiting[player] = key
            pool._order = itertools.count(max((w[3] for w in waiters), default=-1) + 1)
        for code, host, variant, clock, rated, colour, expires in state["rooms"]:
            room = PrivateRoom(code, host, variant, clock_of(clock), rated, colour,
                               now + expires)
            self._rooms[_normalise_code(code)] = room
            self._waiting[host] = room


def clock_list(clock: TimeControl | None) -> list[float] | None:
    """A clock as plain data."""
    return None if clock is None else [clock.initial, clock.increment]


def clock_of(clock: list[float] | None) -> TimeControl | None:
    """``clock_list``'s data back as a clock."""
    return None if clock is None else TimeControl(*clock)

