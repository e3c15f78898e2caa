"""Who has each game held here open: a seated player is in the game while one of their
connections, on any node, has it open."""

from __future__ import annotations

from server.node.delivery import Peer


class Openers:
    """For each game, each player's connections (node, session) that have it open."""

    def __init__(self) -> None:
        self.by_game: dict[str, dict[str, set[tuple[str, int]]]] = {}

    def __len__(self) -> int:
        return len(self.by_game)

    def opened(self, game_id: str, peer: Peer) -> None:
        """``peer`` has the game open."""
        self.by_game.setdefault(game_id, {}).setdefault(peer.name, set()).add(
            (peer.node, peer.session))

    def has_open(self, game_id: str, peer: Peer) -> bool:
        """Whether ``peer`` is known to have the game open."""
        opened = self.by_game.get(game_id, {}).get(peer.name)
        return opened is not None and (peer.node, peer.session) in opened

    def player_has_open(self, game_id: str, name: str) -> bool:
        """Whether a connection of the player ``name`` has the game open."""
        return bool(self.by_game.get(game_id, {}).get(name))

    def closed(self, game_id: str, peer: Peer) -> bool:
        """``peer`` closed the game; True if that was its player's last connection to it."""
        by_player = self.by_game.get(game_id)
        opened = None if by_player is None else by_player.get(peer.name)
        if by_player is None or opened is None:
            return False
        opened.discard((peer.node, peer.session))
        if opened:
            return False  # another connection of the same player still has it open
        del by_player[peer.name]
        return True

    def on_node(self, node: str) -> list[tuple[str, Peer]]:
        """Each game and connection on ``node`` that has it open."""
        return [(game_id, Peer(peer_node, session, name))
                for game_id, by_player in self.by_game.items()
                for name, opened in by_player.items()
                for peer_node, session in opened if peer_node == node]

    def forget(self, game_id: str) -> None:
        self.by_game.pop(game_id, None)
