"""Load a real server with bots: G human-vs-human games at a set move rate, plus S spectators.

    .venv/bin/python bench/load.py --games 1000 --spectators 200 --rate 1 --duration 30 --procs 2

The server runs as its own process (``python -m qubic_cli serve --port 0``) on a fresh SQLite
file in a temporary directory. The generator runs in ``--procs`` worker processes, each with
its share of the games. A game is two bots: one creates a private room, the other joins it;
they then play random legal 4x4x4 moves, one move every ``1/rate`` seconds per game, and start
a new game when one ends, so G games stay live. A spectator watches one game slot and follows
it into its next game. ``--computer-games A`` adds A bots that play the computer (``play_ai``)
game after game and answer each computer move at once; every computer move must arrive.
``--bad-logins N`` adds N wrong-password logins a second from the same address, through the
warmup and the window (``bench/harness/bad_logins.py``): does a password-guessing attack slow
the others' moves? Their replies are counted by code.

What it reports, over the measuring window (after ``--warmup`` seconds of play):

- connections, moves/s, and the move latency p50/p95/p99: from the mover's send until the
  opponent receives the ``move`` event (and the same for spectators);
- errors: every ``error`` message, unexpected close, refused connection or timeout;
- the server's RSS and CPU (the process itself, and its computer workers; by thread, each with
  the time it waited, runnable, for a core), the generator's CPU, the
  server's event-loop lag and garbage-collector pauses from ``/metrics`` (the lag over the
  window from the difference of its histogram), and the load average, so a reader can tell
  who the bottleneck was;
- durability: after the server stops (SIGTERM, or ``--stop kill`` for SIGKILL) the SQLite file
  is read and every move a bot got an ``ack`` for must be in the ``moves`` table.

Loopback only; everything is bounded in count (``--games`` <= 5000) and time (the whole run
stops by itself after setup + warmup + duration + a drain of a few seconds).

One benchmark that reads best whole (about 700 lines): its bots and generator processes, the
run that conducts them, and the report. What it shares with the other benchmarks and the
tests (the server process, the protocol bot, percentiles, /proc) is in ``bench/harness/``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import resource
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.bad_logins import attack_main
from harness.bot import Bot, MoveSeen, Reply
from harness.call_count import CallCount, calls_per_move
from harness.generators import add_run_options, quiet_collector, split, wait_for_item
from harness.procs import CLOCK_TICKS, descendants, load_average, raise_fd_limit, rss_kib
from harness.server import NO_LIMITS, ServerProcess
from harness.stats import ms, percentiles

from server.metrics import GCPauses

CELLS = 64  # 4x4x4
MOVE_TIMEOUT = 15.0  # seconds a bot waits for its opponent to see a move before it counts one
LAG_PROBE = 0.05  # seconds between looks at a generator's own event-loop lag
SETUP_TIMEOUT = 180.0  # seconds the generator may take to open every connection
CONNECTS_AT_ONCE = 64  # websocket handshakes in flight per generator process
MAX_GAMES = 5000
MAX_SECONDS = 600.0


# -- the server's database ------------------------------------------------------------------


def acked_moves_missing(db: Path, acked: Sequence[tuple[str, int, int]]) -> int:
    """How many acknowledged (game, ply, cell) are not in the ``moves`` table."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stored = {(g, p, c) for g, p, c in conn.execute("SELECT game_id, ply, cell FROM moves")}
    finally:
        conn.close()
    return sum(move not in stored for move in acked)


# -- the bots --------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one generator process saw."""

    connections: int = 0
    moves_sent: int = 0
    latencies: list[float] = field(default_factory=list)  # mover's send -> opponent's receipt
    spectator_latencies: list[float] = field(default_factory=list)
    acked: list[tuple[str, int, int]] = field(default_factory=list)
    acked_in_window: int = 0
    games_started: int = 0
    games_finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    late: int = 0  # moves sent more than one interval after their scheduled time
    computer_moves: int = 0  # computer moves received in the window
    computer_waits: list[float] = field(default_factory=list)  # our move's echo -> computer's move
    computer_games: int = 0
    cpu_seconds: float = 0.0  # the generator's own CPU during the window
    lags: list[float] = field(default_factory=list)  # the generator's own loop lag, in the window
    gc_counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # collections in the window
    gc_longest: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # by generation


class LoadBot(Bot):
    """A bot that counts in its generator's tally every ``error`` and unexpected close, takes a
    game pushed unasked as the one it waits for (``next_game``: the host of a private room),
    and with ``keep_cells`` notes the cells of the moves it waited for (the computer's)."""

    wait = MOVE_TIMEOUT

    def __init__(self, name: str, tally: Tally, on_move: MoveSeen | None = None) -> None:
        super().__init__(name, on_move)
        self.tally = tally
        self.next_game: Reply | None = None
        self.keep_cells = False
        self.cells: dict[tuple[str, int], int] = {}  # with keep_cells: the moves waited for

    def error(self, code: str, now: float) -> None:
        self.tally.errors[code] += 1

    def game(self, message: dict[str, Any], reply: Reply | None, now: float) -> Reply | None:
        if reply is None and self.next_game is not None:
            reply, self.next_game = self.next_game, None
        return reply

    def awaited_move(self, message: dict[str, Any]) -> None:
        if self.keep_cells:
            self.cells[(message["game"], message["ply"])] = message["cell"]

    def disconnected(self, code: int | None) -> None:
        self.tally.errors[f"closed {code}"] += 1


