"""Computer players, one registry by name.

``make_player("rubinoff:eval=eval2,depth=3,ab=off", seed=7).decide(board, Limit(time=1))``
returns a :class:`Decision`. Every player is deterministic for a given seed and position.
"""

from engine.players.base import Decision, Forced, Limit, Option, Player, Registry
from engine.players.heuristic import FreenessPlayer, RandomPlayer, WoodPlayer
from engine.players.searching import BogenschutzPlayer, RubinoffPlayer, SearchingPlayer

REGISTRY = Registry()
for _cls in (RandomPlayer, WoodPlayer, FreenessPlayer, BogenschutzPlayer, RubinoffPlayer):
    REGISTRY.register(_cls)

# The lobby's levels 1 (weakest) to 8 (strongest), each a fixed spec. Until the master engine
# lands these climb through the seed players by evaluator and lookahead.
LEVELS = {
    1: "random",
    2: "wood",
    3: "freeness",
    4: "rubinoff:eval=eval2,depth=1",
    5: "rubinoff:eval=eval2,depth=2",
    6: "bogenschutz:depth=2",
    7: "bogenschutz:depth=4",
    8: "bogenschutz:depth=5",
}
for _level, _spec in LEVELS.items():
    REGISTRY.alias(f"level{_level}", _spec)


def make_player(spec: str, seed: int = 0) -> Player:
    """The player a spec names: ``name`` or ``name:key=value,key=value``."""
    return REGISTRY.make(spec, seed)


def player_names() -> list[str]:
    return REGISTRY.names


__all__ = [
    "LEVELS",
    "REGISTRY",
    "Decision",
    "Forced",
    "Limit",
    "Option",
    "Player",
    "SearchingPlayer",
    "make_player",
    "player_names",
]
