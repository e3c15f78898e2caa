"""A real server on an ephemeral port, a cluster of in-process nodes, and real websocket clients:
what the end-to-end tests drive (their fixtures are in tests/server/conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from server.http.app import RunningServer, ServerConfig, start_server
from server.store.base import Store
from tests.eventually import eventually

if TYPE_CHECKING:
    from bench.harness import ServerProcess

TIMEOUT = 20.0


class Client:
    """A websocket client that sends dicts and waits for messages of a given type. Its
    socket reads whatever comes (``max_queue=None``): a test that never reads a
    subscription's updates would otherwise stop reading the socket, and its close at the end
    would wait 10 s for a close frame queued behind them."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []  # every message received, in order
        self.inbox: list[dict[str, Any]] = []  # received and not yet taken by expect()
        self.name: str | None = None
        self.token: str | None = None
        self._next_id = 0

    async def send(self, **message: Any) -> str:
        if "id" not in message:
            self._next_id += 1
            message["id"] = f"r{self._next_id}"
        await self.ws.send(json.dumps(message))
        return message["id"]

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.seen.append(message)
        return message

    async def expect(self, t: str, timeout: float = TIMEOUT, **fields: Any) -> dict[str, Any]:
        """The first message of type ``t`` whose fields match, received before or after this
        call; other messages stay in the inbox for later calls."""

        def matches(message: dict[str, Any]) -> bool:
            return message["t"] == t and all(message.get(k) == v for k, v in fields.items())

        for message in self.inbox:
            if matches(message):
                self.inbox.remove(message)
                return message
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - loop.time()))
            if matches(message):
                return message
            self.inbox.append(message)

    async def error(self, code: str, **fields: Any) -> dict[str, Any]:
        return await self.expect("error", code=code, **fields)

    async def request(self, **message: Any) -> dict[str, Any]:
        """Send and return the reply (any message whose ``ref`` is this request's id)."""
        ref = await self.send(**message)
        while True:
            reply = await self.recv()
            if reply.get("ref") == ref:
                return reply
            self.inbox.append(reply)

    async def hello(self, name: str | None = None, token: str | None = None) -> dict[str, Any]:
        fields = {k: v for k, v in (("name", name), ("token", token)) if v is not None}
        welcome = await self.request(t="hello", **fields)
        assert welcome["t"] == "welcome", welcome
        self.name, self.token = welcome["name"], welcome["token"]
        return welcome

    async def quiet(self, seconds: float = 0.3) -> list[dict[str, Any]]:
        """Whatever arrives within ``seconds``."""
        out = []
        try:
            while True:
                out.append(await self.recv(seconds))
        except TimeoutError:
            return out


class Server:
    """Starts servers on one database file and opens clients to the current one."""

    def __init__(self, path: Path, store: Store | None = None, **config: Any) -> None:
        self.path = path
        self.store = store  # the first start's store (else opened on ``path``)
        self.config = {"computer_workers": 1, "computer_move_time": 0.1, "grace": 60.0, **config}
        self.running: RunningServer | None = None
        self.clients: list[ClientConnection] = []

    async def start(self) -> RunningServer:
        self.running = await start_server(
            ServerConfig(port=0, db_path=str(self.path), **self.config), store=self.store
        )
        self.store = None  # closed with that server
        return self.running

    async def stop(self) -> None:
        for ws in self.clients:
            await ws.close()
        self.clients.clear()
        if self.running is not None:
            await self.running.stop()
            self.running = None

    async def client(self, name: str | None = None) -> Client:
        assert self.running is not None
        ws = await websockets.connect(self.running.ws_url, max_size=None, max_queue=None)
        self.clients.append(ws)
        client = Client(ws)
        if name is not None:
            await client.hello(name)
        return client


async def start_private_game(
    server: Server | ClusterServer, a: Client, b: Client, colour: str = "x", **options: Any
) -> str:
    """``a`` hosts a private room (as ``colour``) and ``b`` joins; returns the game id. On a
    cluster ``b`` joins on ``a``'s node and then goes back to
    its own node and reopens the game there."""
    home = server.home(b) if isinstance(server, ClusterServer) else None
    if isinstance(server, ClusterServer) and home != server.home(a):
        await server.move(b, server.home(a))
    created = await a.request(t="private_create", colour=colour, **options)
    assert created["t"] == "private", created
    await b.send(t="private_join", code=created["code"])
    game_a = await a.expect("game")
    game_b = await b.expect("game")
    assert game_a["id"] == game_b["id"]
    if isinstance(server, ClusterServer) and home is not None and home != server.home(a):
        await server.move(b, home)
        assert (await b.request(t="watch", game=game_a["id"]))["t"] == "game"
    if isinstance(server, ClusterServer):
        await server.settled(game_a["id"], a, b)
    return game_a["id"]


