"""A warm-up for the computer workers that waits for a gate file, so a test can hold the engine in
its 'preparing' state as long as it likes (as a cold numba cache does for about 17 s)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from engine import warm

GATE_TIMEOUT = 120.0  # seconds: a test that never opens the gate still ends


def gated_warm_up(gate: str, progress: Callable[[float], None]) -> float:
    """Report a third done, wait for ``gate`` to exist, then warm up for real."""
    progress(1 / 3)
    deadline = time.monotonic() + GATE_TIMEOUT
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return warm.warm_up(lambda done: progress(1 / 3 + done * 2 / 3))
