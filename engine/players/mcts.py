"""Monte Carlo tree search (UCT): a sparring partner of another family than our alpha-beta
players, as Rubinoff compared algorithms.

Each iteration walks down the tree by UCB1 (Kocsis and Szepesvári 2006), adds one child, plays
the game out to its end and backs the result up. Playouts are not uniform: the side to move
completes a line of its own when it can, else blocks the opponent's, else plays at random
(the "win and block" rule of Wood's engine, which makes a playout's result mean something in a
game of forcing threats). The same rule prunes the tree: a node whose side to move can win has
that one child, a node that must block has only the blocks.

The tree lives in flat arrays in one numba kernel (``@njit(cache=True)``) over the search
kernel's incremental line counts; it polls its deadline and the stop flag every
``POLL_EVERY`` iterations. Randomness is a xorshift generator seeded from the player's seed
and the position, so a search limited by iterations replays exactly.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from engine.kernels.negamax import (
    State,
    completing_cells,
    empty_cells,
    now,
    pop_counts,
    push_counts,
    tables_for,
    tally,
)
from engine.players.base import Decision, Forced, Limit, Option, Player, parse_float, parse_int
from engine.rules.board import Board

SAFETY = 0.01  # seconds kept back from a time limit for the answer to travel
CAPACITY = 1 << 21  # tree nodes at most; past it the tree stops growing and playouts go on
DEFAULT_ITERATIONS = 20_000  # iterations when the limit gives neither time nor a stop flag
POLL_EVERY = 64

# node slots in the int32 table
N_MOVE, N_PARENT, N_FIRST, N_SIBLING, N_COUNT, N_TRIED, N_END = 0, 1, 2, 3, 4, 5, 6
NODE_FIELDS = 7
UNEXPANDED = -1  # N_COUNT before the node's candidate moves are counted
# N_END: how the game stands after the node's move
OPEN, WON, DRAWN = 0, 1, 2

# stats slots
S_ITERATIONS, S_DEPTH, S_NODES, S_ABORTED = 0, 1, 2, 3
STATS_SIZE = 4


@njit(cache=True, inline="always")
def _next_random(rng):
    """xorshift64*: advances ``rng[0]`` and returns 63 random bits."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return (x * np.uint64(0x2545F4914F6CDD1D)) >> np.uint64(1)


@njit(cache=True, inline="always")
def _free_count(cells):
    free = 0
    for cell in range(cells.shape[0]):
        if cells[cell] == 0:
            free += 1
    return free


@njit(cache=True)
def _candidates(side, cells, counts, hist, line_cells, n, out):
    """The moves worth trying for ``side``: a win if it has one, else the blocks of the
    opponent's wins, else every empty cell. Written to ``out``; returns their count."""
    if hist[side, n - 1] > 0:
        completing_cells(side, cells, counts, line_cells, n, out)
        return 1
    if hist[1 - side, n - 1] > 0:
        return completing_cells(1 - side, cells, counts, line_cells, n, out)
    return empty_cells(cells, out)


@njit(cache=True)
def _playout(side, cells, counts, hist, cell_lines, cell_degree, line_cells, n, rng,
             empties, played):
    """Play the game out from the position (``side`` to move) by win, else block, else a
    random cell; take every stone back. Returns the winner (0 or 1) or -1 for a draw."""
    size = cells.shape[0]
    free = 0
    for cell in range(size):
        if cells[cell] == 0:
            empties[free] = cell
            free += 1
    plies = 0
    winner = -1
    win = np.empty(1, dtype=np.int32)
    while free > 0:
        if hist[side, n - 1] > 0:
            completing_cells(side, cells, counts, line_cells, n, win)
            cell = win[0]
        elif hist[1 - side, n - 1] > 0:
            completing_cells(1 - side, cells, counts, line_cells, n, win)
            cell = win[0]
        else:
            cell = empties[_next_random(rng) % np.uint64(free)]
        for i in range(free):  # remove ``cell`` from the empties
            if empties[i] == cell:
                free -= 1
                empties[i] = empties[free]
                break
        played[plies] = cell
        plies += 1
        tally(cell, side, counts, hist, cell_lines, cell_degree, 1)
        if push_counts(cell, side, cells, counts, cell_lines, cell_degree, n):
            winner = side
            side = 1 - side
            break
        side = 1 - side
    for i in range(plies - 1, -1, -1):
        side = 1 - side
        pop_counts(played[i], side, cells, counts, cell_lines, cell_degree)
        tally(played[i], side, counts, hist, cell_lines, cell_degree, -1)
    return winner


