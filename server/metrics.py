"""Counters and gauges for ``GET /metrics`` in the Prometheus text format, a probe of
event-loop lag (how late a timer fires): the figure that shows whether anything blocks it,
and the garbage collector's pauses, the usual cause when something does."""

from __future__ import annotations

import asyncio
import bisect
import gc
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence

from server.exposition import (
    COUNTERS,
    header,
    render_counters,
    render_errors,
    render_gauges,
    render_histogram,
    render_process,
)


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by nearest rank; 0 for none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


LAG_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""Upper bounds (seconds) of the lag histogram's buckets."""

ACK_BUCKETS = (
    0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125,
    0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0,
)
"""Upper bounds (seconds) of ``move_ack_seconds``' buckets: fine enough that a quantile
interpolated within one (``bench/load.py``) is within a fraction of a millisecond below 5 ms
and of a group commit's window above it."""


SCHEDSTAT = "/proc/thread-self/schedstat"
"""Linux: the calling thread's time on a CPU, time runnable but waiting for one (run-queue
wait), both in nanoseconds, and its number of time slices."""


def runqueue_wait() -> float | None:
    """Seconds this thread has spent runnable but not running since it started: the time the
    machine, not the program, kept it waiting. None where the kernel does not say."""
    try:
        with open(SCHEDSTAT, "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class LoopLagProbe:
    """Sleeps ``interval`` seconds over and over and keeps how late each wake-up was: the
    last ``keep`` samples for quantiles, and a histogram of them all since the start, whose
    difference between two scrapes gives the lag over just that time.

    On Linux each sample is also split: the part of the lag in which the loop's thread was
    runnable but waiting for a CPU (other processes had them) and the rest, the loop's own
    (code that ran too long, a collection). The second histogram counts the own part, so a
    busy machine is told apart from a blocked loop. The loop's pacing under load
    (``server.store.pacing``: it waits for commits and naps on purpose) is not its own part
    either: ``paused``, when set, reads the seconds paced so far."""

    def __init__(self, interval: float = 0.05, keep: int = 4000,
                 waited: Callable[[], float | None] = runqueue_wait) -> None:
        self.interval = interval
        self.read_waited = waited
        self.samples: deque[float] = deque(maxlen=keep)
        self.buckets = [0] * (len(LAG_BUCKETS) + 1)  # the last one: over the largest bound
        self.own_buckets = [0] * (len(LAG_BUCKETS) + 1)
        self.total = 0.0
        self.waited = 0.0  # run-queue wait within the samples' intervals, seconds
        self.paused: Callable[[], float] | None = None  # seconds paced so far, if paced
        self.paced = 0.0  # of the lag, the pacing's pauses, seconds
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-lag-probe")

    async def _run(self) -> None:
        waited_before = self.read_waited()
        paused_before = 0.0 if self.paused is None else self.paused()
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.interval)
            lag = max(0.0, time.perf_counter() - before - self.interval)
            waited_after = self.read_waited()
            waited = (0.0 if waited_before is None or waited_after is None
                      else min(lag, waited_after - waited_before))
            waited_before = waited_after
            paused_after = 0.0 if self.paused is None else self.paused()
            paced = min(lag - waited, paused_after - paused_before)
            paused_before = paused_after
            self.samples.append(lag)
            self.buckets[bisect.bisect_left(LAG_BUCKETS, lag)] += 1
            self.own_buckets[bisect.bisect_left(LAG_BUCKETS, lag - waited - paced)] += 1
            self.total += lag
            self.waited += waited
            self.paced += paced

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def quantile(self, q: float) -> float:
        return percentile(self.samples, q)


class GCPauses:
    """Times every collection of the cyclic garbage collector, per generation, while started.

    A full (generation 2) collection walks every tracked object and holds the event loop for
    as long: with a large heap it is the event loop's longest pause.
    """

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.total = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]
        self._started_at = 0.0

    def start(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def stop(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started_at = time.perf_counter()
            return
        generation = info["generation"]
        pause = time.perf_counter() - self._started_at
        self.count[generation] += 1
        self.total[generation] += pause
        self.longest[generation] = max(self.longest[generation], pause)


class Histogram:
    """Counts of observed seconds over ``bounds`` (and +Inf) and their sum: one bisect
    and two additions an observation."""

    __slots__ = ("bounds", "buckets", "total")

    def __init__(self, bounds: Sequence[float] = LAG_BUCKETS) -> None:
        self.bounds = tuple(bounds)
        self.buckets = [0] * (len(self.bounds) + 1)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def read(self) -> tuple[list[int], float]:
        return self.buckets, self.total


class Metrics:
    """What the server counts; rendered by :meth:`render` with gauges read at that moment."""

    def __init__(self, *, version: str = "unknown", error_codes: Sequence[str] = ()) -> None:
        self.version = version  # qubic_build_info's label
        self.error_codes = tuple(error_codes)  # exported at 0 before the first refusal
        self.counters: Counter[str] = Counter(dict.fromkeys(COUNTERS, 0))  # 0 from the start
        self.errors: Counter[str] = Counter()
        self.lag = LoopLagProbe()
        self.gc = GCPauses()
        self.gauges: dict[str, Callable[[], float]] = {}
        # histograms kept elsewhere (bucket counts over LAG_BUCKETS, unless ``bounds`` says
        # other bounds, and +Inf, and their sum)
        self.histograms: dict[str, Callable[[], tuple[list[int], float]]] = {}
        self.bounds: dict[str, Sequence[float]] = {}
        # a move's frame in to its ack queued for the socket (written at the end of that turn
        # of the loop): the server's own part of a move's latency, the store's commit included
        self.move_ack = Histogram(ACK_BUCKETS)
        self.histograms["move_ack_seconds"] = self.move_ack.read
        self.bounds["move_ack_seconds"] = ACK_BUCKETS

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] += amount

    def error(self, code: str) -> None:
        self.errors[code] += 1

    def render(self) -> str:
        """The Prometheus text exposition of every figure (``server.exposition``)."""
        lines: list[str] = []
        render_counters(lines, self.counters.items())
        render_errors(lines, self.errors.items(), self.error_codes)
        render_gauges(lines, self.gauges)
        header(lines, "event_loop_lag_seconds", "summary")
        for q in (0.5, 0.99, 1.0):
            lag = self.lag.quantile(q)
            lines.append(f'qubic_event_loop_lag_seconds{{quantile="{q}"}} {lag:.6f}')
        probe = self.lag
        histograms = {
            "event_loop_lag_histogram_seconds": (probe.buckets, probe.total),
            "event_loop_own_lag_histogram_seconds": (
                probe.own_buckets, probe.total - probe.waited - probe.paced),
            **{name: read() for name, read in self.histograms.items()},
        }
        for name, (counts, total) in histograms.items():
            render_histogram(lines, name, self.bounds.get(name, LAG_BUCKETS), counts, total)
        header(lines, "gc_pause_seconds", "summary")
        for generation in range(3):
            label = f'generation="{generation}"'
            lines += [
                f"qubic_gc_pause_seconds_count{{{label}}} {self.gc.count[generation]}",
                f"qubic_gc_pause_seconds_sum{{{label}}} {self.gc.total[generation]:.6f}",
                f'qubic_gc_pause_seconds{{{label},quantile="1.0"}} '
                f"{self.gc.longest[generation]:.6f}",
            ]
        render_process(lines, self.version)
        return "\n".join(lines) + "\n"
