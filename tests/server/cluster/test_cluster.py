"""Cluster mode (issue 15): three in-process nodes on one Redis and one PostgreSQL serve any
game. A game starts with both players on one node (a private code: the lobby is not shared
yet) and a player then reconnects to another node, as a client behind a load balancer
without sticky sessions may; a spectator watches from the third."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from dataclasses import replace
from typing import Any

import pytest

from server.errors import StoreError
from server.game.records import GameStatus, Seat
from server.node.routing import Peer
from server.store.postgres import PostgresStore
from tests.eventually import eventually
from tests.server.node import test_e2e as e2e
from tests.server.servers import Client, ClusterServer, Nodes, play


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode())


def _get_json(url: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_get_text(url))
    return data


ROW = ["1a1", "2a1", "1b1", "2b1", "1c1", "2c1", "1d1"]  # X wins on level 1, row 1


async def private_game(nodes: Nodes, node: str, a: Client, b: Client) -> str:
    created = await a.request(t="private_create", colour="x")
    await b.send(t="private_join", code=created["code"])
    game: str = (await a.expect("game"))["id"]
    await b.expect("game", id=game)
    await owner(nodes, game)  # handed to its node, where both have joined it again
    return game


async def move_to(nodes: Nodes, node: str, client: Client, game: str) -> Client:
    """``client``'s player leaves its node and comes back on ``node``, reopening ``game``."""
    await client.ws.close()
    moved = await nodes.client(node, token=client.token)
    snapshot = await moved.request(t="watch", game=game)
    assert snapshot["t"] == "game" and snapshot["id"] == game, snapshot
    return moved


def holders(nodes: Nodes, game: str) -> list[str]:
    return [name for name, running in nodes.running.items()
            if running.hub.cluster is not None and game in running.hub.cluster.ownership.held
            and game in running.hub.rooms.held]


async def owner(nodes: Nodes, game: str) -> str:
    """The node that holds the game once it has settled (a new game is handed to the node
    rendezvous hashing picks, so it may move once after it starts)."""
    seen: list[list[str]] = []

    def settled() -> str | None:  # one holder, the same for three looks in a row
        seen.append(holders(nodes, game))
        steady = len(seen) >= 3 and all(s == seen[-1] and len(s) == 1 for s in seen[-3:])
        return seen[-1][0] if steady else None

    return await eventually(settled, f"game {game} settles on one node",
                            detail=lambda: repr(seen[-5:]))


async def test_players_on_two_nodes_play_to_the_end_with_a_spectator_on_a_third(
    nodes: Nodes,
) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    await owner(nodes, game)
    ann = await move_to(nodes, "b", ann, game)  # x, who will win, on another node than a
    welcome = await (await nodes.client("c")).hello(token=bob.token)
    assert welcome["games"] == [game]  # a player's games are known on every node
    eve = await nodes.client("c", "eve")
    watched = await eve.request(t="watch", game=game)
    assert watched["t"] == "game" and watched["moves"] == []
    for ply, cell in enumerate(ROW):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    for client in (ann, bob, eve):
        end = await client.expect("end", game=game)
        assert end["result"] == "1-0" and end["reason"] == "line"
    assert [m["notation"] for m in eve.seen if m["t"] == "move"] == ROW
    # the mover on node b hears its move, then the end, then its ack: as on one node
    heard = [m["t"] for m in ann.seen if m["t"] in ("move", "end", "ack")]
    assert heard == ["move", "ack", "move"] * 3 + ["move", "end", "ack"], heard
    held = await owner(nodes, game)
    health = await asyncio.to_thread(_get_json, f"{nodes[held].http_url}/health")
    assert health["node"] == held and health["games_owned"] == 1 and health["bus_connected"]
    assert isinstance(health["bus_lag_ms"], float | int)
    idle = next(n for n in "abc" if n != held)
    metrics = await asyncio.to_thread(_get_text, f"{nodes[idle].http_url}/metrics")
    assert f'qubic_cluster_node{{node="{idle}"}} 1' in metrics
    assert "qubic_cluster_games_owned 0" in metrics
    assert "qubic_cluster_requests_forwarded" in metrics
    record = await nodes["c"].store.get_game(game)
    assert record is not None and record.status is GameStatus.FINISHED
    assert [m.ply for m in record.moves] == list(range(1, 8))


