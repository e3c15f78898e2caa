"""The cluster side of a node, as the hub sees it (``server.node.membership``):
``ClusterMembership`` wraps the node's Redis links; ``join`` builds ``ClusterNode`` over them.
"""

from __future__ import annotations

from server.cluster.cluster_node import ClusterNode
from server.cluster.links import ClusterLinks
from server.metrics import Metrics
from server.node.bus import Bus
from server.node.membership import MakeDelivery, MakeRooms


class ClusterMembership:
    """A node's membership of the cluster reached through ``links``."""

    def __init__(self, links: ClusterLinks) -> None:
        self.links = links
        self.node = links.node
        self.bus: Bus = links.bus

    def join(self, delivery: MakeDelivery, rooms: MakeRooms, metrics: Metrics) -> ClusterNode:
        return ClusterNode(self.links, metrics, delivery, rooms)
