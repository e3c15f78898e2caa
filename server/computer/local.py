"""Computer moves in a process pool, so the event loop never runs a search.

``ComputerPool`` is the hub's ``ComputerMoves`` on one machine: a ``ProcessPoolExecutor`` whose
workers (``nice`` below the server) compile the engine when they start and run each job through
``server.computer.decide.decide_move``, one job a worker in FIFO order, each with its deadline
and a shared-memory stop flag raised when the deadline passes or the game ends. A worker that
dies is replaced and its job run again; workers die with the server (``lifeline``). On a cold
cache a background start also starts the quick path (``server.computer.quick``), which
answers the moves that need no compiled kernel until the workers are ready."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver, resource_tracker
from multiprocessing.sharedctypes import RawArray
from typing import Any

import numpy as np

from engine import warm
from engine.players import Decision
from server.computer.decide import decide_move
from server.computer.lifeline import die_with_parent
from server.computer.moves import ComputerError, ComputerJob, ComputerMoves
from server.computer.quick import QuickPath
from server.protocol import EngineState

# ComputerError, ComputerJob and ComputerMoves live in server.computer.moves; the
# hub and the command line still import them from here.
__all__ = ["DEFAULT_NICE", "ComputerError", "ComputerJob", "ComputerPool", "ComputerMoves",
           "default_workers"]

log = logging.getLogger(__name__)

GRACE = 1.0  # seconds past a job's time limit before the pool raises its stop flag
HANG = 10.0  # seconds past the stop flag before a worker is taken for hung and replaced
RETRIES = 2  # times a job is run again on a new pool after a worker died under it
DEFAULT_NICE = 10  # how many steps below the server the workers run (os.nice; 0-19)
PRELOAD = ["server.computer.forkserver_preload"]  # what the fork server imports when it starts

WarmUp = Callable[[Callable[[float], None]], float]
"""Compiles or loads the kernels in a worker, reporting the fraction done as it goes."""


def default_workers() -> int:
    """One worker per core but one, at least one."""
    return max(1, (os.cpu_count() or 2) - 1)


# -- the worker side -------------------------------------------------------------------------

_stop_flags: np.ndarray | None = None


def _start_worker(flags: Any, nice: int, warmed: Any, warm_up: WarmUp, workers: int) -> None:
    """Runs once in each worker: leave SIGINT to the server, die with it, lower its priority,
    map the shared stop flags and compile or load the kernels, adding its progress to the
    pool's shared ``warmed`` figure."""
    global _stop_flags
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    if nice:
        os.nice(nice)
    _stop_flags = np.frombuffer(flags, dtype=np.int8)
    reported = 0.0

    def progress(done: float) -> None:
        nonlocal reported
        with warmed.get_lock():
            warmed.value += (done - reported) / workers
        reported = done

    warm_up(progress)
    progress(1.0)


def _ping() -> int:
    return os.getpid()


def _run_job(job: ComputerJob, slot: int) -> Decision:
    """Runs in a worker: ``job``'s move, with the stop flag of its slot."""
    assert _stop_flags is not None
    return decide_move(job, _stop_flags[slot : slot + 1])


# -- the server side -------------------------------------------------------------------------


