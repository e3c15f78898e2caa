"""Compile every numba kernel the computer players use, before the first real search.

numba compiles a function on its first call (or loads it from its on-disk cache): seconds
of work (about 17 s on a cold cache, well under one on a warm one) that must not land inside
a move's time limit. The server's AI workers call :func:`warm_up` when they start, in the
background, so the server itself never compiles and listens at once; ``qubic analyse`` and
``qubic arena`` call it before they time anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _kernel() -> float:
    from engine import kernel

    return kernel.warm_up()


def _master() -> float:
    from engine import search

    return search.warm_up()


def _solver() -> float:
    from engine import solver

    return solver.warm_up()


def _proof() -> float:
    from engine import proof

    return proof.warm_up()


def _mcts() -> float:
    from engine.players import mcts

    return mcts.warm_up()


def _alphabeta() -> float:
    from engine.players import alphabeta

    return alphabeta.warm_up()


Stage = tuple[str, Callable[[], float], float]

# What the lobby's computer levels use, each stage with its share of a cold compile's time
# (measured: kernel 5 s, master 8 s, solver 4 s), so progress moves about evenly.
LEVELS: tuple[Stage, ...] = (
    ("search kernel", _kernel, 0.30),
    ("master", _master, 0.45),
    ("solver", _solver, 0.25),
    ("proved strategy", _proof, 0.05),
)
# The sparring partners of other families, which only the arena and analysis use.
SPARRING: tuple[Stage, ...] = (("mcts", _mcts, 0.5), ("alphabeta", _alphabeta, 0.5))


def warm_up(progress: Callable[[float], None] | None = None, *, sparring: bool = False) -> float:
    """Compile or load the search kernel, the master's kernels and the df-pn solver the master
    proves with (and with ``sparring`` the other families' players too); returns the
    seconds. ``progress`` is called with the fraction done (0-1) after each stage."""
    started = time.perf_counter()
    stages = LEVELS + SPARRING if sparring else LEVELS
    total = sum(share for _name, _stage, share in stages)
    done = 0.0
    for _name, stage, share in stages:
        stage()
        done += share
        if progress is not None:
            progress(min(1.0, done / total))
    return time.perf_counter() - started
