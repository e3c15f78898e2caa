"""Rematches across nodes (issue 15): both players ask at the same moment, from different
nodes, game after game; each gets the new game. bench/cluster.py saw about 1% of such
rematches time out (10 s) at 300 games."""

from __future__ import annotations

import asyncio
import os

from tests.server.cluster.test_cluster import move_to, private_game
from tests.server.servers import Client, Nodes

ROUNDS = int(os.environ.get("QUBIC_REMATCH_ROUNDS", "12"))  # more to hunt a rare miss
PACE = 0.4  # seconds between rounds: within the rate limit (10 frames a second)


async def new_game(client: Client, old: str) -> dict[str, object]:
    """The next ``game`` message for a game other than ``old`` (states of ``old`` pushed again
    after a hand-off are skipped)."""
    while True:
        message = await client.expect("game", timeout=10.0)
        if message["id"] != old:
            return message


async def test_both_players_ask_for_a_rematch_at_once_from_two_nodes(nodes: Nodes) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    bob = await move_to(nodes, "b", bob, game)
    for _ in range(ROUNDS):
        x = ann if (await ann.request(t="watch", game=game))["you"] == "x" else bob
        ref = await x.send(t="resign", game=game)
        await x.expect("ack", ref=ref)
        ann.seen.clear()
        bob.seen.clear()
        await asyncio.gather(ann.send(t="rematch", game=game), bob.send(t="rematch", game=game))
        got = await asyncio.gather(new_game(ann, game), new_game(bob, game))
        assert got[0]["id"] == got[1]["id"], got
        assert {got[0]["you"], got[1]["you"]} == {"x", "o"}
        game = str(got[0]["id"])
        await asyncio.sleep(PACE)