async def connect(url: str, name: str, tally: Tally, gate: asyncio.Semaphore,
                  on_move: MoveSeen | None = None) -> LoadBot:
    async with gate:
        bot = LoadBot(name, tally, on_move)
        await bot.connect(url)
    tally.connections += 1
    return bot


@dataclass
class Window:
    """The generator's timeline in ``time.monotonic()`` seconds (shared by all processes)."""

    measure_from: float
    measure_to: float

    def inside(self, t: float) -> bool:
        return self.measure_from <= t < self.measure_to


class Slot:
    """One live game at a time, played by two bots, followed by some spectators."""

    def __init__(self, index: int, x: LoadBot, o: LoadBot, rng: random.Random,
                 registry: dict[str, Slot]) -> None:
        self.index = index
        self.registry = registry
        self.x, self.o = x, o
        self.rng = rng
        self.game: str | None = None
        self.changed = asyncio.Event()
        self.sent_at: dict[tuple[str, int], float] = {}
        self.waiting_since: float | None = None  # loop time the slot began waiting for a move
        self.stalled = False  # the watchdog gave up on it

    async def new_game(self) -> str:
        private = await self.x.request(t="private_create", colour="x")
        if private["t"] != "private":
            raise RuntimeError(f"private_create refused: {private}")
        self.x.next_game = asyncio.get_running_loop().create_future()
        host_game = self.x.next_game
        joined = await self.o.request(t="private_join", code=private["code"])
        game = await asyncio.wait_for(host_game, MOVE_TIMEOUT)
        if joined["t"] != "game" or joined["id"] != game["id"]:
            raise RuntimeError(f"private_join refused: {joined}")
        self.game = game["id"]
        self.registry[self.game] = self
        self.changed.set()
        self.changed = asyncio.Event()
        return game["id"]

    async def play(self, rate: float, window: Window, tally: Tally) -> None:
        loop = asyncio.get_running_loop()
        interval = 1.0 / rate
        next_at = loop.time() + self.rng.uniform(0, interval)
        while loop.time() < window.measure_to:
            game = await self.new_game()
            tally.games_started += 1
            free = list(range(CELLS))
            ply = 0
            while loop.time() < window.measure_to:
                now = loop.time()
                if next_at > now:
                    await asyncio.sleep(next_at - now)
                elif now - next_at > interval:
                    tally.late += 1
                    next_at = now
                mover, other = (self.x, self.o) if ply % 2 == 0 else (self.o, self.x)
                cell = free.pop(self.rng.randrange(len(free)))
                seen: asyncio.Future[float] = loop.create_future()
                other.moves[(game, ply + 1)] = seen
                frame, acked = mover.prepare(t="move", game=game, cell=cell, ply=ply)
                sent = time.monotonic()
                self.sent_at[(game, ply + 1)] = sent
                await mover.write(frame)
                tally.moves_sent += 1
                # no wait_for here: a timer per move costs the generator more than the server
                # spends on it; the generator's watchdog cancels a slot that waits too long
                self.waiting_since = now
                try:
                    received = await seen
                    reply = await acked
                except asyncio.CancelledError:
                    if not self.stalled:
                        raise
                    tally.errors["timeout"] += 1
                    return
                finally:
                    self.waiting_since = None
                if reply["t"] != "ack":
                    return  # the error is counted by the reader
                ply += 1
                tally.acked.append((game, ply, cell))
                if window.inside(sent):
                    tally.latencies.append(received - sent)
                    tally.acked_in_window += 1
                next_at += interval
                if game in mover.ended:
                    tally.games_finished += 1
                    break
            self.sent_at = {k: v for k, v in self.sent_at.items() if k[0] != game}
            self.registry.pop(game, None)


class ComputerGame:
    """One bot playing the computer, game after game: it answers each computer move with a
    random legal move at once, and times how long the computer takes to answer it."""

    def __init__(self, bot: LoadBot, level: int, patience: float, rng: random.Random) -> None:
        self.bot = bot
        bot.keep_cells = True
        self.level = level
        self.patience = patience  # seconds a computer move may take before it counts missing
        self.rng = rng

    async def play(self, window: Window, tally: Tally) -> None:
        from engine import Board

        loop = asyncio.get_running_loop()
        while loop.time() < window.measure_to:
            game = await self.bot.request(t="play_ai", level=self.level, colour="x")
            if game["t"] != "game":
                return
            tally.computer_games += 1
            board = Board("4x4x4")
            while board.outcome() is None and loop.time() < window.measure_to:
                cell = self.rng.choice(board.legal_moves)
                ply = board.ply
                echoed: asyncio.Future[float] = loop.create_future()
                answered: asyncio.Future[float] = loop.create_future()
                self.bot.moves[(game["id"], ply + 1)] = echoed
                self.bot.moves[(game["id"], ply + 2)] = answered
                frame, acked = self.bot.prepare(t="move", game=game["id"], cell=cell, ply=ply)
                await self.bot.write(frame)
                try:
                    seen = await asyncio.wait_for(echoed, MOVE_TIMEOUT)
                    reply = await asyncio.wait_for(acked, MOVE_TIMEOUT)
                except (TimeoutError, asyncio.CancelledError):
                    tally.errors["timeout"] += 1
                    return
                if reply["t"] != "ack":
                    return
                tally.acked.append((game["id"], ply + 1, cell))
                board.push(cell)
                if board.outcome() is not None:
                    self.bot.moves.pop((game["id"], ply + 2), None)
                    break
                try:
                    computer = await asyncio.wait_for(answered, self.patience)
                except (TimeoutError, asyncio.CancelledError):
                    tally.errors["computer move missing"] += 1
                    return
                board.push(self.computer_cell(game["id"], ply + 2))
                if window.inside(seen):
                    tally.computer_moves += 1
                    tally.computer_waits.append(computer - seen)

    def computer_cell(self, game: str, ply: int) -> int:
        return self.bot.cells.pop((game, ply))


