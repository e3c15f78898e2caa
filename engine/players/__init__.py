"""Computer players, one registry by name.

``make_player("rubinoff:eval=eval2,depth=3,ab=off", seed=7).decide(board, Limit(time=1))``
returns a :class:`Decision`. Every player is deterministic for a given seed and position.
"""

from engine.players.alphabeta import AlphaBetaPlayer
from engine.players.base import Decision, Forced, Limit, Option, Player, Registry
from engine.players.heuristic import FreenessPlayer, RandomPlayer, WoodPlayer
from engine.players.master import MasterPlayer
from engine.players.mcts import MctsPlayer
from engine.players.searching import BogenschutzPlayer, RubinoffPlayer, SearchingPlayer

REGISTRY = Registry()
# mcts and alphabeta are sparring partners of other families than the master: a
# UCT player with win-and-block playouts and a textbook iterative-deepening alpha-beta.
for _cls in (RandomPlayer, WoodPlayer, FreenessPlayer, BogenschutzPlayer, RubinoffPlayer,
             MasterPlayer, MctsPlayer, AlphaBetaPlayer):
    REGISTRY.register(_cls)

# The lobby's levels 1 (weakest) to 8 (the master at full strength), each a fixed spec; each
# beats the one below it in at least 70% of 40 games ("Engine strength" in
# docs/benchmarks.md). Between strong players the first player wins whoever they are, so the
# levels below 8 are kept weak as X: level 7 searches 3 plies. The steps that tell levels
# apart most are random moves (careless), then the threat search (tss), then depth. Levels 7
# and 8 play the opening book: it is most of what level 7 has over level 6 as O, and level 6
# with it would hold against level 7's lines as O, which the book was mended against.
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
