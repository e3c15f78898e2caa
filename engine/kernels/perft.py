"""Perft: the move sequences of a position, counted by playing every one out.

One loop over either of the engine's two push and pop: the search kernel's
(:func:`engine.kernels.negamax.push_counts`, the line counts alone, as a plain C perft keeps
them), or the threat search's (:func:`engine.kernels.threats.push`: a code a line and each
side's counters of open lines by stones, what the master, the threat search, the proof and
the solver read at every node). numba compiles the loop once for each: given no ``deltas`` it
settles the ``deltas is None`` branches while compiling, so each version holds only its own
push and pop. The count checks the moves; its speed is that push and pop's, which is what
bench/perft.py compares with C.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.kernels.negamax import State, pop_counts, push_counts, tables_for
from engine.kernels.threats import Position, pop, push
from engine.rules.board import Board


@njit(cache=True, inline="always")
def _make(cell, side, cells, counts, lines, sums, deltas, line_cells, cell_lines, cell_degree,
          n):
    """Push a stone with the kernel's push, or the threat search's when there are ``deltas``;
    True when it completes a line."""
    if deltas is None:
        return push_counts(cell, side, cells, counts, cell_lines, cell_degree, n)
    return push(cell, side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)


@njit(cache=True, inline="always")
def _unmake(cell, side, cells, counts, lines, sums, deltas, line_cells, cell_lines, cell_degree,
            n):
    """Take back a stone placed by :func:`_make`."""
    if deltas is None:
        pop_counts(cell, side, cells, counts, cell_lines, cell_degree)
    else:
        pop(cell, side, cells, lines, sums, deltas, line_cells, cell_lines, cell_degree, n)


@njit(cache=True)
def perft(
    cells, counts, cell_lines, cell_degree, n, side, depth, lines=None, sums=None, deltas=None,
    line_cells=None,
):
    """The number of move sequences of ``depth`` plies, stopping at won games: with the
    kernel's push and pop, or with the threat search's when ``deltas`` (and ``lines``,
    ``sums`` and ``line_cells``) are given (``counts``, unused then, only typed).

    Every sequence is played out with push and pop, the last ply too. The last ply is a loop
    of its own (as a C perft's recursion is), so the moves that end sequences skip the frame
    stack.
    """
    if depth == 0:
        return 1
    size = cells.shape[0]
    next_cell = np.zeros(depth + 1, dtype=np.int64)
    played = np.zeros(depth + 1, dtype=np.int64)
    total = 0
    k = 0
    to_move = side
    last = depth - 1
    while k >= 0:
        if k == last:
            for cell in range(size):
                if cells[cell] == 0:
                    _make(cell, to_move, cells, counts, lines, sums, deltas, line_cells,
                          cell_lines, cell_degree, n)
                    _unmake(cell, to_move, cells, counts, lines, sums, deltas, line_cells,
                            cell_lines, cell_degree, n)
                    total += 1
            cell = size
        else:
            cell = next_cell[k]
            while cell < size and cells[cell] != 0:
                cell += 1
        if cell == size:  # this frame is done: undo the move that led here
            k -= 1
            if k >= 0:
                to_move = 1 - to_move
                _unmake(played[k], to_move, cells, counts, lines, sums, deltas, line_cells,
                        cell_lines, cell_degree, n)
            continue
        next_cell[k] = cell + 1
        if _make(cell, to_move, cells, counts, lines, sums, deltas, line_cells, cell_lines,
                 cell_degree, n):
            total += 1  # a won game ends its sequence
            _unmake(cell, to_move, cells, counts, lines, sums, deltas, line_cells,
                    cell_lines, cell_degree, n)
        else:
            played[k] = cell
            k += 1
            next_cell[k] = 0
            to_move = 1 - to_move
    return total


def count_sequences(board: Board, depth: int, *, threats: bool = False) -> int:
    """Perft: move sequences of ``depth`` plies from ``board`` (a won game ends a sequence),
    with the kernel's push and pop, or with ``threats`` the threat search's."""
    t = tables_for(board.geometry)
    if not threats:
        state = State.from_board(board)
        return int(perft(state.cells, state.counts, t.cell_lines, t.cell_degree, t.n,
                         state.side, depth))
    pos = Position.from_board(board)
    unused = np.zeros((2, 1), dtype=np.uint8)
    return int(perft(pos.cells, unused, t.cell_lines, t.cell_degree, t.n, pos.side, depth,
                     pos.lines, pos.sums, pos.deltas, t.line_cells))


__all__ = ["count_sequences", "perft"]
