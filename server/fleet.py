"""Computer moves on an engine fleet: jobs on Redis streams, answered by ``qubic worker``s.

As lichess spreads analysis over its fishnet workers, a node does not search: it puts each
computer move as a job on a Redis stream, and ``qubic worker`` processes on any machine pull
jobs through a consumer group (they need no open port), search with the same ``AIPool`` the
embedded server uses, and put the answer on the asking node's own answer stream.

Redis keys (under a prefix, ``qubic:`` by default)::

    fleet:jobs:<spec>       a stream per player spec (level1 … level8); group "workers"
    fleet:answers:<node>    one node's answers, read only by that node
    fleet:workers           sorted set: worker id -> last heartbeat (unix seconds)
    fleet:worker:<id>       hash: processes, levels, host, pid (expires with the worker)
    fleet:cancel:<job>      set when the asking node no longer wants the answer

What holds:
- A job carries everything the search needs (variant, moves, spec, seed, time, depth) and
  when it expires. A job read by a worker that then dies stays pending in the group; once it
  has been pending past its own time plus ``RECLAIM_GRACE`` another worker claims it.
- Each job is answered once: the node keeps the first answer for a job it still waits for
  and drops any other (a presumed-dead worker's late answer). The hub drops an answer for a
  position that has moved on, as it does for the local pool.
- A job whose game ended or was resigned is cancelled: its worker stops searching, and a
  worker that reads it later drops it unplayed.
- With no live worker, ``ready`` is false and the hub tells a computer game's players so;
  jobs wait in the stream and go on when a worker joins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterable
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from engine.players import Decision
from server.ai_pool import AIError, AIJob, AIPool
from server.bus import BusError, connect
from server.protocol import EngineState

log = logging.getLogger(__name__)

GROUP = "workers"
HEARTBEAT = 2.0  # seconds between a worker's heartbeats
ALIVE = 10.0  # seconds since its last heartbeat for a worker to count as alive
RECLAIM_GRACE = 0.5  # seconds past a job's time before another worker may claim it
POLL = 0.25  # seconds a worker waits for a new job before it looks for stale ones again
EXPIRES = 120.0  # seconds a job stays worth answering, past which it is dropped unplayed
STREAM_MAX = 10_000  # entries kept in a job or answer stream (approximate trim)
LEVELS = tuple(f"level{n}" for n in range(1, 9))
NO_WORKER = "no computer player is connected; the game goes on when one is"


class Job(msgspec.Struct, frozen=True):
    """A job on the wire: who asks, the search, and until when an answer is wanted."""

    id: str
    node: str
    variant: str
    moves: tuple[int, ...]
    spec: str
    seed: int
    time: float | None
    depth: int | None
    expires: float  # unix seconds

    def ai_job(self) -> AIJob:
        return AIJob(self.variant, self.moves, self.spec, self.seed, self.time, self.depth)


class Answer(msgspec.Struct, frozen=True):
    job: str
    worker: str
    decision: Decision | None = None
    error: str | None = None


_encode = msgspec.json.encode
_job_decoder = msgspec.json.Decoder(Job)
_answer_decoder = msgspec.json.Decoder(Answer)


async def open_redis(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """``server.bus.connect``, raising ``AIError`` (the computer players' error) instead."""
    try:
        return await connect(url, timeout)
    except BusError as error:
        raise AIError(str(error)) from None


class Keys:
    """The fleet's Redis key names under one prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.workers = f"{prefix}fleet:workers"

    def jobs(self, spec: str) -> str:
        return f"{self.prefix}fleet:jobs:{spec}"

    def answers(self, node: str) -> str:
        return f"{self.prefix}fleet:answers:{node}"

    def worker(self, worker: str) -> str:
        return f"{self.prefix}fleet:worker:{worker}"

    def cancel(self, job: str) -> str:
        return f"{self.prefix}fleet:cancel:{job}"


async def ensure_group(client: Any, stream: str) -> None:
    with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
        await client.xgroup_create(stream, GROUP, id="0", mkstream=True)


# -- the node's side -----------------------------------------------------------------------


class Fleet:
    """Where a node gets its computer moves when it has a fleet: the same interface as the
    local ``AIPool`` (``ready``, ``decide``, the figures for /metrics)."""

    waiting_state: EngineState = "unavailable"
    waiting_message = NO_WORKER

    def __init__(self, client: aioredis.Redis, *, prefix: str = "qubic:",
                 node: str | None = None, poll: float = 1.0) -> None:
        self.client: Any = client  # redis-py's stubs type replies loosely
        self.keys = Keys(prefix)
        self.node = node or uuid.uuid4().hex[:12]
        self.poll = poll
        self._answers = self.keys.answers(self.node)
        self._pending: dict[str, asyncio.Future[Answer]] = {}
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
            raise AIError("the fleet is closed")
        await self._has_workers.wait()

    async def decide(self, job: AIJob) -> Decision:
        """Put ``job`` on its stream and wait for its answer. Cancelling the awaiting task
        cancels the job. Raises ``AIError`` if Redis cannot be reached or the fleet gives
        no answer in time (the hub then asks again)."""
        if self._closed:
            raise AIError("the fleet is closed")
        budget = job.time or 30.0
        wire = Job(uuid.uuid4().hex, self.node, job.variant, job.moves, job.spec, job.seed,
                   job.time, job.depth, time.time() + EXPIRES)
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[wire.id] = answer
        started = time.perf_counter()
        try:
            try:
                await self.client.xadd(self.keys.jobs(job.spec), {"job": _encode(wire)},
                                       maxlen=STREAM_MAX, approximate=True)
            except (RedisError, OSError) as exc:
                raise AIError(f"cannot queue the computer's move: {exc}") from None
            # a worker has the job's time; one that dies is replaced after RECLAIM_GRACE
            # more; past twice that (or with no worker at all) the hub is told and retries
            try:
                result = await asyncio.wait_for(asyncio.shield(answer),
                                                2 * (budget + RECLAIM_GRACE) + 5 * HEARTBEAT)
            except TimeoutError:
                self.jobs_failed += 1
                await self._cancel(wire.id)
                raise AIError("no computer player answered in time") from None
        except asyncio.CancelledError:
            await self._cancel(wire.id)
            raise
        finally:
            self._pending.pop(wire.id, None)
        if result.decision is None:
            self.jobs_failed += 1
            raise AIError(result.error or "the computer player failed")
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
        backoff = 0.1
        while not self._closed:  # not only cancellation: redis-py may swallow it mid-command
            try:
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
                    last = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
                    self._take(_answer_decoder.decode(fields[b"answer"]))
                if entries:
                    with contextlib.suppress(RedisError, OSError):
                        await self.client.xtrim(self._answers, minid=last)

    def _take(self, answer: Answer) -> None:
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
        processes = 0
        for worker in alive:
            name = worker.decode()
            info = await self.client.hget(self.keys.worker(name), "processes")
            processes += int(info or 0)
        self.workers_alive, self.workers = len(alive), processes
        depth = 0
        for spec in LEVELS:
            depth += await _undelivered(self.client, self.keys.jobs(spec))
        self.queue_depth = depth
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
                waiting.set_exception(AIError("the fleet is closed"))
        with contextlib.suppress(RedisError, OSError):
            await self.client.delete(self._answers)
        await self.client.aclose()


async def _undelivered(client: Any, stream: str) -> int:
    """Entries of ``stream`` no worker has read yet (workers delete what they answered)."""
    length = await client.xlen(stream)
    pending = await client.xpending(stream, GROUP)
    return max(0, int(length) - int(pending["pending"]))


# -- the worker's side ---------------------------------------------------------------------


def parse_levels(text: str) -> tuple[str, ...]:
    """``"1-8"``, ``"3,5"`` or ``"1-3,8"`` as player specs; raises ``ValueError``."""
    levels: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        first, last = int(low), int(high or low)
        if not 1 <= first <= last <= 8:
            raise ValueError(f"levels are 1-8, not {part.strip()!r}")
        levels.update(range(first, last + 1))
    return tuple(f"level{n}" for n in sorted(levels))


class FleetWorker:
    """``qubic worker``: takes jobs for its levels, as many at once as its pool has
    processes, and answers them; see the module docstring."""

    def __init__(self, client: aioredis.Redis, pool: AIPool, *, levels: Iterable[str] = LEVELS,
                 prefix: str = "qubic:", name: str | None = None, block: float = POLL) -> None:
        self.client: Any = client  # redis-py's stubs type replies loosely
        self.pool = pool
        self.levels = tuple(levels)
        self.keys = Keys(prefix)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.block = block
        self._streams = [self.keys.jobs(spec) for spec in self.levels]
        self._stopping = False
        self._reclaimed_at = 0.0  # when stale jobs were last looked for (time.monotonic)
        self._slots = asyncio.Semaphore(pool.workers)
        self._jobs: set[asyncio.Task[None]] = set()
        # figures
        self.answered = 0
        self.dropped = 0  # cancelled or expired before they were played
        self.reclaimed = 0  # taken over from a worker that died or hung

    async def run(self, stop: asyncio.Event) -> None:
        """Warm the pool, announce this worker, and take jobs until ``stop`` is set."""
        await self.pool.start(wait=True)  # the kernels are compiled before the first job
        for stream in self._streams:
            await ensure_group(self.client, stream)
        heartbeat = asyncio.create_task(self._heartbeat(), name="worker-heartbeat")
        log.info("worker %s ready: %d processes, %s", self.name, self.pool.workers,
                 ",".join(self.levels))
        try:
            while not stop.is_set():
                await self._slots.acquire()
                try:
                    entry = await self._next_job()
                except (RedisError, OSError) as exc:
                    self._slots.release()
                    log.warning("worker: Redis failed (%s); retrying", exc)
                    await asyncio.sleep(1.0)
                    continue
                if entry is None:
                    self._slots.release()
                    continue
                task = asyncio.create_task(self._answer(*entry))
                self._jobs.add(task)
                task.add_done_callback(self._jobs.discard)
        finally:
            self._stopping = True
            heartbeat.cancel()
            for task in list(self._jobs):
                task.cancel()
            await asyncio.gather(heartbeat, *self._jobs, return_exceptions=True)
            with contextlib.suppress(RedisError, OSError):
                await self.client.zrem(self.keys.workers, self.name)
                await self.client.delete(self.keys.worker(self.name))

    async def _heartbeat(self) -> None:
        info = {"processes": self.pool.workers, "levels": ",".join(self.levels),
                "host": socket.gethostname(), "pid": os.getpid()}
        while not self._stopping:  # not only cancellation: redis-py may swallow it
            with contextlib.suppress(RedisError, OSError):
                async with self.client.pipeline(transaction=False) as pipe:
                    pipe.zadd(self.keys.workers, {self.name: time.time()})
                    pipe.hset(self.keys.worker(self.name), mapping=info)
                    pipe.expire(self.keys.worker(self.name), int(ALIVE * 2))
                    pipe.zremrangebyscore(self.keys.workers, "-inf", time.time() - 10 * ALIVE)
                    await pipe.execute()
            await asyncio.sleep(HEARTBEAT)

    async def _next_job(self) -> tuple[str, str, Job] | None:
        """A job pending past its time on a dead worker, else a new one (waiting up to
        ``block`` seconds); None when there is none."""
        if time.monotonic() - self._reclaimed_at >= self.block:  # a scan costs a round trip
            self._reclaimed_at = time.monotonic()                # per level: not every job
            reclaimed = await self._reclaim()
            if reclaimed is not None:
                return reclaimed
        reply = await self.client.xreadgroup(
            GROUP, self.name, {stream: ">" for stream in self._streams}, count=1,
            block=int(self.block * 1000),
        )
        for stream, entries in reply or ():
            for entry_id, fields in entries:
                return _text(stream), _text(entry_id), _job_decoder.decode(fields[b"job"])
        return None

    async def _reclaim(self) -> tuple[str, str, Job] | None:
        for stream in self._streams:
            stale = await self.client.xpending_range(
                stream, GROUP, min="-", max="+", count=10, idle=int(RECLAIM_GRACE * 1000)
            )
            for entry in stale:
                entry_id = _text(entry["message_id"])
                found = await self.client.xrange(stream, entry_id, entry_id)
                if not found:
                    await self.client.xack(stream, GROUP, entry_id)
                    continue
                job = _job_decoder.decode(found[0][1][b"job"])
                min_idle = int(((job.time or 30.0) + RECLAIM_GRACE) * 1000)
                if entry["time_since_delivered"] < min_idle:
                    continue
                claimed = await self.client.xclaim(stream, GROUP, self.name, min_idle,
                                                   [entry_id])
                if claimed:  # no other worker got there first
                    self.reclaimed += 1
                    log.warning("worker: took over job %s from %s", job.id,
                                _text(entry["consumer"]))
                    return stream, entry_id, job
        return None

    async def _answer(self, stream: str, entry_id: str, job: Job) -> None:
        settled = False  # answered, or dropped on purpose: either way done with
        try:
            if job.expires < time.time() or await self.client.exists(self.keys.cancel(job.id)):
                self.dropped += 1
                settled = True
                return
            search = asyncio.create_task(self.pool.decide(job.ai_job()))
            cancelled = asyncio.Event()  # set when the asking node cancels the job
            watch = asyncio.create_task(self._watch_cancel(job, search, cancelled))
            try:
                decision = await search
                answer = Answer(job.id, self.name, decision=decision)
            except asyncio.CancelledError:
                if not cancelled.is_set():
                    raise  # this worker is stopping: another one takes the job over
                self.dropped += 1
                settled = True
                return
            except AIError as error:
                answer = Answer(job.id, self.name, error=str(error))
            finally:
                watch.cancel()
            await self.client.xadd(self.keys.answers(job.node), {"answer": _encode(answer)},
                                   maxlen=STREAM_MAX, approximate=True)
            self.answered += 1
            settled = True
        except (RedisError, OSError) as exc:
            log.warning("worker: could not answer job %s (%s)", job.id, exc)
        finally:
            self._slots.release()
            if settled:
                with contextlib.suppress(RedisError, OSError):
                    async with self.client.pipeline(transaction=False) as pipe:
                        pipe.xack(stream, GROUP, entry_id)
                        pipe.xdel(stream, entry_id)
                        await pipe.execute()

    async def _watch_cancel(self, job: Job, search: asyncio.Task[Decision],
                            cancelled: asyncio.Event) -> None:
        while not search.done():
            await asyncio.sleep(0.1)
            with contextlib.suppress(RedisError, OSError):
                if await self.client.exists(self.keys.cancel(job.id)):
                    cancelled.set()
                    search.cancel()
                    return


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
