"""A session's requests about one game reach the game's owner in the order it sent them, when
the game is held on another node (real Redis and PostgreSQL): an ``unwatch`` is heard by the
owner before the next request, so the spectator is no longer counted as watching it."""

from __future__ import annotations

from tests.server.cluster.test_cluster import owner, private_game
from tests.server.servers import Nodes


async def test_after_an_unwatch_sent_with_the_next_request_the_owner_no_longer_counts_a_watcher(
    nodes: Nodes,
) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    held = await owner(nodes, game)
    eve = await nodes.client(next(node for node in "abc" if node != held), "eve")
    for attempt in range(5):
        assert (await eve.request(t="watch", game=game))["t"] == "game"
        left = await eve.send(t="unwatch", game=game)  # both in flight at once, as a
        move = await eve.send(t="move", game=game, cell=5, ply=0)  # client may send them
        replies = {}
        while len(replies) < 2:
            message = await eve.recv()
            if message.get("ref") in (left, move):
                replies[message["ref"]] = message
        assert replies[left]["t"] == "ack", attempt
        # not watching any more: the move of someone without a seat, not of a spectator
        assert (replies[move]["t"], replies[move].get("code")) == ("error", "not_seated"), \
            (attempt, replies[move])
