"""Compile every numba kernel the computer players use, before the first real search.

numba compiles a function on its first call (or loads it from its on-disk cache): seconds
of work (17-60 s on a cold cache, by the machine and its load; a few on a warm one) that
must not land inside a move's time limit. The server's computer workers call :func:`warm_up` when
they start, in the background, so the server itself never compiles and listens at once;
``qubic analyse`` and ``qubic arena`` call it before they time anything. :func:`cached`
tells a cold cache from a warm one without compiling anything (the server answers the first
moves another way while a cold one compiles: ``server.computer.quick``).
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable

# A stage: its name, the module whose ``warm_up()`` compiles it (imported only when the stage
# runs, so importing this module loads no numba), and its share of the progress bar.
Stage = tuple[str, str, float]

# What the lobby's computer levels (the master, engine.players.LEVELS) and the truth's
# answers use, each stage with its share of a cold compile's time (measured on a cold cache
# on 2 busy cores: master 18 s, solver 10 s, proof 1.4 s, small boards 3.3 s, probe 6.3 s),
# so progress moves about evenly.
LEVELS: tuple[Stage, ...] = (
    ("master", "engine.kernels.deepening", 0.46),
    ("solver", "engine.kernels.solver", 0.26),
    ("proved strategy", "engine.solved.proof", 0.04),
    ("small boards", "engine.solved.small_boards", 0.08),  # the truth's tables (/api/solve)
    ("truth's probe", "engine.solved.probe", 0.16),  # /api/solve off the proof's tree
)
# The search kernel of the papers' players (bogenschutz, rubinoff: 17 s cold, which no level
# needs) and the sparring partners of other families, which only the arena and analysis use.
SPARRING: tuple[Stage, ...] = (
    ("search kernel", "engine.kernels.negamax", 0.5),
    ("mcts", "engine.players.mcts", 0.5),
    ("alphabeta", "engine.players.alphabeta", 0.5),
)
# The kernels whose cache entries tell a warm cache from a cold one: the biggest of the
# master's and the solver's (each compiled on its own, not inlined).
CACHE_WITNESSES: tuple[tuple[str, str], ...] = (
    ("engine.kernels.pvs", "pvs"),
    ("engine.kernels.dfpn", "dfpn"),
)


def cached() -> bool:
    """Whether numba's on-disk cache (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the
    sources) holds the levels' kernels, so :func:`warm_up` only loads them (seconds) rather
    than compiling them (most of a minute on a cold cache): every witness kernel has its
    cache index. Imports the modules, compiles nothing."""
    for module, name in CACHE_WITNESSES:
        kernel = getattr(importlib.import_module(module), name, None)
        cache = getattr(kernel, "_cache", None)
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if index is None or not os.path.exists(index):
            return False
    return True


def warm_up(progress: Callable[[float], None] | None = None, *, sparring: bool = False) -> float:
    """Compile or load the master's kernels, the df-pn solver the master proves with and the
    truth's (and with ``sparring`` the papers' search kernel and the other families' players
    too); returns the seconds. ``progress`` is called with the fraction done (0-1) after
    each stage."""
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
