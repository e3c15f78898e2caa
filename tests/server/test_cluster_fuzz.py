"""Bad input and limits on a cluster (issue 15): test_fuzz.py's suites, run against three
nodes on one Redis and one PostgreSQL, behave exactly as on one node.

The arena's players and spectator, the fuzz's throwers, the flooders and the guessers are
spread over the nodes (each new connection on the next node, as behind a load balancer
without sticky sessions), so most of what they send is forwarded: game requests to the
game's owner, lobby requests to the lobby's holder. The assertions are test_fuzz.py's own:
every node answers, none counted an internal error, the game is unchanged and goes on across
nodes afterwards, connections close only with the codes that must close them, and a flood
closes only the flooders while the others keep playing. And side by side: the same
requests, sent to one node and to a cluster node that must forward them, get the same
replies.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import test_fuzz as fuzz
from conftest import Client, ClusterServer, Nodes, Server
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from server.lobby_cluster import ClusterLobby
from server.protocol import readable_id

# half the one-node fuzz by default (about 5,500 frames, most of them crossing Redis; some
# 6 s on this 2-core machine); QUBIC_CLUSTER_FUZZ_BATCHES=300 matches the one-node run
CLUSTER_FUZZ_BATCHES = int(os.environ.get("QUBIC_CLUSTER_FUZZ_BATCHES", "150"))
# A longer lease than the cluster tests' 1.5 s: a renewal late under the fuzz's load would
# hand the game to another node, and its players would be sent its state again (a takeover,
# tested in test_cluster_failover.py), which is not what these tests look at.
LEASE_TTL = 4.0
# examples of the side-by-side test, each up to 12 requests sent to one node and to a cluster
SIDE_BY_SIDE = int(os.environ.get("QUBIC_CLUSTER_SIDE_BY_SIDE", "100"))


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


# -- side by side: the same requests, the same answers ---------------------------------------

# The computer's moves go to `qubic worker`s on a cluster (none run here), so a game against
# it would go on differently; everything else a client can ask is in.
requests = st.one_of(fuzz.messages, fuzz.mutated).filter(lambda m: m.get("t") != "play_ai")


async def answer(client: Client, frame: str) -> tuple[str, str | None]:
    """The type (and error code) of the reply to ``frame``: the message whose ref is its
    id, or the error with no ref if the server cannot read the id (``Infinity`` is not
    JSON)."""
    ref = readable_id(frame)
    while True:
        message = await client.recv()
        if message.get("ref") == ref and (ref is not None or message["t"] == "error"):
            return message["t"], message["code"] if message["t"] == "error" else None


async def test_a_cluster_answers_every_request_as_one_node_does(
    fast: ClusterServer, tmp_path: Path,
) -> None:
    """One player sends the same requests (random and mutated, each with an id) to one node
    and to a cluster node that neither owns the game nor holds the lobby, so they are
    forwarded; every reply has the same type and error code."""
    one = Server(tmp_path / "q.db", **fuzz.FAST)
    await one.start()
    try:
        arenas = [await fuzz.make_arena(one), await fuzz.make_arena(fast)]
        nodes = fast.nodes
        owner = next(n for n, r in nodes.running.items()
                     if r.hub.cluster is not None and arenas[1].game in r.hub.cluster.held)
        holder = [n for n, r in nodes.running.items()
                  if isinstance(r.hub.lobby, ClusterLobby) and r.hub.lobby.holding]
        away = sorted(set(nodes.names) - {owner}, key=lambda n: n in holder)[0]
        players = [await one.client("dz"), await nodes.client(away, "dz")]
        loop = asyncio.get_running_loop()
        sent, answers = 0, Counter[tuple[str, str | None]]()

        async def both(batch: list[dict[str, Any]]) -> None:
            nonlocal sent
            for message in batch:
                sent += 1
                text = json.dumps({**message, "id": f"q{sent}"})
                got = []
                for arena, player, where in zip(arenas, players, ("one node", away),
                                                strict=True):
                    frame = text.replace(fuzz.GAME, arena.game).replace(fuzz.OTHER, arena.other)
                    await player.ws.send(frame)
                    try:
                        got.append(await answer(player, frame))
                    except TimeoutError:
                        raise AssertionError(f"no reply to {frame} on {where}") from None
                assert got[0] == got[1], (text, got)
                answers[got[0]] += 1

        # no shrinking: the servers' state goes on from example to example, so a smaller
        # example would not replay the failure, and each try could wait out a timeout
        @settings(max_examples=SIDE_BY_SIDE, deadline=None, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(st.lists(requests, min_size=1, max_size=12))
        def side_by_side(batch: list[dict[str, Any]]) -> None:
            asyncio.run_coroutine_threadsafe(both(batch), loop).result(60)

        await asyncio.to_thread(side_by_side)
        print(f"side by side: {sent} requests, answered alike: {dict(answers)}")
        for arena in arenas:
            await arena.intact()
    finally:
        await one.stop()
