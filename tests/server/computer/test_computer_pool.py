"""The computer pool: moves from worker processes, fairness, stop flags and dead workers."""

import asyncio
import os
import signal
from pathlib import Path

import pytest

from engine import Board
from server.computer.local import DEFAULT_NICE, ComputerJob, ComputerPool
from tests.eventually import eventually
from tests.server.servers import Server


@pytest.fixture
async def pool():
    pool = ComputerPool(workers=2)
    await pool.start()
    yield pool
    await pool.close()


async def test_a_job_returns_a_legal_move(pool: ComputerPool) -> None:
    board = Board.from_notation("4x4x4", "1a1 2a1 1b1 2b1 1c1")
    decision = await pool.decide(ComputerJob("4x4x4", tuple(board.moves), "bogenschutz", time=2.0))
    assert decision.move == 3  # O blocks 1d1
    assert len(set(pool.worker_pids())) == 2


async def test_more_jobs_than_workers_all_finish(pool: ComputerPool) -> None:
    jobs = [ComputerJob("4x4x4", (c,), "rubinoff:depth=2", seed=c, time=2.0) for c in range(7)]
    decisions = await asyncio.gather(*(pool.decide(j) for j in jobs))
    assert len(decisions) == 7
    for job, decision in zip(jobs, decisions, strict=True):
        assert decision.move not in job.moves
    assert pool.jobs_done == 7 and pool.queued == 0 and pool.busy == 0


async def test_cancelling_a_job_stops_its_search() -> None:
    """One worker, busy with a search given ten minutes (past the test's own timeout; MCTS
    has no depth to finish at): a second job, given as long (so that its own deadline cannot
    stop the first search for it), gets a move only if the cancel stopped the first one."""
    pool = ComputerPool(workers=1)
    await pool.start()
    try:
        task = asyncio.create_task(pool.decide(ComputerJob("4x4x4", (), "mcts", time=600.0)))
        await eventually(lambda: pool.busy == 1, "the search is under way")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        decision = await pool.decide(ComputerJob("4x4x4", (0,), "wood", time=600.0))
        assert decision.move != 0
        assert pool.busy == 0 and pool.jobs_done == 1
    finally:
        await pool.close()


async def test_a_worker_killed_mid_search_is_replaced_and_the_move_still_comes(
    pool: ComputerPool,
) -> None:
    job = ComputerJob("4x4x4", (0, 21), "bogenschutz:depth=8", time=4.0)
    task = asyncio.create_task(pool.decide(job))
    await eventually(lambda: pool.busy == 1, "the search is under way")
    for pid in pool.worker_pids():
        os.kill(pid, signal.SIGKILL)
    decision = await task
    assert decision.move not in job.moves
    assert pool.rebuilds >= 1
    assert len(pool.worker_pids()) == 2


def _nice(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


async def test_workers_run_below_the_server_by_default(pool: ComputerPool) -> None:
    assert pool.nice == DEFAULT_NICE > 0
    expected = min(19, _nice(0) + DEFAULT_NICE)
    assert [_nice(pid) for pid in pool.worker_pids()] == [expected, expected]


async def test_the_workers_niceness_is_configurable_and_kept_by_a_rebuilt_pool() -> None:
    pool = ComputerPool(workers=1, nice=3)
    await pool.start()
    try:
        expected = min(19, _nice(0) + 3)
        assert [_nice(pid) for pid in pool.worker_pids()] == [expected]
        for pid in pool.worker_pids():
            os.kill(pid, signal.SIGKILL)
        decision = await pool.decide(ComputerJob("4x4x4", (0,), "wood", time=1.0))
        assert decision.move != 0 and pool.rebuilds == 1
        assert [_nice(pid) for pid in pool.worker_pids()] == [expected]
    finally:
        await pool.close()


async def test_nice_zero_leaves_the_workers_at_the_servers_priority() -> None:
    pool = ComputerPool(workers=1, nice=0)
    await pool.start()
    try:
        assert [_nice(pid) for pid in pool.worker_pids()] == [_nice(0)]
    finally:
        await pool.close()


@pytest.mark.parametrize("nice", [-1, 20])
def test_a_niceness_outside_0_to_19_is_refused(nice: int) -> None:
    with pytest.raises(ValueError, match="0-19"):
        ComputerPool(workers=1, nice=nice)


async def test_the_servers_config_sets_the_workers_niceness(tmp_path: Path) -> None:
    server = Server(tmp_path / "qubic.db", computer_nice=2)
    running = await server.start()
    try:
        await running.pool.wait_ready()  # the server listens before its workers are up
        expected = min(19, _nice(0) + 2)
        assert [_nice(pid) for pid in running.pool.worker_pids()] == [expected]
    finally:
        await server.stop()