class ComputerPool:
    """A pool of worker processes that choose computer moves; see the module docstring."""

    waiting_state: EngineState = "preparing"
    waiting_message = "preparing the engine (first start only)…"

    def __init__(self, workers: int | None = None, *, context: str | None = None,
                 nice: int = DEFAULT_NICE, warm_up: WarmUp = warm.warm_up,
                 quick: bool | None = None) -> None:
        """``quick``: whether a background start also starts the quick path (None: when
        numba's cache is cold, ``engine.warm.cached``)."""
        if not 0 <= nice <= 19:
            raise ValueError(f"nice must be 0-19, not {nice}")
        self.workers = workers or default_workers()
        self.nice = nice
        self._warm_up = warm_up
        self._use_quick = quick
        self._quick: QuickPath | None = None
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context(
            context or ("forkserver" if "forkserver" in methods else "spawn")
        )
        self._flags = RawArray("b", self.workers)
        self._flag_view = np.frombuffer(self._flags, dtype=np.int8)
        self._warmed: Any = None  # the workers' warm-up, 0-1 (a shared value, made by start)
        self._free_slots: list[int] = list(range(self.workers))
        self._permits = asyncio.Semaphore(self.workers)
        self._executor: ProcessPoolExecutor | None = None
        self._building: asyncio.Task[None] | None = None
        self._closed = False
        self._waiting = 0
        # figures for /metrics
        self.jobs_done = 0
        self.jobs_failed = 0
        self.rebuilds = 0
        self.quick_moves = 0  # moves the quick path gave while the workers warmed up (not in
        # /metrics: a figure of the first minute on a cold cache)
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

    @property
    def ready(self) -> bool:
        """Whether the workers are up with their kernels compiled."""
        return self._executor is not None

    @property
    def progress(self) -> float:
        """How far the workers' warm-up has got, 0-1 (1 once ``ready``)."""
        if self.ready:
            return 1.0
        return 0.0 if self._warmed is None else min(1.0, max(0.0, self._warmed.value))

    async def start(self, *, wait: bool = True) -> None:
        """Start every worker and warm it (compiling numba's kernels on a cold cache, about
        17 s; loading them on a warm one). With ``wait=False`` this happens in the
        background and jobs wait for it."""
        _start_process_helpers(self._context)
        if self._warmed is None:  # its lock needs the resource tracker started just now
            self._warmed = self._context.Value("d", 0.0)
        building = self._build_soon()
        if wait:
            await self.wait_ready()
            return
        building.add_done_callback(_log_failed_build)
        use_quick = self._use_quick
        if use_quick is None:
            use_quick = not await asyncio.to_thread(warm.cached)
        if use_quick and self._executor is None and self._quick is None and not self._closed:
            self._quick = QuickPath(self.nice)
            await self._quick.start()
            log.info("numba's cache is cold: the quick path answers what it can while the "
                     "workers compile")

    async def quick(self, job: ComputerJob) -> Decision | None:
        """While the workers are not ready, ``job``'s move from the quick path when its
        player makes it without a compiled kernel (``engine.players.Player.quick``), else
        None (the caller then waits for ``ready``). None once ready: ask ``decide``."""
        quick = self._quick
        if self.ready or quick is None or self._closed:
            return None
        decision = await quick.decide(job)
        if decision is not None:
            self.quick_moves += 1
        return decision

    async def wait_ready(self) -> None:
        """Wait until the workers are ready; raises ``ComputerError`` if they could not start."""
        await self._executor_ready()

    def _build_soon(self) -> asyncio.Task[None]:
        """The build under way, or a new one."""
        if self._building is None or self._building.done():
            self._building = asyncio.get_running_loop().create_task(self._build())
        return self._building

    async def _build(self) -> None:
        with self._warmed.get_lock():
            self._warmed.value = 0.0
        executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context,
            initializer=_start_worker,
            initargs=(self._flags, self.nice, self._warmed, self._warm_up, self.workers),
        )
        loop = asyncio.get_running_loop()
        try:
            # one ping per worker makes the executor start them all now, not on first use
            pids = await asyncio.gather(
                *(loop.run_in_executor(executor, _ping) for _ in range(self.workers))
            )
        except BaseException:
            kill_workers(executor)
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        log.info("computer players ready: %d workers (%s)", len(set(pids)),
                 self._context.get_start_method())
        self._executor = executor
        await self._close_quick()

    async def _close_quick(self) -> None:
        """The compiled engine is ready (or the pool closes): the quick path's work is done."""
        quick, self._quick = self._quick, None
        if quick is not None:
            await asyncio.shield(quick.close())

    async def _executor_ready(self) -> ProcessPoolExecutor:
        while self._executor is None:
            if self._closed:
                raise ComputerError("the computer players' pool is closed")
            if self._warmed is None:
                raise ComputerError("the computer players' pool is not started")
            building = self._build_soon()
            await asyncio.wait({building})  # a waiter's cancellation leaves the build alone
            if not building.cancelled() and building.exception() is not None:
                raise ComputerError(
                    "the computer players could not start") from building.exception()
        return self._executor

    def _discard(self, executor: ProcessPoolExecutor) -> None:
        """Drop a broken executor (once, whichever job noticed first)."""
        if self._executor is executor:
            self._executor = None
            self.rebuilds += 1
            kill_workers(executor)
            executor.shutdown(wait=False, cancel_futures=True)

    def figures(self) -> dict[str, float]:
        return {"ai_rebuilds": self.rebuilds}

    def worker_pids(self) -> list[int]:
        """Process ids of the live workers (for tests and fault drills)."""
        if self._executor is None:
            return []
        processes = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in processes.values() if p.is_alive()]

    async def decide(self, job: ComputerJob) -> Decision:
        """The move for ``job``; raises ``ComputerError`` if no worker could produce one.

        Waits for the workers' warm-up first (not counted in the job's time). Cancelling the
        awaiting task raises the job's stop flag, so its worker is free again within a few
        milliseconds.
        """
        if self._closed:
            raise ComputerError("the computer players' pool is closed")
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
                executor = await self._executor_ready()
                try:
                    decision = await self._run(executor, job, slot)
                except BrokenProcessPool:
                    if self._closed or attempt == RETRIES:
                        self.jobs_failed += 1
                        raise ComputerError("the computer player's worker keeps failing") from None
                    log.warning("computer player's worker died; rebuilding the pool (attempt %d)",
                                attempt + 1)
                    self._discard(executor)
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

    async def _run(self, executor: ProcessPoolExecutor, job: ComputerJob, slot: int) -> Decision:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(executor, _run_job, job, slot)
        future.add_done_callback(_consume)  # an abandoned job's failure is no news
        limit = (job.time or 30.0) + GRACE
        try:
            return await asyncio.wait_for(asyncio.shield(future), limit)
        except TimeoutError:
            self._flag_view[slot] = 1  # the search missed its own deadline: stop it
            try:
                return await asyncio.wait_for(asyncio.shield(future), HANG)
            except TimeoutError:
                log.error("computer player's worker hung on %s; replacing the pool", job.spec)
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
        if self._building is not None and not self._building.done():
            self._building.cancel()
            await asyncio.wait({self._building})
        await self._close_quick()
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


def _log_failed_build(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the computer players' workers could not start: %r", task.exception())


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _start_process_helpers(context: Any) -> None:
    """Start multiprocessing's resource tracker (and fork server) with the real stderr.

    Inside a Textual app ``sys.stderr`` is a capture whose ``fileno()`` is -1, and
    multiprocessing hands that descriptor to the helper processes it starts, failing with
    "bad value(s) in fds_to_keep". Started once here, every later worker reuses them.
    Call it from the event loop's thread: the fork server is told to die with the thread
    that starts it (``server.computer.forkserver_preload``).
    """
    real_err = sys.__stderr__ or sys.stderr
    real_out = sys.__stdout__ or sys.stdout
    with contextlib.redirect_stderr(real_err), contextlib.redirect_stdout(real_out):
        resource_tracker.ensure_running()
        if context.get_start_method() == "forkserver":
            # set before the fork server starts (a running one keeps what it has)
            context.set_forkserver_preload(PRELOAD)
            forkserver.ensure_running()


def kill_workers(executor: ProcessPoolExecutor) -> None:
    """Kill every live worker process of ``executor`` (one stuck in a search included)."""
    processes: Sequence[Any] = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.kill()
