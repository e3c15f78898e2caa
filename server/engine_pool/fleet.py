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
  worker that reads it later (or would take it over) drops it unplayed.
- A busy worker makes one round trip between two searches: a Lua script posts the answer,
  acknowledges and deletes the job, and reads the next one (``SETTLE_AND_TAKE``). A worker
  that stops gives the jobs it holds back to their streams, for another to take at once.
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
from server.engine_pool.local import AIError, AIJob, AIPool
from server.errors import BusError
from server.protocol import EngineState
from server.redis_io.clients import connect

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
    """``server.redis_io.clients.connect``, raising ``AIError`` (the computer players' error) instead."""
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
                await self.client.xadd(self.keys.jobs(job.spec),
                                       {"id": wire.id, "job": _encode(wire)},
                                       maxlen=STREAM_MAX, approximate=True)
            except (RedisError, OSError) as exc:
                raise AIError(f"cannot queue the computer's move: {exc}") from None
            # a worker has the job's time; one that dies is replaced after RECLAIM_GRACE
            # more; past twice that (or with no worker at all) the hub is told and retries
            try:
                async with asyncio.timeout(2 * (budget + RECLAIM_GRACE) + 5 * HEARTBEAT):
                    result = await answer
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
                    last = _text(entry_id)
                    self._take(_answer_decoder.decode(fields[b"answer"]))

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
        async with self.client.pipeline(transaction=False) as pipe:
            for worker in alive:
                pipe.hget(self.keys.worker(_text(worker)), "processes")
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
                waiting.set_exception(AIError("the fleet is closed"))
        with contextlib.suppress(RedisError, OSError):
            await self.client.delete(self._answers)
        await self.client.aclose()


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


# One round trip for a worker between two searches, as fishnet answers a job and gets the next
# in one request: post the answers of the jobs it is done with (acknowledged and deleted), and
# take up to ARGV[3] new jobs, trying the job streams (KEYS) in order. A job whose cancel key
# is set is dropped there and then (acknowledged and deleted, not returned). The answer
# streams and cancel keys are not in KEYS: the fleet runs on one Redis, not a Redis Cluster.
# ARGV: group, consumer, how many to take, cancel key prefix, answer stream length, then four
# per job settled: its stream, its entry id, the answer stream, the answer ("" for none).
# Returns {jobs dropped, {{stream, entry id, job}, ...}}.
SETTLE_AND_TAKE = """
local group, consumer, want, prefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
for i = 6, #ARGV, 4 do
  if ARGV[i + 3] ~= '' then
    redis.call('XADD', ARGV[i + 2], 'MAXLEN', '~', ARGV[5], '*', 'answer', ARGV[i + 3])
  end
  redis.call('XACK', ARGV[i], group, ARGV[i + 1])
  redis.call('XDEL', ARGV[i], ARGV[i + 1])
end
local taken, dropped = {}, 0
for _, stream in ipairs(KEYS) do
  while want > 0 do
    local reply = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', want,
                             'STREAMS', stream, '>')
    if not reply then break end
    for _, entry in ipairs(reply[1][2]) do
      local fields, job, id = entry[2], nil, nil
      for f = 1, #fields, 2 do
        if fields[f] == 'job' then job = fields[f + 1] elseif fields[f] == 'id' then
          id = fields[f + 1] end
      end
      if id and redis.call('EXISTS', prefix .. id) == 1 then
        redis.call('XACK', stream, group, entry[1])
        redis.call('XDEL', stream, entry[1])
        dropped = dropped + 1
      else
        taken[#taken + 1] = {stream, entry[1], job}
        want = want - 1
      end
    end
  end
end
return {dropped, taken}
"""

Held = tuple[str, str, Job]  # a job this worker has read: its stream, entry id and the job


