"""An arena tournament of bots on one server: how soon a player is paired again, what the
standings cost, and whether the other games' moves keep their pace (issue 43, item 6).

    .venv/bin/python bench/arena.py --players 500 --others 200 --minutes 3 --rate 2

The server runs as its own process (``python -m qubic_cli serve --port 0``) on a fresh SQLite
file. ``qubic admin tournament create`` schedules an arena on it (clock 1+0, starting a few
seconds later); ``--players`` bots (the load generator's protocol bot, ``bench/harness/bot.py``)
join it and play whatever game the director gives them: a random legal move every
``1/rate`` seconds when it is their turn. ``--others`` pairs of bots play ordinary games in
private rooms at the same rate meanwhile.

What it reports, over the arena's time:

- **pairing delay**: for each game of the arena that ended, the seconds from its ``end``
  reaching a player to that player's next tournament ``game`` (p50/p99): the director pairs
  again within about a second of a game's end when someone else is free;
- **standings**: the size of a ``tournament`` update, how many a follower got per second, and
  what rebuilding and encoding the final standings costs (``Standings.from_data`` + ``state``
  + encoding, in this process, on the database the server wrote);
- **moves**: p50/p99 from a move's send until the opponent receives it, for the arena's games
  and, apart, for the other games; errors by code.

- **the server's own figures** over the window (from the arena's start, ``--minutes``), from
  the difference of two scrapes of its ``/metrics``: its ``qubic_move_ack_seconds`` (frame
  in to ack queued; every move, the arena's and the others' alike: it has no label to tell
  them apart), its event loop's lag and the part of it not spent waiting for a CPU, its
  collections, its CPU; with ``--steps``, its event loop's steps over 5 ms of their own and
  what ran in them (``bench/harness/loop_steps.py``);
- **the generators'**: the other games are played from one process, the arena's players
  from another (each with its own event loop, CPU and loop lag reported), so that a client
  tail that comes from a starved generator shows as that process's lag.

``--control`` runs the same shape without the arena: ``--players / 2`` ordinary games from
the second process in the arena's place, from its start (the figure to compare with: as
many games, the same processes). While it runs each process prints a line every
``PROGRESS_EVERY`` seconds (games started and finished, pairings, moves, failures), so a
stall shows.

Loopback only; bounded in players (``--players`` <= 2000) and time: a game that has not ended
``GAME_LIMIT`` seconds after it started (both clocks run out well before) is given up and
counted as a failure, as is an other game's move not seen within ``MOVE_LIMIT``; ``--players
0`` runs the other games alone (the figure to compare with). The server and every bot are
stopped on the way out, also on SIGTERM or SIGINT. Run it small to check it works
(``--players 20 --others 4 --minutes 1``); the lead runs the full size.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from harness.bot import Bot
from harness.generators import quiet_collector, wait_for_item
from harness.procs import raise_fd_limit
from harness.server import NO_LIMITS, ROOT, ServerProcess
from harness.stats import ms, percentiles
from load import gc_summary, server_part, window_lag

CELLS = 64  # 4x4x4
MAX_PLAYERS = 2000
CONNECTS_AT_ONCE = 64
START_IN = 0.25  # minutes from creating the arena to its start
CLOCK = (1, 0)  # the arena's clock: minutes each, seconds a move
GAME_LIMIT = 2 * 60 * CLOCK[0] + 30.0  # seconds: both clocks run out, and a margin
MOVE_LIMIT = 15.0  # seconds an other game's move may take to reach the opponent
PROGRESS_EVERY = 10.0
LAG_PROBE = 0.01  # seconds: a generator's own loop lag is sampled with a timer this long
LONG_STEP = 0.005  # bench/harness/loop_steps.py's LONG: the server's steps listed
STEPS_SHOWN = 25


@dataclass
class Tally:
    pairing_delays: list[float] = field(default_factory=list)
    arena_moves: list[float] = field(default_factory=list)
    other_moves: list[float] = field(default_factory=list)
    fill_moves: list[float] = field(default_factory=list)  # --control: in the arena's place
    since: float = 0.0  # moves sent before (the arena's start) are not counted
    lags: list[float] = field(default_factory=list)  # this generator's own loop lag
    cpu: float = 0.0  # this generator's CPU seconds over the window
    updates: int = 0
    update_bytes: list[int] = field(default_factory=list)
    arena_games: int = 0
    arena_ended: int = 0
    other_games: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


class Player(Bot):
    """A bot in the arena: it plays the tournament's games it is given."""

    def __init__(self, name: str, tally: Tally, tournament: str, rate: float,
                 rng: random.Random, sent: dict[tuple[str, int], float]) -> None:
        super().__init__(name, self._moved)
        self.tally = tally
        self.tournament = tournament
        self.interval = 1.0 / rate
        self.rng = rng
        self.sent = sent  # (game, ply) -> when its mover sent it, shared by every bot
        self.games: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ended_at: float | None = None
        self.board: dict[str, set[int]] = {}
        self.turn: dict[str, asyncio.Event] = {}
        self.ended = Ends(self.turn)
        self.plies: dict[str, int] = {}
        self.colour: dict[str, int] = {}

    def error(self, code: str, now: float) -> None:
        self.tally.errors[code] += 1

    def game(self, message: dict[str, Any], reply: Any, now: float) -> Any:
        if message.get("tournament") == self.tournament and message["status"] == "playing" \
                and message["id"] not in self.board:
            if self.ended_at is not None:
                self.tally.pairing_delays.append(now - self.ended_at)
                self.ended_at = None
            self.tally.arena_games += 1
            self.games.put_nowait(message)
        return reply

    def _moved(self, message: dict[str, Any], now: float) -> None:
        game = message["game"]
        if game not in self.board:
            return
        self.board[game].add(message["cell"])
        self.plies[game] = message["ply"]
        if message["side"] != "xo"[self.colour[game]]:  # the opponent's: timed here
            sent = self.sent.pop((game, message["ply"]), None)
            if sent is not None and sent >= self.tally.since:
                self.tally.arena_moves.append(now - sent)
        self.turn[game].set()

    def _received(self, message: dict[str, Any], now: float) -> None:
        if message["t"] == "tournament" and message.get("ref") is None:
            self.tally.updates += 1
            self.tally.update_bytes.append(len(msgspec.json.encode(message)))
        super()._received(message, now)

    async def play(self, until: float) -> None:
        while time.monotonic() < until:
            try:
                game = await asyncio.wait_for(self.games.get(),
                                              max(0.1, until - time.monotonic()))
            except TimeoutError:
                return
            gid = game["id"]
            self.board[gid] = set(game["moves"])
            self.plies[gid] = len(game["moves"])
            self.turn[gid] = asyncio.Event()
            self.colour[gid] = 0 if game["you"] == "x" else 1
            try:
                async with asyncio.timeout(GAME_LIMIT):  # a game cannot wait forever
                    await self._play(gid)
                self.tally.arena_ended += 1
            except TimeoutError:
                self.tally.failures["arena game: a reply or its end not seen in time"] += 1
            except (RuntimeError, asyncio.CancelledError) as error:
                if _stopping():
                    raise
                # the connection closed under the game (its replies are cancelled)
                self.tally.failures[f"arena game: {error or 'connection closed'}"] += 1
            self.ended_at = time.monotonic()
            del self.board[gid]

    async def _play(self, gid: str) -> None:
        while gid not in self.ended:
            if self.closed:
                raise RuntimeError("connection closed")
            if self.plies[gid] % 2 == self.colour[gid]:
                await asyncio.sleep(self.interval)
                if gid in self.ended:
                    break
                free = [c for c in range(CELLS) if c not in self.board[gid]]
                ply = self.plies[gid]
                self.sent[(gid, ply + 1)] = time.monotonic()
                reply = await self.request(t="move", game=gid, cell=self.rng.choice(free),
                                           ply=ply)
                if reply["t"] != "ack":
                    break
            else:  # the opponent's move or the game's end wakes it (``Ends``)
                self.turn[gid].clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.turn[gid].wait(), 30)


