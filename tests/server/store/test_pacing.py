"""The paced loop (server.store.pacing, issue 41): under load the event loop waits for each
group's commit and naps until the next window ends; a commit's results reach the loop's
callbacks before the nap; a small group, no window or ``pacing=False`` leave the loop alone.

Each scenario runs on asyncio's loop and on uvloop (the server's default), whose turns differ
in their machinery but not in what a turn is. The windows are long (a third of a second) and
only lower bounds on time are asserted: a sleep never ends early, however busy the machine."""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import uvloop

from server.game.records import GameRecord, MoveRecord, Seat
from server.metrics import LAG_BUCKETS, LoopLagProbe
from server.store.pacing import DRAIN_TURNS, LEAD, LoopPacer, WriterProgress
from server.store.sqlite import SQLiteStore

ALICE, BOB = Seat.human("Alice"), Seat.human("Bob")
WINDOW = 0.3
LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


def run_on(loop: str, scenario: Callable[[], Awaitable[None]]) -> None:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        runner.run(scenario())  # type: ignore[arg-type]


async def turns(count: int) -> None:
    """Let ``count`` turns of the loop go by (a callback that queues itself again each)."""
    for _ in range(count):
        done = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(done.set_result, None)
        await done


async def started(store: SQLiteStore, count: int) -> list[GameRecord]:
    """``count`` games started one after another (each at once, whatever the window)."""
    return [await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False,
                                    now=0) for _ in range(count)]


async def a_loaded_group(store: SQLiteStore, moves: int) -> list[asyncio.Task[None]]:
    """``moves`` games started, then a move in each, gathered in one group that waits for
    the window."""
    return [asyncio.create_task(store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0)))
            for game in await started(store, moves)]


async def paced_by_a_group(store: SQLiteStore, moves: int) -> tuple[int, int]:
    """The pacer's commit waits and naps after a loaded group of ``moves`` is acknowledged
    and the turns a drain takes have gone by."""
    assert store.pacer is not None
    await asyncio.gather(*await a_loaded_group(store, moves))
    await turns(DRAIN_TURNS + 2)
    return store.pacer.commit_waits, store.pacer.naps


@pytest.mark.parametrize("loop", LOOPS)
def test_under_load_the_loop_waits_for_the_commit_then_naps_until_the_window_ends(
        tmp_path: Path, loop: str) -> None:
    async def scenario() -> None:
        store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=WINDOW)
        assert store.pacer is not None
        store.pacer.nap_min = 3
        try:
            moves = await a_loaded_group(store, 3)
            await asyncio.gather(*moves)  # acknowledged: committed, in one group
            handed_at = store.handed_at
            assert store.pacer.commit_waits == 1 and store.pacer.naps == 0
            # A timer due in 10 ms fires only after the nap: at the next window's end, less
            # the lead (and never early).
            fired = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_later(
                0.01, lambda: fired.set_result(time.monotonic()))
            woke = await fired
            assert store.pacer.naps == 1
            assert woke >= handed_at + WINDOW - store.pacer.lead - 0.005
            assert store.pacer.napped > WINDOW / 2
            assert store.pacer.paused == store.pacer.napped + store.pacer.commit_waited
        finally:
            await store.close()

    run_on(loop, scenario)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_commits_results_reach_the_loop_before_the_nap(tmp_path: Path, loop: str) -> None:
    """A commit's results go out within four turns of the loop (pacing.DRAIN_TURNS): the
    writer's callback resolves the moves' futures (1); each mover's coroutine resumes, queues
    its ack and publishes its batch (2); the mover's socket is written and the batch delivered
    to the opponent's session (3), whose socket is written (4). Such a chain runs before the
    loop naps."""
    async def scenario() -> None:
        store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=WINDOW)
        assert store.pacer is not None
        store.pacer.nap_min = 2
        loop = asyncio.get_running_loop()
        games = await started(store, 2)
        written: list[int] = []  # the naps so far as each "socket" is written

        def write() -> None:
            written.append(store.pacer.naps if store.pacer else -1)

        async def mover(game_id: str) -> None:
            await store.record_move(game_id, MoveRecord(1, 0, None, None, 1.0))  # (2)
            loop.call_soon(write)  # the mover's flush (3)
            loop.call_soon(lambda: loop.call_soon(write))  # the delivery (3), its flush (4)

        try:
            await asyncio.gather(*(mover(game.id) for game in games))
            await turns(DRAIN_TURNS + 2)
            # each written before the nap (no upper bound on time: a busy machine's fsync
            # may take longer than any bound, and the order is what is asserted)
            assert written == [0, 0, 0, 0]
            assert store.pacer.naps == 1  # and then it napped
        finally:
            await store.close()

    run_on(loop, scenario)