async def test_chat_draws_a_rematch_and_a_resignation_across_nodes(nodes: Nodes) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    bob = await move_to(nodes, "b", bob, game)
    ref = await bob.send(t="chat", game=game, text="good luck")
    assert (await ann.expect("chat"))["text"] == "good luck"
    await bob.expect("ack", ref=ref)
    assert [m["t"] for m in bob.seen if m["t"] in ("chat", "ack")][-2:] == ["chat", "ack"]
    await play(ann, game, "1a1", 0)
    await play(bob, game, "2a1", 1)
    await bob.send(t="draw_offer", game=game)
    await ann.expect("offer", kind="draw", by="o")
    await ann.send(t="draw_decline", game=game)
    await bob.expect("offer", kind="draw_declined")
    await ann.send(t="draw_offer", game=game)
    await bob.expect("offer", kind="draw", by="x")
    ref = await bob.send(t="draw_accept", game=game)
    for client in (ann, bob):
        end = await client.expect("end", game=game)
        assert end["reason"] == "agreement" and end["result"] == "1/2-1/2"
    await bob.expect("ack", ref=ref)
    await ann.send(t="rematch", game=game)
    await bob.expect("offer", kind="rematch")
    await bob.send(t="rematch", game=game)
    again = await ann.expect("game")
    while again["id"] == game:  # the first game's state again: it was handed to its node
        again = await ann.expect("game")
    assert again["you"] == "o"
    rematch = await bob.expect("game", id=again["id"])  # bob is on node b, the game on a
    assert rematch["you"] == "x"
    await play(bob, rematch["id"], "1a1", 0)
    await play(ann, rematch["id"], "2a1", 1)
    ref = await bob.send(t="resign", game=rematch["id"])
    for client in (ann, bob):
        assert (await client.expect("end", game=rematch["id"]))["reason"] == "resign"
    await bob.expect("ack", ref=ref)
    record = await nodes["b"].store.get_game(rematch["id"])
    assert record is not None and record.result == "0-1" and len(record.moves) == 2


async def test_a_reconnect_to_another_node_mid_game_resumes_at_the_same_ply(
    nodes: Nodes,
) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    for ply, cell in enumerate(ROW[:4]):
        await play(ann if ply % 2 == 0 else bob, game, cell, ply)
    ann = await move_to(nodes, "c", ann, game)
    # (bob may or may not see ann go: her watch on c can reach the owner before the leave
    # from a, and a player is away only when their last connection on any node is gone)
    snapshot = [m for m in ann.seen if m["t"] == "game"][-1]
    assert len(snapshot["moves"]) == 4 and snapshot["you"] == "x"
    bob = await move_to(nodes, "b", bob, game)
    await play(ann, game, ROW[4], 4)
    await bob.expect("move", ply=5)
    # a client that missed nothing catches up from its version (no snapshot)
    version = [m for m in bob.seen if m["t"] == "move"][-1]["version"]
    ref = await bob.send(t="watch", game=game, since=version)
    await bob.expect("ack", ref=ref)
    # a move that is not the player's turn is refused by the owner, the error sent to b
    await bob.send(t="move", game=game, cell="3a1", ply=4)
    assert (await bob.expect("error"))["code"] in ("stale_move", "not_your_turn")


