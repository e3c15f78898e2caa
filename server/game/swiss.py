"""A Swiss tournament's rules: rounds, pairings by score, colours, the bye and tie-breaks. Pure.

A fixed number of rounds; a round is paired when the one before it is over, or earlier when
its set time comes (``pair_round(early=True)``): then the players whose game of an earlier
round is still going on sit the new round out (not paired, no bye), and that game scores for
its own round when it ends. A win scores 1, a draw ½, a loss 0 (kept in half points); the
bye, 1. Players who withdraw are not paired again and keep their results.

The pairing rule (``Swiss.pair_round``), written down so a player can check it:

1. Order the players by score, then rating, then name.
2. If their number is odd, the lowest in that order who has not had a bye gets it (if the
   others cannot then be paired by rule 3, the next lowest; a second bye only when nobody
   without one can have it).
3. Pair from the top: the highest player not yet paired takes the first opponent in this order
   of preference with whom the rest can still be paired (a search that backs up when a choice
   leaves someone without a legal opponent):
   a. in their score group, both players getting the colour they prefer;
   b. in their score group, colours allowed (below);
   c. the nearest score group below, then the next, with preferred colours, then allowed;
   d. anyone, colours ignored.
   Inside a score group the preferred opponent is the one half the group further down (the
   top half meets the bottom half, as in the Dutch system). **Two players never meet twice**:
   when every pairing would have a rematch, the tournament ends (``no_pairing``), as
   lichess's does.
4. Colours: a player prefers the colour they had less (X against O), else the other one than
   last time. A colour is *not allowed* to a player who would then have it three times more
   than the other, or three times in a row. Of two players, the one whose preference is
   stronger gets it (the larger imbalance, then the higher in the order).

Tie-breaks, in this order after the score: **Buchholz** (the sum of the opponents' scores; a
bye adds nothing), **Sonneborn-Berger** (the scores of the opponents beaten, and half those of
the opponents drawn), then rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from server.errors import ServerError

Colour = Literal["x", "o"]
WIN, DRAW, LOSS, BYE = 2, 1, 0, 2  # half points
SEARCH_LIMIT = 20_000  # candidate tries per pass before it gives up (colours, then rematches)


class SwissError(ServerError, ValueError):
    """A tournament asked for what its state does not allow (``code``: a stable name)."""

    code = "not_allowed"


@dataclass(frozen=True)
class Game:
    """One round's game as a player saw it; ``points`` None while it is played."""

    opponent: str
    colour: Colour
    points: int | None = None


@dataclass
class Entrant:
    name: str
    rating: int
    games: dict[int, Game | None] = field(default_factory=dict)  # round -> game, None: bye
    present: bool = True

    @property
    def score(self) -> int:
        """Half points: the games' and the bye's."""
        return sum(BYE if game is None else game.points or 0 for game in self.games.values())

    def colours(self) -> list[Colour]:
        return [game.colour for _, game in sorted(self.games.items()) if game is not None]

    def opponents(self) -> set[str]:
        return {game.opponent for game in self.games.values() if game is not None}

    def had_bye(self) -> bool:
        return any(game is None for game in self.games.values())


@dataclass(frozen=True)
class Round:
    number: int
    pairs: tuple[tuple[str, str], ...]  # (x, o)
    bye: str | None


@dataclass(frozen=True)
class SwissStanding:
    rank: int
    name: str
    score: float  # points: 1 a win, ½ a draw
    buchholz: float
    sonneborn_berger: float
    rating: int


@dataclass
class Swiss:
    """A Swiss tournament of ``rounds`` rounds, as its holder keeps it."""

    rounds: int
    entrants: dict[str, Entrant] = field(default_factory=dict)
    current: int = 0  # the round being played (0: not started)

    def join(self, name: str, rating: int) -> None:
        if self.current:
            raise SwissError("the tournament has started", "tournament_started")
        self.entrants.setdefault(name, Entrant(name, rating))

    def withdraw(self, name: str) -> None:
        if name in self.entrants:
            self.entrants[name].present = False

    @property
    def round_over(self) -> bool:
        return all(game is None or game.points is not None
                   for entrant in self.entrants.values()
                   for number, game in entrant.games.items() if number == self.current)

    @property
    def playing(self) -> set[str]:
        """The players in a game going on, of any round."""
        return {entrant.name for entrant in self.entrants.values()
                if any(game is not None and game.points is None
                       for game in entrant.games.values())}

    @property
    def finished(self) -> bool:
        return self.current == self.rounds and not self.playing

    def pair_round(self, early: bool = False) -> Round:
        """Pair the next round (the rule in the module's docstring). ``early``: its time has
        come though games go on; their players sit this round out (no game, no bye)."""
        playing = self.playing
        if playing and not early:
            raise SwissError(f"round {self.current} is still being played", "round_not_over")
        if self.current == self.rounds:
            raise SwissError("every round has been played", "tournament_over")
        order = sorted((e for e in self.entrants.values() if e.present and e.name not in playing),
                       key=lambda e: (-e.score, -e.rating, e.name))
        if len(order) < 2:
            raise SwissError("a round needs two players", "too_few_players")
        bye, pairs = None, None
        if len(order) % 2:
            # the lowest without a bye, or (if the rest cannot then be paired) the next one
            byes = sorted(reversed(order), key=Entrant.had_bye)  # stable: lowest first
            for bye in byes:
                pairs = _pair([e for e in order if e is not bye])
                if pairs is not None:
                    break
        else:
            pairs = _pair(order)
        if pairs is None:
            raise SwissError("no pairing is left without a rematch: the tournament ends",
                             "no_pairing")
        self.current += 1
        if bye is not None:
            bye.games[self.current] = None
        for x, o in pairs:
            self.entrants[x].games[self.current] = Game(o, "x")
            self.entrants[o].games[self.current] = Game(x, "o")
        return Round(self.current, tuple(pairs), bye.name if bye else None)

    def record(self, x: str, o: str, winner: Colour | None) -> None:
        """The result of this round's game between ``x`` and ``o``."""
        game = self.entrants[x].games.get(self.current)
        if game is None or game.opponent != o or game.colour != "x":
            raise SwissError(f"{x} and {o} do not play in round {self.current}", "no_such_game")
        points = {None: (DRAW, DRAW), "x": (WIN, LOSS), "o": (LOSS, WIN)}[winner]
        self.entrants[x].games[self.current] = Game(o, "x", points[0])
        self.entrants[o].games[self.current] = Game(x, "o", points[1])

    def standings(self) -> list[SwissStanding]:
        """Best first: score, Buchholz, Sonneborn-Berger, rating (equal keys share a rank)."""
        score = {name: entrant.score for name, entrant in self.entrants.items()}
        rows = []
        for entrant in self.entrants.values():
            played = [g for g in entrant.games.values() if g is not None and g.points is not None]
            buchholz = sum(score[g.opponent] for g in played)
            berger = sum(score[g.opponent] * g.points for g in played if g.points) / 2
            rows.append((-entrant.score, -buchholz, -berger, -entrant.rating, entrant.name))
        rows.sort()
        standings: list[SwissStanding] = []
        for index, row in enumerate(rows):
            tied = standings and rows[index - 1][:4] == row[:4]
            standings.append(SwissStanding(
                standings[-1].rank if tied else index + 1, row[4], -row[0] / 2, -row[1] / 2,
                -row[2] / 2, -row[3]))
        return standings