class Ends(set[str]):
    """A player's games ended (``Bot.ended``): adding one wakes whoever waits for its turn
    (the game's end comes as no move does; polling for it cost the generator a wake-up every
    50 ms for each of 250 games)."""

    def __init__(self, turn: dict[str, asyncio.Event]) -> None:
        super().__init__()
        self.turn = turn

    def add(self, game: str) -> None:
        super().add(game)
        event = self.turn.get(game)
        if event is not None:
            event.set()


async def other_games(url: str, index: int, rate: float, until: float, tally: Tally,
                      rng: random.Random, moves: list[float], prefix: str = "other") -> None:
    """A pair of bots playing ordinary games in a private room until ``until`` (monotonic),
    the latency of each move sent from ``tally.since`` on added to ``moves``."""
    x, o = Bot(f"{prefix}{index}x"), Bot(f"{prefix}{index}o")
    await x.connect(url)
    await o.connect(url)
    try:
        while time.monotonic() < until:
            try:
                async with asyncio.timeout(GAME_LIMIT):
                    private = await x.request(t="private_create", colour="x")
                    game = await o.request(t="private_join", code=private["code"])
                    gid, free, ply = game["id"], list(range(CELLS)), 0
                    while gid not in x.ended and time.monotonic() < until:
                        await asyncio.sleep(1.0 / rate)
                        mover, other = (x, o) if ply % 2 == 0 else (o, x)
                        seen: asyncio.Future[float] = \
                            asyncio.get_running_loop().create_future()
                        other.moves[(gid, ply + 1)] = seen
                        sent = time.monotonic()
                        reply = await mover.request(
                            t="move", game=gid, cell=free.pop(rng.randrange(len(free))),
                            ply=ply)
                        if reply["t"] != "ack":
                            tally.errors[reply.get("code", "?")] += 1
                            break
                        arrived = await asyncio.wait_for(seen, MOVE_LIMIT)
                        if sent >= tally.since:
                            moves.append(arrived - sent)
                        ply += 1
                tally.other_games += 1
            except TimeoutError:
                tally.failures["other game: a move or a reply not seen in time"] += 1
            except asyncio.CancelledError:
                if _stopping():
                    raise
                tally.failures["other game: connection closed"] += 1  # its replies cancelled
                return
    finally:
        await x.close()
        await o.close()


