"""The two chats and the game's versions, end to end (issue 36, item 1): a real server and real
websocket clients, each following docs/protocol.md's versioning rule to the letter (a versioned
event only at exactly one more than it holds; on a gap a catch-up, `watch` with `since`; after
two catch-ups that leave the gap open, the full game), with the chat applied whatever the
version and kept once by `line`. Two players, a spectator and a moderator chat in both chats
while the game is played; no one may meet a gap, and the spectator who drops and comes back
closes its catch-up in one round. One server here; the three-node cluster in
test_cluster_chat_versions.py."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import websockets

from tests.eventually import eventually
from tests.server.node.test_levers import connected_moderator
from tests.server.servers import Client, ClusterServer, Server, start_private_game

CATCH_UPS = 2  # catch-ups in a row that leave a gap before the full game is asked for
X_MOVES = ["1a1", "2b3", "3c1", "4d2"]  # no line between them, nor between O's
O_MOVES = ["1d4", "2a2", "3b4", "4c3"]


class Follower:
    """One client's view of one game, kept as the protocol says; ``watches`` counts the
    `watch` frames it sent after opening the game."""

    def __init__(self, client: Client, game: str, state: dict[str, Any]) -> None:
        self.client = client
        self.game = game
        self.watches = 0
        self.gaps = 0
        self.asking: str | None = None  # the id of this client's `watch` on its way
        self.load(state)
        self.task = asyncio.create_task(self.run())

    def load(self, state: dict[str, Any]) -> None:
        self.version: int = state["version"]
        self.moves: list[int] = list(state["moves"])
        self.lines: dict[int, str] = {said.get("line", said.get("version", 0)): said["text"]
                                      for said in state["chat"]}
        self.ahead = self.failed = 0

    async def run(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                await self.handle(await self.client.recv(timeout=3600))

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "game" and message["id"] == self.game:
            self.load(message)
            if message.get("ref") == self.asking:
                self.asking = None
        elif kind == "ack" and message.get("ref") == self.asking and self.asking is not None:
            self.asking = None  # the catch-up is complete: did it close the gap?
            if self.version >= self.ahead:
                self.failed = 0
            else:
                self.failed += 1
                await self.resync()
        elif message.get("game") != self.game:
            return
        elif "version" in message:
            version = message["version"]
            if version <= self.version:
                return  # had it (a catch-up's presence says it again)
            if version > self.version + 1:
                self.gaps += 1
                self.ahead = max(self.ahead, version)
                await self.resync()
                return
            if kind == "move":
                self.moves.append(message["cell"])
            self.version = version
            self.chat(message)  # (a chat that took a version: what the server did before)
        else:
            self.chat(message)

    def chat(self, message: dict[str, Any]) -> None:
        if message["t"] == "chat":
            self.lines.setdefault(message.get("line", message.get("version", 0)), message["text"])
        elif message["t"] == "chat_removed":
            self.lines.pop(message["line"], None)

    async def resync(self) -> None:
        if self.asking is not None:
            return  # one at a time
        self.watches += 1
        if self.failed >= CATCH_UPS:
            self.asking = await self.client.send(t="watch", game=self.game)
        else:
            self.asking = await self.client.send(t="watch", game=self.game, since=self.version)

    async def come_back(self, client: Client) -> None:
        """Reconnected as ``client``: catch up from the version held."""
        self.client = client
        self.task = asyncio.create_task(self.run())
        await self.resync()

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def settled(followers: list[Follower], check: Any) -> None:
    await eventually(
        lambda: all(f.asking is None and check(f) for f in followers), "every client settled",
        every=0.025, detail=lambda: repr([(f.client.name, f.version, f.moves, f.lines,
                                           f.watches, f.asking) for f in followers]))


async def test_chat_in_both_chats_while_playing_leaves_every_client_without_a_gap(
    server: Server,
) -> None:
    await chat_while_playing(server, await connected_moderator(server))


async def chat_while_playing(server: Server | ClusterServer, mod_client: Client) -> None:
    """Ann and Bob play a private game watched by Carl and the moderator ``mod_client``; all
    four chat while they play, Carl drops and comes back, a line is removed: every client,
    following the rule, ends with the game's state, no gap met, no `watch` but Carl's."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    carl = await server.client("carl")
    states = {
        "ann": await ann.request(t="watch", game=game),
        "bob": await bob.request(t="watch", game=game),
        "carl": await carl.request(t="watch", game=game),
        "marta": await mod_client.request(t="watch", game=game),
    }
    clients = {"ann": ann, "bob": bob, "carl": carl, "marta": mod_client}
    followers = {name: Follower(clients[name], game, state) for name, state in states.items()}
    everyone = list(followers.values())
    said: dict[str, str] = {}  # text -> the chat it is in

    async def say(name: str, text: str) -> None:
        await clients[name].send(t="chat", game=game, text=text)
        said[text] = "players" if name in ("ann", "bob") else "spectators"

    for ply in range(8):
        mover = ("ann", "bob")[ply % 2]
        if ply != 4:
            await say("carl", f"stands {ply}")
        await say(mover, f"players {ply}")
        await say("marta", f"marta {ply}")
        await clients[mover].send(t="move", game=game, ply=ply,
                                  cell=(X_MOVES if ply % 2 == 0 else O_MOVES)[ply // 2])
        here = [f for name, f in followers.items() if name != "carl" or ply != 4]
        await settled(here, lambda f, n=ply + 1: len(f.moves) == n)
        if ply == 3:  # the spectator drops; the game goes on; it comes back after a move
            await followers["carl"].stop()
            await carl.ws.close()
        if ply == 4:
            carl = clients["carl"] = await server.client()
            await carl.hello(token=followers["carl"].client.token)
            await followers["carl"].come_back(carl)
            await settled(everyone, lambda f: len(f.moves) == 5)

    def heard(name: str) -> set[str]:
        chats = {"players", "spectators"} if name == "marta" else \
            {"players"} if name in ("ann", "bob") else {"spectators"}
        return {text for text, chat in said.items() if chat in chats}

    await settled(everyone, lambda f: set(f.lines.values()) == heard(f.client.name or ""))
    final = (await (await server.client("dora")).request(t="watch", game=game))["version"]
    for name, follower in followers.items():
        assert follower.version == final and len(follower.moves) == 8, name
        assert follower.gaps == 0, (name, follower.gaps)
        # the one `watch` is the spectator's return, and one round closed it
        assert follower.watches == (1 if name == "carl" else 0), (name, follower.watches)
    lines = sorted(line for f in everyone for line in f.lines)
    assert len(set(lines)) == len(said)  # one number a line, across both chats

    # a moderator removes a players' line: it goes from every screen that had it
    target = next(line for line, text in followers["ann"].lines.items() if text == "players 2")
    await mod_client.send(t="remove_chat", game=game, line=target)
    await settled(everyone, lambda f: target not in f.lines)
    assert all(f.version == final and f.watches <= 1 for f in everyone)
    for follower in everyone:
        await follower.stop()
