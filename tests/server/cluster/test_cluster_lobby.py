"""Cluster mode (issue 15): one lobby across three in-process nodes on one Redis and one
PostgreSQL. Players on different nodes pair by every route (seek, quick, private code,
challenge), the live list and the online count are the same everywhere, per-player limits
hold across nodes, and the lobby outlives its holder."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
import redis.asyncio

from server.cluster.lobby import ClusterLobby
from server.errors import ServerError
from server.game.challenges import Challenges
from server.game.matchmaking import Matchmaker
from server.game.records import TimeControl
from tests.eventually import eventually
from tests.server.cluster.test_cluster_failover import Cluster as ProcessCluster
from tests.server.game import test_challenges as challenges
from tests.server.node import test_e2e as e2e
from tests.server.servers import Client, Nodes, connect, play


def holder(nodes: Nodes) -> str:
    """The node holding the lobby (waits for one)."""
    held = [name for name, running in nodes.running.items()
            if isinstance(running.hub.lobby, ClusterLobby) and running.hub.lobby.holding]
    assert len(held) <= 1, held
    return held[0] if held else ""


async def lobby_of(client: Client) -> dict[str, Any]:
    snapshot = await client.request(t="lobby_sub")
    assert snapshot["t"] == "lobby", snapshot
    return snapshot


async def seen_online(client: Client, count: int) -> None:
    """``client`` (a lobby subscriber) is told ``count`` players are online."""
    async def wait() -> None:
        while True:
            message = await client.expect("lobby_delta")
            if message.get("online") == count:
                return

    last = [m for m in client.seen if m["t"] in ("lobby", "lobby_delta")
            and m.get("online") is not None]
    if last and last[-1]["online"] == count:
        return
    await wait()


async def test_a_seek_made_on_a_is_accepted_from_b(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    ann, bob = await nodes.client("a", "ann"), await nodes.client("b", "bob")
    eve = await nodes.client("c", "eve")
    await lobby_of(eve)
    seeking = await ann.request(t="seek", colour="x")
    assert seeking["t"] == "seeking", seeking
    seek = seeking["seek"]["id"]
    delta = await eve.expect("lobby_delta", seeks_removed=[])
    assert [s["id"] for s in delta["seeks_added"]] == [seek]
    snapshot = await lobby_of(bob)
    assert [s["id"] for s in snapshot["seeks"]] == [seek]
    await bob.send(t="accept_seek", seek=seek)
    game_a, game_b = await ann.expect("game"), await bob.expect("game")
    assert game_a["id"] == game_b["id"] and game_a["you"] == "x" and game_b["you"] == "o"
    game = game_a["id"]
    removed = await eve.expect("lobby_delta", seeks_added=[])
    assert removed["seeks_removed"] == [seek]
    listed = await eve.expect("lobby_delta", games_removed=[])
    assert [g["id"] for g in listed["games_added"]] == [game]
    watched = await eve.request(t="watch", game=game)
    assert watched["t"] == "game"
    await play(ann, game, "1a1", 0)
    await play(bob, game, "2a1", 1)
    await eve.expect("move", notation="2a1")
    assert [m["notation"] for m in eve.seen if m["t"] == "move"] == ["1a1", "2a1"]


async def rated(nodes: Nodes, ratings: dict[str, float]) -> dict[str, str]:
    """Players with these ratings (set in PostgreSQL): their tokens."""
    tokens = {}
    for name in ratings:
        client = await nodes.client("a", name)
        assert client.token is not None
        tokens[name] = client.token
        await client.ws.close()
    conn = await asyncpg.connect(nodes.config["db_path"])
    try:
        for name, rating in ratings.items():
            await conn.execute("UPDATE players SET rating = $1 WHERE name = $2", rating, name)
    finally:
        await conn.close()
    return tokens


async def test_quick_pairing_across_nodes_keeps_the_rating_windows(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    tokens = await rated(nodes, {"ann": 1500, "bob": 1550, "cat": 1900})
    ann = await nodes.client("a", token=tokens["ann"])
    bob = await nodes.client("b", token=tokens["bob"])
    cat = await nodes.client("c", token=tokens["cat"])
    clock = {"initial": 60, "increment": 1}
    for client in (ann, cat):  # 400 apart: outside each other's window (100 at first)
        queued = await client.request(t="quick", variant="3x3x3", clock=clock)
        assert queued["t"] == "queued", queued
    queued = await bob.request(t="quick", variant="3x3x3", clock=clock)
    assert queued["t"] == "queued", queued
    game_a, game_b = await ann.expect("game"), await bob.expect("game")
    assert game_a["id"] == game_b["id"] and game_a["rated"]
    assert {game_a["you"], game_b["you"]} == {"x", "o"}
    left = await cat.request(t="cancel_quick")  # cat still waited: no game for cat
    assert left["t"] == "ack", left
    assert not [m for m in cat.seen if m["t"] == "game"]


async def test_a_private_code_made_on_a_is_joined_on_b_in_any_case(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    ann, bob = await nodes.client("a", "ann"), await nodes.client("b", "bob")
    eve = await nodes.client("c", "eve")
    await lobby_of(eve)
    created = await ann.request(t="private_create", colour="o")
    assert created["t"] == "private", created
    code = created["code"].replace("-", "").lower()
    refused = await bob.request(t="private_join", code="AAAA-BBBB-CCCC-DDDD")
    assert refused["t"] == "error" and refused["code"] == "no_such_code"
    own = await ann.request(t="private_join", code=code)
    assert own["t"] == "error" and own["code"] == "not_allowed"
    await bob.send(t="private_join", code=code)
    game_a, game_b = await ann.expect("game"), await bob.expect("game")
    assert game_a["id"] == game_b["id"] and game_a["you"] == "o" and game_b["you"] == "x"
    await play(bob, game_a["id"], "1a1", 0)
    await ann.expect("move", notation="1a1")
    # a private room's game is never listed
    snapshot = await lobby_of(await nodes.client("b", "dan"))
    assert snapshot["games"] == []
    assert not [m for m in eve.seen if m["t"] == "lobby_delta" and m["games_added"]]


async def test_a_challenge_from_a_to_a_player_on_c(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    ann, cat = await nodes.client("a", "ann"), await nodes.client("c", "cat")
    await eventually(lambda: _online(nodes, 2), "both players are online in the lobby")
    missing = await ann.request(t="challenge", name="nobody")
    assert missing["t"] == "error" and missing["code"] == "no_such_player"
    sent = await ann.request(t="challenge", name="cat", colour="x")
    assert sent["t"] == "challenge_sent", sent
    first = sent["challenge"]["id"]
    received = await cat.expect("challenge")
    assert received["challenge"]["id"] == first and received["challenge"]["by"] == "ann"
    declined = await cat.request(t="challenge_decline", challenge=first)
    assert declined["t"] == "ack"
    gone = await ann.expect("challenge_gone")
    assert gone == {"t": "challenge_gone", "challenge": first, "reason": "declined"}
    again = await ann.request(t="challenge", name="cat", colour="x")
    second = again["challenge"]["id"]
    await cat.expect("challenge", challenge=again["challenge"])
    await cat.send(t="challenge_accept", challenge=second)
    game_a, game_c = await ann.expect("game"), await cat.expect("game")
    assert game_a["id"] == game_c["id"] and game_a["you"] == "x" and game_c["you"] == "o"
    await play(ann, game_a["id"], "1a1", 0)
    await play(cat, game_a["id"], "2a1", 1)


def _online(nodes: Nodes, count: int) -> bool:
    lobby = nodes.running[holder(nodes)].hub.lobby
    assert isinstance(lobby, ClusterLobby) and lobby.holding is not None
    return lobby.holding.presence.online == count


async def test_the_live_list_and_online_count_are_the_same_on_every_node(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    players = {name: await nodes.client(node, name)
               for name, node in (("ann", "a"), ("bob", "b"), ("cat", "c"), ("dan", "a"))}
    watchers = {node: await nodes.client(node, f"eve{node}") for node in "abc"}
    await eventually(lambda: _online(nodes, 7), "seven players online")
    seek = (await players["ann"].request(t="seek"))["seek"]["id"]
    await players["bob"].send(t="accept_seek", seek=seek)
    game = (await players["ann"].expect("game"))["id"]
    seek = (await players["cat"].request(t="seek"))["seek"]["id"]  # an open seek
    snapshots = [await lobby_of(watchers[node]) for node in "abc"]
    for snapshot in snapshots:
        assert snapshot["online"] == 7
        assert [p["name"] for p in snapshot["players"]] == sorted(
            ["ann", "bob", "cat", "dan", "evea", "eveb", "evec"])
        assert [g["id"] for g in snapshot["games"]] == [game]
        assert [s["id"] for s in snapshot["seeks"]] == [seek]
    await players["dan"].ws.close()  # the count goes down on every node
    for watcher in watchers.values():
        await seen_online(watcher, 6)


async def test_lobby_sub_on_c_gets_the_deltas_of_a_seek_made_on_a(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    eve = await nodes.client("c", "eve")
    first = await lobby_of(eve)
    # A seek of the test before may still be there (its player's goodbye crossing the
    # cluster): wait until it goes, so that the deltas below are this test's own.
    leftover = {s["id"] for s in first["seeks"]}
    while leftover:
        leftover -= set((await eve.expect("lobby_delta"))["seeks_removed"])
    ann = await nodes.client("a", "ann")
    seek = (await ann.request(t="seek", variant="3x3x3", rated=True))["seek"]
    added = await eve.expect("lobby_delta", seeks_removed=[])
    assert added["seeks_added"] == [seek] and seek["name"] == "ann"
    assert (await ann.request(t="cancel_seek", seek=seek["id"]))["t"] == "ack"
    removed = await eve.expect("lobby_delta", seeks_added=[])
    assert removed["seeks_removed"] == [seek["id"]]
    assert (await eve.request(t="lobby_unsub"))["t"] == "ack"
    await ann.request(t="seek")
    assert not [m for m in await eve.quiet(0.5) if m["t"] == "lobby_delta"]


async def test_per_player_limits_hold_across_nodes(nodes: Nodes) -> None:
    await eventually(lambda: holder(nodes), "a node holds the lobby")
    ann_a = await nodes.client("a", "ann")
    ann_b = await nodes.client("b", token=ann_a.token)  # one player, two nodes
    seek = await ann_a.request(t="seek")
    assert seek["t"] == "seeking"
    for request in ({"t": "seek"}, {"t": "quick"}, {"t": "private_create"}):
        refused = await ann_b.request(**request)
        assert refused["t"] == "error" and refused["code"] == "too_many_seeks", refused
    for name, node in (("bob", "a"), ("cat", "b"), ("dan", "c"), ("fay", "c")):
        await nodes.client(node, name)
    await eventually(lambda: _online(nodes, 5), "five players online")
    for name, client in (("bob", ann_a), ("cat", ann_b), ("dan", ann_a)):
        assert (await client.request(t="challenge", name=name))["t"] == "challenge_sent"
    refused = await ann_b.request(t="challenge", name="fay")
    assert refused["t"] == "error" and refused["code"] == "too_many_challenges"
    refused = await ann_a.request(t="challenge", name="bob")
    assert refused["t"] == "error" and refused["code"] == "already_challenged"
    for client in (ann_a, ann_b, ann_b):  # computer games, from two nodes
        game = await client.request(t="play_ai", level=1, colour="x")
        assert game["t"] == "game", game
    refused = await ann_a.request(t="play_ai", level=1)
    assert refused["t"] == "error" and refused["code"] == "too_many_computer_games"
    refused = await ann_b.request(t="play_ai", level=1)
    assert refused["t"] == "error" and refused["code"] == "too_many_computer_games"
    # play_ai took ann's seek away, on every node
    snapshot = await lobby_of(await nodes.client("c", "gil"))
    assert snapshot["seeks"] == []


async def test_the_lobby_holder_stopped_another_node_holds_it_with_the_open_seek(
    nodes: Nodes,
) -> None:
    first = await until_held(nodes)
    other = next(n for n in "abc" if n != first)
    ann = await nodes.client(other, "ann")
    seek = (await ann.request(t="seek", colour="o"))["seek"]["id"]
    created = await ann.request(t="cancel_seek", seek=seek)
    assert created["t"] == "ack"
    seek = (await ann.request(t="seek", colour="o"))["seek"]["id"]
    await nodes.stop(first)  # SIGTERM: the state is kept, the lease released at once
    second = await until_held(nodes)
    assert second != first
    snapshot = await lobby_of(await nodes.client(second, "eve"))
    assert [s["id"] for s in snapshot["seeks"]] == [seek]
    third = next(n for n in nodes.running if n != other)
    bob = await nodes.client(third, "bob")
    await bob.send(t="accept_seek", seek=seek)
    game_a, game_b = await ann.expect("game"), await bob.expect("game")
    assert game_a["id"] == game_b["id"] and game_a["you"] == "o"
    newer = (await bob.request(t="seek"))["seek"]["id"]
    assert newer not in (seek,)  # ids go on from the restored state


async def test_a_frozen_lobby_holder_is_replaced_and_fenced_off(nodes: Nodes) -> None:
    first = await until_held(nodes)
    other = next(n for n in "abc" if n != first)
    ann = await nodes.client(other, "ann")
    seek = (await ann.request(t="seek", variant="3x3x3"))["seek"]
    # the holder stops renewing (as if paused or killed): its lease runs out
    lobby = nodes[first].hub.lobby
    assert isinstance(lobby, ClusterLobby) and lobby.holding is not None
    old, lobby.holding = lobby.holding, None
    for task in lobby._loops:
        task.cancel()
    old.worker.cancel()
    second = await until_held(nodes)
    assert second != first
    eve = await nodes.client(second, "eve")
    snapshot = await lobby_of(eve)
    assert snapshot["seeks"] == [seek]
    bob = await nodes.client(second, "bob")
    assert (await bob.request(t="seek"))["t"] == "seeking"  # the new holder writes
    old.lobby.core.matchmaker.withdraw("ann")  # the old holder wakes up and changes the lobby
    with pytest.raises(ServerError):
        await old.persist()  # refused: a newer token has written
    again = await lobby_of(await nodes.client(other, "cat"))
    assert [s["name"] for s in again["seeks"]] == ["ann", "bob"]


async def until_held(nodes: Nodes) -> str:
    return await eventually(lambda: holder(nodes), "a node holds the lobby")


async def test_the_lobby_holder_killed_with_sigkill_another_node_takes_the_open_seek(
    tmp_path: Path, redis_url: str, postgres_url: str,
) -> None:
    cluster = ProcessCluster(tmp_path, redis_url, postgres_url)
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        cluster.start()

        async def lobby_holder() -> str:
            value = await client.get("qubic:lease:lobby")
            text = value.decode() if isinstance(value, bytes) else value
            return "" if text is None else text.split(":", 1)[1]

        first = await eventually(lobby_holder, "a node holds the lobby")
        others = [n for n in "abc" if n != first]
        ann = await connect(cluster.nodes[others[0]], "ann")
        seek = (await ann.request(t="seek", colour="x"))["seek"]
        cluster.nodes[first].kill()  # no handover: the lease runs out (ttl 1.5 s)
        # meanwhile a request is answered by the next holder, or refused after 2 x ttl
        bob = await connect(cluster.nodes[others[1]], "bob")
        meanwhile = await bob.request(t="quick")
        assert meanwhile["t"] == "queued" or meanwhile.get("code") == "unavailable", meanwhile

        async def next_holder() -> str | None:
            second = await lobby_holder()
            return second if second and second != first else None

        assert await eventually(next_holder, "another node holds the lobby") in others
        bob.inbox.clear()
        if meanwhile["t"] == "queued":
            assert (await bob.request(t="cancel_quick"))["t"] == "ack"
        snapshot = await lobby_of(bob)
        assert snapshot["seeks"] == [seek]
        await bob.send(t="accept_seek", seek=seek["id"])
        game_a, game_b = await ann.expect("game"), await bob.expect("game")
        assert game_a["id"] == game_b["id"] and game_a["you"] == "x" and game_b["you"] == "o"
    finally:
        cluster.kill()
        await client.aclose()


# -- the one-node lobby tests, on three nodes ---------------------------------------------


class Spread:
    """Stands for ``Server`` (tests/server/servers.py) in the one-node tests: each new client
    connects to the next node (a, b, c, a, ...); the HTTP API is the lobby holder's."""

    def __init__(self, nodes: Nodes) -> None:
        self.nodes = nodes
        self.clients = nodes.clients
        self._next = 0

    @property
    def running(self) -> Any:
        return self.nodes[holder(self.nodes)]

    async def client(self, name: str | None = None) -> Client:
        node = "abc"[self._next % 3]
        self._next += 1
        return await self.nodes.client(node, name)


