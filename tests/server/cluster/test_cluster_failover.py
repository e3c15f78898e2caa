"""Cluster nodes as real ``qubic serve`` processes (issue 15): one killed with SIGKILL mid-game
has its games taken over by another node, at the same ply, with every acknowledged move in
PostgreSQL; one stopped with SIGTERM hands its games over at once. Nothing is left running."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest_asyncio

from bench.harness import ServerProcess
from tests.eventually import eventually
from tests.server.servers import Client, connect, play

ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]
TTL = "1.5"  # seconds: a dead node's games are taken over about this much later


class Node(ServerProcess):
    """``qubic serve`` as a cluster node on Redis and PostgreSQL."""

    def __init__(self, directory: Path, name: str, redis_url: str, postgres_url: str) -> None:
        super().__init__(directory / name)
        self.name = name
        self.args = [*self.args[:4], "--port", "0", "--database", postgres_url,
                     "--redis", redis_url, "--node", name, "--lease-ttl", TTL,
                     "--log-level", "info", "--computer-time", "0.1"]

    def health(self) -> dict[str, Any]:
        url = self.ws_url.replace("ws://", "http://").removesuffix("/ws") + "/health"
        with urllib.request.urlopen(url, timeout=10) as reply:
            health: dict[str, Any] = json.load(reply)
            return health


class Cluster:
    def __init__(self, directory: Path, redis_url: str, postgres_url: str) -> None:
        self.nodes = {name: Node(directory, name, redis_url, postgres_url) for name in "abc"}
        self.postgres_url = postgres_url

    def start(self) -> None:
        for node in self.nodes.values():
            node.start()

    def kill(self) -> None:
        for node in self.nodes.values():
            node.kill()

    async def moves(self, game: str) -> list[int]:
        conn = await asyncpg.connect(self.postgres_url)
        try:
            rows = await conn.fetch("SELECT cell FROM moves WHERE game_id = $1 ORDER BY ply", game)
        finally:
            await conn.close()
        return [row["cell"] for row in rows]


@pytest_asyncio.fixture
async def cluster(tmp_path: Path, redis_url: str, postgres_url: str) -> AsyncIterator[Cluster]:
    made = Cluster(tmp_path, redis_url, postgres_url)
    try:
        made.start()
        yield made
    finally:
        made.kill()


async def _game_across_nodes(cluster: Cluster) -> tuple[dict[str, Client], str, str]:
    """ann (x) on a, bob (o) on b, eve watching on c, three moves played; returns the
    clients by name, the game and the node that owns it."""
    nodes = cluster.nodes
    ann, bob = await connect(nodes["a"], "ann"), await connect(nodes["a"], "bob")
    created = await ann.request(t="private_create", colour="x")
    await bob.send(t="private_join", code=created["code"])
    game = (await ann.expect("game"))["id"]
    await bob.expect("game", id=game)
    await play(ann, game, ROW[0], 0)
    await play(bob, game, ROW[1], 1)
    await bob.ws.close()
    bob = await connect(nodes["b"], token=bob.token)
    assert (await bob.request(t="watch", game=game))["moves"] == [0, 16]
    eve = await connect(nodes["c"], "eve")
    assert (await eve.request(t="watch", game=game))["t"] == "game"
    await play(ann, game, ROW[2], 2)
    await bob.expect("move", ply=3)
    await eve.expect("move", ply=3)

    def one_owner() -> list[str] | None:
        owners = [n for n, node in nodes.items() if node.health()["games_owned"] == 1]
        if len(owners) == 1 and nodes[owners[0]].health()["games_owned"] == 1:
            return owners
        return None

    # a new game may be handed to another node once, just after it starts
    owners = await eventually(one_owner, "one node owns the game", every=0.1)
    for client in (ann, bob, eve):  # (a hand-off's state, the sessions' rejoin: not the
        client.inbox = [m for m in client.inbox if m["t"] != "game"]  # failover's)
    return {"a": ann, "b": bob, "c": eve}, game, owners[0]


async def test_a_killed_node_s_game_resumes_on_another_at_the_same_ply(
    cluster: Cluster,
) -> None:
    clients, game, dead = await _game_across_nodes(cluster)
    cluster.nodes[dead].kill()  # SIGKILL: no handover, its lease runs out
    survivors = [n for n in "abc" if n != dead]
    for node in survivors:  # the new owner's state, pushed to everyone still connected
        state = await clients[node].expect("game", id=game)
        assert state["moves"] == [0, 16, 1] and state["status"] == "playing"
    owners = {n: cluster.nodes[n].health()["games_owned"] for n in survivors}
    assert sorted(owners.values()) == [0, 1], owners
    gone = clients[dead]  # its player reconnects to another node
    clients[dead] = await connect(cluster.nodes[survivors[0]], token=gone.token)
    assert (await clients[dead].request(t="watch", game=game))["moves"] == [0, 16, 1]
    ann, bob = clients["a"], clients["b"]
    for ply, cell in enumerate(ROW[3:], start=3):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    for client in clients.values():
        assert (await client.expect("end", game=game))["reason"] == "line"
    assert await cluster.moves(game) == [0, 16, 1, 17, 2, 18, 3]  # every acked move


async def test_a_node_stopped_with_sigterm_hands_its_games_over_at_once(
    cluster: Cluster,
) -> None:
    clients, game, leaving = await _game_across_nodes(cluster)
    cluster.nodes[leaving].stop()  # SIGTERM: hand over, then close the sockets with 1001
    process = cluster.nodes[leaving].process
    assert process is not None and process.returncode == 0
    gone = clients[leaving]
    await gone.ws.wait_closed()
    assert gone.ws.close_code == 1001
    survivors = [n for n in "abc" if n != leaving]
    for node in survivors:
        state = await clients[node].expect("game", id=game)
        assert state["moves"] == [0, 16, 1]
    log = cluster.nodes[leaving].log.read_text()
    assert "handed 1 games over" in log, log
    clients[leaving] = await connect(cluster.nodes[survivors[0]], token=gone.token)
    assert (await clients[leaving].request(t="watch", game=game))["moves"] == [0, 16, 1]
    await play(clients["b"], game, ROW[3], 3)
    await play(clients["a"], game, ROW[4], 4)
    await clients["c"].expect("move", ply=5)
    assert await cluster.moves(game) == [0, 16, 1, 17, 2]
