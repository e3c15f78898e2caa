"""An arena tournament's rules: points, streaks, standings and who plays whom next. Pure.

Lichess's arena, adapted: players join and leave at will while it runs, and a free player is
paired again as soon as there is someone to play. A win scores 2, a draw 1, a loss 0; after two
wins in a row a player is *on fire* and every game scores double (4 a win, 2 a draw) until a
game that is not a win. A game ended before each side has moved (fewer than ``EARLY`` plies,
an abort) scores nothing for either, and neither starts nor ends a streak.

Pairing (``Arena.pair``) takes the players waiting now and matches them so that the sum over
pairs of ``1000 × |rank difference| + |rating difference|`` is smallest, never two who just
played each other (lichess's AntmaPairing): exactly, by a search over subsets, when at most
``EXACT`` wait; otherwise by rank order, each taking the next one down who was not their last
opponent. Colours: whoever has had X fewer times more than O gets X (ties: who had O last).
Whoever cannot be paired waits for the next call.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, NamedTuple

EARLY = 2  # plies: a game with fewer scores nothing (an abort)
EXACT = 14  # players waiting up to which the pairing is the exact best one
RANK_WEIGHT = 1000  # a step of rank weighs as much as this many rating points

Winner = Literal["x", "o"] | None


@dataclass(frozen=True)
class Sheet:
    """One player's games in the tournament: the points of each game in order (2 a win, 4 a
    win on fire, 0 an early game ...), and the wins in a row since the last game not won."""

    points: tuple[int, ...] = ()
    streak: int = 0  # wins in a row, counted from the last game that was not a win

    @property
    def fire(self) -> bool:
        """On fire: two wins in a row or more, so every game scores double."""
        return self.streak >= 2

    @property
    def score(self) -> int:
        return sum(self.points)

    def after(self, outcome: Literal["win", "draw", "loss", "early"]) -> Sheet:
        """The sheet with one more game."""
        if outcome == "early":
            return Sheet((*self.points, 0), self.streak)
        scale = 2 if self.fire else 1
        if outcome == "win":
            return Sheet((*self.points, 2 * scale), self.streak + 1)
        return Sheet((*self.points, scale if outcome == "draw" else 0), 0)


@dataclass
class Entry:
    """A player of the tournament."""

    name: str
    rating: int
    sheet: Sheet = field(default_factory=Sheet)
    present: bool = True  # joined and not withdrawn: paired when free
    last_opponent: str | None = None
    x_minus_o: int = 0  # games as X minus games as O
    last_colour: Literal["x", "o"] | None = None
    wins: int = 0  # of the games played to a result (not early ones), for the performance
    losses: int = 0
    played: int = 0
    opponents_rating: int = 0  # summed over those games

    @property
    def games(self) -> int:
        return len(self.sheet.points)

    @property
    def performance(self) -> int:
        """The rating the results are worth: the opponents' average, ±500 per net win, over
        the games played to a result (an early game counts for nothing)."""
        played = self.played
        if not played:
            return self.rating
        return round((self.opponents_rating + 500 * (self.wins - self.losses)) / played)


class Standing(NamedTuple):
    """A line of the standings (a tuple: 500 of them are made at each result, and a frozen
    dataclass costs several times as much to make)."""

    rank: int
    name: str
    score: int
    games: int
    fire: bool
    performance: int
    points: tuple[int, ...]


@dataclass
class Arena:
    """An arena's players and results, as the tournament's holder keeps them."""

    entries: dict[str, Entry] = field(default_factory=dict)
    # every player's standing key in order, kept as results come (a result moves its two
    # players; the director pairs several times a second, each pairing ranking the players
    # waiting, and a sort of all of them at each was its longest loop step), and the
    # standings' lines as last made, until a join or a result changes them
    _order: list[tuple[int, int, int, str]] | None = field(default=None, repr=False,
                                                         compare=False)
    _rows: list[Standing] | None = field(default=None, repr=False, compare=False)

    def _keys(self) -> list[tuple[int, int, int, str]]:
        if self._order is None:
            self._order = sorted(_standing_key(entry) for entry in self.entries.values())
        return self._order

    def _unrank(self, entry: Entry) -> None:
        """Take ``entry``'s key out of the order (before its key changes)."""
        if self._order is not None:  # (none made yet: it is made from the entries as they are)
            del self._order[bisect.bisect_left(self._order, _standing_key(entry))]

    def _rank(self, entry: Entry) -> None:
        if self._order is not None:
            bisect.insort(self._order, _standing_key(entry))

    def join(self, name: str, rating: int) -> None:
        """Enter (or come back to) the tournament; a returning player keeps their sheet."""
        self._rows = None
        entry = self.entries.get(name)
        if entry is None:
            entry = self.entries[name] = Entry(name, rating)
        else:
            self._unrank(entry)  # a new rating: a performance without games
            entry.present, entry.rating = True, rating
        self._rank(entry)

    def leave(self, name: str) -> None:
        """Withdraw: the player's sheet stays in the standings; they are not paired again."""
        if name in self.entries:
            self.entries[name].present = False

    def record(self, x: str, o: str, winner: Winner, plies: int) -> tuple[int, int]:
        """Score a finished game between ``x`` and ``o``; returns the points each got."""
        self._rows = None
        self._unrank(self.entries[x])
        self._unrank(self.entries[o])
        gained = []
        for me, them, side in ((x, o, "x"), (o, x, "o")):
            entry, other = self.entries[me], self.entries[them]
            if plies < EARLY:
                outcome: Literal["win", "draw", "loss", "early"] = "early"
            elif winner is None:
                outcome = "draw"
            else:
                outcome = "win" if winner == side else "loss"
            before = entry.sheet.score
            entry.sheet = entry.sheet.after(outcome)
            gained.append(entry.sheet.score - before)
            entry.last_opponent = them
            if outcome != "early":
                entry.x_minus_o += 1 if side == "x" else -1
                entry.last_colour = "x" if side == "x" else "o"
                entry.opponents_rating += other.rating
                entry.wins += outcome == "win"
                entry.losses += outcome == "loss"
                entry.played += 1
        self._rank(self.entries[x])
        self._rank(self.entries[o])
        return gained[0], gained[1]

    def standings(self) -> list[Standing]:
        """Everyone who joined, best first: score, then performance, then fewer games, then
        name; players with equal keys share a rank. (Computed once until a join or a result:
        the list is shared, not to be changed.)"""
        if self._rows is not None:
            return self._rows
        ordered = self._keys()
        rows: list[Standing] = []
        for index, key in enumerate(ordered):
            entry = self.entries[key[3]]
            tied = rows and ordered[index - 1][:3] == key[:3]
            rank = rows[-1].rank if tied else index + 1
            rows.append(Standing(rank, entry.name, entry.sheet.score, entry.games,
                                 entry.sheet.fire, entry.performance, entry.sheet.points))
        self._rows = rows
        return rows

    def rank(self, name: str) -> int:
        """``name``'s rank in the standings (equal keys share the first one's)."""
        return bisect.bisect_left(self._keys(), _standing_key(self.entries[name])[:3]) + 1

    def pair(self, waiting: Iterable[str]) -> list[tuple[str, str]]:
        """Pairs ``(x, o)`` among the players waiting now (those present; others ignored)."""
        present = [self.entries[name] for name in set(waiting)
                   if name in self.entries and self.entries[name].present]
        ranks = {entry.name: self.rank(entry.name) for entry in present}
        players = sorted(present, key=lambda entry: (ranks[entry.name], entry.name))
        pairs = _best_matching(players, ranks) if len(players) <= EXACT else _by_rank(players)
        return [_colours(a, b) for a, b in pairs]


