"""What a node needs from the cluster it may belong to, so that the node never imports it.

A ``Hub`` runs alone (the embedded server) or as one node of many; in a cluster it is given a
``Membership`` (``server.cluster.membership`` implements it on Redis), whose ``join`` builds
the node's delivery and rooms (with the builders the hub gives it, over the cluster's
``Followers``, ``Ownership`` and ``Replies``) and the cluster side over them: where game
requests go (the router's ``Owners``), the one lobby, and its part in the node's life cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from server.metrics import Metrics
from server.node.bus import Bus
from server.node.delivery import Delivery, Followers
from server.node.lobby_interfaces import LobbyService
from server.node.room_interfaces import Ownership, Replies
from server.node.rooms import Rooms
from server.node.routing import Owners


class MakeDelivery(Protocol):
    """Builds the node's ``Delivery`` (the hub gives it the bus and the node's name)."""

    def __call__(self, followers: Followers) -> Delivery: ...


class MakeRooms(Protocol):
    """Builds the node's ``Rooms`` (the hub gives it the store, the pool, the config, the
    metrics, the bus and the lobby's ``Listing``)."""

    def __call__(self, delivery: Delivery, ownership: Ownership, replies: Replies) -> Rooms: ...


class Joined(Protocol):
    """A node's cluster side, once joined: the node's delivery and rooms it built, where game
    requests go, the one lobby, and its part in the node's start, hand-over and close."""

    @property
    def delivery(self) -> Delivery: ...

    @property
    def rooms(self) -> Rooms: ...

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

    def join(self, delivery: MakeDelivery, rooms: MakeRooms, metrics: Metrics) -> Joined: ...
