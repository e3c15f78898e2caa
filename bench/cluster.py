"""Cluster mode under load (issue 15): Redis, PostgreSQL and three ``qubic serve`` nodes.

    flock /tmp/qubic-cpu.lock .venv/bin/python bench/cluster.py --games 1000 --rate 1 \\
        --duration 30 --after-kill 20 --procs 2

One run, three phases, every game two bots at ``--rate`` moves a second and a spectator:

1. **single**: one node (PostgreSQL, no Redis: the embedded server on the same database
   server), both players and the spectator on it: the baseline latency.
2. **cluster**: three nodes on one Redis; game ``i`` is made on node ``i % 3`` (a private
   code: the lobby is not shared), its O player then reconnects to node ``i + 1`` and the
   spectator watches from node ``i + 2``: every move crosses nodes one way or the other.
3. **kill**: node 0 is killed with SIGKILL ``--duration`` seconds into phase 2; its players
   reconnect to node 1, everyone carries on from the state the new owner pushes (or a fresh
   watch), for ``--after-kill`` seconds.

Latency is from the mover's send until the opponent receives the ``move``. A game that ends
is followed by a rematch (both players ask; the owner starts it and tells both nodes).
Reported: latency p50/p95/p99 per phase and the cluster/single ratio, errors, every acked
move looked up in PostgreSQL, and for the kill: games of node 0 resumed (an acked move after
the kill) of those it owned, and the takeover time (kill until a surviving player is pushed
the new owner's state) p50/max. Loopback only; bounded in games (<= 2000) and time.

One benchmark that reads best whole (about 600 lines): its bots and their slots, the phases
and the report. What it shares with bench/load.py and the tests is in ``bench/harness/``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import queue
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bot import Bot, Reply
from harness.generators import add_run_options, quiet_collector
from harness.procs import load_average, raise_fd_limit
from harness.server import NO_LIMITS, ServerProcess
from harness.services import PostgresServer, RedisServer, run_sql
from harness.stats import ms, percentiles
from websockets.exceptions import ConnectionClosed

from server.defaults import LEASE_TTL

CELLS = 64
MAX_GAMES = 2000
SLOW = 0.05  # a move slower than this (the p99 target) is listed by its second
WAIT = 3.0  # seconds a bot waits for an ack or the opponent's receipt before it resyncs
RESYNC_TRIES = 30
REMATCH_WAIT = 10.0  # seconds both players wait for the rematch's game


@dataclass
class Timeline:
    """Shared by the generator processes, in ``time.monotonic()`` seconds."""

    measure_from: float
    measure_to: float
    kill_at: float | None  # node 0 dies here (phase 3)
    end_at: float


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # in the measuring window
    spectator: list[float] = field(default_factory=list)
    after_kill: list[float] = field(default_factory=list)  # latencies of moves after the kill
    acked: list[tuple[str, int, int]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)  # before the kill
    errors_after_kill: Counter[str] = field(default_factory=Counter)
    moves: int = 0
    rematches: int = 0
    resyncs: int = 0
    killed_games: int = 0  # slots whose game node 0 owned at the kill
    resumed: int = 0  # of those, carried on by a new owner at their acked ply (a move or state)
    not_resumed: list[str] = field(default_factory=list)  # the others, and how they stood
    rematch_timeouts: list[str] = field(default_factory=list)  # the games, with what came
    takeover: list[float] = field(default_factory=list)  # kill -> new owner's state pushed
    slow: list[tuple[float, float]] = field(default_factory=list)  # (sent, latency) > SLOW


class ClusterBot(Bot):
    """A bot that counts an ``error`` before or after the kill, notes when a game's state is
    pushed to it unasked (a new owner's, after the kill), and takes the first game other than
    the one it leaves as its rematch (``next_game``)."""

    wait = WAIT

    def __init__(self, name: str, tally: Tally) -> None:
        super().__init__(name)
        self.tally = tally
        self.pushed: dict[str, list[float]] = {}  # game -> when its state was pushed unasked
        self.kill_at: float | None = None
        self.next_game: Reply | None = None
        self.leaving = ""  # the game whose rematch next_game waits for

    def game(self, message: dict[str, Any], reply: Reply | None, now: float) -> Reply | None:
        if self.next_game is not None and not self.next_game.done() \
                and message["id"] != self.leaving:
            # the rematch: pushed, or the reply to the rematch that started it
            self.next_game.set_result(message)
        if reply is None:
            self.pushed.setdefault(message["id"], []).append(now)
        return reply

    def error(self, code: str, now: float) -> None:
        after = self.kill_at is not None and now >= self.kill_at
        (self.tally.errors_after_kill if after else self.tally.errors)[code] += 1


class Slot:
    """One game at a time (and its rematches) between two bots, with one spectator."""

    def __init__(self, index: int, urls: list[str], cluster: bool, tally: Tally,
                 rng: random.Random, prefix: str) -> None:
        self.index, self.urls, self.cluster, self.tally, self.rng = index, urls, cluster, tally, rng
        n = len(urls)
        self.home = index % n
        self.homes = {"x": self.home, "o": (self.home + 1) % n if cluster else self.home,
                      "s": (self.home + 2) % n if cluster else self.home}
        self.x = ClusterBot(f"{prefix}{index}x", tally)
        self.o = ClusterBot(f"{prefix}{index}o", tally)
        self.spectator = ClusterBot(f"{prefix}{index}s", tally)
        self.node = {self.x: self.homes["x"], self.o: self.homes["o"],
                     self.spectator: self.homes["s"]}
        self.game = ""
        self.ply = 0
        self.free: list[int] = []
        self.sent: dict[tuple[str, int], float] = {}
        self.dead: set[int] = set()
        self.doomed: set[str] = set()  # the games node 0 owns just before it is killed
        self.killed_game: str | None = None  # this slot's game n0 owned, till it resumes
        self.last_state = ""  # how the last resync found the game, for a game not resumed

    async def setup(self) -> None:
        await self.x.connect(self.urls[self.home])
        await self.o.connect(self.urls[self.home])
        created = await self.x.request(30.0, t="private_create", colour="x")
        loop = asyncio.get_running_loop()
        self.x.next_game, self.o.next_game = loop.create_future(), loop.create_future()
        joining = self.o.send(t="private_join", code=created["code"])
        # the joiner's game comes as the join's reply, or (a lobby on another node) pushed
        joined = await asyncio.wait_for(
            asyncio.wait([joining, self.o.next_game], return_when=asyncio.FIRST_COMPLETED), 30.0)
        done = next(iter(joined[0])).result()
        hosted = await asyncio.wait_for(self.x.next_game, 30.0)
        assert done["t"] == "game" and done["id"] == hosted["id"], (done, hosted)
        self.game = hosted["id"]
        if self.cluster:
            await self.o.close()
            await self.o.connect(self.urls[self.homes["o"]])
            await self.o.request(30.0, t="watch", game=self.game)
        await self.spectator.connect(self.urls[self.homes["s"]])
        await self.spectator.request(30.0, t="watch", game=self.game)
        self.spectator.on_move = self._spectated
        self.free = list(range(CELLS))

    def _spectated(self, message: dict[str, Any], now: float) -> None:
        sent = self.sent.pop((message["game"], message["ply"]), None)
        if sent is not None and self.window is not None and self.window.measure_from <= sent \
                < self.window.measure_to:
            self.tally.spectator.append(now - sent)

    window: Timeline | None = None

    async def play(self, rate: float, timeline: Timeline) -> None:
        self.window = timeline
        for bot in (self.x, self.o, self.spectator):
            bot.kill_at = timeline.kill_at
        loop_time = time.monotonic
        interval = 1.0 / rate
        next_at = loop_time() + self.rng.uniform(0, interval)
        while loop_time() < timeline.end_at:
            if timeline.kill_at is not None and self.killed_game is None \
                    and loop_time() >= timeline.kill_at:
                self.dead.add(0)
                self.killed_game = self.game if self.game in self.doomed else ""
                if self.killed_game:
                    self.tally.killed_games += 1
            wait = next_at - loop_time()
            if wait > 0:
                await asyncio.sleep(wait)
            next_at = max(next_at + interval, loop_time())
            mover, other = (self.x, self.o) if self.ply % 2 == 0 else (self.o, self.x)
            cell = self.free[self.rng.randrange(len(self.free))]
            game, ply = self.game, self.ply
            seen = asyncio.get_running_loop().create_future()
            other.moves[(game, ply + 1)] = seen
            sent = loop_time()
            self.sent[(game, ply + 1)] = sent
            acked = mover.send(t="move", game=game, cell=cell, ply=ply)
            self.tally.moves += 1
            try:
                reply = await asyncio.wait_for(acked, WAIT)
                received = await asyncio.wait_for(seen, WAIT)
            except (TimeoutError, asyncio.CancelledError):
                other.moves.pop((game, ply + 1), None)
                if self._expected_trouble(timeline):
                    self.tally.errors_after_kill["timeout"] += 1
                else:
                    self.tally.errors["timeout"] += 1
                await self.resync(timeline)
                continue
            if reply["t"] != "ack":
                await self.resync(timeline)
                continue
            self.ply += 1
            self.free.remove(cell)
            self.tally.acked.append((game, self.ply, cell))
            if timeline.measure_from <= sent < timeline.measure_to:
                self.tally.latencies.append(received - sent)
                if received - sent > SLOW:
                    self.tally.slow.append((sent - timeline.measure_from, received - sent))
            elif timeline.kill_at is not None and sent >= timeline.kill_at:
                self.tally.after_kill.append(received - sent)
                self._resumed(game, timeline)
            if game in mover.ended or game in other.ended or not self.free:
                await self.rematch()
        if self.killed_game:
            self.tally.not_resumed.append(
                f"{self.killed_game}: acked ply {self.ply}, last resync {self.last_state or '-'}")

    def _resumed(self, game: str, timeline: Timeline) -> None:
        """Count the killed game carried on by its new owner (an acked move, or its state
        with every acked move), once, with the takeover time: kill until its state pushed."""
        if not self.killed_game or game != self.killed_game or timeline.kill_at is None:
            return
        self.tally.resumed += 1
        self.killed_game = ""
        pushed = [t for bot in (self.x, self.o, self.spectator)
                  for t in bot.pushed.get(game, []) if t >= timeline.kill_at]
        if pushed:
            self.tally.takeover.append(min(pushed) - timeline.kill_at)

    def _expected_trouble(self, timeline: Timeline) -> bool:
        return timeline.kill_at is not None and time.monotonic() >= timeline.kill_at - WAIT

    async def _reconnect(self, bot: ClusterBot) -> None:
        node = self.node[bot]
        while node in self.dead:
            node = (node + 1) % len(self.urls)
        self.node[bot] = node
        await bot.connect(self.urls[node])

    async def resync(self, timeline: Timeline) -> None:
        """Back in step after a lost ack: reconnect whoever was cut off, then take the
        game's state from its (perhaps new) owner."""
        self.tally.resyncs += 1
        if timeline.kill_at is not None and time.monotonic() >= timeline.kill_at:
            self.dead.add(0)
        for bot in (self.x, self.o, self.spectator):
            if bot.closed:
                for _ in range(RESYNC_TRIES):
                    try:
                        await self._reconnect(bot)
                        break
                    except (OSError, TimeoutError, ConnectionClosed, RuntimeError):
                        await asyncio.sleep(0.5)
                if bot is not self.x and not bot.closed:
                    bot.send(t="watch", game=self.game)
        for _ in range(RESYNC_TRIES):
            try:
                state = await self.x.request(WAIT, t="watch", game=self.game)
            except (TimeoutError, asyncio.CancelledError):
                if self.x.closed:
                    with contextlib.suppress(OSError, TimeoutError, ConnectionClosed):
                        await self._reconnect(self.x)
                continue
            if state["t"] == "game":
                break
            await asyncio.sleep(0.2)
        else:
            self.tally.errors["resync failed"] += 1
            return
        self.last_state = f"{state['status']} at ply {len(state['moves'])}"
        if timeline.kill_at is not None and time.monotonic() >= timeline.kill_at \
                and len(state["moves"]) >= self.ply:
            self._resumed(self.game, timeline)  # a game that ended at the kill resumes so
        self.ply = len(state["moves"])
        self.free = [c for c in range(CELLS) if c not in set(state["moves"])]
        if state["status"] == "over" or not self.free:
            await self.rematch()

    async def rematch(self) -> None:
        loop = asyncio.get_running_loop()
        self.x.next_game, self.o.next_game = loop.create_future(), loop.create_future()
        self.x.leaving = self.o.leaving = self.game
        self.x.send(t="rematch", game=self.game)
        self.o.send(t="rematch", game=self.game)
        both = asyncio.gather(self.x.next_game, self.o.next_game, return_exceptions=True)
        asked = time.monotonic()
        try:
            new_x, new_o = await asyncio.wait_for(both, REMATCH_WAIT)
        except TimeoutError:
            # node n0 killed while it waited: a rematch the dead node was starting is lost
            kill_at = None if self.window is None else self.window.kill_at
            after = kill_at is not None and asked + REMATCH_WAIT >= kill_at
            (self.tally.errors_after_kill if after else self.tally.errors)["rematch timeout"] += 1
            got = {bot: bot.next_game is not None and bot.next_game.done()
                   and not bot.next_game.cancelled() for bot in (self.x, self.o)}
            self.tally.rematch_timeouts.append(
                f"{self.game}{' (around the kill)' if after else ''}: x on n{self.node[self.x]} "
                f"{'got it' if got[self.x] else 'got nothing'}, o on n{self.node[self.o]} "
                f"{'got it' if got[self.o] else 'got nothing'}")
            return
        if not isinstance(new_x, dict) or not isinstance(new_o, dict) \
                or new_x["id"] != new_o["id"] or new_o.get("you") != "x":
            self.tally.errors["rematch mismatch"] += 1
            return
        self.tally.rematches += 1
        self.x, self.o = self.o, self.x  # colours swap
        self.game, self.ply, self.free = new_x["id"], 0, list(range(CELLS))
        self.spectator.send(t="watch", game=self.game)

    async def close(self) -> None:
        for bot in (self.x, self.o, self.spectator):
            with contextlib.suppress(Exception):
                await bot.close()


async def doomed_games(redis_url: str, at: float, into: set[str]) -> None:
    """Just before the kill, read which games node 0 owns (its set in Redis)."""
    import redis.asyncio as aioredis

    await asyncio.sleep(max(0.0, at - time.monotonic()))
    client = aioredis.Redis.from_url(redis_url)
    try:
        into.update(g.decode() if isinstance(g, bytes) else g
                    for g in await client.smembers("qubic:owned:n0"))
    finally:
        await client.aclose()


async def generate(urls: list[str], cluster: bool, indexes: range, rate: float, seed: int,
                   ready: Any, go: Any, prefix: str, redis_url: str | None = None) -> Tally:
    tally = Tally()
    rng = random.Random(seed)
    slots = [Slot(i, urls, cluster, tally, rng, prefix) for i in indexes]
    gate = asyncio.Semaphore(32)

    async def set_up(slot: Slot) -> None:
        async with gate:
            await slot.setup()

    await asyncio.gather(*(set_up(slot) for slot in slots))
    quiet_collector()
    ready.put(len(slots))
    timeline: Timeline = await asyncio.to_thread(go.get)
    doomed: set[str] = set()
    for slot in slots:
        slot.doomed = doomed
    if redis_url is not None and timeline.kill_at is not None:
        asyncio.get_running_loop().create_task(
            doomed_games(redis_url, timeline.kill_at - 0.3, doomed))
    async def play(slot: Slot) -> None:
        try:
            await slot.play(rate, timeline)
        except Exception as error:  # a bench bug: counted, the other games go on
            tally.errors[f"bench {type(error).__name__}: {error}"[:80]] += 1

    await asyncio.gather(*(play(slot) for slot in slots))
    await asyncio.gather(*(slot.close() for slot in slots))
    return tally


def generator_main(urls: list[str], cluster: bool, indexes: range, rate: float, seed: int,
                   ready: Any, go: Any, out: Any, prefix: str, redis_url: str | None) -> None:
    raise_fd_limit()
    tally = asyncio.run(generate(urls, cluster, indexes, rate, seed, ready, go, prefix,
                                 redis_url))
    out.put(tally)


def run_phase(urls: list[str], cluster: bool, args: argparse.Namespace, kill: Any | None,
              prefix: str, redis_url: str | None = None) -> tuple[Tally, float]:
    """Set the games up in ``--procs`` generator processes, play them, return the tally."""
    ctx = multiprocessing.get_context("spawn")
    ready, out = ctx.Queue(), ctx.Queue()
    gos = [ctx.Queue() for _ in range(args.procs)]
    parts = [range(i, args.games, args.procs) for i in range(args.procs)]
    workers = [ctx.Process(target=generator_main, args=(urls, cluster, part, args.rate,
                                                        args.seed + i, ready, gos[i], out,
                                                        prefix, redis_url), daemon=True)
               for i, part in enumerate(parts)]
    for worker in workers:
        worker.start()
    began = time.monotonic()
    for _ in workers:
        while True:
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=5)
                break
            if not all(worker.is_alive() for worker in workers):
                raise RuntimeError("a generator process died while setting up")
    setup = time.monotonic() - began
    now = time.monotonic()
    start = now + 1.0
    measure_from = start + args.warmup
    measure_to = measure_from + args.duration
    kill_at = measure_to if kill is not None else None
    end_at = measure_to + (args.after_kill if kill is not None else 0.0)
    timeline = Timeline(measure_from, measure_to, kill_at, end_at)
    for go in gos:
        go.put(timeline)
    if kill is not None:
        time.sleep(max(0.0, measure_to - time.monotonic()))  # kill_at: the window's end
        kill()
    tallies: list[Tally] = []
    deadline = end_at + 300
    while len(tallies) < len(workers) and time.monotonic() < deadline:
        with contextlib.suppress(queue.Empty):
            tallies.append(out.get(timeout=5))
            continue
        if not any(worker.is_alive() for worker in workers):
            raise RuntimeError("a generator process died without its tally")
    for worker in workers:
        worker.join(30)
    total = Tally()
    for t in tallies:
        for name in ("latencies", "spectator", "after_kill", "acked", "takeover", "not_resumed",
                     "rematch_timeouts", "slow"):
            getattr(total, name).extend(getattr(t, name))
        total.errors.update(t.errors)
        total.errors_after_kill.update(t.errors_after_kill)
        for name in ("moves", "rematches", "resyncs", "killed_games", "resumed"):
            setattr(total, name, getattr(total, name) + getattr(t, name))
    return total, setup