async def test_a_node_with_no_owner_claims_the_game_and_a_stale_owner_is_fenced(
    nodes: Nodes,
) -> None:
    ann, bob = await nodes.client("a", "ann"), await nodes.client("a", "bob")
    game = await private_game(nodes, "a", ann, bob)
    await play(ann, game, "1a1", 0)
    first = await owner(nodes, game)
    other = next(n for n in "abc" if n != first)
    a, b = nodes[first].hub, nodes[other].hub
    assert a.cluster is not None and b.cluster is not None
    stale = a.cluster.ownership.held[game]
    # the owner pauses past its lease (its upkeep stops; its lease is gone from Redis)
    a.cluster._loops[0].cancel()
    await a.cluster.redis.delete(a.cluster.leases.key(game))
    a.cluster.ownership.held[game] = replace(stale, expires=0.0)  # it no longer acts as the owner
    b.cluster.ownership.owners.pop(game, None)  # `other` asks Redis who holds it
    bob = await move_to(nodes, other, bob, game)  # nobody holds the game: `other` claims it
    assert b.cluster.ownership.held[game].token > stale.token
    record = await b.store.get_game(game)
    assert record is not None and record.fence == b.cluster.ownership.held[game].token
    await play(bob, game, "2a1", 1)
    # the old owner wakes up still holding its room (at ply 1) and plays a move there
    assert game in a.rooms.held
    with pytest.raises(StoreError) as refused:
        await a.rooms.act(Peer(first, 0, "bob"), game, None,
                          lambda room, name, now: room.move(name, "3a1", 1, now))
    assert refused.value.code == "fenced"
    stored = await b.store.get_game(game)
    assert stored is not None and [m.cell for m in stored.moves] == [0, 16]
    await play(ann, game, "1b1", 2)  # from node a, to the new owner
    stored = await b.store.get_game(game)
    assert stored is not None and [m.cell for m in stored.moves] == [0, 16, 1]


async def test_new_games_are_spread_over_the_nodes(nodes: Nodes) -> None:
    games = []
    for i in range(9):
        x, o = await nodes.client("b", f"x{i}"), await nodes.client("b", f"o{i}")
        games.append(await private_game(nodes, "b", x, o))
        await play(x, games[-1], "1a1", 0)  # the game works wherever it went
    owners = [await owner(nodes, game) for game in games]
    assert len(set(owners)) >= 2, owners


async def test_the_store_claim_raises_the_fence_and_refuses_an_older_one(
    postgres_url: str,
) -> None:
    store = await PostgresStore.open(postgres_url)
    try:
        game = await store.create_game(variant="4x4x4", x=Seat.human("ann"),
                                       o=Seat.human("bob"), clock=None, rated=False, now=1.0)
        await store.create_player("ann", 1.0)
        claimed = await store.claim(game.id, fence=5)
        assert claimed.fence == 5 and claimed.id == game.id
        with pytest.raises(StoreError) as refused:
            await store.claim(game.id, fence=4)
        assert refused.value.code == "fenced"
        with pytest.raises(StoreError) as missing:
            await store.claim("nope", fence=9)
        assert missing.value.code == "no_such_game"
    finally:
        await store.close()


async def test_a_peer_is_addressed_by_node_and_session() -> None:
    peer = Peer("b", 7, "bob", True)
    assert (peer.node, peer.session, peer.name, peer.has_open) == ("b", 7, "bob", True)


E2E = [e2e.test_two_people_play_to_a_win, e2e.test_a_draw_by_agreement,
       e2e.test_a_declined_draw_and_then_resignation, e2e.test_a_loss_on_time,
       e2e.test_a_spectator_sees_every_move_and_the_end, e2e.test_a_rematch_swaps_colours,
       e2e.test_chat_reaches_the_room_literally]


@pytest.mark.parametrize("scenario", E2E, ids=[t.__name__.removeprefix("test_") for t in E2E])
async def test_end_to_end_scenarios_on_three_nodes(nodes: Nodes, scenario: Any) -> None:
    """The one-node end-to-end tests, with each client on the next node in turn."""
    await scenario(ClusterServer(nodes))
