"""The computer's levels and players by name, as plain data: what a name check or a menu needs
without loading the players (numpy and numba load with ``engine.players``)."""

from __future__ import annotations

LEVELS = {
    1: "master:depth=1,tss=off,noise=300,careless=80,book=off",
    2: "master:depth=1,tss=off,noise=150,careless=40,book=off",
    3: "master:depth=1,tss=off,noise=150,book=off",
    4: "master:depth=2,tss=off,noise=100,book=off",
    5: "master:depth=2,noise=120,book=off",
    6: "master:depth=3,noise=120,book=off",
    7: "master:depth=3",
    8: "master",
}
"""The lobby's levels 1 (weakest) to 8 (the master at full strength), each a fixed spec; each
beats the one below it in at least 70% of 40 games ("Engine strength" in docs/benchmarks.md).
Between strong players the first player wins whoever they are, so the levels below 8 are kept
weak as X: level 7 searches 3 plies. The steps that tell levels apart most are random moves
(careless), then the threat search (tss), then depth. Levels 7 and 8 play the opening book:
it is most of what level 7 has over level 6 as O, and level 6 with it would hold against
level 7's lines as O, which the book was mended against."""

PLAYERS = (
    "alphabeta", "bogenschutz", "freeness", "master", "mcts", "random", "rubinoff", "wood",
)
"""Every player ``engine.players.make_player`` knows by name (its registry, checked equal by
the tests)."""


def player_names() -> list[str]:
    """The players' names and the levels' (``level1`` to ``level8``), as the registry lists
    them."""
    return [*PLAYERS, *sorted(f"level{level}" for level in LEVELS)]