async def spectate(bot: LoadBot, slot: Slot, window: Window) -> None:
    """Watch the slot's game, and its next one when it ends, until the window closes."""
    loop = asyncio.get_running_loop()
    while loop.time() < window.measure_to:
        changed = slot.changed
        if slot.game is not None:
            reply = await bot.request(t="watch", game=slot.game)
            if reply["t"] != "game":
                return
        remaining = window.measure_to - loop.time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), max(0.0, remaining))


@dataclass(frozen=True)
class Share:
    """What one generator process plays: game slots, spectators and computer games."""

    slots: range
    spectators: range
    computer_games: range
    rate: float
    computer_level: int
    computer_patience: float


async def generate(url: str, process: int, share: Share, seed: int, ready: Any,
                   go: Any, freeze: bool = True) -> Tally:
    """One generator process: connect everyone, wait for the go, play, and report."""
    raise_fd_limit()
    tally = Tally()
    collections = GCPauses()  # the server's own timer of collections (server/metrics.py)
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
    rng = random.Random(seed)
    watched: dict[str, Slot] = {}  # game id -> its slot, for the spectators' latency
    window: Window | None = None

    def on_spectator_move(message: dict[str, Any], now: float) -> None:
        slot = watched.get(message["game"])
        sent = None if slot is None else slot.sent_at.get((message["game"], message["ply"]))
        if sent is not None and window is not None and window.inside(sent):
            tally.spectator_latencies.append(now - sent)


    async def make_slot(i: int) -> Slot:
        x, o = await asyncio.gather(connect(url, f"p{process}g{i}x", tally, gate),
                                    connect(url, f"p{process}g{i}o", tally, gate))
        return Slot(i, x, o, random.Random(rng.random()), watched)

    games = list(await asyncio.wait_for(
        asyncio.gather(*(make_slot(i) for i in share.slots)), SETUP_TIMEOUT))
    viewers = list(await asyncio.wait_for(asyncio.gather(*(
        connect(url, f"p{process}s{j}", tally, gate, on_spectator_move)
        for j in share.spectators)), SETUP_TIMEOUT))
    computer_games = [
        ComputerGame(bot, share.computer_level, share.computer_patience,
                     random.Random(rng.random()))
        for bot in await asyncio.wait_for(asyncio.gather(*(
            connect(url, f"p{process}c{k}", tally, gate) for k in share.computer_games)),
            SETUP_TIMEOUT)
    ]
    if freeze:
        quiet_collector()
    ready.put(process)
    start, warmup, duration = await asyncio.to_thread(go.get)
    window = Window(start + warmup, start + warmup + duration)
    await asyncio.sleep(max(0.0, start - time.monotonic()))

    cpu_at: list[float] = []

    async def sample_cpu() -> None:
        assert window is not None
        for at in (window.measure_from, window.measure_to):
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu_at.append(usage.ru_utime + usage.ru_stime)
            if at == window.measure_from:
                collections.start()  # timed in the window only
        collections.stop()
        tally.gc_counts, tally.gc_longest = collections.count, collections.longest

    async def sample_lag() -> None:
        # the instrument's own delay: a move's receipt is stamped when this loop gets to it,
        # so a late generator loop adds to the latency it reports
        assert window is not None
        loop = asyncio.get_running_loop()
        while time.monotonic() < window.measure_to:
            asked = loop.time()
            await asyncio.sleep(LAG_PROBE)
            if window.inside(time.monotonic()):
                tally.lags.append(loop.time() - asked - LAG_PROBE)

    sampler = asyncio.create_task(sample_cpu())
    prober = asyncio.create_task(sample_lag())
    playing = {slot: asyncio.create_task(slot.play(share.rate, window, tally)) for slot in games}

    async def watchdog() -> None:
        # a move not seen within MOVE_TIMEOUT ends its slot, counted as a timeout
        loop = asyncio.get_running_loop()
        while not all(task.done() for task in playing.values()):
            await asyncio.sleep(1.0)
            for slot, task in playing.items():
                since = slot.waiting_since
                if since is not None and loop.time() - since > MOVE_TIMEOUT:
                    slot.stalled = True
                    task.cancel()

    guard = asyncio.create_task(watchdog())
    results = await asyncio.gather(
        *playing.values(),
        *(spectate(v, games[j % len(games)], window) for j, v in enumerate(viewers)),
        *(c.play(window, tally) for c in computer_games),
        return_exceptions=True,
    )
    for result in results:
        if isinstance(result, BaseException):
            tally.errors[f"bot failed: {type(result).__name__}"] += 1
    await sampler
    await prober
    await guard
    tally.cpu_seconds = cpu_at[1] - cpu_at[0]
    bots = [*(b for s in games for b in (s.x, s.o)), *viewers, *(c.bot for c in computer_games)]
    await asyncio.gather(*(b.close() for b in bots), return_exceptions=True)
    return tally