async def test_a_small_group_leaves_the_loop_alone(tmp_path: Path) -> None:
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=WINDOW)
    assert store.pacer is not None and store.pacer.nap_min > 2
    try:
        assert await paced_by_a_group(store, 2) == (0, 0)
    finally:
        await store.close()


async def test_without_a_window_or_with_pacing_off_nothing_is_paced(tmp_path: Path) -> None:
    unpaced = await SQLiteStore.open(tmp_path / "a.db", commit_interval=WINDOW, pacing=False)
    try:
        assert unpaced.pacer is None
        await asyncio.gather(*await a_loaded_group(unpaced, 8))
    finally:
        await unpaced.close()
    windowless = await SQLiteStore.open(tmp_path / "b.db", commit_interval=0.0)
    assert windowless.pacer is not None
    windowless.pacer.nap_min = 1
    try:
        assert await paced_by_a_group(windowless, 8) == (0, 0)
    finally:
        await windowless.close()


class Window:
    def __init__(self, interval: float) -> None:
        self.commit_interval, self.hand_overs, self.handed_at = interval, 0, 0.0

    def hand_over(self, at: float) -> None:
        self.hand_overs += 1
        self.handed_at = at


async def test_the_lead_grows_when_a_group_went_late_and_shrinks_back() -> None:
    """After a nap the next group should go when its window ends; when it went later (the
    frames read after the nap took longer than the lead) the next nap ends earlier by as
    much, and the lead comes back down a tenth a window while groups go on time."""
    window, progress = Window(0.02), WriterProgress()
    pacer = LoopPacer(asyncio.get_running_loop(), window, progress, nap_min=1)
    assert pacer.lead == LEAD
    window.hand_over(time.monotonic())
    pacer.handed_over(1)
    progress.committed(1)
    while pacer.active:
        await asyncio.sleep(0)
    assert pacer.naps == 1
    window.hand_over(window.handed_at + window.commit_interval + 0.004)  # 4 ms late
    pacer.handed_over(1)
    assert pacer.lead == pytest.approx(LEAD + 0.004)
    progress.committed(1)
    while pacer.active:
        await asyncio.sleep(0)
    window.hand_over(window.handed_at + window.commit_interval)  # on time
    pacer.handed_over(1)
    assert pacer.lead == pytest.approx((LEAD + 0.004) * 0.9)
    pacer.stop()


async def test_the_lag_probe_counts_the_pacing_apart() -> None:
    """A pause of the paced loop is lag, but not the loop's own (the own-lag histogram). The
    nap is long (0.3 s) beside the bucket that bounds the own lag (0.2 s), and the time the
    machine keeps the loop from a core is not its own either (the probe's own reader): a busy
    machine cannot make a sample's own lag pass it."""
    paused = [0.0]
    probe = LoopLagProbe(interval=0.01)
    probe.paused = lambda: paused[0]
    probe.start()
    try:
        await asyncio.sleep(0.03)
        time.sleep(0.3)  # a nap of the paced loop's
        paused[0] += 0.3
        await asyncio.sleep(0.03)
    finally:
        probe.stop()
    assert max(probe.samples) >= 0.29
    assert probe.paced >= 0.29
    within = bisect.bisect_left(LAG_BUCKETS, 0.2)  # the bucket that holds 0.2 s
    assert sum(probe.own_buckets[within + 1:]) == 0  # the nap is not the loop's own lag
    assert sum(probe.buckets[within + 1:]) >= 1  # though it is lag
