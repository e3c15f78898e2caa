"""Cluster mode (issue 15): a node's memory stays bounded over a long life. Games are
played to their end across three in-process nodes: started by the lobby's holder and handed
to the node rendezvous hashing picks, rematches started by their owner and handed on,
players' requests forwarded to the owner, spectators on a third node. Once the games are
forgotten (``server.node.upkeep.FINISHED_KEPT`` after their end) and the clients have gone, every
node's per-game structures and Redis hold nothing of them: each is as it was before the
first game, not merely small."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio

import server.node.upkeep
from server.cluster.lobby import ClusterLobby
from server.cluster.ownership import KeyedLocks
from server.http.app import RunningServer
from tests.eventually import eventually
from tests.server.cluster.test_cluster import ROW, owner
from tests.server.cluster.test_cluster_lobby import holder
from tests.server.servers import Client, Nodes, play

ROUNDS = 12  # three games a round (one per pair of nodes), plus the rematches


def per_game(running: RunningServer) -> dict[str, set[str]]:
    """Every structure a node keys by game, by name: the games it holds an entry for."""
    hub = running.hub
    cluster = hub.cluster
    assert cluster is not None and isinstance(hub.lobby, ClusterLobby)
    ownership, forwarding, rooms, delivery, lobby = (
        cluster.ownership, cluster.owners, hub.rooms, hub.delivery, hub.lobby)
    found: dict[str, Any] = {
        "ownership.held": ownership.held, "ownership.fences": ownership.fences,
        "ownership.owners": ownership.owners, "ownership.claiming": ownership._claiming,
        "ownership.taking": ownership._taking, "ownership.orphans": ownership._orphans,
        "rooms.held": rooms.held, "rooms.locks": rooms.locks,
        "publisher.published": rooms.publisher.published,
        "openers": rooms.openers.by_game, "upkeep.flag_timers": rooms.upkeep.flag_timers,
        "upkeep.finished": rooms.upkeep.finished, "upkeep.rematched": rooms.upkeep.rematched,
        "computer.tasks": rooms.upkeep.computer.tasks,
        "delivery.audience": delivery.audience, "delivery.epochs": delivery._epochs,
        "delivery.subscriptions": delivery._subscriptions,
        "lobby.shown": lobby._shown, "lobby.unlisted": lobby._unlisted,
        "forwarding.awaiting": {asked.game for by_ref in forwarding.awaiting._asked.values()
                                for asked in by_ref.values()},
    }
    if lobby.holding is not None:
        found["holding.games"] = lobby.holding.games
        found["holding.live"] = {g.id for g in lobby.holding.lobby.live_games()}
    return {name: set(games) for name, games in found.items()}


def tracked(nodes: Nodes) -> dict[str, dict[str, set[str]]]:
    return {name: per_game(running) for name, running in nodes.running.items()}


EMPTY: dict[str, set[str]] = {"lease": set(), "playing": set(), "owned": set()}


async def redis_games(url: str) -> dict[str, set[str]]:
    """The per-game keys in Redis (games' leases, players' unfinished games) and the games
    in the nodes' ``owned`` sets."""
    client = redis.asyncio.Redis.from_url(url, decode_responses=True)
    try:
        keys = [str(key) for key in await client.keys("qubic:*")]
        owned = [key for key in keys if key.startswith("qubic:owned:")]
        return {"lease": {k for k in keys if k.startswith("qubic:lease:")
                          and k != "qubic:lease:lobby"},
                "playing": {k for k in keys if k.startswith("qubic:playing:")},
                "owned": {key.removeprefix("qubic:owned:") + ": " + str(g) for key in owned
                          for g in await client.smembers(key)}}
    finally:
        await client.aclose()


async def seek_game(x: Client, o: Client) -> str:
    """``x`` seeks, ``o`` accepts (on another node): the lobby's holder starts the game."""
    seeking = await x.request(t="seek", colour="x")
    assert seeking["t"] == "seeking", seeking
    await o.send(t="accept_seek", seek=seeking["seek"]["id"])
    game: str = (await x.expect("game"))["id"]
    await o.expect("game", id=game)
    return game


async def ended(game: str, *clients: Client) -> None:
    for client in clients:
        await client.expect("end", game=game)