def _stopping() -> bool:
    """Whether this task is being cancelled (the bench stops), not a reply of a closed
    connection."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def create_arena(db: Path, minutes: float) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "qubic_cli", "admin", "tournament", "create", "--name",
         "Bench arena", "--start", f"+{START_IN}", "--minutes", str(max(1, round(minutes))),
         "--clock", f"{CLOCK[0]}+{CLOCK[1]}", "--db", str(db), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return str(json.loads(done.stdout)["id"])


@dataclass
class Cost:
    """What one update of the final standings costs (best of three), in this process."""

    players: int
    rebuild: float  # seconds: Standings.from_data (the director does it once, on taking it)
    whole: float  # seconds: the whole state and its encoding (the holder, each update)
    whole_bytes: int  # what goes on the bus
    paging: float  # seconds: decoding it and every player's frame (each node, each update)
    frame_bytes: float  # a player's frame, on average


def standings_cost(db: Path, tournament: str) -> Cost:
    """What an update of the tournament's final standings costs (``Cost``)."""
    sys.path.insert(0, str(ROOT))
    from server.node.tournament_view import Pages, Standings
    from server.protocol import TournamentState, encode
    from server.store import tournaments as ops
    from server.store.factory import open_store

    async def measure() -> Cost:
        store = await open_store(str(db))
        try:
            data = await store.query(ops.tournament_data(tournament))
            assert data is not None
        finally:
            await store.close()
        names = [entry.name for entry in data.entries]
        best = [float("inf")] * 3
        for _ in range(3):
            started = time.perf_counter()
            standings = Standings.from_data(data)
            built = time.perf_counter()
            whole = encode(standings.state())
            encoded = time.perf_counter()
            pages = Pages(msgspec.json.decode(whole, type=TournamentState))
            frames = [pages.frame(pages.parts(pages.page_for(None, name), name))
                      for name in names]
            paged = time.perf_counter()
            best = [min(b, t) for b, t in zip(
                best, (built - started, encoded - built, paged - encoded), strict=True)]
        return Cost(len(names), best[0], best[1], len(whole), best[2],
                    sum(map(len, frames)) / max(1, len(frames)))

    return asyncio.run(measure())


def _stop(signum: int, _frame: Any) -> None:
    """SIGTERM: out the way SIGINT goes, through every ``finally`` (the server stopped)."""
    raise KeyboardInterrupt(f"signal {signum}")


