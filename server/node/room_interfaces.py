"""What the rooms (``server.node.rooms``) talk through, with the embedded server's defaults.

``Listing``: which games the lobby may list. ``Ownership``: how the rooms hold their games
(the embedded server owns every game: ``SoleOwnership``; a cluster node holds a lease per
game). ``Replies``: one message to one session, wherever it is (on one server,
``Delivery.send_to``).
"""

from __future__ import annotations

from typing import Protocol

from server.game.room import GameRoom
from server.node.delivery import Peer
from server.protocol import ServerMessage


class Listing(Protocol):
    """What the rooms tell the lobby about the games it may list."""

    def relist(self, room: GameRoom) -> None:
        """``room`` has changed: list it or take it off as it now should be."""

    def unlist(self, game_id: str) -> None:
        """Never list this game (private rooms, the computer's games, games stored unlisted)."""

    def forget(self, game_id: str) -> None:
        """The game is gone from this server."""


class Told(Listing, Protocol):
    """Whom the rooms tell of their games: the lobby's ``Listing``, and each game's end
    (the hub passes it to the tournaments)."""

    def ended(self, room: GameRoom) -> None:
        """``room`` has just ended here (once a game)."""


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


class Replies(Protocol):
    """How the rooms answer one session (a hint, an ``ack`` outside the game's batches)."""

    def send_to(self, peer: Peer, message: ServerMessage) -> None:
        """Send ``message`` to the session ``peer``, on whichever node it is."""


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
