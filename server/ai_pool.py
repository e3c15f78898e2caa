"""Computer moves in a process pool, so the event loop never runs a search.

``AIPool`` wraps a ``ProcessPoolExecutor`` (forkserver where available, else spawn). Each
worker loads the compiled kernel once when it starts; the pool warms every worker before it
is used. Jobs wait their turn in FIFO order behind a semaphore of one permit per worker, so
when there are more computer games than workers each game's move waits fairly for the next
free worker. Each job gets a deadline (its own, which the search keeps) and a one-byte stop
flag in shared memory that the pool raises when the deadline passes plus a grace, or when
the caller cancels the job (the game ended while the computer was thinking). A worker that
dies breaks the executor: the pool builds a new one and runs the job again. Workers run
``nice`` steps below the server, so a search never takes a core from the event loop that
serves everyone else; each search keeps its own deadline, so a busy host costs the computer
depth, not time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import forkserver, resource_tracker
from multiprocessing.sharedctypes import RawArray
from typing import Any

import numpy as np

from engine import warm
from engine.board import Board
from engine.players import Decision, Limit, make_player
from server.errors import ServerError

log = logging.getLogger(__name__)

GRACE = 1.0  # seconds past a job's time limit before the pool raises its stop flag
HANG = 10.0  # seconds past the stop flag before a worker is taken for hung and replaced
RETRIES = 2  # times a job is run again on a new pool after a worker died under it
DEFAULT_NICE = 10  # how many steps below the server the workers run (os.nice; 0-19)


class AIError(ServerError, RuntimeError):
    """The pool could not produce a move (workers keep dying, or the pool is closed)."""

    code = "ai_unavailable"


@dataclass(frozen=True)
class AIJob:
    """One move to find: the position as a variant and its moves, and who plays it."""

    variant: str
    moves: tuple[int, ...]
    spec: str
    seed: int = 0
    time: float | None = 1.0
    depth: int | None = None


def default_workers() -> int:
    """One worker per core but one, at least one."""
    return max(1, (os.cpu_count() or 2) - 1)


# -- the worker side -------------------------------------------------------------------------

_stop_flags: np.ndarray | None = None


def _start_worker(flags: Any, nice: int = 0) -> None:
    """Runs once in each worker: lower its priority, map the shared stop flags and load the
    compiled kernel."""
    global _stop_flags
    if nice:
        os.nice(nice)
    _stop_flags = np.frombuffer(flags, dtype=np.int8)
    warm.warm_up()


def _ping() -> int:
    return os.getpid()


def _run_job(job: AIJob, slot: int) -> Decision:
    assert _stop_flags is not None
    board = Board(job.variant, job.moves)
    player = make_player(job.spec, seed=job.seed)
    stop = _stop_flags[slot : slot + 1]
    return player.decide(board, Limit(time=job.time, depth=job.depth, stop=stop))


# -- the server side -------------------------------------------------------------------------


class AIPool:
    """A pool of worker processes that choose computer moves; see the module docstring."""

    def __init__(self, workers: int | None = None, *, context: str | None = None,
                 nice: int = DEFAULT_NICE) -> None:
        if not 0 <= nice <= 19:
            raise ValueError(f"nice must be 0-19, not {nice}")
        self.workers = workers or default_workers()
        self.nice = nice
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context(
            context or ("forkserver" if "forkserver" in methods else "spawn")
        )
        self._flags = RawArray("b", self.workers)
        self._flag_view = np.frombuffer(self._flags, dtype=np.int8)
        self._free_slots: list[int] = list(range(self.workers))
        self._permits = asyncio.Semaphore(self.workers)
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        self._waiting = 0
        # figures for /metrics
        self.jobs_done = 0
        self.jobs_failed = 0
        self.rebuilds = 0
        self.last_latency = 0.0
        self.latencies: list[float] = []  # recent job latencies in seconds, newest last

    @property
    def queued(self) -> int:
        """Jobs waiting for a free worker."""
        return self._waiting

    @property
    def busy(self) -> int:
        """Jobs running on a worker now."""
        return self.workers - len(self._free_slots)

    async def start(self) -> None:
        """Compile the kernel in this process (filling numba's cache), then start and warm
        every worker, so the first computer move is not slow."""
        _start_process_helpers(self._context)
        await asyncio.to_thread(warm.warm_up)
        await self._build()

    async def _build(self) -> None:
        old, self._executor = self._executor, None
        if old is not None:
            _kill_workers(old)
            old.shutdown(wait=False, cancel_futures=True)
        executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context,
            initializer=_start_worker,
            initargs=(self._flags, self.nice),
        )
        loop = asyncio.get_running_loop()
        # one ping per worker makes the executor start them all now, not on first use
        pids = await asyncio.gather(
            *(loop.run_in_executor(executor, _ping) for _ in range(self.workers))
        )
        log.info("AI pool ready: %d workers (%s)", len(set(pids)), self._context.get_start_method())
        self._executor = executor

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (for tests and fault drills)."""
        if self._executor is None:
            return []
        processes = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in processes.values() if p.is_alive()]

    async def decide(self, job: AIJob) -> Decision:
        """The move for ``job``; raises ``AIError`` if no worker could produce one.

        Cancelling the awaiting task raises the job's stop flag, so its worker is free again
        within a few milliseconds.
        """
        if self._closed:
            raise AIError("the AI pool is closed")
        self._waiting += 1
        try:
            await self._permits.acquire()
        finally:
            self._waiting -= 1
        slot = self._free_slots.pop()
        started = time.perf_counter()
        try:
            for attempt in range(RETRIES + 1):
                self._flag_view[slot] = 0
                try:
                    decision = await self._run(job, slot)
                except BrokenProcessPool:
                    if self._closed or attempt == RETRIES:
                        self.jobs_failed += 1
                        raise AIError("the computer player's worker keeps failing") from None
                    log.warning("AI worker died; rebuilding the pool (attempt %d)", attempt + 1)
                    self.rebuilds += 1
                    await self._build()
                    continue
                self.jobs_done += 1
                self.last_latency = time.perf_counter() - started
                self.latencies.append(self.last_latency)
                del self.latencies[:-1000]
                return decision
            raise AssertionError("unreachable")
        finally:
            self._flag_view[slot] = 0
            self._free_slots.append(slot)
            self._permits.release()

    async def _run(self, job: AIJob, slot: int) -> Decision:
        while self._executor is None:  # a rebuild is under way in another task
            if self._closed:
                raise AIError("the AI pool is closed")
            await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, _run_job, job, slot)
        future.add_done_callback(_consume)  # an abandoned job's failure is no news
        limit = (job.time or 30.0) + GRACE
        try:
            return await asyncio.wait_for(asyncio.shield(future), limit)
        except TimeoutError:
            self._flag_view[slot] = 1  # the search missed its own deadline: stop it
            try:
                return await asyncio.wait_for(asyncio.shield(future), HANG)
            except TimeoutError:
                log.error("AI worker hung on %s; replacing the pool", job.spec)
                raise BrokenProcessPool("worker hung") from None
        except asyncio.CancelledError:
            self._flag_view[slot] = 1
            # wait briefly for the worker to let go, so the slot is not reused under it
            await asyncio.wait({future}, timeout=HANG)
            raise

    async def close(self) -> None:
        """Stop every search and the workers."""
        self._closed = True
        self._flag_view[:] = 1
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _start_process_helpers(context: Any) -> None:
    """Start multiprocessing's resource tracker (and fork server) with the real stderr.

    Inside a Textual app ``sys.stderr`` is a capture whose ``fileno()`` is -1, and
    multiprocessing hands that descriptor to the helper processes it starts, failing with
    "bad value(s) in fds_to_keep". Started once here, every later worker reuses them.
    """
    real_err = sys.__stderr__ or sys.stderr
    real_out = sys.__stdout__ or sys.stdout
    with contextlib.redirect_stderr(real_err), contextlib.redirect_stdout(real_out):
        resource_tracker.ensure_running()
        if context.get_start_method() == "forkserver":
            forkserver.ensure_running()


def _kill_workers(executor: ProcessPoolExecutor) -> None:
    processes: Sequence[Any] = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.kill()
