"""Computer moves on an engine fleet: a real Redis, real ``qubic worker`` processes (or a
worker object in this process, searching in its own real pool), a real server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import websockets

from bench.harness import descendants
from engine.players import Decision
from server.computer.fleet.jobs import GROUP, NO_WORKER, Job, Keys, open_redis
from server.computer.fleet.node import Fleet
from server.computer.fleet.worker import FleetWorker, parse_levels
from server.computer.local import ComputerPool
from server.computer.moves import ComputerError, ComputerJob
from server.http.app import RunningServer, ServerConfig, start_server
from tests.eventually import eventually
from tests.server.servers import Client
from tests.services import RedisServer

ROOT = Path(__file__).resolve().parents[3]


class WorkerProcess:
    """``python -m qubic_cli worker`` as a host runs it, with its log in a file."""

    def __init__(self, redis_url: str, log: Path, processes: int = 1) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "qubic_cli", "worker", "--redis", redis_url,
             "--processes", str(processes), "--log-level", "info"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log.open("ab"),
        )
        self.name = ""

    async def ready(self, timeout: float = 120.0) -> WorkerProcess:
        def said_ready() -> re.Match[str] | None:
            assert self.process.poll() is None, self.log.read_text()  # it died
            return re.search(r"worker (\S+) ready", self.log.read_text())

        said = await eventually(said_ready, "the worker started", timeout=timeout, every=0.1,
                                detail=self.log.read_text)
        self.name = said.group(1)
        return self

    def signal(self, sig: int) -> None:
        """``sig`` to the worker and its search processes (as a machine going away would)."""
        for pid in [*descendants(self.process.pid), self.process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.process.wait(30)


@pytest.fixture
def workers(redis_url: str, tmp_path: Path) -> Iterator[list[WorkerProcess]]:
    """Start worker processes with ``workers.append(...)``; all stopped after the test."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


