"""Counters and gauges for ``GET /metrics`` in the Prometheus text format, and a probe of
event-loop lag (how late a timer fires): the figure that shows whether anything blocks it."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by nearest rank; 0 for none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class LoopLagProbe:
    """Sleeps ``interval`` seconds over and over and keeps how late each wake-up was."""

    def __init__(self, interval: float = 0.05, keep: int = 4000) -> None:
        self.interval = interval
        self.samples: deque[float] = deque(maxlen=keep)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-lag-probe")

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.interval)
            self.samples.append(max(0.0, time.perf_counter() - before - self.interval))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def quantile(self, q: float) -> float:
        return percentile(self.samples, q)


class Metrics:
    """What the server counts; rendered by :meth:`render` with gauges read at that moment."""

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.lag = LoopLagProbe()
        self.gauges: dict[str, Callable[[], float]] = {}

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] += amount

    def error(self, code: str) -> None:
        self.errors[code] += 1

    def render(self) -> str:
        lines: list[str] = []
        for name, value in sorted(self.counters.items()):
            lines += [f"# TYPE qubic_{name}_total counter", f"qubic_{name}_total {value}"]
        lines.append("# TYPE qubic_errors_total counter")
        for code, value in sorted(self.errors.items()):
            lines.append(f'qubic_errors_total{{code="{code}"}} {value}')
        declared: set[str] = set()
        for name, read in sorted(self.gauges.items()):
            family = name.partition("{")[0]
            if family not in declared:
                declared.add(family)
                lines.append(f"# TYPE qubic_{family} gauge")
            lines.append(f"qubic_{name} {read():g}")
        lines.append("# TYPE qubic_event_loop_lag_seconds summary")
        for q in (0.5, 0.99, 1.0):
            lag = self.lag.quantile(q)
            lines.append(f'qubic_event_loop_lag_seconds{{quantile="{q}"}} {lag:.6f}')
        return "\n".join(lines) + "\n"