async def connect(server: ServerProcess, name: str | None = None,
                  token: str | None = None) -> Client:
    """A client of a server process (bench.harness's ``ServerProcess``); ``name`` or ``token``
    says hello first."""
    client = Client(await websockets.connect(server.ws_url, max_size=None, max_queue=None))
    if name is not None or token is not None:
        await client.hello(name, token)
    return client


async def play(client: Client, game: str, cell: str, ply: int) -> dict[str, Any]:
    """Play and wait for the acknowledgement (after the move's broadcast)."""
    ref = await client.send(t="move", game=game, cell=cell, ply=ply)
    return await client.expect("ack", ref=ref)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` read-only even for root, who ignores permission bits (chattr +i)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root where chattr +i is unavailable")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


class Nodes:
    """A cluster of in-process nodes (issue 15): each its own server, RedisBus, leases and
    PostgreSQL pool, on one Redis and one PostgreSQL database."""

    def __init__(self, redis_url: str, postgres_url: str, names: str = "abc",
                 **config: Any) -> None:
        self.config = {"computer_move_time": 0.1, "grace": 60.0, "redis_url": redis_url,
                       "db_path": postgres_url, "lease_ttl": 1.5, **config}
        self.names = list(names)
        self.running: dict[str, RunningServer] = {}
        self.clients: list[ClientConnection] = []

    async def start(self, *names: str) -> None:
        for name in names or self.names:
            self.running[name] = await start_server(
                ServerConfig(port=0, node=name, **self.config))
        await eventually(lambda: all(r.hub.cluster.ownership.alive >= set(self.running)
                                     for r in self.running.values() if r.hub.cluster),
                         "every node has seen every other (its first sweep)")

    async def stop(self, *names: str) -> None:
        if not names:
            for ws in self.clients:
                await ws.close()
            self.clients.clear()
        for name in names or list(self.running):
            running = self.running.pop(name, None)
            if running is not None:
                await running.stop()

    def __getitem__(self, name: str) -> RunningServer:
        return self.running[name]

    async def client(self, node: str, name: str | None = None,
                     token: str | None = None) -> Client:
        ws = await websockets.connect(self.running[node].ws_url, max_size=None, max_queue=None)
        self.clients.append(ws)
        client = Client(ws)
        if name is not None or token is not None:
            await client.hello(name, token)
        return client


class ClusterServer:
    """What the end-to-end tests use of ``Server``, on three nodes: each new client lands on
    the next node in turn, as behind a load balancer without sticky sessions."""

    def __init__(self, nodes: Nodes) -> None:
        self.nodes = nodes
        self._homes: dict[int, str] = {}
        self._next = 0

    @property
    def running(self) -> RunningServer:
        return self.nodes[self.nodes.names[0]]

    def home(self, client: Client) -> str:
        return self._homes[id(client)]

    async def client(self, name: str | None = None) -> Client:
        node = self.nodes.names[self._next % len(self.nodes.names)]
        self._next += 1
        client = await self.nodes.client(node, name)
        self._homes[id(client)] = node
        return client

    async def settled(self, game: str, *clients: Client) -> None:
        """Wait until the new game has been handed to its node and the players have been
        sent its state again; that repeated state is taken out of their inboxes."""
        seen = 0

        def held_by_one() -> bool:  # one node holds it, for four looks in a row
            nonlocal seen
            held = [r for r in self.nodes.running.values()
                    if r.hub.cluster is not None and game in r.hub.cluster.ownership.held
                    and game in r.hub.rooms.held]
            seen = seen + 1 if len(held) == 1 else 0
            return seen >= 4

        await eventually(held_by_one, f"game {game} settles on one node")
        await asyncio.sleep(0.1)
        for client in clients:
            with contextlib.suppress(TimeoutError):
                while True:
                    client.inbox.append(await client.recv(0.05))
            client.inbox = [m for m in client.inbox if not (m["t"] == "game" and
                                                            m.get("id") == game)]

    async def move(self, client: Client, node: str) -> None:
        """``client`` reconnects to ``node`` (the same object, a new socket) as its player."""
        await client.ws.close()
        client.ws = await websockets.connect(self.nodes[node].ws_url, max_size=None, max_queue=None)
        self.nodes.clients.append(client.ws)
        self._homes[id(client)] = node
        await client.hello(token=client.token)


