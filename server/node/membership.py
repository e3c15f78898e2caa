"""What a node needs from the cluster it may belong to, so that the node never imports it.

A ``Hub`` runs alone (the embedded server) or as one node of many; in a cluster it is given a
``Membership`` (``server.cluster.membership`` implements it on Redis), whose ``join`` builds
the node's cluster side: where game requests go (the router's ``Owners``), the one lobby, and
its part in the node's life cycle (``Joined``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from server.metrics import Metrics
from server.node.bus import Bus
from server.node.delivery import Delivery
from server.node.lobby_interfaces import LobbyService
from server.node.rooms import Rooms
from server.node.routing import Owners


class Joined(Protocol):
    """A node's cluster side, once joined: where game requests go, the one lobby, and its
    part in the node's start, hand-over and close."""

    @property
    def owners(self) -> Owners: ...

    @property
    def lobby(self) -> LobbyService: ...

    async def start(self) -> None:
        """Join the cluster and take over the games whose owners are gone (in place of
        resuming the store's unfinished games, as a lone node does)."""

    async def hand_over(self) -> None:
        """At shutdown: give every game held here to another node."""

    async def close(self) -> None: ...

    def register_gauges(self, gauges: dict[str, Callable[[], float]]) -> None: ...

    def health(self) -> dict[str, object]:
        """What ``/health`` adds for a cluster node."""


class Membership(Protocol):
    """A node's place in a cluster before the hub is built: its name, the shared bus, and
    ``join``."""

    @property
    def node(self) -> str: ...

    @property
    def bus(self) -> Bus: ...

    def join(self, rooms: Rooms, delivery: Delivery, metrics: Metrics) -> Joined: ...
