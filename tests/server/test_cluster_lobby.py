"""Cluster mode (issue 15): one lobby across three in-process nodes on one Redis and one
PostgreSQL. Players on different nodes pair by every route (seek, quick, private code,
challenge), the live list and the online count are the same everywhere, per-player limits
hold across nodes, and the lobby outlives its holder."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import Client, Nodes, play

from server.lobby_cluster import ClusterLobby


def holder(nodes: Nodes) -> str:
    """The node holding the lobby (waits for one)."""
    held = [name for name, running in nodes.running.items()
            if isinstance(running.hub.lobby, ClusterLobby) and running.hub.lobby.holding]
    assert len(held) <= 1, held
    return held[0] if held else ""


async def until(check: Any, what: str, tries: int = 400) -> None:
    """Poll ``check()`` (every 50 ms) until it is true; the test fails saying ``what``."""
    for _ in range(tries):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


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
    await until(lambda: holder(nodes), "a node holds the lobby")
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