def nodes_health(nodes: Sequence[ServerProcess]) -> str:
    """Each node's loop lag (its recent samples) and garbage collections since its start,
    from its ``/metrics``."""
    lines = []
    for i, server in enumerate(nodes):
        try:
            m = server.metrics()
        except OSError as error:
            lines.append(f"  n{i}: no /metrics ({error})")
            continue
        lag = [m.get(f'qubic_event_loop_lag_seconds{{quantile="{q}"}}', float("nan")) * 1000
               for q in ("0.5", "0.99", "1.0")]
        gcs = []
        for g in range(3):
            label = f'generation="{g}"'
            count = m.get(f"qubic_gc_pause_seconds_count{{{label}}}", 0)
            longest = m.get(f'qubic_gc_pause_seconds{{{label},quantile="1.0"}}', 0) * 1000
            gcs.append(f"gen{g} {count:.0f}x max {longest:.0f} ms")
        lines.append(f"  n{i}: loop lag p50/p99/max {lag[0]:.1f}/{lag[1]:.1f}/{lag[2]:.1f} ms; "
                     f"GC {', '.join(gcs)}")
    return "\n".join(lines)


def slow_seconds(tally: Tally) -> str:
    """Where in the window the moves slower than ``SLOW`` were sent: the five worst
    seconds, so a burst shows apart from a spread."""
    by_second = Counter(int(sent) for sent, _ in tally.slow)
    longest: dict[int, float] = {}
    for sent, latency in tally.slow:
        longest[int(sent)] = max(latency, longest.get(int(sent), 0.0))
    worst = ", ".join(f"s{second} {count} (max {longest[second] * 1000:.0f} ms)"
                      for second, count in by_second.most_common(5))
    return (f"  moves over {SLOW * 1000:.0f} ms: {len(tally.slow)} of {len(tally.latencies)}, "
            f"in {len(by_second)} seconds of the window" + (f"; worst: {worst}" if worst else ""))


