"""Percentiles for the figures, by one rule: the server's own (``server.metrics.percentile``,
nearest rank), so a p99 the bench prints and one the server exports are read alike."""

from __future__ import annotations

from collections.abc import Sequence

from server.metrics import percentile

__all__ = ["ms", "percentile", "percentiles"]


def percentiles(values: Sequence[float], qs: Sequence[float] = (0.5, 0.95, 0.99)) -> list[float]:
    """The ``qs`` quantiles (0-1) of ``values``; NaN for each when there are none (a figure
    that was not measured must not read as zero)."""
    if not values:
        return [float("nan")] * len(qs)
    return [percentile(values, q) for q in qs]


def ms(values: Sequence[float]) -> str:
    """Seconds as ``p50 … ms, p95 … ms, p99 … ms``."""
    p50, p95, p99 = percentiles(values)
    return f"p50 {p50 * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms"
