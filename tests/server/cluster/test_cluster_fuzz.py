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
import contextlib
import json
import os
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed

from server.cluster.lobby import ClusterLobby
from server.protocol import readable_id
from tests.server.node import test_fuzz as fuzz
from tests.server.servers import Client, ClusterServer, Nodes, Server

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
    nodes = Nodes(redis_url, postgres_url, computer_workers=1, lease_ttl=LEASE_TTL, **config)
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


# requests a node forwards: to the game's owner (watch, chat, move) or the lobby's holder
FORWARDED = (
    '{"t": "watch", "game": "<game>"}', '{"t": "chat", "game": "<game>", "text": "hi"}',
    '{"t": "move", "game": "<game>", "cell": 5, "ply": 4}',
    '{"t": "private_join", "code": "AAAA-BBBB-CCCC-DDDD"}', '{"t": "seek"}',
    '{"t": "accept_seek", "seek": "s99"}', '{"t": "lobby_sub"}',
)


async def test_floods_of_forwarded_requests_close_only_the_flooders(
    limited: ClusterServer,
) -> None:
    await fuzz.test_floods_past_the_rate_limit_close_only_the_flooders(limited, FORWARDED)


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


def away_from_the_game(cluster: ClusterServer, game: str) -> list[str]:
    """The nodes that do not own ``game``, the lobby's holder last."""
    nodes = cluster.nodes
    owner = next(n for n, r in nodes.running.items()
                 if r.hub.cluster is not None and game in r.hub.cluster.ownership.held)
    holder = [n for n, r in nodes.running.items()
              if isinstance(r.hub.lobby, ClusterLobby) and r.hub.lobby.holding]
    return sorted(set(nodes.names) - {owner}, key=lambda n: n in holder)


def resync(arena: fuzz.Arena, message: dict[str, Any]) -> bool:
    """Whether a ``watch`` with ``since`` is one ``arena`` may answer with the full game
    where the other catches up: the events after ``since`` are no longer kept on the game's
    node (it loaded the game from the store: the hand-off that spreads new games over a
    cluster's nodes, as after a restart; or its room was loaded again on one node;
    docs/protocol.md, "Versions and catch-up")."""
    since, game = message.get("since"), message.get("game")
    if message.get("t") != "watch" or not isinstance(since, int) or game not in (
            fuzz.GAME, fuzz.OTHER):
        return False
    game = arena.game if game == fuzz.GAME else arena.other
    rooms = [r.hub.rooms.held[game] for r in fuzz.running(arena.server) if game in r.hub.rooms.held
             and (r.hub.cluster is None or game in r.hub.cluster.ownership.held)]
    return not rooms or since < rooms[0]._known_from


