"""Bad input and limits on a cluster (issue 15): test_fuzz.py's suites, run against three
nodes on one Redis and one PostgreSQL, behave exactly as on one node.

The arena's players and spectator, the fuzz's throwers, the flooders and the guessers are
spread over the nodes (each new connection on the next node, as behind a load balancer
without sticky sessions), so most of what they send is forwarded: game requests to the
game's owner, lobby requests to the lobby's holder. The assertions are test_fuzz.py's own:
every node answers, none counted an internal error, the game is unchanged and goes on across
nodes afterwards, connections close only with the codes that must close them, and a flood
closes only the flooders while the others keep playing.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import test_fuzz as fuzz
from conftest import ClusterServer, Nodes

# half the one-node fuzz by default (about 5,500 frames, most of them crossing Redis; some
# 6 s on this 2-core machine); QUBIC_CLUSTER_FUZZ_BATCHES=300 matches the one-node run
CLUSTER_FUZZ_BATCHES = int(os.environ.get("QUBIC_CLUSTER_FUZZ_BATCHES", "150"))
# A longer lease than the cluster tests' 1.5 s: a renewal late under the fuzz's load would
# hand the game to another node, and its players would be sent its state again (a takeover,
# tested in test_cluster_failover.py), which is not what these tests look at.
LEASE_TTL = 4.0


async def cluster_of(redis_url: str, postgres_url: str,
                     **config: Any) -> AsyncIterator[ClusterServer]:
    nodes = Nodes(redis_url, postgres_url, ai_workers=1, lease_ttl=LEASE_TTL, **config)
    try:
        await nodes.start()
        yield ClusterServer(nodes)
    finally:
        await nodes.stop()


@pytest_asyncio.fixture
async def fast(redis_url: str, postgres_url: str) -> AsyncIterator[ClusterServer]:
    """Three nodes with no rate limit to speak of, as test_fuzz.py's ``fast``."""
    async for cluster in cluster_of(redis_url, postgres_url, **fuzz.FAST,
                                    close_wait=fuzz.CLOSE_TIMEOUT):
        yield cluster


@pytest_asyncio.fixture
async def limited(redis_url: str, postgres_url: str) -> AsyncIterator[ClusterServer]:
    """Three nodes with the real limits."""
    async for cluster in cluster_of(redis_url, postgres_url):
        yield cluster


async def test_random_and_mutated_messages_leave_every_node_and_the_game_intact(
    fast: ClusterServer,
) -> None:
    await fuzz.fuzz_the_arena(fast, CLUSTER_FUZZ_BATCHES)


IN_VOLUME = [fuzz.test_garbage_frames_from_many_connections_at_once,
             fuzz.test_illegal_moves_in_volume_change_nothing,
             fuzz.test_wrong_tokens_in_volume_open_nothing,
             fuzz.test_guessing_private_codes_finds_nothing]


@pytest.mark.parametrize("suite", IN_VOLUME,
                         ids=[t.__name__.removeprefix("test_") for t in IN_VOLUME])
async def test_in_volume_on_three_nodes(fast: ClusterServer, suite: Any) -> None:
    await suite(fast)


async def test_floods_past_the_rate_limit_close_only_the_flooders_on_three_nodes(
    limited: ClusterServer,
) -> None:
    await fuzz.test_floods_past_the_rate_limit_close_only_the_flooders(limited)
