"""The AI pool: moves from worker processes, fairness, stop flags and dead workers."""

import asyncio
import os
import signal
import time

import pytest

from engine import Board
from server.ai_pool import AIJob, AIPool


@pytest.fixture
async def pool():
    pool = AIPool(workers=2)
    await pool.start()
    yield pool
    await pool.close()


async def test_a_job_returns_a_legal_move(pool: AIPool) -> None:
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1")
    decision = await pool.decide(AIJob("4x4x4", tuple(board.moves), "bogenschutz", time=2.0))
    assert decision.move == 3  # O blocks 1d1
    assert len(set(pool.worker_pids())) == 2


async def test_more_jobs_than_workers_all_finish(pool: AIPool) -> None:
    jobs = [AIJob("4x4x4", (c,), "rubinoff:depth=2", seed=c, time=2.0) for c in range(7)]
    decisions = await asyncio.gather(*(pool.decide(j) for j in jobs))
    assert len(decisions) == 7
    for job, decision in zip(jobs, decisions, strict=True):
        assert decision.move not in job.moves
    assert pool.jobs_done == 7 and pool.queued == 0 and pool.busy == 0


async def test_cancelling_a_job_stops_its_search(pool: AIPool) -> None:
    task = asyncio.create_task(
        pool.decide(AIJob("4x4x4", (), "bogenschutz:depth=8", time=20.0))
    )
    await asyncio.sleep(0.5)
    started = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the worker was told to stop, so a new job gets through quickly
    decision = await pool.decide(AIJob("4x4x4", (0,), "wood", time=1.0))
    assert decision.move != 0
    assert pool.busy == 0
    assert time.perf_counter() - started < 15  # generous: not the 20 s the search had


async def test_a_worker_killed_mid_search_is_replaced_and_the_move_still_comes(
    pool: AIPool,
) -> None:
    job = AIJob("4x4x4", (0, 21), "bogenschutz:depth=8", time=4.0)
    task = asyncio.create_task(pool.decide(job))
    await asyncio.sleep(0.8)
    for pid in pool.worker_pids():
        os.kill(pid, signal.SIGKILL)
    decision = await task
    assert decision.move not in job.moves
    assert pool.rebuilds >= 1
    assert len(pool.worker_pids()) == 2
