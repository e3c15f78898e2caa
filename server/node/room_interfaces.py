"""What the rooms (``server.node.rooms``) talk through, with the embedded server's defaults.

``Listing`` is how the rooms tell the lobby which games it may list (the lobby implements
it). ``Ownership`` is how they hold their games: the embedded server owns every game
(``SoleOwnership``); a cluster node holds a lease per game (``server.cluster.ownership``).
"""

from __future__ import annotations

from typing import Protocol

from server.game.room import GameRoom


class Listing(Protocol):
    """What the rooms tell the lobby about the games it may list."""

    def relist(self, room: GameRoom) -> None:
        """``room`` has changed: list it or take it off as it now should be."""

    def unlist(self, game_id: str) -> None:
        """Never list this game (private rooms, the computer's games, games stored unlisted)."""

    def forget(self, game_id: str) -> None:
        """The game is gone from this server."""


class Ownership(Protocol):
    """How the rooms hold their games: the embedded server owns every game; a cluster node
    holds a lease per game (``server.cluster.ownership``)."""

    def token(self, game_id: str) -> int | None:
        """The fencing token the game's writes carry (None: the one embedded server)."""

    async def started(self, room: GameRoom) -> None:
        """A game was made here: own it before anyone hears of it."""

    def ended(self, room: GameRoom) -> None:
        """The game is over."""

    def forgotten(self, game_id: str) -> None:
        """The rooms let the game go (it ended a while ago)."""


class SoleOwnership:
    """The embedded server's ``Ownership``: every game is its own, with no token."""

    def token(self, game_id: str) -> int | None:
        return None

    async def started(self, room: GameRoom) -> None:
        pass

    def ended(self, room: GameRoom) -> None:
        pass

    def forgotten(self, game_id: str) -> None:
        pass


class NoListing:
    """The rooms' ``Listing`` until the hub gives them the lobby."""

    def relist(self, room: GameRoom) -> None:
        pass

    def unlist(self, game_id: str) -> None:
        pass

    def forget(self, game_id: str) -> None:
        pass
