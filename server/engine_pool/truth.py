"""The truth of positions for ``GET /api/solve``: ``engine.truth.solve`` in a process of its
own, so a search of up to a second never holds the event loop, with the answers kept.

One worker process (started on first use, through the same fork server as the computer
players, and again after it dies) answers one position at a time; a position on the proof's
tree costs it microseconds, one off it up to its budget. Answers are kept in an LRU cache by
variant, moves and budget, so a thousand viewers of one position cost one search.

The same worker reviews finished games (``engine.review``), one review at a time, each bounded
(``REVIEW_SECONDS`` of search, then only the proof and the tables), so a position asked
meanwhile waits at most about that long; ``server.node.reviews`` keeps what it computes.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from server.engine_pool.computer_moves import ComputerError
from server.engine_pool.local import kill_workers

log = logging.getLogger(__name__)

CACHE_SIZE = 10_000
SLACK = 10.0  # seconds past its budget a search may take (a cold start loads the proof)
REVIEW_SECONDS = 5.0  # seconds of search a review may spend in all


def solve_position(variant: str, cells: Sequence[int], budget: float) -> dict[str, Any]:
    """In the worker: the verdict of the position after ``cells``, as the API shows it."""
    from engine import Board
    from engine.truth import solve

    board = Board(variant, list(cells))
    return solve(board, budget).to_json(board.geometry)


def review_in_worker(variant: str, cells: Sequence[int], seconds: float) -> dict[str, Any]:
    """In the worker: the review of the game played as ``cells``, as the API shows it."""
    from engine.review import review_game

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
        self._review_lock = asyncio.Lock()  # one review in the worker at a time

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context(
                "forkserver" if "forkserver" in methods else "spawn")
            self._executor = ProcessPoolExecutor(1, mp_context=context)
        return self._executor

    async def truth(self, variant: str, cells: Sequence[int], budget: float) -> dict[str, Any]:
        """The verdict after ``cells`` (legal, checked by the caller) within ``budget``
        seconds of search; ``ComputerError`` if the worker cannot answer."""
        key = (variant, tuple(cells), budget)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if key in self._inflight:  # the same question, asked again meanwhile: one search
            return await asyncio.shield(self._inflight[key])
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._inflight[key] = future
        try:
            answer = await asyncio.wait_for(
                loop.run_in_executor(self._pool(), solve_position, variant, list(cells), budget),
                budget + SLACK)
        except (BrokenProcessPool, TimeoutError, OSError) as exc:
            self._restart()
            error = ComputerError(f"the solver could not answer: {exc!r}")
            future.set_exception(error)
            future.exception()  # retrieved: no warning if nobody else waited
            raise error from None
        finally:
            self._inflight.pop(key, None)
        self.searches += 1
        self._cache[key] = answer
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        future.set_result(answer)
        return answer

    async def review(self, variant: str, cells: Sequence[int],
                     seconds: float = REVIEW_SECONDS) -> dict[str, Any]:
        """The review of a game (``engine.review.review_game``'s JSON), computed in the
        worker; ``ComputerError`` if it cannot answer. Callers share one computation per
        game themselves (``server.node.reviews``)."""
        async with self._review_lock:
            loop = asyncio.get_running_loop()
            try:
                answer = await asyncio.wait_for(
                    loop.run_in_executor(self._pool(), review_in_worker, variant, list(cells),
                                         seconds),
                    2 * seconds + SLACK)  # the lines that would have won come on top
            except (BrokenProcessPool, TimeoutError, OSError) as exc:
                self._restart()
                raise ComputerError(f"the solver could not review the game: {exc!r}") from None
        self.reviews += 1
        return answer

    def _restart(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            kill_workers(executor)
            executor.shutdown(wait=False, cancel_futures=True)

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
