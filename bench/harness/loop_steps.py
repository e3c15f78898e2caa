"""Find the server's long event-loop steps over a stretch of a run: ``bench/arena.py --steps``.

``python -m bench.harness.loop_steps OUT qubic-arguments...`` runs ``qubic``; ``SIGUSR1``
starts a thread that samples the event loop's thread's Python stack every ``INTERVAL``
seconds, ``SIGUSR2`` stops it and writes to ``OUT`` (JSON) every step that ran longer than
``LONG`` seconds of its own (less the time the loop's thread waited for a CPU meanwhile,
from Linux's schedstat: on a busy machine a step is stretched by other processes), grouped
by what ran: its outermost frame above the loop (the task's
coroutine or the callback, e.g. ``read_frames`` or ``Bus._deliver``) and the innermost frame
of the server's own code seen most often in it. It works on uvloop as on asyncio's loop
(nothing of the loop is patched): a step is a run of consecutive samples in which the same
frame sits right above the loop's; the loop waiting for events shows no frame there.

The sampler needs the interpreter's lock to look: while a step runs, it gets it only when
the loop's thread lets it go (at the latter's switch interval, 5 ms by default, or the
step's end), so a step's start is taken as when its first sample was due, and its end as
when the next sample got the lock (or was due): within about an interval of the truth, the
longer ones by the time the loop's thread waits for the lock a switch interval (as it does
for the store's threads; not changed here, so the loop runs as it does unsampled, but for
that wait of a few tens of microseconds each time the sampler asks while a step runs).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import CodeType, FrameType

INTERVAL = 0.001  # seconds between samples
LONG = 0.005  # a step at least this long is listed

_LOOP_FILES = ("asyncio/runners.py", "asyncio/base_events.py", "asyncio/events.py",
               "selectors.py", "uvloop/")


def _where(code: CodeType) -> str:
    short = code.co_filename.split("/site-packages/")[-1]
    for root in ("/server/", "/bench/", "/qubic_cli/"):
        if root in short:
            short = root[1:] + short.split(root, 1)[1]
            break
    return f"{short}:{code.co_qualname}"


class Sampler:
    """Samples ``thread``'s stack and gathers its long steps (the module docstring)."""

    def __init__(self, thread: int, native: int | None = None) -> None:
        self.thread = thread
        self.schedstat = None if native is None else f"/proc/self/task/{native}/schedstat"
        self.stretched = 0  # steps over LONG by the clock but not by their own time
        self.steps: Counter[tuple[str, str]] = Counter()  # (outer, inner) -> long steps
        self.seconds: dict[tuple[str, str], float] = {}  # their total length
        self.longest: dict[tuple[str, str], float] = {}
        self.all_steps = 0
        self.busy = 0.0  # seconds in steps of any length (as sampled)
        self.sampled = 0.0  # seconds sampled
        self.samples = 0
        self.outside = 0  # samples with no loop running on the thread (a fault if many)
        self.first_outside: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="loop-steps", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _sample(self) -> tuple[int, str, str] | None:
        """The step running now: (its outer frame's id, its name, the innermost frame of the
        server's code); None when the loop waits."""
        frame: FrameType | None = sys._current_frames().get(self.thread)
        stack: list[FrameType] = []
        while frame is not None:
            stack.append(frame)
            frame = frame.f_back
        stack.reverse()  # outermost first
        outer = None
        for n, frame in enumerate(stack):
            if frame.f_code.co_filename.endswith("asyncio/runners.py"):
                rest = [f for f in stack[n + 1:]
                        if not any(part in f.f_code.co_filename for part in _LOOP_FILES)]
                if not rest:
                    return None
                outer = rest[0]
                inner = next((f for f in reversed(rest)
                              if "/server/" in f.f_code.co_filename), rest[-1])
                return id(outer), _where(outer.f_code), _where(inner.f_code)
        self.outside += 1
        if self.outside == 1:
            self.first_outside = [_where(f.f_code) for f in stack]
        return None  # not in the loop (starting, stopping)

    def _waited(self) -> float:
        """Seconds the loop's thread has waited for a CPU so far (Linux; else 0)."""
        if self.schedstat is None:
            return 0.0
        try:
            with open(self.schedstat, "rb") as stat:
                return int(stat.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return 0.0

    def _run(self) -> None:
        current: tuple[int, str] | None = None
        began = queued = 0.0
        inner: Counter[str] = Counter()
        started = expected = time.perf_counter()
        while not self._stop.is_set():
            now = time.perf_counter()  # the lock is ours again: the loop's step let it go
            waited = now - expected > INTERVAL / 2
            seen = self._sample()
            self.samples += 1
            key = None if seen is None else seen[:2]
            if key != current:
                waited_for_cpu = self._waited()
                if current is not None:  # it ended when the lock came (or by the sample)
                    self._close(current[1], inner, (now if waited else expected) - began,
                                waited_for_cpu - queued)
                # it began when this sample was due, if the lock was waited for meanwhile
                current, began, inner = key, expected if waited else now, Counter()
                queued = waited_for_cpu
            if seen is not None:
                inner[seen[2]] += 1
            expected = time.perf_counter() + INTERVAL
            time.sleep(INTERVAL)
        self.sampled = time.perf_counter() - started

    def _close(self, outer: str, inner: Counter[str], wall: float, queued: float) -> None:
        """A step ended: ``wall`` seconds by the clock, ``queued`` of them with the loop's
        thread waiting for a CPU (other processes had them): listed by its own time."""
        self.all_steps += 1
        self.busy += wall
        length = wall - queued
        if length < LONG:
            self.stretched += wall >= LONG
            return
        key = (outer, inner.most_common(1)[0][0])
        self.steps[key] += 1
        self.seconds[key] = self.seconds.get(key, 0.0) + length
        self.longest[key] = max(self.longest.get(key, 0.0), length)

    def report(self) -> dict[str, object]:
        return {
            "sampled": self.sampled, "samples": self.samples, "outside": self.outside,
            "first_outside": self.first_outside, "steps": self.all_steps, "busy": self.busy,
            "stretched": self.stretched,
            "long": [{"outer": outer, "inner": inner, "count": count,
                      "seconds": self.seconds[(outer, inner)],
                      "longest": self.longest[(outer, inner)]}
                     for (outer, inner), count in self.steps.most_common()],
        }


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    loop_thread = threading.main_thread().ident
    assert loop_thread is not None
    sampler: list[Sampler] = []

    def start(signum: int, frame: FrameType | None) -> None:
        sampler[:] = [Sampler(loop_thread, threading.main_thread().native_id)]
        sampler[0].start()

    def stop(signum: int, frame: FrameType | None) -> None:
        if sampler:
            sampler[0].stop()
            Path(out).write_text(json.dumps(sampler[0].report()))

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from qubic_cli.main import main as qubic

    return qubic(argv)


if __name__ == "__main__":
    sys.exit(main())
