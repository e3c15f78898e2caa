"""The lobby as the rest of a node sees it: one interface, two implementations.

The hub passes the lobby's requests to it and tells it who comes and goes, the rooms tell
it which games to list (it is their ``Listing``), and the HTTP API reads it. On one server
``server.node.lobby.Lobby`` answers everything itself; on a cluster node
``server.cluster.lobby.ClusterLobby`` is a proxy to the node holding the one lobby, where a
``Lobby`` does the work (the websockets lesson: the same logic over another transport).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from server.node.room_interfaces import Listing
from server.node.session import Session
from server.protocol import Lobby as LobbySnapshot
from server.protocol import LobbyRequest


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