def preference(colours: Sequence[Colour]) -> tuple[Colour | None, int]:
    """The colour a player prefers and how strongly (the X-O imbalance, 0 if balanced)."""
    balance = colours.count("x") - colours.count("o")
    if balance:
        return ("o" if balance > 0 else "x"), abs(balance)
    if colours:
        return ("o" if colours[-1] == "x" else "x"), 0
    return None, 0


def allowed(colours: Sequence[Colour], colour: Colour) -> bool:
    """Whether a player who had ``colours`` may have ``colour`` next."""
    after = [*colours, colour]
    imbalance = abs(after.count("x") - after.count("o"))
    return imbalance < 3 and after[-3:] != [colour] * 3


def colours_for(a: Sequence[Colour], b: Sequence[Colour]) -> tuple[bool, int]:
    """For two players who had colours ``a`` and ``b``, ``a`` the higher in the order: whether
    ``a`` gets X, and the fit, 2 when both get the colour they prefer, 1 when both colours are
    allowed, 0 when not (rule 4)."""

    def judge(x: Sequence[Colour], o: Sequence[Colour], a_is_x: bool) -> tuple[int, int, bool]:
        fit = 1 if allowed(x, "x") and allowed(o, "o") else 0
        (wants_x, strength_x), (wants_o, strength_o) = preference(x), preference(o)
        happy_x, happy_o = wants_x in (None, "x"), wants_o in (None, "o")
        if fit and happy_x and happy_o:
            fit = 2
        strength = (strength_x if happy_x else -strength_x) + (
            strength_o if happy_o else -strength_o)
        return fit, strength, happy_x if a_is_x else happy_o  # then: a, the higher, is happy

    a_x, b_x = judge(a, b, True), judge(b, a, False)
    return (a_x >= b_x), max(a_x, b_x)[0]


def _pair(order: list[Entrant]) -> list[tuple[str, str]] | None:
    """The pairs ``(x, o)`` of ``order`` (an even number of players) by rules 3 and 4, or None
    if every pairing has a rematch (or none was found within ``SEARCH_LIMIT`` tries)."""
    colours = {entrant.name: entrant.colours() for entrant in order}
    met = {entrant.name: entrant.opponents() for entrant in order}
    rank = {entrant.name: position for position, entrant in enumerate(order)}
    groups: dict[int, list[str]] = {}
    for entrant in order:
        groups.setdefault(entrant.score, []).append(entrant.name)
    score = {entrant.name: entrant.score for entrant in order}
    in_group = {name: place for group in groups.values() for place, name in enumerate(group)}
    tries = 0

    def fit(a: str, b: str) -> int:  # a above b in the order
        return colours_for(colours[a], colours[b])[1]

    def candidates(player: str, free: list[str], strict: bool) -> list[str]:
        target = in_group[player] + len(groups[score[player]]) // 2

        fits = {other: fit(player, other) if strict else 0 for other in free
                if other not in met[player]}

        def key(other: str) -> tuple[int, int, int]:
            gap = abs(score[player] - score[other])
            shift = abs(in_group[other] - target) if not gap else rank[other]
            return (gap, -fits[other], shift)

        return sorted((other for other, fitted in fits.items() if not strict or fitted > 0),
                      key=key)

    def search(free: list[str], strict: bool) -> list[tuple[str, str]] | None:
        nonlocal tries
        if not free:
            return []
        player, rest = free[0], free[1:]
        for other in candidates(player, rest, strict):
            tries += 1
            if tries > SEARCH_LIMIT:
                return None
            below = search([name for name in rest if name != other], strict)
            if below is not None:
                return [(player, other), *below]
        return None

    names = [entrant.name for entrant in order]
    found = search(names, strict=True)
    if found is None:
        tries = 0
        found = search(names, strict=False)
    if found is None:
        return None
    pairs = []
    for a, b in found:
        a_has_x = colours_for(colours[a], colours[b])[0]
        pairs.append((a, b) if a_has_x else (b, a))
    return pairs