def maintenance(url: str, window: float) -> str:
    """PostgreSQL's automatic vacuums and analyses of the window (called at its end), by
    second of the window: one can stall the commits it runs beside."""
    async def look() -> list[tuple[str, str, float]]:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch(
                "SELECT relname, last_autovacuum, last_autoanalyze, now() AS now "
                "FROM pg_stat_user_tables")
        finally:
            await conn.close()
        found = []
        for row in rows:
            for what in ("autovacuum", "autoanalyze"):
                at = row[f"last_{what}"]
                if at is not None:
                    second = window - (row["now"] - at).total_seconds()
                    if second >= 0:
                        found.append((row["relname"], what, second))
        return sorted(found, key=lambda f: f[2])

    found = asyncio.run(look())
    return "  PostgreSQL in the window: " + (", ".join(
        f"{what} of {table} at s{second:.0f}" for table, what, second in found) or "no autovacuum")


def missing_moves(url: str, acked: Sequence[tuple[str, int, int]]) -> int:
    async def look() -> int:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch("SELECT game_id, ply, cell FROM moves")
        finally:
            await conn.close()
        stored = {(r["game_id"], r["ply"], r["cell"]) for r in rows}
        return sum(1 for move in acked if tuple(move) not in stored)

    return asyncio.run(look())


