"""The truth of positions for ``GET /api/solve`` and finished games' reviews:
``engine.solved.truth`` in one worker process of its own, so a search never holds the event loop,
with the answers kept.

Answers are kept in an LRU cache by variant, moves and budget. The worker is shared fairly:
each client (an address, an IPv6 /64 as one) has its own queue, taken in turn one job each, and
at most ``MAX_JOBS`` questions at once (``SolverBusy`` past that; docs/api.md)."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from server.computer.local import kill_workers
from server.computer.moves import ComputerError
from server.errors import LimitReached

log = logging.getLogger(__name__)

CACHE_SIZE = 10_000
SLACK = 10.0  # seconds past its budget a search may take (a cold start loads the proof)
REVIEW_SECONDS = 5.0  # seconds of search a review may spend in all
MAX_JOBS = 4  # questions one client may have waiting or running in the worker at once


class SolverBusy(LimitReached):
    """A client asked while it had ``MAX_JOBS`` questions waiting or running already;
    ``retry_in``: about when one of them is answered."""

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message, "solver_busy", retry_in)


@dataclass
class _Job:
    """One question for the worker: ``function(*args)`` within ``timeout`` seconds."""

    function: Callable[..., dict[str, Any]]
    args: tuple[Any, ...]
    timeout: float
    budget: float  # seconds of search it may take: what a client waits for it, about
    future: asyncio.Future[dict[str, Any]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future())


def solve_position(variant: str, cells: Sequence[int], budget: float) -> dict[str, Any]:
    """In the worker: the verdict of the position after ``cells``, as the API shows it."""
    from engine import Board
    from engine.solved.truth import solve

    board = Board(variant, list(cells))
    return solve(board, budget).to_json(board.geometry)


def review_in_worker(variant: str, cells: Sequence[int], seconds: float) -> dict[str, Any]:
    """In the worker: the review of the game played as ``cells``, as the API shows it."""
    from engine.solved.review import review_game

    return review_game(variant, list(cells), total_budget=seconds).to_json()


class TruthPool:
    """Verdicts of positions, searched in a worker process; ``await truth(...)``."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        self._executor: ProcessPoolExecutor | None = None
        self._cache: OrderedDict[tuple[str, tuple[int, ...], float], dict[str, Any]] = (
            OrderedDict())
        self._cache_size = cache_size
        self._inflight: dict[tuple[str, tuple[int, ...], float],
                             asyncio.Future[dict[str, Any]]] = {}
        self.searches = 0  # answers computed (not from the cache)
        self.reviews = 0  # reviews computed
        self.jobs = 0  # questions the worker started
        self._waiting: dict[str, deque[_Job]] = {}  # by client, in the order they asked
        self._turns: deque[str] = deque()  # clients with a question waiting, next first
        self._held: dict[str, int] = {}  # by client: questions waiting or running
        self._serving: asyncio.Task[None] | None = None
        self._running: _Job | None = None  # the question in the worker now

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context(
                "forkserver" if "forkserver" in methods else "spawn")
            self._executor = ProcessPoolExecutor(1, mp_context=context)
        return self._executor

    async def truth(self, variant: str, cells: Sequence[int], budget: float,
                    client: str = "") -> dict[str, Any]:
        """The verdict after ``cells`` (legal, checked by the caller) within ``budget``
        seconds of search, asked for ``client``; ``SolverBusy`` if that client has
        ``MAX_JOBS`` questions in already, ``ComputerError`` if the worker cannot answer."""
        key = (variant, tuple(cells), budget)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if key in self._inflight:  # the same question, asked again meanwhile: one search
            return await asyncio.shield(self._inflight[key])
        job = self._ask(client, _Job(solve_position, (variant, list(cells), budget),
                                     budget + SLACK, budget))
        self._inflight[key] = job.future
        job.future.add_done_callback(partial(self._answered, key))
        return await asyncio.shield(job.future)

    def _answered(self, key: tuple[str, tuple[int, ...], float],
                  future: asyncio.Future[dict[str, Any]]) -> None:
        """A search is over, whether its askers still wait or not: keep its answer."""
        self._inflight.pop(key, None)
        if future.cancelled() or future.exception() is not None:
            return
        self.searches += 1
        self._cache[key] = future.result()
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    async def review(self, variant: str, cells: Sequence[int],
                     seconds: float = REVIEW_SECONDS, client: str = "") -> dict[str, Any]:
        """The review of a game (``engine.solved.review.review_game``'s JSON), computed in the
        worker for ``client``; ``SolverBusy`` or ``ComputerError`` as ``truth``. Callers
        share one computation per game themselves (``server.node.reviews``)."""
        job = self._ask(client, _Job(review_in_worker, (variant, list(cells), seconds),
                                     2 * seconds + SLACK,  # the lines that would have won too
                                     seconds))
        answer = await asyncio.shield(job.future)
        self.reviews += 1
        return answer

    def held(self, client: str) -> int:
        """The questions of ``client`` waiting or running in the worker now."""
        return self._held.get(client, 0)

    def _ask(self, client: str, job: _Job) -> _Job:
        """Queue ``job`` for ``client`` (its turn comes round robin), or ``SolverBusy``."""
        held = self._held.get(client, 0)
        if held >= MAX_JOBS:
            waiting = self._waiting.get(client, ())
            wait = sum(j.budget for j in waiting) or job.budget
            raise SolverBusy(f"the solver has {held} questions of yours already: wait for "
                             "their answers", math.ceil(wait * 10) / 10)
        self._held[client] = held + 1
        job.future.add_done_callback(lambda _: self._release(client))
        if client not in self._waiting:
            self._waiting[client] = deque()
            self._turns.append(client)
        self._waiting[client].append(job)
        if self._serving is None or self._serving.done():
            self._serving = asyncio.get_running_loop().create_task(self._serve(),
                                                                   name="solver")
        return job

    def _release(self, client: str) -> None:
        left = self._held.get(client, 0) - 1
        if left > 0:
            self._held[client] = left
        else:
            self._held.pop(client, None)

    async def _serve(self) -> None:
        """Run the questions in the worker one at a time, one of each client in turn."""
        while self._turns:
            client = self._turns.popleft()
            queue = self._waiting[client]
            job = queue.popleft()
            try:
                await self._run(job)
            finally:
                if queue:  # its next question: after those of everyone waiting now
                    self._turns.append(client)
                else:
                    del self._waiting[client]

    async def _run(self, job: _Job) -> None:
        """Ask the worker ``job``'s question and settle its future."""
        loop = asyncio.get_running_loop()
        self.jobs += 1
        self._running = job
        error: BaseException
        try:
            answer = await asyncio.wait_for(
                loop.run_in_executor(self._pool(), job.function, *job.args), job.timeout)
        except (BrokenProcessPool, TimeoutError, OSError) as exc:
            self._restart()
            error = ComputerError(f"the solver could not answer: {exc!r}")
        except Exception as exc:  # the question's own failure: its askers'
            error = exc
        else:
            if not job.future.done():
                job.future.set_result(answer)
            return
        finally:
            self._running = None
        if not job.future.done():
            job.future.set_exception(error)
            job.future.exception()  # retrieved: no warning if nobody waits now

    def _restart(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            kill_workers(executor)
            executor.shutdown(wait=False, cancel_futures=True)

    async def close(self) -> None:
        serving, self._serving = self._serving, None
        running = self._running
        if serving is not None:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
        for job in [running, *(j for q in self._waiting.values() for j in q)]:
            if job is not None:
                job.future.cancel()
        self._waiting.clear()
        self._turns.clear()
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