def generator_main(url: str, process: int, share: Share, seed: int, ready: Any, go: Any,
                   out: Any, pin: bool = False, freeze: bool = True) -> None:
    if pin:
        os.sched_setaffinity(0, generator_cpus())
    try:
        tally = asyncio.run(generate(url, process, share, seed, ready, go, freeze))
        data = asdict(tally)
        data["errors"] = dict(tally.errors)  # asdict would make a Counter of its items
        out.put(data)
    except BaseException as error:  # report, so the parent does not wait forever
        out.put(f"generator {process} failed: {type(error).__name__}: {error}")
        raise


def generator_cpus() -> set[int]:
    """With ``--pin``: the generators' CPU, the last one (the server gets the others)."""
    return {max(os.sched_getaffinity(0))}


def pin_server(pid: int) -> None:
    """Every thread of the server process (its event loop and the store's threads) on the
    CPUs the generators do not use; its computer workers stay free to run anywhere."""
    server_cpus = os.sched_getaffinity(0) - generator_cpus()
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), server_cpus)


def pin_computer(pid: int) -> None:
    """With ``--pin-computer``: the server's child processes (its computer workers, their
    forkserver) on the generators' CPU too, so the server's event loop has its CPUs to itself,
    as when the computer's searches run on an engine fleet elsewhere (``qubic worker``)."""
    for child in descendants(pid):
        with contextlib.suppress(OSError):  # a worker may be replaced meanwhile
            for tid in os.listdir(f"/proc/{child}/task"):
                os.sched_setaffinity(int(tid), generator_cpus())


def run(args: argparse.Namespace) -> int:
    raise_fd_limit()
    print(f"load average before: {load_average()}   (cores: {os.cpu_count()})", flush=True)
    with tempfile.TemporaryDirectory(prefix="qubic-load-") as tmp:
        db = Path(tmp) / "qubic.db"
        extra = ["--computer-time", f"{args.computer_time:g}"]
        if args.computer_nice is not None:
            extra += ["--computer-nice", str(args.computer_nice)]
        if args.log_format != "text":
            extra += ["--log-format", args.log_format]
        if args.commit_interval is not None:
            extra += ["--commit-interval", f"{args.commit_interval:g}"]
        if args.commit_max is not None:
            extra += ["--commit-max", str(args.commit_max)]
        if args.pacing is not None:
            extra += ["--pacing", args.pacing]
        server = ServerProcess(db, *NO_LIMITS, *extra, computer_workers=args.computer_workers,
                               log_level=args.log_level)
        if args.profile:  # cProfile writes its stats when the server exits
            server.args[1:1] = ["-m", "cProfile", "-o", str(Path(args.profile).resolve())]
        elif args.profile_calls:  # cProfile on and off by signals (harness/call_count.py)
            args.call_stats = str(Path(args.call_stats or Path(tmp) / "calls.prof").resolve())
            Path(args.call_stats).unlink(missing_ok=True)  # a file from an earlier run
            server.args[1:3] = ["-m", "bench.harness.call_count", args.call_stats]
        server.start()
        workers: list[multiprocessing.process.BaseProcess] = []
        try:  # from here on, whatever fails, the server and the generators are stopped
            tallies, failures, measured = _conduct(args, server, workers)
        finally:
            exit_code = server.close(kill=args.stop == "kill")
            for worker in workers:
                worker.join(10)
                if worker.is_alive():
                    worker.kill()
        missing = acked_moves_missing(db, [m for t in tallies for m in t.acked])
        if args.server_log:
            Path(args.server_log).write_text(server.log.read_text())

    report(args, tallies, failures, missing, exit_code, *measured)
    errors = sum(sum(t.errors.values()) for t in tallies) + len(failures)
    return 0 if errors == 0 and missing == 0 else 1


