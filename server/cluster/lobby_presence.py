"""Who is online on every node, as the nodes report it to the node holding the lobby.

``ClusterOnlinePlayers`` is the ``OnlinePlayers`` (``server.node.lobby_interfaces``) of the
cluster's one lobby: a player is online while any node reports a connection of theirs
(``Report``, in ``server.cluster.messages``), and a message for a player (a challenge) goes
out on the bus as a ``Tell`` for every node to pass to that player's connections.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from server.cluster.messages import LobbyEnvelope, Tell


class ClusterOnlinePlayers:
    """Who is online on every node; ``publish`` sends a lobby message on the bus."""

    def __init__(self, publish: Callable[[LobbyEnvelope], None]) -> None:
        self.players: dict[str, dict[str, float]] = {}  # name -> node -> rating
        self.nodes: defaultdict[str, set[str]] = defaultdict(set)  # node -> names
        self.bots: set[str] = set()  # the players online that are bot accounts
        self._publish = publish

    @property
    def online(self) -> int:
        return len(self.players)

    def names(self) -> Iterable[str]:
        return self.players

    def rating(self, name: str) -> float | None:
        for rating in self.players.get(name, {}).values():
            return rating
        return None

    def is_bot(self, name: str) -> bool:
        return name in self.bots

    def is_online(self, name: str) -> bool:
        return name in self.players

    def tell(self, name: str, frame: bytes) -> None:
        self._publish(Tell(name, frame))

    def here(self, node: str, name: str, rating: float, bot: bool | None = None) -> None:
        """``name`` is connected to ``node`` at ``rating``; ``bot``: whether a bot account,
        as that node last knew it (None: not said, as it was)."""
        self.players.setdefault(name, {})[node] = rating
        self.nodes[node].add(name)
        if bot:
            self.bots.add(name)
        elif bot is not None:
            self.bots.discard(name)  # the role revoked

    def left(self, node: str, name: str) -> bool:
        """``name`` has no connection on ``node`` any more; whether they are gone."""
        self.nodes[node].discard(name)
        on = self.players.get(name)
        if on is None:
            return False
        on.pop(node, None)
        if on:
            return False
        del self.players[name]
        self.bots.discard(name)
        return True

    def only(self, node: str, names: set[str]) -> list[str]:
        """``node`` has exactly ``names``: the players now gone everywhere."""
        return [n for n in list(self.nodes.get(node, ())) if n not in names and self.left(node, n)]
