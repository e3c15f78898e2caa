"""The engine fleet's worker side: ``FleetWorker``, what ``qubic worker`` runs. It takes jobs
from the level streams through the consumer group, searches them in its own ``ComputerPool`` (the
same pool, and so the same ``decide_move``, as an embedded server), answers the node that
asked, takes over jobs a dead worker left pending, drops cancelled ones, and heartbeats. See
``server.computer.fleet`` for the keys and what holds."""

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

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.computer.fleet.jobs import (
    ALIVE,
    GROUP,
    HEARTBEAT,
    LEVELS,
    POLL,
    RECLAIM_GRACE,
    STREAM_MAX,
    Job,
    JobAnswer,
    Keys,
    as_text,
    encode,
    ensure_group,
    job_decoder,
)
from server.computer.local import ComputerPool
from server.computer.moves import ComputerError

log = logging.getLogger(__name__)


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

    def __init__(self, client: aioredis.Redis, pool: ComputerPool, *,
                 levels: Iterable[str] = LEVELS,
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
                taken += [(as_text(stream), as_text(entry_id), job_decoder.decode(job))
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
        read = [(as_text(stream), as_text(entry_id), job_decoder.decode(fields[b"job"]))
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
                entry_id = as_text(entry["message_id"])
                if len(taken) == count:
                    return taken
                if entry_id in self._held:  # searching it now, within its time and grace
                    continue
                found = await self.client.xrange(stream, entry_id, entry_id)
                if not found:
                    await self.client.xack(stream, GROUP, entry_id)
                    continue
                job = job_decoder.decode(found[0][1][b"job"])
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
                                as_text(entry["consumer"]))
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
            result: JobAnswer | None = None
            if job.expires >= time.time():
                try:
                    decision = await self.pool.decide(job.computer_job())
                    result = JobAnswer(job.id, self.name, decision=decision)
                except asyncio.CancelledError:
                    if entry_id not in self._cancelled:
                        raise  # this worker is stopping: the job is given back
                    task = asyncio.current_task()
                    assert task is not None  # a coroutine awaiting runs in a task
                    task.uncancel()
                except ComputerError as error:
                    result = JobAnswer(job.id, self.name, error=str(error))
            if result is not None and not await self._cancelled_meanwhile(entry_id):
                answer = encode(result)
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
                pipe.xadd(stream, {"id": job.id, "job": encode(job)})
                pipe.xack(stream, GROUP, entry_id)
                pipe.xdel(stream, entry_id)
            await pipe.execute()
        log.info("worker: gave back %d jobs", len(self._held))
        self._held.clear()
