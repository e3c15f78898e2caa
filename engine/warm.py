"""Compile every numba kernel the computer players use, before the first real search.

numba compiles a function on its first call (or loads it from its on-disk cache): seconds
of work (about 17 s on a cold cache, well under one on a warm one) that must not land inside
a move's time limit. The server's AI workers call :func:`warm_up` when they start, in the
background, so the server itself never compiles and listens at once; ``qubic analyse`` and
``qubic arena`` call it before they time anything.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

# A stage: its name, the module whose ``warm_up()`` compiles it (imported only when the stage
# runs, so importing this module loads no numba), and its share of the progress bar.
Stage = tuple[str, str, float]

# What the lobby's computer levels use, each stage with its share of a cold compile's time
# (measured: kernel 5 s, master 8 s, solver 4 s), so progress moves about evenly.
LEVELS: tuple[Stage, ...] = (
    ("search kernel", "engine.kernel", 0.30),
    ("master", "engine.search", 0.45),
    ("solver", "engine.solver", 0.25),
    ("proved strategy", "engine.proof", 0.05),
    ("small boards", "engine.small_boards", 0.15),  # the truth's tables (/api/solve): 3 s cold
    ("truth's probe", "engine.probe", 0.02),  # /api/solve off the proof's tree
)
# The sparring partners of other families, which only the arena and analysis use.
SPARRING: tuple[Stage, ...] = (
    ("mcts", "engine.players.mcts", 0.5),
    ("alphabeta", "engine.players.alphabeta", 0.5),
)


def warm_up(progress: Callable[[float], None] | None = None, *, sparring: bool = False) -> float:
    """Compile or load the search kernel, the master's kernels and the df-pn solver the master
    proves with (and with ``sparring`` the other families' players too); returns the
    seconds. ``progress`` is called with the fraction done (0-1) after each stage."""
    started = time.perf_counter()
    stages = LEVELS + SPARRING if sparring else LEVELS
    total = sum(share for _name, _module, share in stages)
    done = 0.0
    for _name, module, share in stages:
        importlib.import_module(module).warm_up()
        done += share
        if progress is not None:
            progress(min(1.0, done / total))
    return time.perf_counter() - started