@njit(cache=True)
def uct(
    cells, counts, hist, cell_lines, cell_degree, line_cells, n, side,
    nodes, visits, wins, capacity, exploration, iterations, deadline, stop, seed, stats,
):
    """Run UCT from the position (``side`` to move) for ``iterations`` iterations (0: no
    limit) or until ``deadline`` (0: none) or the stop flag; returns the iterations run.

    Node 0 is the root. Each iteration adds one node: a random untried move of the first node
    on its path that has one (children are a linked list: ``N_FIRST``, then ``N_SIBLING``).
    ``wins[i]`` counts node i's playouts won by the side that made its move, a draw one half.
    """
    size = cells.shape[0]
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed) | np.uint64(1)
    empties = np.empty(size, dtype=np.int32)
    played = np.empty(size, dtype=np.int32)
    path = np.empty(size + 2, dtype=np.int32)
    moves = np.empty(size, dtype=np.int32)
    marks = np.zeros(size, dtype=np.int64)  # marks[cell] == stamp: a child plays cell
    stamp = 0
    _new_node(nodes, visits, wins, 0, -1, -1)
    used = 1
    done = 0
    while iterations == 0 or done < iterations:
        if done % POLL_EVERY == 0 and (
                stop[0] != 0 or (deadline > 0.0 and now() > deadline)):
            stats[S_ABORTED] = 1
            break
        node = 0
        depth = 0
        to_move = side
        path[0] = 0
        result = -2  # the winner (0/1), -1 for a draw; -2 until known
        while True:
            end = nodes[node, N_END]
            if end == WON:
                result = 1 - to_move
                break
            if end == DRAWN:
                result = -1
                break
            count = nodes[node, N_COUNT]
            if count == UNEXPANDED:
                count = _candidates(to_move, cells, counts, hist, line_cells, n, moves)
                nodes[node, N_COUNT] = count
            tried = nodes[node, N_TRIED]
            fresh = tried < count and used < capacity
            if fresh:  # a new child: a random move among the untried ones
                count = _candidates(to_move, cells, counts, hist, line_cells, n, moves)
                stamp += 1
                child = nodes[node, N_FIRST]
                while child >= 0:
                    marks[nodes[child, N_MOVE]] = stamp
                    child = nodes[child, N_SIBLING]
                untried = 0
                for i in range(count):
                    if marks[moves[i]] != stamp:
                        moves[untried] = moves[i]
                        untried += 1
                chosen = used
                used += 1
                _new_node(nodes, visits, wins, chosen, node,
                          moves[_next_random(rng) % np.uint64(untried)])
                nodes[chosen, N_SIBLING] = nodes[node, N_FIRST]
                nodes[node, N_FIRST] = chosen
                nodes[node, N_TRIED] = tried + 1
            elif tried == 0:
                break  # the tree is full: play out from here
            else:
                log_n = np.log(max(visits[node], 1.0))
                chosen = -1
                top = -1.0
                child = nodes[node, N_FIRST]
                while child >= 0:
                    value = (wins[child] / visits[child]
                             + exploration * np.sqrt(log_n / visits[child]))
                    if value > top:
                        top = value
                        chosen = child
                    child = nodes[child, N_SIBLING]
            cell = nodes[chosen, N_MOVE]
            tally(cell, to_move, counts, hist, cell_lines, cell_degree, 1)
            won = push_counts(cell, to_move, cells, counts, cell_lines, cell_degree, n)
            depth += 1
            path[depth] = chosen
            played[depth - 1] = cell
            to_move = 1 - to_move
            node = chosen
            if fresh:
                if won:
                    nodes[node, N_END] = WON
                    result = 1 - to_move
                elif _free_count(cells) == 0:
                    nodes[node, N_END] = DRAWN
                    result = -1
                break
        if result == -2:
            result = _playout(to_move, cells, counts, hist, cell_lines, cell_degree,
                              line_cells, n, rng, empties, moves)
        if depth > stats[S_DEPTH]:
            stats[S_DEPTH] = depth
        for k in range(depth, -1, -1):  # back up; undo the tree's moves
            at = path[k]
            visits[at] += 1.0
            if k > 0:
                mover = (side + k - 1) % 2
                if result == mover:
                    wins[at] += 1.0
                elif result == -1:
                    wins[at] += 0.5
                pop_counts(played[k - 1], mover, cells, counts, cell_lines, cell_degree)
                tally(played[k - 1], mover, counts, hist, cell_lines, cell_degree, -1)
        done += 1
    stats[S_ITERATIONS] = done
    stats[S_NODES] = used
    return done


@njit(cache=True, inline="always")
def _new_node(nodes, visits, wins, node, parent, move):
    nodes[node, N_MOVE] = move
    nodes[node, N_PARENT] = parent
    nodes[node, N_FIRST] = -1
    nodes[node, N_SIBLING] = -1
    nodes[node, N_COUNT] = UNEXPANDED
    nodes[node, N_TRIED] = 0
    nodes[node, N_END] = OPEN
    visits[node] = 0.0
    wins[node] = 0.0


