"""The chat rate on a cluster (issue 36, item 8): one player's lines share one bucket in
Redis whichever node their sockets are on, as the reports' do (server/cluster/address_limits.py).
Real Redis, the nodes' ``RedisAddressLimits`` as each node opens them."""

from __future__ import annotations

import pytest

from server.protocol import CHAT_BURST, CHAT_PER_SECOND
from tests.server.cluster.test_address_limits import keys, limits_on


async def test_a_players_chat_lines_share_one_bucket_on_every_node(redis_url: str) -> None:
    async with limits_on(redis_url, "a", "b") as (a, b):
        for n in range(CHAT_BURST):  # said half on each node
            assert await (a if n % 2 else b).add_chat("ann", 0.0) is None
        wait = 1 / CHAT_PER_SECOND
        assert await a.add_chat("ann", 0.0) == pytest.approx(wait, abs=0.2)
        assert await b.add_chat("ann", 0.0) == pytest.approx(wait, abs=0.2)
        assert await b.add_chat("bob", 0.0) is None  # another player: their own
        assert "qubic:limits:chat:ann" in await keys(redis_url)
        # a refusal by the cluster gives the node's own bucket its token back
        assert a.local.chat_line("ann", 0.0) is None