async def generate(role: str, url: str, tournament: str | None, args: argparse.Namespace,
                   seed: int, ready: Any, go: Any) -> Tally:
    """One generator process: ``role`` "others" plays the ``--others`` ordinary games from
    the go; "arena" enters the arena's players and plays their games; "fill" (``--control``)
    plays ``--players / 2`` ordinary games in the arena's place from the arena's start."""
    raise_fd_limit()
    tally = Tally()
    rng = random.Random(seed)
    sent: dict[tuple[str, int], float] = {}
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
    players = [Player(f"p{i}", tally, tournament or "", args.rate, random.Random(rng.random()),
                      sent) for i in range(args.players)] if role == "arena" else []

    async def enter(player: Player) -> None:
        async with gate:
            await player.connect(url)
            reply = await player.request(t="tournament_join", tournament=tournament)
            if reply["t"] != "ack":
                raise RuntimeError(f"join refused: {reply}")

    try:
        await asyncio.gather(*(enter(p) for p in players))
        quiet_collector()
        ready.put(role)
        tally.since, until = await asyncio.to_thread(go.get)
        loop = asyncio.get_running_loop()
        reporter = loop.create_task(progress(role, tally, time.monotonic()))
        prober = loop.create_task(probe_lag(tally, until))
        if role == "fill":
            await asyncio.sleep(max(0.0, tally.since - time.monotonic()))
        used = resource.getrusage(resource.RUSAGE_SELF)
        cpu_from = used.ru_utime + used.ru_stime
        pairs = args.others if role == "others" else args.players // 2 if role == "fill" else 0
        moves = tally.other_moves if role == "others" else tally.fill_moves
        await asyncio.gather(
            *(p.play(until) for p in players),
            *(other_games(url, i, args.rate, until, tally, random.Random(rng.random()), moves,
                          prefix=role) for i in range(pairs)))
        used = resource.getrusage(resource.RUSAGE_SELF)
        tally.cpu = used.ru_utime + used.ru_stime - cpu_from
        reporter.cancel()
        await prober
    finally:
        await asyncio.gather(*(p.close() for p in players if p.ws is not None),
                             return_exceptions=True)
    return tally


async def probe_lag(tally: Tally, until: float) -> None:
    """This generator's own loop lag over the window (how late a ``LAG_PROBE`` timer fires):
    a move's arrival is stamped when this loop gets to it, so a late loop adds to the
    latency reported."""
    loop = asyncio.get_running_loop()
    while time.monotonic() < until:
        asked = loop.time()
        await asyncio.sleep(LAG_PROBE)
        if time.monotonic() >= tally.since:
            tally.lags.append(loop.time() - asked - LAG_PROBE)


