"""The lobby's interfaces: how the rest of a node sees it, and what it talks through.

``LobbyService`` is the lobby as the rest of a node sees it: the hub passes the lobby's
requests to it and tells it who comes and goes, the rooms tell it which games to list (it is
their ``Listing``), and the HTTP API reads it. On one server ``server.node.lobby.Lobby``
answers everything itself; on a cluster node ``server.cluster.lobby.ClusterLobby`` is a proxy
to the node holding the one lobby, where a ``Lobby`` does the work (the websockets lesson: the
same logic over another transport).

``Lobby`` in turn talks to an ``OnlinePlayers`` (who is online, Colyseus's ``Presence``: on one
server ``LocalOnlinePlayers``, ``Delivery``'s sessions; in a cluster
``server.cluster.lobby_presence``) and answers ``Caller``s (who asked: a ``Session`` here, or
one on another node).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Protocol

from server.node.delivery import Delivery
from server.node.room_interfaces import Listing
from server.node.session import Session
from server.protocol import ChallengeInfo, LobbyRequest, LobbySnapshot, ServerMessage


class LobbyService(Listing, Protocol):
    """What the hub, the rooms and the HTTP API ask of the lobby."""

    @property
    def subscribers(self) -> Collection[Session]:
        """The sessions here that receive the lobby's deltas."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def tick(self, now: float) -> None:
        """The once-a-second round: pair the pools, expire, tell who is online."""

    async def handle(self, session: Session, message: LobbyRequest) -> None:
        """Answer one lobby request of ``session`` (a refusal raises ``ServerError``)."""

    def identified(self, session: Session) -> None:
        """``session`` has said hello."""

    def gone(self, name: str) -> None:
        """``name``'s last connection here closed."""

    def unsubscribed(self, session: Session) -> None:
        """``session`` no longer receives the lobby's deltas (it unsubscribed, or closed)."""

    async def view(self) -> LobbySnapshot:
        """The lobby as the HTTP API shows it (may raise ``Unavailable`` in a cluster)."""

    async def challenges_to(self, name: str) -> list[ChallengeInfo]:
        """The challenges to ``name`` waiting for an answer, wherever they were made (a bot's
        event stream opens with them; may raise ``Unavailable`` in a cluster)."""


class Rated(Protocol):
    @property
    def rating(self) -> float: ...


class Caller(Protocol):
    """Who made a lobby request: a ``Session`` here, or one on another node."""

    @property
    def name(self) -> str | None: ...

    @property
    def player(self) -> Rated | None: ...

    def send(self, message: ServerMessage) -> None: ...


class OnlinePlayers(Protocol):
    """Who is online, for the lobby's count, its players list and challenges by name."""

    @property
    def online(self) -> int: ...

    def names(self) -> Iterable[str]: ...

    def rating(self, name: str) -> float | None: ...

    def is_bot(self, name: str) -> bool:
        """Whether ``name`` (online) is a bot account."""

    def is_online(self, name: str) -> bool: ...

    def tell(self, name: str, frame: bytes) -> None:
        """Send ``frame`` to every connection of ``name``."""


class LocalOnlinePlayers:
    """The players connected to this server (``Delivery``'s sessions)."""

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery

    @property
    def online(self) -> int:
        return self.delivery.online

    def names(self) -> Iterable[str]:
        return self.delivery.by_player

    def rating(self, name: str) -> float | None:
        return self.delivery.rating(name)

    def is_bot(self, name: str) -> bool:
        return bool(self.delivery.is_bot(name))

    def is_online(self, name: str) -> bool:
        return bool(self.delivery.by_player.get(name))

    def tell(self, name: str, frame: bytes) -> None:
        for session in self.delivery.of_player(name):
            session.send_raw(frame)
