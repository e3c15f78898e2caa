"""Compile every numba kernel the computer players use, before the first real search.

numba compiles a function on its first call (or loads it from its on-disk cache): seconds
of work that must not land inside a move's time limit. Call :func:`warm_up` once in a parent
process to fill the cache, then in each worker to load it.
"""

from __future__ import annotations


def warm_up() -> float:
    """Compile or load the search kernel, the master's kernels and the df-pn solver the master
    proves with; returns the seconds."""
    from engine import kernel, master, solver

    return kernel.warm_up() + master.warm_up() + solver.warm_up()
