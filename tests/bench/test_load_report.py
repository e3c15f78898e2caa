"""``bench/load.py``'s reading of the server's histogram (issue 41): quantiles interpolated
within its buckets, fine enough to tell a millisecond apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server.metrics import ACK_BUCKETS, Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from load import bucket_quantile, by_thread, server_part, thread_times  # noqa: E402


def scrape(metrics: Metrics) -> dict[str, float]:
    """``/metrics`` as ``ServerProcess.metrics`` reads it: each series' value by its name."""
    lines = metrics.render().splitlines()
    return {name: float(value) for name, _, value in
            (line.rpartition(" ") for line in lines if line and not line.startswith("#"))}


def test_a_quantile_is_interpolated_within_its_bucket() -> None:
    cumulative = [(0.001, 10.0), (0.002, 30.0), (0.005, 40.0), (float("inf"), 40.0)]
    assert bucket_quantile(cumulative, 0.25) == pytest.approx(0.001 * 10 / 10)
    assert bucket_quantile(cumulative, 0.5) == pytest.approx(0.0015)  # 20 of 40: midway
    assert bucket_quantile(cumulative, 0.875) == pytest.approx(0.0035)
    assert bucket_quantile([(0.001, 1.0), (float("inf"), 2.0)], 0.99) == float("inf")


def test_the_servers_part_is_read_between_two_scrapes_to_a_fraction_of_a_millisecond() -> None:
    """Moves observed before the first scrape do not count; the quantiles of those between
    fall where they were observed, not at a bucket's bound (ACK_BUCKETS are fine enough)."""
    metrics = Metrics()
    for _ in range(100):
        metrics.move_ack.observe(0.5)  # before the window: not counted
    before = scrape(metrics)
    for i in range(100):
        metrics.move_ack.observe(0.0031 + i * 0.00001)  # 3.1 to 4.09 ms
    part = server_part(before, scrape(metrics))
    assert part.endswith("100 moves")
    assert float(part.split("mean ")[1].split()[0]) == pytest.approx(3.595, abs=0.006)
    p50 = float(part.split("p50 ")[1].split()[0])
    assert 3.0 <= p50 <= 4.1  # the bucket 3-4 ms, not its bound alone
    assert ACK_BUCKETS.index(0.003) + 1 == ACK_BUCKETS.index(0.004)


def test_each_thread_is_read_with_its_wait_for_a_cpu() -> None:
    """``thread_times`` reads this process's threads: the main thread under the process's
    own id, with CPU seconds and seconds waited for a CPU (the load's part, told apart from
    the server's work)."""
    import os
    import threading

    times = thread_times(os.getpid())
    assert threading.main_thread().native_id in times
    cpu, waited = times[os.getpid()]
    assert cpu > 0
    assert waited >= 0 or waited != waited  # NaN where the kernel keeps no schedstat


def test_threads_are_named_by_their_share_between_two_readings() -> None:
    before = {10: (1.0, 0.5), 11: (2.0, 0.1), 12: (5.0, 1.0)}
    after = {10: (1.5, 0.75), 11: (2.1, 0.2), 12: (5.3, 1.2), 13: (0.05, 0.01)}
    threads = by_thread(10, before, after)
    assert list(threads) == ["loop", "thread 1", "thread 2", "thread 3"]
    assert threads["loop"] == pytest.approx((0.5, 0.25))
    assert threads["thread 1"] == pytest.approx((0.3, 0.2))  # thread 12, the largest
    assert threads["thread 2"] == pytest.approx((0.1, 0.1))
    assert threads["thread 3"] == pytest.approx((0.05, 0.01))  # started in between