@pytest.fixture
async def node(redis_url: str, tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server whose computer moves go to the fleet (1 s a move)."""
    config = ServerConfig(port=0, db_path=str(tmp_path / "q.db"), redis_url=redis_url,
                          computer_move_time=1.0)
    running = await start_server(config)
    yield running
    await running.stop()


async def _player(node: RunningServer, name: str) -> Client:
    client = Client(await websockets.connect(node.ws_url))
    await client.hello(name)
    return client


async def _computer_game(client: Client, level: int, colour: str) -> str:
    await client.send(t="play_ai", level=level, colour=colour)
    return str((await client.expect("game"))["id"])


async def _holder(redis_url: str, spec: str, jobs: int = 1) -> str:
    """The worker that holds the ``jobs`` pending jobs for ``spec``."""
    client = await open_redis(redis_url)
    try:
        async def holder() -> str | None:
            pending = await client.xpending_range(Keys("qubic:").jobs(spec), GROUP, "-", "+", 10)
            holders = {entry["consumer"].decode() for entry in pending}  # type: ignore[union-attr]
            return str(holders.pop()) if len(pending) == jobs and len(holders) == 1 else None

        return await eventually(holder, f"one worker took the {jobs} jobs")
    finally:
        await client.aclose()


@pytest.fixture
async def fleet(redis_url: str) -> AsyncIterator[Fleet]:
    """The node's side on its own, asking for moves (no server around it)."""
    fleet = Fleet(await open_redis(redis_url), poll=0.2)
    await fleet.start(wait=False)
    yield fleet
    await fleet.close()


def _level8(n: int) -> ComputerJob:
    """A level-8 move of 1 s in an opening of its own, searched: X opened on an edge (cells 1
    and 2), off the proof's tree, where the master as X plays at once."""
    return ComputerJob("4x4x4", (n, 63 - n), "level8", seed=n, time=1.0)


@contextlib.asynccontextmanager
async def _worker_here(redis_url: str, levels: list[str]) -> AsyncIterator[FleetWorker]:
    """A ``FleetWorker`` running in this process (its figures at hand), searching in a real
    pool of 1 process; stopped, with its pool, at the end."""
    client = await open_redis(redis_url)
    worker = FleetWorker(client, ComputerPool(1), levels=levels)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        yield worker
    finally:
        stop.set()
        await running
        await worker.pool.close()
        await client.aclose()


async def _settled(worker: FleetWorker) -> None:
    """Wait until ``worker`` has answered or dropped a job (its pool warms up first)."""
    await eventually(lambda: worker.dropped or worker.answered,
                     "the worker answered or dropped the job", every=0.1)


async def _counted(worker: FleetWorker, answered: int, dropped: int = 0,
                   reclaimed: int = 0) -> None:
    """Assert the worker's counts once they settle: it counts an answer when Redis has taken
    it, and the node, reading that answer, may go on before the worker's next turn."""
    want = (answered, dropped, reclaimed)
    await eventually(lambda: (worker.answered, worker.dropped, worker.reclaimed) == want,
                     f"the worker counted {want}", every=0.1)


def test_levels_parse() -> None:
    assert parse_levels("1-3,8") == ("level1", "level2", "level3", "level8")
    assert parse_levels("5") == ("level5",)
    for bad in ("0-3", "9", "3-1", "a"):
        with pytest.raises(ValueError):
            parse_levels(bad)


async def test_the_computer_plays_through_a_worker_process(
    node: RunningServer, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    workers.append(await WorkerProcess(redis_url, tmp_path / "w1.log").ready())
    await asyncio.wait_for(node.pool.wait_ready(), 10)  # the node has seen its heartbeat
    ann = await _player(node, "ann")
    game = await _computer_game(ann, level=2, colour="x")
    await ann.send(t="move", game=game, cell=0, ply=0)
    assert (await ann.expect("move", game=game, ply=2))["side"] == "o"
    await ann.send(t="move", game=game, cell=_free(ann, game), ply=2)
    assert (await ann.expect("move", game=game, ply=4))["side"] == "o"
    assert node.pool.jobs_done == 2
    metrics = await _get(node, "/metrics")
    assert "qubic_fleet_workers_alive 1" in metrics and "qubic_fleet_queue_depth 0" in metrics
    assert 'qubic_ai_latency_seconds{quantile="0.99"}' in metrics
    assert not [m for m in ann.seen if m["t"] == "engine"]  # a worker was there all along


def _played(client: Client, game: str) -> list[int]:
    return [m["cell"] for m in client.seen if m["t"] == "move" and m["game"] == game]


def _free(client: Client, game: str) -> int:
    return next(c for c in range(64) if c not in _played(client, game))


async def test_with_no_worker_the_player_is_told_and_the_game_goes_on_when_one_comes(
    node: RunningServer, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    ann = await _player(node, "ann")
    game = await _computer_game(ann, level=1, colour="o")  # the computer moves first
    waiting = await ann.expect("engine", game=game, state="unavailable")
    assert waiting["message"] == NO_WORKER
    health = await _health(node)
    assert health["ai_ready"] is False
    workers.append(await WorkerProcess(redis_url, tmp_path / "w1.log").ready())
    await ann.expect("engine", game=game, state="ready")
    move = await ann.expect("move", game=game, ply=1)
    assert move["side"] == "x"


async def _get(node: RunningServer, path: str) -> str:
    import aiohttp

    async with aiohttp.ClientSession() as http, http.get(node.http_url + path) as reply:
        return await reply.text()


async def _health(node: RunningServer) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(await _get(node, "/health"))
    return data


async def _two_workers_one_searching(
    node: RunningServer, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> tuple[Client, str, WorkerProcess]:
    """Two workers, and a computer game whose second move (level 8 as O, 1 s) one of them is
    searching: the player, the game and that worker. (As X the computer plays the proof's
    moves at once, and O's book answers X's first move: its second is searched.)"""
    for n in (1, 2):
        workers.append(await WorkerProcess(redis_url, tmp_path / f"w{n}.log").ready())
    ann = await _player(node, "ann")
    game = await _computer_game(ann, level=8, colour="x")
    await ann.request(t="move", game=game, cell="1b1", ply=0)  # an edge: off the proof
    first = await ann.expect("move", game=game, ply=2)
    second = next(c for c in ("3c3", "2b2", "2c2", "3b2") if c != first["notation"])
    await ann.request(t="move", game=game, cell=second, ply=2)
    await ann.expect("ai_thinking", game=game, ply=3)
    holder = await _holder(redis_url, "level8")
    return ann, game, next(w for w in workers if w.name == holder)


async def test_a_worker_killed_mid_search_is_replaced_and_the_move_still_comes(
    node: RunningServer, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    ann, game, doomed = await _two_workers_one_searching(node, workers, redis_url, tmp_path)
    doomed.signal(signal.SIGKILL)  # mid-search: the machine is gone
    move = await ann.expect("move", game=game, ply=4)  # how soon: bench/fleet.py
    assert move["side"] == "o"
    survivor = next(w for w in workers if w is not doomed)
    assert "took over job" in survivor.log.read_text()


async def test_a_slow_worker_is_passed_over_and_its_late_answer_dropped(
    node: RunningServer, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    ann, game, slow = await _two_workers_one_searching(node, workers, redis_url, tmp_path)
    slow.signal(signal.SIGSTOP)  # hangs, as a swapping or overloaded machine would
    move = await ann.expect("move", game=game, ply=4)  # from the other worker
    slow.signal(signal.SIGCONT)  # it wakes up and answers too: the node drops that
    await eventually(lambda: node.pool.stale_answers,  # type: ignore[attr-defined]
                     "the node dropped the late answer")
    assert node.pool.stale_answers == 1  # type: ignore[attr-defined]
    await ann.quiet(1.0)
    assert [m["ply"] for m in ann.seen if m["t"] == "move"] == [1, 2, 3, 4]  # played once
    assert move["side"] == "o"


async def test_a_job_for_a_game_resigned_while_it_waited_is_dropped_unplayed(
    node: RunningServer, redis_url: str
) -> None:
    client = await open_redis(redis_url)
    keys = Keys("qubic:")
    # a worker whose machine has just gone: its last heartbeat still counts, so the node
    # queues the job, and nobody takes it
    await client.zadd(keys.workers, {"gone": time.time()})
    await client.hset(keys.worker("gone"), mapping={"processes": 1, "levels": "level3"})
    await eventually(lambda: node.pool.ready, "the node sees a worker")
    ann = await _player(node, "ann")
    game = await _computer_game(ann, level=3, colour="o")
    await ann.expect("ai_thinking", game=game, ply=0)
    stream = keys.jobs("level3")
    await eventually(lambda: client.xlen(stream), "the job is queued")
    await ann.request(t="resign", game=game)
    await ann.expect("end", game=game)

    try:
        async with _worker_here(redis_url, ["level3"]) as worker:
            await _settled(worker)
            assert (worker.dropped, worker.answered) == (1, 0)
            assert await client.xlen(stream) == 0  # taken off the stream, not left to others
    finally:
        await client.aclose()


async def test_a_worker_killed_holding_several_jobs_has_them_all_taken_over(
    fleet: Fleet, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    workers.append(await WorkerProcess(redis_url, tmp_path / "w1.log", processes=2).ready())
    await asyncio.wait_for(fleet.wait_ready(), 10)
    asking = [asyncio.create_task(fleet.decide(_level8(n))) for n in (1, 2)]
    assert await _holder(redis_url, "level8", jobs=2) == workers[0].name
    workers[0].signal(signal.SIGKILL)  # both searches die with it
    workers.append(await WorkerProcess(redis_url, tmp_path / "w2.log").ready())
    decisions = await asyncio.gather(*asking)
    assert [d.move in (n, 63 - n) for n, d in zip((1, 2), decisions, strict=True)] == [False] * 2
    assert workers[1].log.read_text().count("took over job") == 2


async def test_a_worker_stopped_mid_search_gives_its_job_back_at_once(
    fleet: Fleet, workers: list[WorkerProcess], redis_url: str, tmp_path: Path
) -> None:
    workers.append(await WorkerProcess(redis_url, tmp_path / "w1.log").ready())
    await asyncio.wait_for(fleet.wait_ready(), 10)
    asking = asyncio.create_task(fleet.decide(_level8(2)))
    await _holder(redis_url, "level8")
    workers[0].stop()  # SIGTERM, as Ctrl-C or a host's shutdown
    assert "gave back 1 jobs" in workers[0].log.read_text()
    client = await open_redis(redis_url)
    try:  # a new entry nobody has read, not one pending on the stopped worker
        stream = Keys("qubic:").jobs("level8")
        assert await client.xlen(stream) == 1
        assert (await client.xpending(stream, GROUP))["pending"] == 0
    finally:
        await client.aclose()
    workers.append(await WorkerProcess(redis_url, tmp_path / "w2.log").ready())
    assert (await asking).move not in (2, 61)
    assert "took over" not in workers[1].log.read_text()  # it was new, not reclaimed


async def test_one_worker_answers_jobs_queued_on_every_level(
    fleet: Fleet, redis_url: str
) -> None:
    specs = ["level1", "level2", "level5"]
    asking = [asyncio.create_task(fleet.decide(ComputerJob("4x4x4", (0,), spec, time=0.2)))
              for spec in specs]
    async with _worker_here(redis_url, specs) as worker:
        decisions = await asyncio.wait_for(asyncio.gather(*asking), 120)
        assert all(d.move != 0 for d in decisions)
        await _counted(worker, answered=3)


async def test_a_job_pending_on_a_dead_worker_whose_game_ended_is_dropped_not_taken_over(
    redis_url: str,
) -> None:
    client = await open_redis(redis_url)
    keys = Keys("qubic:")
    stream = keys.jobs("level4")
    job = Job("ended", "some-node", "4x4x4", (0,), "level4", 0, 0.1, None, time.time() + 60)
    await client.xgroup_create(stream, GROUP, id="0", mkstream=True)
    await client.xadd(stream, {"id": job.id, "job": msgspec.json.encode(job)})
    await client.xreadgroup(GROUP, "dead", {stream: ">"}, count=1)  # then it died
    await client.set(keys.cancel(job.id), b"1")  # and the game ended
    try:
        async with _worker_here(redis_url, ["level4"]) as worker:
            await _settled(worker)
            assert (worker.dropped, worker.answered, worker.reclaimed) == (1, 0, 0)
            assert await client.xlen(stream) == 0
            assert (await client.xpending(stream, GROUP))["pending"] == 0
    finally:
        await client.aclose()


async def test_a_worker_and_a_node_go_on_after_redis_restarts_empty(
    redis_factory: Callable[[], RedisServer],
) -> None:
    server = redis_factory()
    fleet = Fleet(await open_redis(server.url), poll=0.2)
    job = ComputerJob("4x4x4", (0,), "level2", time=0.2)

    async def asking() -> Decision:  # as the hub does: again while Redis is away
        while True:
            with contextlib.suppress(ComputerError):
                return await fleet.decide(job)
            await asyncio.sleep(0.1)

    try:
        async with _worker_here(server.url, ["level2"]) as worker:
            await fleet.start(wait=True)
            assert (await fleet.decide(job)).move != 0
            server.restart()  # no persistence: the streams, the group, the heartbeats are gone
            assert (await asyncio.wait_for(asking(), 60)).move != 0
            await _counted(worker, answered=2)
    finally:
        await fleet.close()


async def test_a_job_cancelled_as_an_idle_worker_reads_it_is_dropped_unanswered(
    redis_url: str,
) -> None:
    client = await open_redis(redis_url)
    keys = Keys("qubic:")
    try:
        async with _worker_here(redis_url, ["level2"]) as worker:
            await eventually(lambda: client.zscore(keys.workers, worker.name),
                             "the worker is ready", every=0.1)

            async def reading() -> bool:  # its XREADGROUP waits on the jobs' stream
                return any(c.get("cmd") == "xreadgroup" for c in await client.client_list())

            await eventually(reading, "the worker waits for jobs")
            job = Job("gone", "some-node", "4x4x4", (0,), "level2", 0, 0.2, None,
                      time.time() + 60)
            await client.set(keys.cancel(job.id), b"1")  # the game ended as it was queued
            await client.xadd(keys.jobs("level2"),
                              {"id": job.id, "job": msgspec.json.encode(job)})
            await _settled(worker)
            assert (worker.dropped, worker.answered) == (1, 0)
            assert await client.xlen(keys.answers("some-node")) == 0
            assert await client.xlen(keys.jobs("level2")) == 0
    finally:
        await client.aclose()
