"""Load-generator processes: the options of a run, how a benchmark splits its bots between
them, waits for what they report, and keeps their garbage collector from stamping moves late."""

from __future__ import annotations

import argparse
import gc
import queue
import time
from collections.abc import Sequence
from typing import Any


def add_run_options(parser: argparse.ArgumentParser, *, games: int, warmup: float,
                    duration: float) -> None:
    """The options every load benchmark takes, with one meaning in each (bench/load.py,
    bench/cluster.py, bench/stack_floor.py): games at once, their pace, the window, and the
    generator processes; the defaults that differ are the script's."""
    parser.add_argument("--games", type=int, default=games,
                        help="concurrent games (default %(default)s)")
    parser.add_argument("--rate", type=float, default=1.0,
                        help="moves per second per game (default %(default)s)")
    parser.add_argument("--warmup", type=float, default=warmup,
                        help="seconds of play before measuring (default %(default)s)")
    parser.add_argument("--duration", type=float, default=duration,
                        help="seconds measured (default %(default)s)")
    parser.add_argument("--procs", type=int, default=2,
                        help="generator processes (default %(default)s)")


def split(n: int, parts: int) -> list[range]:
    """``range(n)`` cut into ``parts`` consecutive ranges of (nearly) equal length."""
    cuts = [n * i // parts for i in range(parts + 1)]
    return [range(cuts[i], cuts[i + 1]) for i in range(parts)]


def wait_for_item(q: Any, workers: Sequence[Any], timeout: float, dead_ok: bool = False) -> Any:
    """The next item on ``q``; fails early if a generator process died without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return q.get(timeout=1.0)
        except queue.Empty:
            if not dead_ok and any(w.exitcode not in (None, 0) for w in workers):
                raise RuntimeError("a generator process died") from None
    raise RuntimeError("the generator processes did not answer in time")


def quiet_collector() -> None:
    """A generator's own hygiene, once its connections are made, as the server's
    (server/http/app.py): what they made stays out of every later collection, and what the
    window keeps (its tallies) brings on no full one. A generator's collection stops its loop
    and stamps the moves arriving meanwhile late."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 1000)
