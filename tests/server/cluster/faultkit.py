"""What the fault tests share: a websocket client that keeps everything it saw, and raw SQL on
either store (the ``database`` fixture, on both stores, is tests/server/conftest.py's)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import asyncpg
import websockets

from server.store.factory import is_postgres_url
from tests.eventually import eventually
from tests.server import servers

TIMEOUT = 20.0


class Client(servers.Client):
    """``tests.server.servers.Client``, connected to a node by URL (frames of any size), and
    whose ``request`` waits at most ``timeout`` for its reply in all."""

    @classmethod
    async def connect(cls, url: str, name: str | None = None,
                      token: str | None = None) -> Client:
        client = cls(await websockets.connect(url, max_size=None))
        if name is not None or token is not None:
            await client.hello(name, token)
        return client

    async def request(self, timeout: float = TIMEOUT, **message: Any) -> dict[str, Any]:
        ref = await self.send(**message)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            reply = await self.recv(max(0.01, deadline - loop.time()))
            if reply.get("ref") == ref:
                return reply
            self.inbox.append(reply)

    async def close(self) -> None:
        await self.ws.close()


async def private_game(host: Client, guest: Client) -> str:
    """``host`` (X) makes a private room and ``guest`` joins it; the game's id."""
    created = await host.request(t="private_create", colour="x")
    assert created["t"] == "private", created
    await guest.send(t="private_join", code=created["code"])
    game = (await host.expect("game"))["id"]
    await guest.expect("game", id=game)
    return str(game)


async def sql(database: str, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    """Run one statement on ``database`` outside any server (``?`` placeholders on SQLite,
    ``$n`` on PostgreSQL); its rows."""
    if is_postgres_url(database):
        conn = await asyncpg.connect(database)
        try:
            return [tuple(row) for row in await conn.fetch(statement, *args)]
        finally:
            await conn.close()
    with sqlite3.connect(database) as conn:
        return list(conn.execute(statement, args).fetchall())


FREEZE_PLAYERS = {
    "sqlite": "CREATE TRIGGER frozen BEFORE UPDATE ON players"
    " BEGIN SELECT RAISE(ABORT, 'frozen'); END",
    "postgresql": """CREATE FUNCTION frozen() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'frozen'; END $$;
        CREATE TRIGGER frozen BEFORE UPDATE ON players FOR EACH ROW EXECUTE FUNCTION frozen()""",
}
"""Makes the players' rows refuse every update: only a game's end writes them, so the write of
the end fails after the last move's checks, in the end's own transaction (issue 37's window)."""
THAW_PLAYERS = {"sqlite": "DROP TRIGGER frozen",
                "postgresql": "DROP TRIGGER frozen ON players"}


def kind(database: str) -> str:
    return "postgresql" if is_postgres_url(database) else "sqlite"


async def run_script(database: str, script: str) -> None:
    if is_postgres_url(database):
        conn = await asyncpg.connect(database)
        try:
            await conn.execute(script)
        finally:
            await conn.close()
        return
    with sqlite3.connect(database) as conn:
        conn.executescript(script)


class InProcessCluster:
    """Three cluster nodes in this process (a, b, c: servers with their own RedisBus, leases
    and PostgreSQL pool) on one Redis and one PostgreSQL database, for the faults a test can
    inject from inside (a node losing a game's state, a stale cache)."""

    def __init__(self, redis_url: str, postgres_url: str, ttl: float = 1.5) -> None:
        from server.http.app import ServerConfig

        self.configs = {
            name: ServerConfig(port=0, node=name, redis_url=redis_url, db_path=postgres_url,
                               lease_ttl=ttl, computer_move_time=0.1, grace=60.0)
            for name in "abc"
        }
        self.running: dict[str, Any] = {}
        self.clients: list[Client] = []

    async def start(self) -> None:
        from server.http.app import start_server

        for name, config in self.configs.items():
            self.running[name] = await start_server(config)
        await eventually(lambda: all(r.hub.cluster.ownership.alive >= set(self.running)
                                     for r in self.running.values()),
                         "every node has seen every other (its first sweep)")

    async def stop(self) -> None:
        for client in self.clients:
            await client.close()
        for running in self.running.values():
            await running.stop()
        self.running.clear()

    async def client(self, node: str, name: str | None = None,
                     token: str | None = None) -> Client:
        client = await Client.connect(self.running[node].ws_url, name, token)
        self.clients.append(client)
        return client

    def ownership(self, node: str) -> Any:
        return self.running[node].hub.cluster.ownership

    async def owner(self, game: str) -> str:
        """The one node holding the game (after its hand-off), once that has settled."""
        held: list[str] = []
        steady = 0

        def settled() -> str | None:  # one holder, the same for four looks in a row
            nonlocal held, steady
            now = [n for n in self.running if game in self.ownership(n).held
                   and game in self.running[n].hub.rooms.held]
            steady = steady + 1 if len(now) == 1 and now == held else 0
            held = now
            return held[0] if steady >= 4 else None

        return await eventually(settled, f"game {game} settles on one node",
                                detail=lambda: f"held by {held}")


VERSIONED = {"move", "end", "presence", "chat", "offer", "takeback", "rematched",
             "chat_removed"}


def versions_seen(client: Client, game: str) -> list[int]:
    """The versions of the game's versioned events and states this client received, in
    order (a ``game`` state counts with its version: a client takes it as its own)."""
    return [m["version"] for m in client.seen
            if m.get("version") is not None and (m.get("game") == game or m.get("id") == game)
            and (m["t"] in VERSIONED or m["t"] == "game")]