def _conduct(args: argparse.Namespace, server: ServerProcess,
             workers: list[multiprocessing.process.BaseProcess]) -> tuple[
                 list[Tally], list[str], tuple[Any, ...]]:
    """Start the generators (appending them to ``workers``), let them play through the
    warm-up and the window, and collect their tallies and the server's figures."""
    if args.pin:
        pin_server(server.pid)
    if args.server_nice:
        os.setpriority(os.PRIO_PROCESS, server.pid, args.server_nice)
    if args.workers_nice:
        for pid in descendants(server.pid):
            os.setpriority(os.PRIO_PROCESS, pid, args.workers_nice)
    rss_start = rss_kib(server.pid)
    context = multiprocessing.get_context("spawn")
    ready, go, out = context.Queue(), context.Queue(), context.Queue()
    patience = MOVE_TIMEOUT + args.computer_time * (args.computer_games / args.computer_workers + 1)
    shares = [
        Share(slots, spectators, computer, args.rate, args.computer_level, patience)
        for slots, spectators, computer in zip(split(args.games, args.procs),
                                               split(args.spectators, args.procs),
                                               split(args.computer_games, args.procs),
                                               strict=True)
    ]
    workers += [
        context.Process(target=generator_main, args=(
            server.ws_url, p, share, args.seed + p, ready, go, out, args.pin,
            not args.generator_gc), daemon=True)
        for p, share in enumerate(shares)
    ]
    setup_started = time.monotonic()
    for worker in workers:
        worker.start()
    failures: list[str] = []
    tallies: list[Tally] = []
    for _ in workers:
        wait_for_item(ready, workers, SETUP_TIMEOUT + 60)
    setup = time.monotonic() - setup_started
    rss_connected = rss_kib(server.pid)
    start = time.monotonic() + 0.5
    # with --profile-calls the profiled stretch comes between the warm-up and the window
    profiled = args.profile_calls / (args.rate * args.games) if args.profile_calls else 0.0
    warmup = args.warmup + profiled
    for _ in workers:
        go.put((start, warmup, args.duration))
    print(f"connected {2 * args.games + args.spectators} websockets in {setup:.1f} s; "
          f"server RSS {rss_start / 1024:.0f} MiB -> {rss_connected / 1024:.0f} MiB",
          flush=True)
    if args.pin_computer:
        pin_computer(server.pid)
    reports = len(workers)  # one tally from each generator
    if args.bad_logins:
        attacker = context.Process(target=attack_main, args=(
            server.ws_url, args.bad_logins, start, warmup + args.duration, out),
            daemon=True)
        attacker.start()
        workers.append(attacker)  # stopped with the generators, whatever happens
        reports += 1
    attack: dict[str, int] | None = None
    time.sleep(max(0.0, start + args.warmup - time.monotonic()))
    if args.pin_computer:
        pin_computer(server.pid)  # and any worker started since
    if args.profile_calls:
        args.calls = count_calls(args, server, failures, profiled)
        time.sleep(max(0.0, start + warmup - time.monotonic()))
    cpu_from = server.cpu_seconds()
    threads_from = thread_times(server.pid)
    metrics_from = server.metrics_or_nothing(failures)
    load_from = load_average()
    time.sleep(max(0.0, start + warmup + args.duration - time.monotonic()))
    cpu_to = server.cpu_seconds()
    threads_to = thread_times(server.pid)
    rss_end = rss_kib(server.pid)
    metrics = server.metrics_or_nothing(failures)
    load_to = load_average()
    for _ in range(reports):
        item = wait_for_item(out, workers, MOVE_TIMEOUT * 3 + 60, dead_ok=True)
        if isinstance(item, str):
            failures.append(item)
        elif "errors" not in item:  # the --bad-logins process's replies by code
            attack = item
        else:
            tallies.append(Tally(**{**item, "errors": Counter(item["errors"])}))
    threads = by_thread(server.pid, threads_from, threads_to)
    return tallies, failures, (cpu_from, cpu_to, rss_start, rss_end, metrics_from, metrics,
                               load_from, load_to, attack, threads)


def thread_times(pid: int) -> dict[int, tuple[float, float]]:
    """Each thread of process ``pid`` so far, by thread id: its CPU seconds (user + system,
    /proc/PID/task/TID/stat) and the seconds it waited, runnable, for a CPU (the second
    figure of .../schedstat; NaN where the kernel keeps no such count). The event loop's
    thread is the one whose id is ``pid``: Python does not name the others for the system,
    so they are told apart by their share, the store's writer the largest under load."""
    times: dict[int, tuple[float, float]] = {}
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):  # a thread may end meanwhile
                task = Path(f"/proc/{pid}/task/{tid}")
                text = (task / "stat").read_text()
                fields = text[text.rindex(")") + 2:].split()
                cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
                try:
                    waited = int((task / "schedstat").read_text().split()[1]) / 1e9
                except (OSError, IndexError, ValueError):
                    waited = float("nan")
                times[int(tid)] = (cpu, waited)
    return times