class MctsPlayer(Player):
    """UCT with win-and-block playouts; plays the most visited move.

    A limit with a time searches until it (or ``iterations``, if set, whichever comes
    first); one with neither a time nor ``iterations`` runs ``DEFAULT_ITERATIONS``. MCTS has
    no search depth, so ``Limit.depth`` does not bound it. ``Decision.score`` is the chosen
    move's share of playouts won, scaled to -1000 (all lost) .. 1000 (all won);
    ``Decision.nodes`` counts iterations (one playout each) and ``depth`` the deepest path.
    """

    name = "mcts"
    summary = "UCT Monte Carlo tree search, win-and-block playouts"
    options = {
        "time": Option(parse_float(0.01, 3600.0), 1.0, "seconds a move if the limit has none"),
        "iterations": Option(parse_int(0, 1_000_000_000), 0,
                             "iterations (playouts) at most; 0: until the time is up"),
        "c": Option(parse_float(0.0, 10.0), 0.5, "UCB1 exploration constant"),
    }

    def __init__(self, seed: int = 0, **settings: object) -> None:
        super().__init__(seed, **settings)
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _tree(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The node table, visits and wins, made once per player (pages touched as used)."""
        if self._arrays is None:
            self._arrays = (np.empty((CAPACITY, NODE_FIELDS), dtype=np.int32),
                            np.empty(CAPACITY, dtype=np.float64),
                            np.empty(CAPACITY, dtype=np.float64))
        return self._arrays

    def _decide(self, board: Board, limit: Limit) -> Decision:
        started = limit.start()
        t = tables_for(board.geometry)
        state = State.from_board(board)
        line_cells = np.ascontiguousarray(np.array(board.geometry.lines, dtype=np.int32))
        moves = np.empty(t.size, dtype=np.int32)
        count = _candidates(state.side, state.cells, state.counts, state.hist, line_cells,
                            t.n, moves)
        if state.hist[state.side, t.n - 1] > 0:  # a free win
            return Decision(move=int(moves[0]), score=1000, depth=1, pv=(int(moves[0]),),
                            forced=Forced("win", 1), elapsed=time.perf_counter() - started)
        if count == 1:  # the one block
            return Decision(move=int(moves[0]), depth=1, pv=(int(moves[0]),),
                            elapsed=time.perf_counter() - started)
        seconds = limit.time
        iterations = int(self.settings["iterations"])
        if seconds is None and not iterations and limit.depth is None:
            seconds = float(self.settings["time"])
        if not seconds and not iterations:
            iterations = DEFAULT_ITERATIONS
        deadline = started + max(seconds - SAFETY, 0.001) if seconds else 0.0
        stop = limit.stop if limit.stop is not None else np.zeros(1, dtype=np.int8)
        nodes, visits, wins = self._tree()
        stats = np.zeros(STATS_SIZE, dtype=np.int64)
        seed = self.rng(board).getrandbits(63)
        uct(state.cells, state.counts, state.hist, t.cell_lines, t.cell_degree, line_cells,
            t.n, state.side, nodes, visits, wins, CAPACITY, float(self.settings["c"]),
            iterations, deadline, stop, seed, stats)
        pv = _principal_variation(nodes, visits, wins)
        if not pv:  # stopped before the first iteration
            return Decision(move=int(moves[0]), elapsed=time.perf_counter() - started)
        best = _most_visited(nodes, visits, wins, 0)
        rate = wins[best] / visits[best]
        forced = Forced("win", 1) if nodes[best, N_END] == WON else None
        return Decision(
            move=pv[0], score=round(2000 * rate - 1000), depth=int(stats[S_DEPTH]),
            nodes=int(stats[S_ITERATIONS]), evaluations=int(stats[S_ITERATIONS]), pv=pv,
            elapsed=time.perf_counter() - started, forced=forced,
        )


def _most_visited(nodes: np.ndarray, visits: np.ndarray, wins: np.ndarray, node: int) -> int:
    """The child of ``node`` with the most visits (then the most wins), or -1."""
    children = []
    child = int(nodes[node, N_FIRST])
    while child >= 0:
        children.append(child)
        child = int(nodes[child, N_SIBLING])
    if not children:
        return -1
    best = max(children, key=lambda c: (visits[c], wins[c]))
    return best if visits[best] > 0 else -1


def _principal_variation(nodes: np.ndarray, visits: np.ndarray,
                         wins: np.ndarray) -> tuple[int, ...]:
    """The moves of the most visited path from the root."""
    line = []
    node = _most_visited(nodes, visits, wins, 0)
    while node >= 0:
        line.append(int(nodes[node, N_MOVE]))
        node = _most_visited(nodes, visits, wins, node)
    return tuple(line)


def warm_up() -> float:
    """Compile (or load from cache) the UCT kernel; returns the seconds it took."""
    started = time.perf_counter()
    MctsPlayer(iterations=50).decide(Board("3x3", [4]))
    return time.perf_counter() - started


__all__ = ["MctsPlayer", "warm_up"]