def generator_main(role: str, url: str, tournament: str | None, args: argparse.Namespace,
                   seed: int, ready: Any, go: Any, out: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (SIGTERM) and reports
    try:
        tally = asyncio.run(generate(role, url, tournament, args, seed, ready, go))
        data = asdict(tally)
        data["failures"], data["errors"] = dict(tally.failures), dict(tally.errors)
        out.put((role, data))
    except BaseException as error:  # report, so the parent does not wait forever
        out.put((role, f"generator {role} failed: {type(error).__name__}: {error}"))
        raise


async def progress(role: str, tally: Tally, since: float) -> None:
    """A line every ``PROGRESS_EVERY`` seconds, so that a stall is seen."""
    while True:
        await asyncio.sleep(PROGRESS_EVERY)
        print(f"  [{role} {time.monotonic() - since:4.0f} s] arena games started "
              f"{tally.arena_games}, finished {tally.arena_ended}; pairings "
              f"{len(tally.pairing_delays)}; ordinary games {tally.other_games}, moves "
              f"{len(tally.other_moves) + len(tally.fill_moves)}; updates {tally.updates}; "
              f"failures {sum(tally.failures.values())}", flush=True)


def merge(tallies: Sequence[dict[str, Any]]) -> Tally:
    """The generators' tallies as one (each process's own lag and CPU kept apart)."""
    tally = Tally()
    for data in tallies:
        for name, value in data.items():
            if name in ("failures", "errors"):
                getattr(tally, name).update(value)
            elif isinstance(value, list) and name != "lags":
                getattr(tally, name).extend(value)
            elif isinstance(value, int) and not isinstance(value, bool):
                setattr(tally, name, getattr(tally, name) + value)
    return tally


@dataclass
class Server:
    """What the server did over the window: its /metrics before and after, its CPU seconds,
    and its long loop steps (``--steps``)."""

    before: dict[str, float]
    after: dict[str, float]
    cpu: float
    steps: dict[str, Any] | None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--others", type=int, default=100, help="pairs in ordinary games")
    parser.add_argument("--minutes", type=float, default=3.0, help="the arena's length")
    parser.add_argument("--rate", type=float, default=2.0, help="moves a second per game")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--control", action="store_true",
                        help="no arena: --players / 2 ordinary games in its place, from its "
                             "own generator process (the figure to compare with)")
    parser.add_argument("--steps", action="store_true",
                        help="list the server's event-loop steps over 5 ms during the window "
                             "(bench/harness/loop_steps.py)")
    args = parser.parse_args(argv)
    if not (args.players == 0 or 2 <= args.players <= MAX_PLAYERS) or args.others < 0 \
            or args.rate <= 0:
        parser.error(f"--players 0 or 2-{MAX_PLAYERS}, --others >= 0, --rate > 0")
    signal.signal(signal.SIGTERM, _stop)  # SIGINT is KeyboardInterrupt already
    what = (f"control: {args.players // 2} ordinary games in place of an arena of "
            f"{args.players}" if args.control else f"arena of {args.players} players")
    print(f"{what} ({args.others} other games beside), {args.minutes:g} min at "
          f"{args.rate:g} moves/s a game", flush=True)
    raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="qubic-arena-") as directory:
        db = Path(directory) / "arena.db"
        steps_file = Path(directory) / "steps.json"
        server = ServerProcess(db, *NO_LIMITS)
        if args.steps:
            server.args[1:3] = ["-m", "bench.harness.loop_steps", str(steps_file)]
        workers: list[multiprocessing.process.BaseProcess] = []
        try:
            server.start()
            arena = bool(args.players) and not args.control
            tournament = create_arena(db, args.minutes) if arena else None
            tallies, failures, seen = run(args, server, tournament, workers, steps_file)
        finally:
            server.close()
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()
                worker.join(10)
        cost = standings_cost(db, tournament) if tournament else None
    report(args, tallies, failures, seen, cost)
    return 0


def run(args: argparse.Namespace, server: ServerProcess, tournament: str | None,
        workers: list[multiprocessing.process.BaseProcess], steps_file: Path
        ) -> tuple[list[tuple[str, dict[str, Any]]], list[str], Server]:
    """The generator processes through the window (from the arena's start, ``--minutes``),
    and the server's figures over it."""
    starts = time.monotonic() + (START_IN * 60 if args.players else 0)
    roles = ["others"] + (["fill" if args.control else "arena"] if args.players else [])
    context = multiprocessing.get_context("spawn")
    ready, go, out = context.Queue(), context.Queue(), context.Queue()
    workers += [context.Process(target=generator_main, args=(
        role, server.ws_url, tournament, args, args.seed + n, ready, go, out), daemon=True)
        for n, role in enumerate(roles)]
    for worker in workers:
        worker.start()
    for _ in workers:
        wait_for_item(ready, workers, 600)
    since = max(starts, time.monotonic())
    until = since + args.minutes * 60
    for _ in workers:
        go.put((since, until))
    failures: list[str] = []
    time.sleep(max(0.0, since - time.monotonic()))
    before = server.metrics_or_nothing(failures)
    cpu_from = server.cpu_seconds()[0]
    if args.steps:
        os.kill(server.pid, signal.SIGUSR1)
    time.sleep(max(0.0, until - time.monotonic()))
    if args.steps:
        os.kill(server.pid, signal.SIGUSR2)
    after = server.metrics_or_nothing(failures)
    cpu = server.cpu_seconds()[0] - cpu_from
    tallies: list[tuple[str, dict[str, Any]]] = []
    for _ in workers:
        role, item = wait_for_item(out, workers, GAME_LIMIT + 120, dead_ok=True)
        if isinstance(item, str):
            failures.append(item)
        else:
            tallies.append((role, item))
    steps = None
    if args.steps:
        for _ in range(100):  # written in the server's signal handler
            if steps_file.exists() and steps_file.stat().st_size:
                break
            time.sleep(0.1)
        steps = json.loads(steps_file.read_text()) if steps_file.exists() else None
    return tallies, failures, Server(before, after, cpu, steps)