async def play_one(nodes: Nodes, n: int, homes: tuple[str, str, str]) -> list[str]:
    """Game ``n``: x on ``homes[0]``, o on ``homes[1]``, a spectator on ``homes[2]``; ended
    in one of four ways (a win, a resignation, a draw, a rematch then resigned); the games
    played."""
    x = await nodes.client(homes[0], f"x{n}")
    o = await nodes.client(homes[1], f"o{n}")
    game = await seek_game(x, o)
    await owner(nodes, game)
    if n % 2 == 0:
        eve = await nodes.client(homes[2], f"eve{n}")
        watched = await eve.request(t="watch", game=game)
        assert watched["t"] == "game", watched
    games = [game]
    kind = n % 4
    if kind == 0:
        for ply, cell in enumerate(ROW):
            await play(x if ply % 2 == 0 else o, game, cell, ply)
        await ended(game, x, o)
        return games
    await play(x, game, "1a1", 0)
    await play(o, game, "2a1", 1)
    if kind == 2:
        await x.send(t="draw_offer", game=game)
        await o.expect("offer", kind="draw")
        await o.send(t="draw_accept", game=game)
        await ended(game, x, o)
        return games
    await x.send(t="resign", game=game)
    await ended(game, x, o)
    if kind == 1:
        return games
    await x.send(t="rematch", game=game)
    await o.expect("offer", kind="rematch")
    await o.send(t="rematch", game=game)
    again = await o.expect("game")
    while again["id"] == game:  # the first game's state again (it was handed to its node)
        again = await o.expect("game")
    rematch = again["id"]
    games.append(rematch)
    await x.expect("game", id=rematch)
    await owner(nodes, rematch)  # started by the first game's owner, then handed on
    await play(o, rematch, "1a1", 0)  # colours swap: o moves first
    await o.send(t="resign", game=rematch)
    await ended(rematch, x, o)
    return games


async def test_finished_games_leave_nothing_behind_on_any_node(
    nodes: Nodes, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server.node.upkeep, "FINISHED_KEPT", 0.2)  # forgotten soon after the end
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    baseline = tracked(nodes)
    assert baseline == {name: {k: set() for k in found} for name, found in baseline.items()}
    redis_url = nodes.config["redis_url"]
    assert await redis_games(redis_url) == EMPTY
    rings = [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    played: list[str] = []
    for round_ in range(ROUNDS):
        done = await asyncio.gather(*(play_one(nodes, 3 * round_ + i, homes)
                                      for i, homes in enumerate(rings)))
        played += [game for games in done for game in games]
    assert len(played) == 3 * ROUNDS + ROUNDS // 4 * 3
    handed_off = sum(r.hub.cluster.ownership.handed_off for r in nodes.running.values()
                     if r.hub.cluster is not None)
    forwarded = sum(r.hub.cluster.owners.forwarded for r in nodes.running.values()
                    if r.hub.cluster is not None)
    assert handed_off >= len(played) // 3 and forwarded >= len(played), (handed_off, forwarded)
    for ws in nodes.clients:
        await ws.close()

    # the owners forget the games (and then release their leases); the full reports come
    def left() -> str:  # how many games each keeps
        return repr({name: {k: len(v) for k, v in found.items() if v}
                     for name, found in tracked(nodes).items()})

    async def forgotten() -> bool:
        return tracked(nodes) == baseline and await redis_games(redis_url) == EMPTY

    await eventually(forgotten, f"the nodes and Redis forget the {len(played)} games",
                     detail=left)
    assert await redis_games(redis_url) == EMPTY


async def test_a_claim_lock_is_kept_only_while_a_claim_holds_or_waits_for_it() -> None:
    locks = KeyedLocks()
    inside: list[str] = []
    most = 0
    go = asyncio.Event()

    async def claim(name: str) -> None:
        nonlocal most
        async with locks.hold("g"):
            inside.append(name)
            most = max(most, len(inside))
            await go.wait()
            inside.remove(name)

    claims = [asyncio.create_task(claim(name)) for name in ("one", "two", "three")]
    await asyncio.sleep(0.01)
    assert list(locks) == ["g"] and inside == ["one"]  # the others wait for the same lock
    go.set()
    await asyncio.gather(*claims)
    assert most == 1 and list(locks) == []


async def test_the_upkeep_goes_on_when_the_deadline_check_fails(
    redis_url: str, postgres_url: str,
) -> None:
    node = Nodes(redis_url, postgres_url, names="a")
    try:
        await node.start()
        hub = node["a"].hub
        assert hub.cluster is not None

        def fails() -> None:
            raise RuntimeError("a bug in the deadline check")

        hub.cluster.owners.check_deadlines = fails  # type: ignore[method-assign]
        beat = f"qubic:node:{hub.cluster.node}"
        await hub.cluster.redis.delete(beat)
        await eventually(lambda: hub.metrics.counters["cluster_upkeep_failures"] >= 2,
                    "the upkeep goes round again after a failure")
        assert await hub.cluster.redis.exists(beat)  # and it still beats
        assert not hub.cluster._loops[0].done()
        assert "qubic_cluster_upkeep_failures_total" in hub.metrics.render()
    finally:
        await node.stop()