def by_thread(pid: int, before: dict[int, tuple[float, float]],
              after: dict[int, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """The CPU seconds and the seconds waited for a CPU of each thread between two
    ``thread_times``: the event loop's as ``loop``, the others as ``thread 1``, ``thread 2``
    ... by CPU, largest first (a thread started in between counts from zero)."""
    spent = {tid: (cpu - before.get(tid, (0.0, 0.0))[0], waited - before.get(tid, (0.0, 0.0))[1])
             for tid, (cpu, waited) in after.items()}
    loop = spent.pop(pid, (0.0, 0.0))
    others = sorted(spent.values(), reverse=True)
    return {"loop": loop} | {f"thread {i}": times for i, times in enumerate(others, 1)}


def count_calls(args: argparse.Namespace, server: ServerProcess, failures: list[str],
                seconds: float) -> CallCount | None:
    """With ``--profile-calls N``: the server's calls a move over ``seconds``, the time N
    moves take at the offered rate, after the warm-up and before the window (cProfile on and
    off by signals; the moves its ``qubic_moves_total`` counted in between, scraped outside
    the profiled stretch, so that the scrapes' own calls are not counted)."""
    before = server.metrics_or_nothing(failures).get("qubic_moves_total", 0.0)
    os.kill(server.pid, signal.SIGUSR1)
    time.sleep(seconds)
    os.kill(server.pid, signal.SIGUSR2)
    stats = Path(args.call_stats)
    for _ in range(100):  # the stats are written in the server's signal handler
        if stats.exists() and stats.stat().st_size:
            break
        time.sleep(0.1)
    time.sleep(0.2)
    after = server.metrics_or_nothing(failures).get("qubic_moves_total", 0.0)
    if not stats.exists():
        failures.append("--profile-calls: the server wrote no stats")
        return None
    return calls_per_move(stats, int(after - before))


def report(args: argparse.Namespace, tallies: list[Tally], failures: list[str], missing: int,
           exit_code: int | None, cpu_from: tuple[float, float], cpu_to: tuple[float, float],
           rss_start: int, rss_end: int, metrics_from: dict[str, float],
           metrics: dict[str, float], load_from: str,
           load_to: str, attack: dict[str, int] | None = None,
           threads: dict[str, tuple[float, float]] | None = None) -> None:
    d = args.duration
    latencies = [x for t in tallies for x in t.latencies]
    spectators = [x for t in tallies for x in t.spectator_latencies]
    errors: Counter[str] = Counter()
    for t in tallies:
        errors.update(t.errors)
    acked = sum(len(t.acked) for t in tallies)
    server_cpu = (cpu_to[0] - cpu_from[0]) / d
    computer_cpu = (cpu_to[1] - cpu_from[1]) / d
    gen_cpu = [t.cpu_seconds / d for t in tallies]
    lag = [metrics.get(f'qubic_event_loop_lag_seconds{{quantile="{q}"}}', float("nan"))
           for q in ("0.5", "0.99", "1.0")]
    print(f"games {args.games}, spectators {args.spectators}, rate {args.rate:g} move/s per "
          f"game, window {d:g} s after {args.warmup:g} s warmup, {args.procs} generator "
          f"process(es)" + "".join(
              f", {flag} {value:g}" for flag, value in (("--commit-interval", args.commit_interval),
                                                       ("--commit-max", args.commit_max))
              if value is not None) + (f", --pacing {args.pacing}" if args.pacing else ""))
    print(f"  connections      {sum(t.connections for t in tallies)}")
    started = sum(t.games_started for t in tallies)
    finished = sum(t.games_finished for t in tallies)
    late = sum(t.late for t in tallies)
    print(f"  moves/s          {sum(t.acked_in_window for t in tallies) / d:.0f} acknowledged "
          f"(target {args.games * args.rate:g}); games started {started}, finished {finished}; "
          f"late sends {late}")
    in_window = sum(t.acked_in_window for t in tallies)
    per_move = (cpu_to[0] - cpu_from[0]) / in_window * 1e3 if in_window else float("nan")
    print(f"  CPU per move     {per_move:.3f} ms of the server process's CPU (user + system) "
          f"per acknowledged move in the window")
    if threads and in_window:
        print("    by thread      " + ", ".join(
            f"{name} {cpu / in_window * 1e3:.3f}" for name, (cpu, _) in threads.items() if cpu > 0)
            + " ms (the event loop's; the others', largest first: under load the first is the"
            " store's writer)")
        print("    waited for CPU " + ", ".join(
            f"{name} {waited / d * 1e3:.0f}" for name, (cpu, waited) in threads.items() if cpu > 0)
            + " ms a second (runnable, on no core: the machine's load, not the server's work)")
    print(f"  move latency     {ms(latencies)} (mover's send -> opponent's receipt, "
          f"{len(latencies)} moves)")
    print(f"    server's part  {server_part(metrics_from, metrics)} (frame in -> ack queued, "
          "the commit included: the server's qubic_move_ack_seconds over the window; the "
          "rest is the sockets, the kernel and the generator)")
    if spectators:
        print(f"  spectator        {ms(spectators)} ({len(spectators)} deliveries)")
    if args.computer_games:
        waits = [x for t in tallies for x in t.computer_waits]
        print(f"  computer games   {args.computer_games} at once on "
              f"{args.computer_workers} computer worker(s), "
              f"level {args.computer_level}, --computer-time {args.computer_time:g} s: "
              f"{sum(t.computer_moves for t in tallies)} computer moves in the window, "
              f"{errors['computer move missing']} missing; "
              f"{sum(t.computer_games for t in tallies)} games started")
        p50, p95, p99 = percentiles(waits)
        print(f"  computer answers p50 {p50:.2f} s, p95 {p95:.2f} s, p99 {p99:.2f} s, max "
              f"{max(waits, default=float('nan')):.2f} s (our move's echo -> the computer's)")
    print(f"  errors           {sum(errors.values()) + len(failures)}"
          + (f" {dict(errors)}" if errors else "") + "".join(f"\n    {f}" for f in failures))
    print(f"  server           RSS {rss_end / 1024:.0f} MiB (at start {rss_start / 1024:.0f} "
          f"MiB), CPU {server_cpu:.0%} of a core (computer workers {computer_cpu:.0%}), "
          f"loop lag since start p50 {lag[0] * 1e3:.1f} ms p99 {lag[1] * 1e3:.1f} ms "
          f"max {lag[2] * 1e3:.1f} ms")
    print(f"  loop lag window  {window_lag(metrics_from, metrics)}")
    print(f"    its own part   {window_lag(metrics_from, metrics, own=True)} (less the time "
          "the server's thread waited for a CPU, and its pacing's pauses)")
    if "qubic_loop_naps_total" in metrics:
        print(f"  pacing           {pacing_summary(metrics_from, metrics, d)}")
    commits = window_lag(metrics_from, metrics, name="qubic_store_commit_seconds_bucket")
    print(f"  store commits    {commits} (a group's transaction, BEGIN to COMMIT)")
    print(f"  server GC        {gc_summary(metrics_from, metrics)}")
    if getattr(args, "calls", None) is not None:
        for line in args.calls.lines():
            print(f"  {line}")
    print("  generator        CPU " + " + ".join(f"{c:.0%}" for c in gen_cpu) + " of a core; "
          f"its own loop lag {ms([x for t in tallies for x in t.lags])} "
          f"(every {LAG_PROBE * 1e3:g} ms: the instrument's part of the latency)")
    print("    its GC         " + "; ".join(
        f"gen{g} {sum(t.gc_counts[g] for t in tallies)}x (max "
        f"{max((t.gc_longest[g] for t in tallies), default=0.0) * 1e3:.0f} ms)" for g in range(3))
        + (" (Python's defaults)" if args.generator_gc else " (the connections frozen)"))
    print(f"  load average     {load_from} at window start, {load_to} at its end")
    print(f"  durability       server stopped by {'SIGKILL' if args.stop == 'kill' else 'SIGTERM'}"
          f" (exit {exit_code}); {acked} acknowledged moves, {missing} missing from the database")
    if args.bad_logins:
        print(f"  bad logins       {args.bad_logins:g}/s from one address, replies: "
              f"{attack if attack is not None else 'none reported'}")


def pacing_summary(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
    """The paced loop's waits for commits and naps over the window (server.store.pacing)."""
    def grew(name: str) -> float:
        return after.get(f"qubic_{name}_total", 0.0) - before.get(f"qubic_{name}_total", 0.0)

    naps, waits = grew("loop_naps"), grew("loop_commit_waits")
    if not naps and not waits:
        return "no pause (under its threshold, or --pacing off)"
    return (f"{naps / seconds:.0f} naps a second, {grew('loop_nap_seconds') / seconds * 1e3:.0f} "
            f"ms a second asleep; {waits / seconds:.0f} waits for a commit, "
            f"{grew('loop_commit_wait_seconds') / seconds * 1e3:.0f} ms a second")


def gc_summary(before: dict[str, float], after: dict[str, float]) -> str:
    """The server's garbage-collector pauses per generation during the window (count and
    mean), and the longest since it started, from its ``/metrics``."""
    parts = []
    for g in range(3):
        label = f'generation="{g}"'
        count, total = (
            after.get(f"qubic_gc_pause_seconds_{what}{{{label}}}", 0.0)
            - before.get(f"qubic_gc_pause_seconds_{what}{{{label}}}", 0.0)
            for what in ("count", "sum")
        )
        longest = after.get("qubic_gc_pause_seconds{" + label + ',quantile="1.0"}', 0.0)
        mean = total / count if count else 0.0
        parts.append(f"gen{g} {count:.0f}x mean {mean * 1e3:.1f} ms (max {longest * 1e3:.0f})")
    return ", ".join(parts)


def bucket_quantile(bounds: Sequence[tuple[float, float]], q: float) -> float:
    """The ``q`` quantile (0-1) of a histogram given as (upper bound, cumulative count)
    pairs, the largest bound's count the total, interpolated linearly within the bucket it
    falls in (as Prometheus' ``histogram_quantile``; the first bucket starts at 0); inf when
    it falls past the largest bound."""
    total = bounds[-1][1] if bounds else 0.0
    if total <= 0:
        return float("nan")
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cumulative in bounds:
        if cumulative >= rank:
            inside = cumulative - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, cumulative
    return float("inf")


def server_part(before: dict[str, float], after: dict[str, float]) -> str:
    """A move's time in the server during the window, from the difference of its histogram
    ``qubic_move_ack_seconds`` between two scrapes: the mean, and p50/p95/p99 interpolated
    within its buckets (``server.metrics.ACK_BUCKETS``). Beside the client's latency it tells
    a stalled server (this is high too) from a starved generator (this stays low)."""
    name = "qubic_move_ack_seconds"
    count = after.get(name + "_count", 0.0) - before.get(name + "_count", 0.0)
    if count <= 0:
        return "no moves (a server without qubic_move_ack_seconds?)"
    bounds = sorted(
        (float("inf") if "+Inf" in key else float(key.split('"')[1]),
         after[key] - before.get(key, 0.0))
        for key in after if key.startswith(name + "_bucket")
    )
    mean = (after.get(name + "_sum", 0.0) - before.get(name + "_sum", 0.0)) / count
    finite = [(b, n) for b, n in bounds if b != float("inf")] + [(float("inf"), count)]
    quantiles = " ".join(f"p{q * 100:g} {bucket_quantile(finite, q) * 1e3:.2f}"
                         for q in (0.5, 0.95, 0.99))
    return f"mean {mean * 1e3:.2f} ms, {quantiles} ms, {count:.0f} moves"


def window_lag(before: dict[str, float], after: dict[str, float], *, own: bool = False,
               name: str = "") -> str:
    """The server's event-loop lag during the window, from the difference of its lag
    histogram between two scrapes: p99 as a bucket bound, and the share of samples <= 5 ms.
    With ``own``, the lag less the time its thread waited for a CPU (server/metrics.py); with
    ``name``, that histogram's (its ``_bucket`` series) instead."""
    name = name or ("qubic_event_loop_own_lag_histogram_seconds_bucket" if own
                    else "qubic_event_loop_lag_histogram_seconds_bucket")
    bounds = sorted(
        (float(key.split('"')[1]), after[key] - before.get(key, 0.0))
        for key in after if key.startswith(name) and "+Inf" not in key
    )
    total = after.get(name + '{le="+Inf"}', 0.0) - before.get(name + '{le="+Inf"}', 0.0)
    if total <= 0:
        return "no samples"
    p99 = next((f"<= {b * 1e3:g} ms" for b, n in bounds if n >= 0.99 * total),
               f"> {bounds[-1][0] * 1e3:g} ms")
    within = dict(bounds).get(0.005, 0.0) / total
    return f"p99 {p99}, {within:.1%} of {total:.0f} samples <= 5 ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser, games=100, warmup=10.0, duration=30.0)
    parser.add_argument("--spectators", type=int, default=None,
                        help="spectators (default: games / 5)")
    parser.add_argument("--computer-workers", "--ai-workers", type=int, default=1,
                        help="the server's computer workers")
    parser.add_argument("--computer-games", "--ai-games", type=int, default=0,
                        help="computer games played at once besides the human games (each a "
                             "bot answering the computer at once)")
    parser.add_argument("--computer-level", "--ai-level", dest="computer_level", type=int,
                        default=8, help="their level (default 8)")
    parser.add_argument("--computer-time", "--ai-time", type=float, default=1.0,
                        help="seconds the computer thinks per move (the server's --computer-time)")
    parser.add_argument("--stop", choices=["term", "kill"], default="term",
                        help="stop the server with SIGTERM (default) or SIGKILL before the "
                             "database check")
    parser.add_argument("--log-level", default="warning", help="the server's log level")
    parser.add_argument("--log-format", default="text", choices=["text", "json"],
                        help="the server's log lines: text, or JSON (its cost is a figure)")
    parser.add_argument("--server-nice", type=int, default=0, metavar="N",
                        help="renice the server process to N (negative needs root): shows how "
                             "much of the latency is other processes taking the CPU")
    parser.add_argument("--computer-nice", "--ai-nice", type=int, default=None, metavar="N",
                        help="the server's --computer-nice: its computer workers run N steps "
                             "below it (default: the server's default)")
    parser.add_argument("--workers-nice", type=int, default=0, metavar="N",
                        help="renice the server's child processes (the computer workers) to N")
    parser.add_argument("--server-log", metavar="PATH", help="keep the server's log here")
    parser.add_argument("--pin", action="store_true",
                        help="the generators on the last CPU, the server process on the others "
                             "(its computer workers anywhere): the generators stand for clients on "
                             "other machines, so they should not take the server's CPU")
    parser.add_argument("--pin-computer", "--pin-ai", action="store_true",
                        help="with --pin, the server's computer workers on the generators' CPU "
                             "too: the server's loop has a CPU to itself, as with an engine fleet")
    parser.add_argument("--profile", metavar="PATH",
                        help="run the server under cProfile and write its stats here (slower: "
                             "for where the time goes, not for figures)")
    parser.add_argument("--profile-calls", type=int, default=0, metavar="N",
                        help="count the server's function calls a move over about N moves "
                             "between the warm-up and the window (cProfile switched on and "
                             "off by signals: bench/harness/call_count.py)")
    parser.add_argument("--call-stats", metavar="PATH",
                        help="with --profile-calls, keep its cProfile stats here (pstats's "
                             "format: every function, callers and callees)")
    parser.add_argument("--generator-gc", action="store_true",
                        help="leave the generators' collector as Python sets it, instead of "
                             "freezing their connections' objects after setup")
    parser.add_argument("--bad-logins", type=float, default=0.0, metavar="N",
                        help="add N wrong-password logins a second from one address (the "
                             "server's password-attempt limit stays on)")
    parser.add_argument("--commit-interval", type=float, default=None, metavar="MS",
                        help="the server's --commit-interval, group commit's window (default: "
                             "the server's)")
    parser.add_argument("--commit-max", type=int, default=None, metavar="N",
                        help="the server's --commit-max (default: the server's)")
    parser.add_argument("--pacing", choices=["on", "off"], default=None,
                        help="the server's --pacing (default: the server's)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.spectators is None:
        args.spectators = args.games // 5
    if args.profile_calls and (args.profile or not args.games
                               or args.profile_calls > args.games * args.rate * MAX_SECONDS):
        parser.error("--profile-calls N: human games, no --profile, N at most "
                     f"{MAX_SECONDS:g} s of moves")
    if not (0 <= args.games <= MAX_GAMES and 0 <= args.spectators <= MAX_GAMES
            and 0 <= args.computer_games <= 100 and args.games + args.computer_games > 0):
        parser.error(f"--games and --spectators: 0..{MAX_GAMES}, --computer-games 0..100, "
                     "some games")
    if args.spectators and not args.games:
        parser.error("spectators watch human games: --games must be more than 0")
    if not (0 < args.duration <= MAX_SECONDS and 0 <= args.warmup <= MAX_SECONDS):
        parser.error(f"--duration and --warmup: up to {MAX_SECONDS:g} s")
    if not (0 < args.rate <= 10):
        parser.error("--rate: more than 0, at most 10 (the rate limit is 10 frames/s per client)")
    args.procs = max(1, min(args.procs, args.games + args.computer_games))
    args.pin = args.pin or args.pin_computer
    if args.pin and len(os.sched_getaffinity(0)) < 2:
        parser.error("--pin needs at least 2 CPUs")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