def node(directory: Path, name: str, database: str, redis: str | None, ttl: float
         ) -> ServerProcess:
    extra = ["--database", database, "--lease-ttl", str(ttl)]
    if redis is not None:
        extra += ["--redis", redis, "--node", name]
    return ServerProcess(directory / f"{name}.db", *NO_LIMITS, *extra, log_level="info").start()


def line(label: str, tally: Tally, setup: float, missing: int) -> str:
    return (f"{label}: moves sent {tally.moves}, acked {len(tally.acked)}, latency "
            f"{ms(tally.latencies)} (spectators {ms(tally.spectator)}), errors "
            f"{dict(tally.errors) or 0}, rematches {tally.rematches}, resyncs {tally.resyncs}, "
            f"acked moves missing in PostgreSQL {missing}, setup {setup:.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(parser, games=1000, warmup=5.0, duration=30.0)
    parser.add_argument("--after-kill", type=float, default=20.0)
    parser.add_argument("--lease-ttl", type=float, default=LEASE_TTL)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-single", action="store_true")
    parser.add_argument("--logs", type=Path, default=None,
                        help="copy the nodes' logs into this directory at the end")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES or args.duration > 300 or args.after_kill > 120:
        parser.error(f"--games 1-{MAX_GAMES}, --duration <= 300, --after-kill <= 120")
    raise_fd_limit()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the servers on the way out
    with tempfile.TemporaryDirectory(prefix="qubic-cluster-bench-") as tmp:
        directory = Path(tmp)
        redis = RedisServer(directory / "redis")
        redis.start()
        postgres = PostgresServer(directory)
        servers: list[ServerProcess] = []
        try:
            for database in ("single", "cluster"):
                run_sql(postgres.url(), f'CREATE DATABASE "{database}"')
            print(f"{args.games} games at {args.rate} moves/s each, {args.procs} generator "
                  f"processes, lease ttl {args.lease_ttl} s; load before: {load_average()}",
                  flush=True)
            single_latency: list[float] = []
            if not args.skip_single:
                single = node(directory, "single", postgres.url("single"), None, args.lease_ttl)
                servers.append(single)
                tally, setup = run_phase([single.ws_url], False, args, None, "s")
                single.stop()
                single_latency = tally.latencies
                print(line("single node", tally, setup,
                           missing_moves(postgres.url("single"), tally.acked)), flush=True)
            nodes = [node(directory, f"n{i}", postgres.url("cluster"), redis.url, args.lease_ttl)
                     for i in range(3)]
            servers += nodes
            health: list[str] = []

            def kill() -> None:
                health.append(nodes_health(nodes))  # at the end of the measuring window
                health.append(maintenance(postgres.url("cluster"), args.duration))
                nodes[0].stop(kill=True)

            tally, setup = run_phase([n.ws_url for n in nodes], True, args, kill, "c",
                                     redis.url)
            missing = missing_moves(postgres.url("cluster"), tally.acked)
            print(line("three nodes", tally, setup, missing), flush=True)
            print(slow_seconds(tally), flush=True)
            print(*health, sep="\n", flush=True)
            for timeout in [t for t in tally.rematch_timeouts if "around" not in t][:5]:
                print(f"  rematch timed out: {timeout}", flush=True)
            print(f"after node n0 was killed: latency {ms(tally.after_kill)}, errors "
                  f"{dict(tally.errors_after_kill) or 0}; games of n0 "
                  f"resumed {tally.resumed} of {tally.killed_games}; takeover p50/max "
                  + (f"{percentiles(tally.takeover, (0.5,))[0]:.2f}/{max(tally.takeover):.2f} s"
                     if tally.takeover else "n/a")
                  + f" ({len(tally.takeover)} timed)"
                  + "".join(f"\n  not resumed: {g}" for g in tally.not_resumed), flush=True)
            if single_latency and tally.latencies:
                ratios = [c / s for c, s in zip(percentiles(tally.latencies),
                                                percentiles(single_latency), strict=True)]
                print("cluster / single latency p50/p95/p99: "
                      + "/".join(f"{r:.2f}x" for r in ratios), flush=True)
            print(f"load after: {load_average()}", flush=True)
        finally:
            for server in servers:
                server.close()
                if args.logs is not None:
                    args.logs.mkdir(parents=True, exist_ok=True)
                    shutil.copy(server.log, args.logs / server.log.name)
            postgres.stop()
            redis.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
