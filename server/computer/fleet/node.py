"""The engine fleet's node side: ``Fleet``, the hub's ``ComputerMoves`` on a node of a
cluster. It queues each computer move as a job on its level's stream, reads the answers on the
node's own answer stream, keeps the first answer for a job it still waits for, cancels what
it no longer wants, and watches the workers' heartbeats for ``ready`` and /metrics. See
``server.computer.fleet`` for the keys and what holds."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from engine.players import Decision
from server.computer.fleet.jobs import (
    ALIVE,
    EXPIRES,
    GROUP,
    HEARTBEAT,
    LEVELS,
    NO_WORKER,
    RECLAIM_GRACE,
    STREAM_MAX,
    Job,
    JobAnswer,
    Keys,
    answer_decoder,
    as_text,
    encode,
    ensure_group,
)
from server.computer.moves import ComputerError, ComputerJob
from server.protocol import EngineState

log = logging.getLogger(__name__)


class Fleet:
    """Where a node gets its computer moves when it has a fleet: the same interface as the
    local ``ComputerPool`` (``ready``, ``decide``, the figures for /metrics)."""

    waiting_state: EngineState = "unavailable"
    waiting_message = NO_WORKER

    def __init__(self, client: aioredis.Redis, *, prefix: str = "qubic:",
                 node: str | None = None, poll: float = 1.0) -> None:
        self.client: Any = client  # redis-py's stubs type replies loosely
        self.keys = Keys(prefix)
        self.node = node or uuid.uuid4().hex[:12]
        self.poll = poll
        self._answers = self.keys.answers(self.node)
        self._pending: dict[str, asyncio.Future[JobAnswer]] = {}
        self._has_workers = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        # figures for /metrics
        self.workers = 0  # live worker processes in the fleet
        self.workers_alive = 0  # live ``qubic worker``s
        self.queue_depth = 0  # jobs in the streams not yet taken by a worker
        self.jobs_done = 0
        self.jobs_failed = 0
        self.stale_answers = 0  # answers for a job nobody waits for any more
        self.rebuilds = 0
        self.last_latency = 0.0
        self.latencies: list[float] = []

    @property
    def ready(self) -> bool:
        return self._has_workers.is_set()

    @property
    def progress(self) -> float:
        return 1.0 if self.ready else 0.0

    @property
    def queued(self) -> int:
        return sum(not f.done() for f in self._pending.values())

    @property
    def busy(self) -> int:
        return self.queued

    def figures(self) -> dict[str, float]:
        return {"fleet_workers_alive": self.workers_alive, "fleet_queue_depth": self.queue_depth,
                "fleet_stale_answers": self.stale_answers, "fleet_jobs_failed": self.jobs_failed}

    async def start(self, *, wait: bool = True) -> None:
        for spec in LEVELS:
            await ensure_group(self.client, self.keys.jobs(spec))
        await self._look_at_workers()
        self._tasks = [asyncio.create_task(self._read_answers(), name="fleet-answers"),
                       asyncio.create_task(self._watch_workers(), name="fleet-workers")]
        if wait:
            await self.wait_ready()

    async def wait_ready(self) -> None:
        if self._closed:
            raise ComputerError("the fleet is closed")
        await self._has_workers.wait()

    async def quick(self, job: ComputerJob) -> Decision | None:
        """None: the fleet's workers answer once one is connected (each warms its own pool
        with ``wait=True``, so it has no quick path)."""
        return None

    async def decide(self, job: ComputerJob) -> Decision:
        """Put ``job`` on its stream and wait for its answer. Cancelling the awaiting task
        cancels the job. Raises ``ComputerError`` if Redis cannot be reached or the fleet gives
        no answer in time (the hub then asks again)."""
        if self._closed:
            raise ComputerError("the fleet is closed")
        budget = job.time or 30.0
        wire = Job(uuid.uuid4().hex, self.node, job.variant, job.moves, job.spec, job.seed,
                   job.time, job.depth, time.time() + EXPIRES)
        answer: asyncio.Future[JobAnswer] = asyncio.get_running_loop().create_future()
        self._pending[wire.id] = answer
        started = time.perf_counter()
        try:
            try:
                await self.client.xadd(self.keys.jobs(job.spec),
                                       {"id": wire.id, "job": encode(wire)},
                                       maxlen=STREAM_MAX, approximate=True)
            except (RedisError, OSError) as exc:
                raise ComputerError(f"cannot queue the computer's move: {exc}") from None
            # a worker has the job's time; one that dies is replaced after RECLAIM_GRACE
            # more; past twice that (or with no worker at all) the hub is told and retries
            try:
                async with asyncio.timeout(2 * (budget + RECLAIM_GRACE) + 5 * HEARTBEAT):
                    result = await answer
            except TimeoutError:
                self.jobs_failed += 1
                await self._cancel(wire.id)
                raise ComputerError("no computer player answered in time") from None
        except asyncio.CancelledError:
            await self._cancel(wire.id)
            raise
        finally:
            self._pending.pop(wire.id, None)
        if result.decision is None:
            self.jobs_failed += 1
            raise ComputerError(result.error or "the computer player failed")
        self.jobs_done += 1
        self.last_latency = time.perf_counter() - started
        self.latencies.append(self.last_latency)
        del self.latencies[:-1000]
        return result.decision

    async def _cancel(self, job: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.client.set(self.keys.cancel(job), b"1", ex=int(EXPIRES))

    async def _read_answers(self) -> None:
        last = "0-0"
        trimmed = time.monotonic()
        backoff = 0.1
        while not self._closed:  # not only cancellation: redis-py may swallow it mid-command
            try:
                if time.monotonic() - trimmed >= self.poll:  # what was read: not every time
                    trimmed = time.monotonic()
                    await self.client.xtrim(self._answers, minid=last)
                reply = await self.client.xread({self._answers: last}, count=100,
                                                block=int(self.poll * 1000))
                backoff = 0.1
            except (RedisError, OSError) as exc:
                log.warning("fleet: reading answers failed (%s); retrying", exc)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)
                continue
            for _stream, entries in reply or ():
                for entry_id, fields in entries:
                    last = as_text(entry_id)
                    self._take(answer_decoder.decode(fields[b"answer"]))

    def _take(self, answer: JobAnswer) -> None:
        waiting = self._pending.get(answer.job)
        if waiting is None or waiting.done():
            self.stale_answers += 1
            log.info("fleet: dropped an answer nobody waits for (job %s from %s)",
                     answer.job, answer.worker)
            return
        waiting.set_result(answer)

    async def _watch_workers(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.poll)
            with contextlib.suppress(RedisError, OSError):
                await self._look_at_workers()

    async def _look_at_workers(self) -> None:
        now = time.time()
        alive = await self.client.zrangebyscore(self.keys.workers, now - ALIVE, "+inf")
        async with self.client.pipeline(transaction=False) as pipe:
            for worker in alive:
                pipe.hget(self.keys.worker(as_text(worker)), "processes")
            for spec in LEVELS:
                pipe.xlen(self.keys.jobs(spec))
                pipe.xpending(self.keys.jobs(spec), GROUP)
            replies = await pipe.execute()
        processes, streams = replies[:len(alive)], replies[len(alive):]
        self.workers_alive, self.workers = len(alive), sum(int(n or 0) for n in processes)
        # what no worker has read yet (workers delete the jobs they are done with)
        self.queue_depth = sum(max(0, int(length) - int(pending["pending"]))
                               for length, pending in zip(streams[::2], streams[1::2], strict=True))
        if alive:
            self._has_workers.set()
        else:
            self._has_workers.clear()

    async def close(self) -> None:
        self._closed = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for waiting in self._pending.values():
            if not waiting.done():
                waiting.set_exception(ComputerError("the fleet is closed"))
        with contextlib.suppress(RedisError, OSError):
            await self.client.delete(self._answers)
        await self.client.aclose()