def _standing_key(entry: Entry) -> tuple[int, int, int, str]:
    return (-entry.sheet.score, -entry.performance, entry.games, entry.name)


def _just_played(a: Entry, b: Entry) -> bool:
    return a.last_opponent == b.name or b.last_opponent == a.name


def _cost(a: Entry, b: Entry, ranks: dict[str, int]) -> int:
    return RANK_WEIGHT * abs(ranks[a.name] - ranks[b.name]) + abs(a.rating - b.rating)


def _best_matching(players: Sequence[Entry],
                   ranks: dict[str, int]) -> list[tuple[Entry, Entry]]:
    """The most pairs, and among those the smallest total cost: a search over the subsets of
    players still free (2^n states, n ≤ EXACT). The costs and who may meet whom are worked
    out once, the search reads them by index (it runs in the event loop: at 14 waiting it
    took ~7 ms with the calls in the innermost loop)."""
    count = len(players)
    costs = [[_cost(a, b, ranks) for b in players] for a in players]
    meets = [sum(1 << j for j, b in enumerate(players) if j != i and not _just_played(a, b))
             for i, a in enumerate(players)]

    @cache
    def best(free: int) -> tuple[int, int, tuple[tuple[int, int], ...]]:
        # (-pairs, cost, pairs) for the players in the bit set ``free``
        if not free & (free - 1):  # fewer than two
            return (0, 0, ())
        low = free & -free
        first = low.bit_length() - 1
        rest = free ^ low
        choice = best(rest)  # the first player waits
        row = costs[first]
        others = rest & meets[first]
        while others:  # in the order of their index, as ranked
            bit = others & -others
            others ^= bit
            pairs, cost, chosen = best(rest ^ bit)
            other = bit.bit_length() - 1
            total = cost + row[other]
            if pairs - 1 < choice[0] or (pairs - 1 == choice[0] and total < choice[1]):
                choice = (pairs - 1, total, ((first, other), *chosen))
        return choice

    return [(players[a], players[b]) for a, b in best((1 << count) - 1)[2]]


def _by_rank(players: Sequence[Entry]) -> list[tuple[Entry, Entry]]:
    free = list(players)
    pairs = []
    while len(free) >= 2:
        first = free.pop(0)
        for index, other in enumerate(free):
            if not _just_played(first, other):
                pairs.append((first, free.pop(index)))
                break
    return pairs


def _colours(a: Entry, b: Entry) -> tuple[str, str]:
    """``(x, o)``: X to whoever has had it less (then: who had O last, then the higher
    ranked one, the first given)."""
    if a.x_minus_o != b.x_minus_o:
        return (a.name, b.name) if a.x_minus_o < b.x_minus_o else (b.name, a.name)
    a_first = a.last_colour == b.last_colour or a.last_colour == "o" or b.last_colour == "x"
    return (a.name, b.name) if a_first else (b.name, a.name)