async def side_by_side(arenas: list[fuzz.Arena], senders: list[tuple[Client, Client]],
                       batches: st.SearchStrategy[list[tuple[int, dict[str, Any]]]]
                       ) -> Counter[tuple[str, str | None]]:
    """Each batch's requests (sender, message), each with a new id, sent by the sender's
    client on one node (``arenas[0]``) and on the cluster (``arenas[1]``); each reply's
    type and error code must be the same. The answers, counted."""
    loop = asyncio.get_running_loop()
    sent, answers = 0, Counter[tuple[str, str | None]]()

    async def both(batch: list[tuple[int, dict[str, Any]]]) -> None:
        nonlocal sent
        for who, message in batch:
            sent += 1
            text = json.dumps({**message, "id": f"q{sent}"})
            got = []
            for arena, client, where in zip(arenas, senders[who], ("one node", "the cluster"),
                                            strict=True):
                frame = text.replace(fuzz.GAME, arena.game).replace(fuzz.OTHER, arena.other)
                await client.ws.send(frame)
                try:
                    got.append(await answer(client, frame))
                except TimeoutError:
                    raise AssertionError(f"no reply to {frame} on {where}") from None
            # the full game where the other side catches up, from whichever lost the events
            caught_up = {("ack", None), ("game", None)} == set(got) and resync(
                arenas[got.index(("game", None))], message)
            if not caught_up:
                assert got[0] == got[1], (who, text, got)
            answers[got[0]] += 1

    # no shrinking: the servers' state goes on from example to example, so a smaller
    # example would not replay the failure, and each try could wait out a timeout
    @settings(max_examples=SIDE_BY_SIDE, deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(batches)
    def run(batch: list[tuple[int, dict[str, Any]]]) -> None:
        asyncio.run_coroutine_threadsafe(both(batch), loop).result(60)

    await asyncio.to_thread(run)
    print(f"side by side: {sent} requests, answered alike: {dict(answers)}")
    return answers


async def test_a_cluster_answers_every_request_as_one_node_does(
    fast: ClusterServer, tmp_path: Path,
) -> None:
    """One player sends the same requests (random and mutated) to one node and to a cluster
    node that neither owns the game nor holds the lobby, so they are forwarded; every reply
    has the same type and error code, and the game is intact."""
    one = Server(tmp_path / "q.db", **fuzz.FAST)
    await one.start()
    try:
        arenas = [await fuzz.make_arena(one), await fuzz.make_arena(fast)]
        away = away_from_the_game(fast, arenas[1].game)[0]
        player = (await one.client("dz"), await fast.nodes.client(away, "dz"))
        await side_by_side(arenas, [player],
                           st.lists(st.tuples(st.just(0), requests), min_size=1, max_size=12))
        for arena in arenas:
            await arena.intact()
    finally:
        await one.stop()


# what the game's own players may ask about it: moves (now and then legal), draws, chat,
# watching, and seldom the ends (resign, abort) and what comes after (rematch, claim)
in_the_game = st.one_of(
    *[st.fixed_dictionaries({"t": st.just("move"), "game": st.just(fuzz.GAME),
                             "cell": st.integers(0, 63), "ply": st.integers(4, 8)})] * 6,
    *(st.fixed_dictionaries({"t": st.just(t), "game": st.just(fuzz.GAME)}, optional={
        k: v for k, v in fuzz.TEMPLATES[t].items() if k != "game"})
      for t in ["draw_offer", "draw_accept", "draw_decline", "chat", "watch", "unwatch",
                "move", "claim"] * 2 + ["resign", "abort", "rematch"]),
)


async def test_the_players_own_requests_are_answered_as_on_one_node(
    fast: ClusterServer, tmp_path: Path,
) -> None:
    """The game's two players, each on a node that does not own it, and an outsider send the
    same requests about it to one node and to the cluster: the same replies, and the game
    ends up the same in both stores."""
    one = Server(tmp_path / "q.db", **fuzz.FAST)
    await one.start()
    try:
        arenas = [await fuzz.make_arena(one), await fuzz.make_arena(fast)]
        game = arenas[1].game
        for client, node in zip((arenas[1].ann, arenas[1].bob),
                                away_from_the_game(fast, game), strict=True):
            if fast.home(client) != node:  # a new connection: it opens both games again
                await fast.move(client, node)
                for opened in (game, arenas[1].other):
                    assert (await client.request(t="watch", game=opened))["t"] == "game"
        senders = [(arenas[0].ann, arenas[1].ann), (arenas[0].bob, arenas[1].bob),
                   (arenas[0].cat, arenas[1].cat)]
        answers = await side_by_side(arenas, senders, st.lists(
            st.tuples(st.integers(0, 2), in_the_game | requests), min_size=1, max_size=12))
        assert answers[("ack", None)] > 0
        records = [await one.running.store.get_game(arenas[0].game) if one.running else None,
                   await fast.running.store.get_game(game)]
        assert records[0] is not None and records[1] is not None
        assert ((records[0].cells, records[0].status, records[0].result)
                == (records[1].cells, records[1].status, records[1].result))
    finally:
        await one.stop()


# -- per-address limits: one count for the cluster (server/cluster/address_limits.py) -------------


async def test_one_address_makes_only_so_many_players_on_a_cluster(
    redis_url: str, postgres_url: str,
) -> None:
    async for cluster in cluster_of(redis_url, postgres_url, new_players_per_address=2):
        await cluster.client("ann")  # on a
        await cluster.client("bob")  # on b
        eve = await cluster.client()  # on c: the same address's third new player
        refused = await eve.request(t="hello", name="eve")
        assert refused["t"] == "error" and refused["code"] == "too_many_players", refused


async def test_one_address_opens_only_so_many_connections_on_a_cluster(
    redis_url: str, postgres_url: str,
) -> None:
    async for cluster in cluster_of(redis_url, postgres_url, max_connections_per_address=2):
        await cluster.client()
        await cluster.client()
        third = await cluster.client()  # on c: the same address's third connection
        with contextlib.suppress(ConnectionClosed):  # refused, it may be closed already
            await third.ws.send('{"t": "ping", "id": 1}')
        reply = await third.recv()  # a pong if it was let in
        assert reply["t"] == "error" and reply["code"] == "too_many_connections", reply