def report(args: argparse.Namespace, tallies: list[tuple[str, dict[str, Any]]],
           failures: list[str], server: Server, cost: Cost | None) -> None:
    tally = merge([data for _, data in tallies])
    seconds = args.minutes * 60
    print(f"  arena games started: {tally.arena_games}, played to their end: "
          f"{tally.arena_ended}; ordinary games played: {tally.other_games}")
    delays = tally.pairing_delays
    if delays:
        p50, _, p99 = percentiles(delays)
        print(f"  pairing delay (end -> next game): p50 {p50:.2f} s  p99 {p99:.2f} s  "
              f"({len(delays)} pairings)")
    if cost is not None:
        per_player = tally.updates / max(1, args.players) / seconds
        size = sum(tally.update_bytes) / max(1, len(tally.update_bytes))
        print(f"  standings update for {cost.players} players: the whole state built and "
              f"encoded {cost.whole * 1000:.1f} ms ({cost.whole_bytes / 1024:.1f} KiB on the "
              f"bus), paged into every player's frame {cost.paging * 1000:.1f} ms "
              f"({cost.frame_bytes / 1024:.2f} KiB each); rebuilt from the rows "
              f"{cost.rebuild * 1000:.1f} ms")
        print(f"  updates received: {per_player:.2f} a player a second, {size / 1024:.2f} KiB "
              f"each, {tally.updates * size / seconds / 1024:.0f} KiB/s in all")
    print(f"  moves, arena games: {ms(tally.arena_moves)}  ({len(tally.arena_moves)})")
    if args.control:
        print(f"  moves, the games in the arena's place: {ms(tally.fill_moves)}  "
              f"({len(tally.fill_moves)})")
    print(f"  moves, other games: {ms(tally.other_moves)}  ({len(tally.other_moves)})")
    print(f"  server, every move (its qubic_move_ack_seconds over the window, arena's and "
          f"others' alike): {server_part(server.before, server.after)}")
    print(f"  server loop lag: {window_lag(server.before, server.after)}; its own part: "
          f"{window_lag(server.before, server.after, own=True)}; GC "
          f"{gc_summary(server.before, server.after)}")
    print(f"  server CPU over the window: {server.cpu / seconds:.0%} of a core")
    for role, data in tallies:
        lags = data["lags"]
        p50, _, p99 = percentiles(lags)
        print(f"  generator {role}: CPU {data['cpu'] / seconds:.0%} of a core, its own loop "
              f"lag p50 {p50 * 1e3:.1f} ms p99 {p99 * 1e3:.1f} ms "
              f"(max {max(lags, default=float('nan')) * 1e3:.0f} ms)")
    if server.steps is not None:
        steps = server.steps
        print(f"  server loop steps over {LONG_STEP * 1e3:g} ms of their own (sampled "
              f"{steps['samples']} times in {steps['sampled']:.0f} s, {steps['outside']} "
              f"outside the loop; {steps['steps']} steps seen, busy "
              f"{steps['busy'] / max(steps['sampled'], 1e-9):.0%}; {steps['stretched']} more "
              "over it by the clock only, waiting for a CPU): count, a second, total ms, "
              "longest ms, what ran (outer / innermost server frame):")
        long = steps["long"]
        ours = [step for step in long if "tournament" in step["outer"] + step["inner"]
                or "server/game/arena.py" in step["inner"]]
        print(f"    in all {sum(s['count'] for s in long)} steps, "
              f"{sum(s['seconds'] for s in long) * 1e3:.0f} ms; the tournaments' (the "
              f"director's, the paging's) {sum(s['count'] for s in ours)}, "
              f"{sum(s['seconds'] for s in ours) * 1e3:.0f} ms")
        for step in long[:STEPS_SHOWN]:
            print(f"    {step['count']:6d} {step['count'] / seconds:6.2f}/s "
                  f"{step['seconds'] * 1e3:8.0f} {step['longest'] * 1e3:6.1f}  "
                  f"{step['outer']}  /  {step['inner']}")
    print(f"  failures: {dict(tally.failures) or 'none'} {failures or ''}")
    print(f"  errors: {dict(tally.errors) or 'none'}")


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt as stopped:  # SIGINT or SIGTERM: every finally has run
        print(f"stopped ({stopped or 'interrupted'}): the server and the bots are closed",
              file=sys.stderr)
        raise SystemExit(130) from None
