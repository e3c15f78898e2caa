"""Players that search with the numba kernel: Bogenschutz (seed 000) and Rubinoff (seed 001).

Both are minimax over the kernel with a static evaluator read off the open-line histogram:
weights ``mine[k]`` and ``theirs[k]`` for each line holding k stones of one side and none of
the other, counted from the point of view of the player who is searching (as the papers'
minimax did), not of the side to move at the leaf.
"""

from __future__ import annotations

import time

import numpy as np

from engine.kernels import negamax as kernel
from engine.players.base import (
    Decision,
    Forced,
    Limit,
    Option,
    Player,
    parse_bool,
    parse_choice,
    parse_int,
)
from engine.rules.board import Board

SAFETY = 0.005  # seconds kept back from a time limit for the answer to travel


class SearchingPlayer(Player):
    """Fixed-depth minimax (alpha-beta on or off) over a histogram evaluator.

    With a time limit it deepens iteratively up to its depth and answers with the deepest
    search that finished. Among equally scored root moves it picks at random (seeded): the
    root moves are shuffled before the search, which keeps the first best it meets.
    """

    def weights(self, board: Board) -> tuple[int, np.ndarray, np.ndarray]:
        """``(kind, mine, theirs)`` for the kernel's evaluator on this board."""
        raise NotImplementedError

    @property
    def depth(self) -> int:
        return int(self.settings["depth"])

    def choices(self, board: Board) -> list[int]:
        """Every move this player can answer with on ``board`` under a time limit it does not
        run out of: the moves tying for the best score of the last iteration (deepening stops
        at its depth or at the first proved result). The seeded shuffle makes each of them
        equally likely, so these are the branches of every game the player can play."""
        return self.scored_choices(board)[0]

    def scored_choices(self, board: Board) -> tuple[list[int], int]:
        """:meth:`choices` and the score they tie for (a mate score when proved)."""
        kind, mine, theirs = self.weights(board)
        moves = board.legal_moves
        best: list[int] = []
        top = 0
        for d in range(1, min(self.depth, board.empty.bit_count()) + 1):
            scores = {}
            for move in moves:  # alone at the root, a move's score is exact, not a bound
                result = kernel.search(board, d, alphabeta=bool(self.settings["ab"]),
                                       kind=kind, w_mine=mine, w_theirs=theirs,
                                       root_moves=[move])
                scores[move] = int(result.scores[result.best])
            top = max(scores.values())
            best = [move for move in moves if scores[move] == top]
            if kernel.mate_plies(top) is not None:
                break
        return best, top

    def _decide(self, board: Board, limit: Limit) -> Decision:
        started = limit.start()
        depth = min(limit.depth or self.depth, board.empty.bit_count())
        deadline = started + limit.time - SAFETY if limit.time else 0.0
        kind, mine, theirs = self.weights(board)
        moves = board.legal_moves
        self.rng(board).shuffle(moves)
        depths = range(1, depth + 1) if deadline or limit.stop is not None else (depth,)
        found: kernel.RootResult | None = None
        reached = 0
        nodes = evaluations = interior = children = 0
        for d in depths:
            result = kernel.search(
                board, d, alphabeta=bool(self.settings["ab"]), kind=kind,
                w_mine=mine, w_theirs=theirs, deadline=deadline, root_moves=moves,
                stop=limit.stop,
            )
            nodes += result.nodes
            evaluations += result.evaluations
            interior += result.interior
            children += result.children
            if result.aborted:
                if found is None and result.best >= 0:
                    found = result  # a partial first iteration beats no answer at all
                break
            found, reached = result, d
            if kernel.mate_plies(int(result.scores[result.best])) is not None:
                break  # a proved result does not change with depth
        elapsed = time.perf_counter() - started
        if found is None:
            return Decision(move=moves[0], elapsed=elapsed, nodes=nodes)
        score = int(found.scores[found.best])
        plies = kernel.mate_plies(score) if reached else None
        forced = None
        if plies is not None:
            forced = Forced("win" if score > 0 else "loss", plies)
        return Decision(
            move=int(found.moves[found.best]),
            score=score,
            depth=reached,
            nodes=nodes,
            evaluations=evaluations,
            pv=found.pv,
            elapsed=elapsed,
            forced=forced,
            branching=children / interior if interior else None,
        )


class BogenschutzPlayer(SearchingPlayer):
    """Seed 000: per open line 10000/100/10/1 for 3/2/1/0 stones, computer minus user,
    4-ply alpha-beta. On other boards the weights run 1, 10, 100, ... with the line one
    stone short of a win worth 100 times the one below it (10000 on 4x4x4)."""

    name = "bogenschutz"
    summary = "4-ply alpha-beta, per-line 10000/100/10/1 heuristic (Bogenschutz 2010)"
    options = {
        "depth": Option(parse_int(1, 8), 4, "plies of lookahead"),
        "ab": Option(parse_bool, True, "alpha-beta pruning on/off"),
    }

    def weights(self, board: Board) -> tuple[int, np.ndarray, np.ndarray]:
        n = board.geometry.n
        w = np.array([10**k for k in range(n)] + [0], dtype=np.int64)
        w[n - 1] = 10 ** n
        return kernel.EVAL_LINEAR, w, w.copy()


class RubinoffPlayer(SearchingPlayer):
    """Seed 001: minimax with optional alpha-beta, lookahead 1-6 and four evaluators.

    - ``eval1``: an n-in-a-row is worth ten times an (n-1)-in-a-row; the opponent's rows
      are worth 10% more than ours, to block before building.
    - ``eval2``: as eval1, but each step is worth more than (lines) times the one below
      (77 on 4x4x4, whose 76 lines is the paper's "greater than 76 times").
    - ``same``: eval1 with the opponent's rows worth the same as ours.
    - ``absolute``: a flat +1000/-1000 for whoever has more of the longest open rows.
    """

    name = "rubinoff"
    summary = "minimax, optional alpha-beta, eval1/eval2/same/absolute (Rubinoff 2010)"
    options = {
        "eval": Option(parse_choice("eval1", "eval2", "same", "absolute"), "eval2", "evaluator"),
        "depth": Option(parse_int(1, 6), 3, "lookahead in plies"),
        "ab": Option(parse_bool, True, "alpha-beta pruning on/off"),
    }

    def weights(self, board: Board) -> tuple[int, np.ndarray, np.ndarray]:
        n = board.geometry.n
        evaluator = self.settings["eval"]
        if evaluator == "absolute":
            flat = np.full(n + 1, 1000, dtype=np.int64)
            return kernel.EVAL_ABSOLUTE, flat, flat.copy()
        base = len(board.geometry.lines) + 1 if evaluator == "eval2" else 10
        mine = np.array([0] + [10 * base ** (k - 1) for k in range(1, n + 1)], dtype=np.int64)
        mine[n] = 0  # a completed line is a won game, scored by the search itself
        theirs = mine if evaluator == "same" else mine + mine // 10
        return kernel.EVAL_LINEAR, mine, theirs.copy()