class FleetWorker:
    """``qubic worker``: holds at most as many jobs as its pool has processes, and answers
    them; see the module docstring.

    Between two searches a busy worker makes one round trip (``SETTLE_AND_TAKE``): the answer
    goes out and the next job comes in. An idle one waits for jobs with a blocking read.
    Jobs pending past their time on a worker that died are looked for at most every
    ``block`` seconds, and taken before new ones."""

    def __init__(self, client: aioredis.Redis, pool: AIPool, *, levels: Iterable[str] = LEVELS,
                 prefix: str = "qubic:", name: str | None = None, block: float = POLL) -> None:
        self.client: Any = client  # redis-py's stubs type replies loosely
        self.pool = pool
        self.levels = tuple(levels)
        self.keys = Keys(prefix)
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.block = block
        self._streams = [self.keys.jobs(spec) for spec in self.levels]
        self._turn = 0  # which stream a take tries first, in turn, so no level waits on others
        self._settle_and_take = client.register_script(SETTLE_AND_TAKE)
        self._stopping = False
        self._reclaimed_at = 0.0  # when stale jobs were last looked for (time.monotonic)
        self._reserved = 0  # slots promised to the takes under way
        self._held: dict[str, Held] = {}  # read and not settled, by entry id
        self._backlog: list[Held] = []  # held but not searching yet (a read gave more)
        self._searches: dict[str, tuple[asyncio.Task[None], float]] = {}  # entry id -> search
        self._cancelled: set[str] = set()  # entry ids whose node no longer wants them
        self._checks: dict[str, tuple[asyncio.Future[Any], int]] = {}  # see _read
        self._room = asyncio.Event()  # a slot went free and no job was there to fill it
        # figures
        self.answered = 0
        self.dropped = 0  # cancelled or expired before they were played
        self.reclaimed = 0  # taken over from a worker that died or hung

    @property
    def free(self) -> int:
        """Slots neither searching, nor holding a job, nor promised to a take under way."""
        return self.pool.workers - len(self._held) - self._reserved

    async def run(self, stop: asyncio.Event) -> None:
        """Warm the pool, announce this worker, and take jobs until ``stop`` is set."""
        await self.pool.start(wait=True)  # the kernels are compiled before the first job
        for stream in self._streams:
            await ensure_group(self.client, stream)
        helpers = [asyncio.create_task(self._heartbeat(), name="worker-heartbeat"),
                   asyncio.create_task(self._watch_cancels(), name="worker-cancels")]
        log.info("worker %s ready: %d processes, %s", self.name, self.pool.workers,
                 ",".join(self.levels))
        try:
            while not stop.is_set():
                if self.free <= 0:  # the searches take their next jobs themselves
                    self._room.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._room.wait(), self.block)
                    continue
                try:
                    self._start(await self._take([], self.free, wait=True))
                except (RedisError, OSError) as exc:
                    log.warning("worker: Redis failed (%s); retrying", exc)
                    await asyncio.sleep(1.0)
                    if "NOGROUP" in str(exc):  # a Redis that restarted empty
                        with contextlib.suppress(RedisError, OSError):
                            for stream in self._streams:
                                await ensure_group(self.client, stream)
        finally:
            self._stopping = True
            searches = [task for task, _started in self._searches.values()]
            for task in [*helpers, *searches]:
                task.cancel()
            await asyncio.gather(*helpers, *searches, return_exceptions=True)
            with contextlib.suppress(RedisError, OSError):
                await self._give_back()
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

    async def _take(self, settled: list[str | bytes], count: int, *,
                    wait: bool = False) -> list[Held]:
        """Post ``settled`` (four items a job, as ``SETTLE_AND_TAKE`` wants them) and take up
        to ``count`` jobs: stale ones first, then new ones; with ``wait``, wait up to
        ``block`` seconds for one if there is none."""
        self._reserved += count
        taken: list[Held] = []
        try:
            if count and time.monotonic() - self._reclaimed_at >= self.block:
                self._reclaimed_at = time.monotonic()  # a scan costs a round trip: not every job
                taken = await self._reclaim(count)
            if settled or len(taken) < count:
                self._turn = (self._turn + 1) % len(self._streams)
                streams = self._streams[self._turn:] + self._streams[:self._turn]
                dropped, entries = await self._settle_and_take(
                    keys=streams,
                    args=[GROUP, self.name, count - len(taken), self.keys.cancel(""),
                          STREAM_MAX, *settled],
                )
                self.dropped += dropped
                taken += [(_text(stream), _text(entry_id), _job_decoder.decode(job))
                          for stream, entry_id, job in entries]
            if wait and not taken and count:
                taken = await self._read(count)
        finally:
            self._reserved -= count
        for held in taken:
            self._held[held[1]] = held
        return taken

    async def _read(self, count: int) -> list[Held]:
        """New jobs, waiting up to ``block`` seconds for one (one reply may bring a job from
        each stream). Such a job was queued a moment ago: its search starts at once, and
        whether its game has ended meanwhile is looked up alongside (``_cancelled_meanwhile``)."""
        reply = await self.client.xreadgroup(
            GROUP, self.name, {stream: ">" for stream in self._streams}, count=count,
            block=int(self.block * 1000),
        )
        read = [(_text(stream), _text(entry_id), _job_decoder.decode(fields[b"job"]))
                for stream, entries in reply or () for entry_id, fields in entries]
        if read:
            check = asyncio.ensure_future(
                self.client.mget([self.keys.cancel(job.id) for _s, _e, job in read])
            )
            # a stopping worker may never look: its failure is no news
            check.add_done_callback(lambda done: done.cancelled() or done.exception())
            for n, (_stream, entry_id, _job) in enumerate(read):
                self._checks[entry_id] = (check, n)
        return read

    async def _cancelled_meanwhile(self, entry_id: str) -> bool:
        """Whether the lookup started by ``_read`` found the job cancelled (False for a job
        taken otherwise: the take looked already)."""
        checked = self._checks.pop(entry_id, None)
        if checked is None:
            return False
        check, n = checked
        try:
            return (await asyncio.shield(check))[n] is not None
        except (RedisError, OSError):
            return False

    async def _drop(self, stream: str, entry_id: str) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.xack(stream, GROUP, entry_id)
            pipe.xdel(stream, entry_id)
            await pipe.execute()
        self._held.pop(entry_id, None)
        self.dropped += 1

    async def _reclaim(self, count: int) -> list[Held]:
        """Up to ``count`` jobs pending past their time plus ``RECLAIM_GRACE`` on another
        worker (or on this one, hung), claimed for this one."""
        async with self.client.pipeline(transaction=False) as pipe:
            for stream in self._streams:
                pipe.xpending_range(stream, GROUP, min="-", max="+", count=10,
                                    idle=int(RECLAIM_GRACE * 1000))
            replies = await pipe.execute()
        taken: list[Held] = []
        for stream, stale in zip(self._streams, replies, strict=True):
            for entry in stale:
                entry_id = _text(entry["message_id"])
                if len(taken) == count:
                    return taken
                if entry_id in self._held:  # searching it now, within its time and grace
                    continue
                found = await self.client.xrange(stream, entry_id, entry_id)
                if not found:
                    await self.client.xack(stream, GROUP, entry_id)
                    continue
                job = _job_decoder.decode(found[0][1][b"job"])
                min_idle = int(((job.time or 30.0) + RECLAIM_GRACE) * 1000)
                if entry["time_since_delivered"] < min_idle:
                    continue
                if await self.client.exists(self.keys.cancel(job.id)):  # its game has ended
                    await self._drop(stream, entry_id)
                    continue
                claimed = await self.client.xclaim(stream, GROUP, self.name, min_idle,
                                                   [entry_id])
                if claimed:  # no other worker got there first
                    self.reclaimed += 1
                    log.warning("worker: took over job %s from %s", job.id,
                                _text(entry["consumer"]))
                    taken.append((stream, entry_id, job))
        return taken

    def _start(self, jobs: list[Held]) -> None:
        """Search ``jobs`` as slots allow; the rest wait in the backlog."""
        self._backlog += jobs
        while self._backlog and len(self._searches) < self.pool.workers:
            held = self._backlog.pop(0)
            task = asyncio.create_task(self._answer(*held))
            self._searches[held[1]] = (task, time.monotonic())

    async def _answer(self, stream: str, entry_id: str, job: Job) -> None:
        """Search ``job``, then post its answer and take the next job in one round trip."""
        answer = b""
        try:
            result: Answer | None = None
            if job.expires >= time.time():
                try:
                    decision = await self.pool.decide(job.ai_job())
                    result = Answer(job.id, self.name, decision=decision)
                except asyncio.CancelledError:
                    if entry_id not in self._cancelled:
                        raise  # this worker is stopping: the job is given back
                    asyncio.current_task().uncancel()  # type: ignore[union-attr]
                except AIError as error:
                    result = Answer(job.id, self.name, error=str(error))
            if result is not None and not await self._cancelled_meanwhile(entry_id):
                answer = _encode(result)
        finally:
            del self._searches[entry_id]
            self._cancelled.discard(entry_id)
            self._checks.pop(entry_id, None)
        del self._held[entry_id]
        self._start([])  # a job in the backlog takes the slot, else the take below fills it
        settled: list[str | bytes] = [stream, entry_id, self.keys.answers(job.node), answer]
        try:
            taken = await self._take(settled, max(0, self.free))
        except (RedisError, OSError) as exc:  # it stays pending: another worker answers it
            log.warning("worker: could not answer job %s (%s)", job.id, exc)
        else:
            if answer:
                self.answered += 1
            else:  # cancelled, or expired before it was searched
                self.dropped += 1
            self._start(taken)
        if self.free > 0:
            self._room.set()

    async def _watch_cancels(self) -> None:
        """Stop the searches whose node has cancelled them, looking every 0.1 s at those
        that have run that long (a short one is done before it would be looked at)."""
        while not self._stopping:
            await asyncio.sleep(0.1)
            now = time.monotonic()
            running = [entry_id for entry_id, (_task, started) in self._searches.items()
                       if now - started >= 0.1]
            if not running:
                continue
            with contextlib.suppress(RedisError, OSError):
                found = await self.client.mget(
                    [self.keys.cancel(self._held[entry_id][2].id) for entry_id in running]
                )
                for entry_id, value in zip(running, found, strict=True):
                    if value is not None and entry_id in self._searches:
                        self._cancelled.add(entry_id)
                        self._searches[entry_id][0].cancel()

    async def _give_back(self) -> None:
        """Put the jobs this stopping worker holds back on their streams as new entries, so
        another worker takes them at once instead of after their time and grace."""
        if not self._held:
            return
        async with self.client.pipeline(transaction=True) as pipe:
            for stream, entry_id, job in self._held.values():
                pipe.xadd(stream, {"id": job.id, "job": _encode(job)})
                pipe.xack(stream, GROUP, entry_id)
                pipe.xdel(stream, entry_id)
            await pipe.execute()
        log.info("worker: gave back %d jobs", len(self._held))
        self._held.clear()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
