"""``bench/load.py``'s reading of the server's histogram (issue 41): quantiles interpolated
within its buckets, fine enough to tell a millisecond apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server.metrics import ACK_BUCKETS, Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from load import bucket_quantile, server_part  # noqa: E402


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