@pytest_asyncio.fixture
async def spread(nodes: Nodes) -> Spread:
    await until_held(nodes)
    return Spread(nodes)


@pytest.mark.parametrize("test", [
    e2e.test_quick_pairing_pairs_two_players,
    e2e.test_seeks_are_listed_live_and_accepted,
    e2e.test_a_private_room_by_code,
    e2e.test_a_private_room_is_cancelled_by_its_host,
    e2e.test_one_player_has_at_most_three_computer_games_going,
    e2e.test_a_spectator_sees_every_move_and_the_end,
    e2e.test_a_rematch_swaps_colours,
    e2e.test_a_rated_rematch_shows_new_ratings_and_its_spectators_follow,
    challenges.test_a_challenge_accepted_starts_the_game_for_both,
    challenges.test_declined_cancelled_refused_and_lapsed,
], ids=lambda test: test.__name__.removeprefix("test_"))
async def test_the_one_node_lobby_tests_pass_on_three_nodes(spread: Spread, test: Any) -> None:
    await test(spread)


def test_the_lobby_state_round_trips_with_its_times_and_ids() -> None:
    """What the holder writes to Redis, as the next holder reads it (pure: no services)."""
    made = Matchmaker(rng=random.Random(1))
    seek = made.create_seek("ann", "4x4x4", TimeControl(300, 5), True, "x", 100.0, 1612.0)
    made.join_pool("bob", "3x3x3", None, 1500.0, 101.0)
    room = made.create_private_room("cat", "4x4", None, False, "o", 102.0)
    book = Challenges()
    challenge = book.create("dan", "eve", "4x4x4", TimeControl(60, 1), True, "random")
    # the next holder's clock is 1000 s ahead of this one's: every time moves with it
    restored, again = Matchmaker(rng=random.Random(1)), Challenges()
    restored.load(made.dump(0.0), 1000.0)
    again.load(book.dump())
    assert restored.seeks() == [replace(seek, created=1100.0)]
    assert restored.waiting_in("bob") == ("3x3x3", None)
    assert restored.pool_sizes() == {("3x3x3", None): 1}
    assert restored.join_private_room(room.code.lower(), "fay", 1103.0).o == "cat"
    assert restored.create_seek("gil", "4x4x4", None, False, "x", 1104.0).id != seek.id
    assert again.accept(challenge.id, "eve")[0] == challenge
    assert again.create("dan", "eve", "4x4x4", None, False, "x").id != challenge.id
