"""Computer players, one registry by name.

``make_player("rubinoff:eval=eval2,depth=3,ab=off", seed=7).decide(board, Limit(time=1))``
returns a :class:`Decision`. Every player is deterministic for a given seed and position.
Beside the families: the master's ``traps`` and O's ``resistance``, and matches between
players, sampled (``arena``) or walked game by game (``exact_match``).
"""

from engine.levels import LEVELS
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
