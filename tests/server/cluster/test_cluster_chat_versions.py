"""The two chats and the game's versions on the three-node cluster (real Redis and
PostgreSQL): the players, the spectator and the moderator on different nodes, the game held
on one of them, each client following the versioning rule; the scenario of
test_chat_versions.py, whose chat and events travel in the owner's batches here."""

from __future__ import annotations

from tests.server.cluster.test_cluster_levers import admin
from tests.server.node.test_chat_versions import chat_while_playing
from tests.server.servers import ClusterServer, Nodes


async def test_chat_in_both_chats_across_nodes_leaves_every_client_without_a_gap(
    nodes: Nodes,
) -> None:
    first = await nodes.client("a", "marta")
    assert (await admin(nodes, "grant", "marta", "moderator"))[0] == 0
    moderator = await nodes.client("c", token=first.token)
    await chat_while_playing(ClusterServer(nodes), moderator)
