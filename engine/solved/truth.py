"""The truth of a position: who wins with best play, as far as the engine can prove it.

:func:`solve` answers for the side to move ``win``, ``loss``, ``draw`` or ``unknown``, with
``plies`` (an upper bound on the plies to the end, when known) and ``proved_by``: ``book``
when the proved strategy of 4x4x4 (:mod:`engine.solved.proof`) covers the position, replayed with no
search, or ``search`` when the threat-space search or df-pn (:mod:`engine.kernels.solver`) proved it
within the budget. It never guesses: what is not proved is ``unknown``. Every legal move gets
the same, the verdict being that of the side to move *after* it (as in lichess's tablebase
API: a winning move shows ``loss``), best first.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from engine.kernels.solver import Solver
from engine.kernels.threats import threat_win
from engine.rules.board import Board
from engine.rules.geometry import Cell, Geometry
from engine.rules.notation import format_cell
from engine.solved import proof, small_boards
from engine.solved.probe import forced_win
from engine.solved.strategy import o_proved, x_proved

WIN, LOSS, DRAW, UNKNOWN = "win", "loss", "draw", "unknown"
BOOK, SEARCH = "book", "search"
CACHE_SIZE = 20_000
WALK_SECONDS = 0.05  # the least time a replay gets (positions near the proof's root need more)
THREAT_NODES = 20_000  # threat-search nodes for one position before df-pn
# the probe's rounds: (depth, replies beyond its leaves followed), narrow and shallow first
PROBE_ROUNDS = ((1, 2), (2, 2), (3, 2), (3, 4))
PROBE_SHARE = 0.5  # of a lone position's time (no moves), for the probe before df-pn
ROOT_PROBE_SHARE = 0.4  # of the budget, at most, for the probe of the position itself
ROOT_SHARE = 0.4  # of the time after it, kept for the position's df-pn; the rest to its moves
PLIES_SECONDS = 0.02  # the least time to read a df-pn proof's plies off its table
PROBE_SLACK = 3  # a move's probe may take this many times its fair share of the time left
KNOWN_SHARE = 0.6  # of the budget, at most, for the moves once the position is settled
MARGIN = 0.05  # of the budget, kept for what runs past a search's deadline (its last poll,
# the answer's assembly), so that the whole call returns within its budget


@dataclass(frozen=True)
class Verdict:
    """The result of a position for its side to move, and of each of its moves."""

    verdict: str
    plies: int | None = None
    proved_by: str | None = None
    move: Cell | None = None  # for a move's entry: the move that led here
    moves: tuple[Verdict, ...] = field(default=())

    def to_json(self, geometry: Geometry | None = None) -> dict[str, Any]:
        """``{"verdict", "plies", "proved_by", "moves": [{"move", "cell", ...}, ...]}``."""
        data: dict[str, Any] = {"verdict": self.verdict, "plies": self.plies,
                                "proved_by": self.proved_by}
        if self.move is not None:
            data = {"move": format_cell(self.move, geometry) if geometry else None,
                    "cell": self.move, **data}
        else:
            data["moves"] = [m.to_json(geometry) for m in self.moves]
        return data


def solve(board: Board, budget_s: float = 1.0, *, moves: bool = True) -> Verdict:
    """The verdict of ``board`` for the side to move, and (unless ``moves`` is False) of
    every legal move, within about ``budget_s`` seconds of search (none when the proof
    covers the position: then the moves get only the proof and the threat search, so the
    answer is instant and a move off the proof may be ``unknown``).

    The budget goes first to what is cheap and settles most: every move's table, proof and
    threat search (no time); the probe (:mod:`engine.solved.probe`) for the position's own win (at
    most ROOT_PROBE_SHARE of the budget); then, while ROOT_SHARE of what is left is kept for
    the position's df-pn (unless half its moves or more are proved to lose, asked again as
    they are proved: a lost position is proved through its moves, which df-pn of the
    position itself would have to prove all the same), the probe over the unsettled moves,
    one round at a time for all of them (a loss needs every move proved, so no one move may
    eat the budget; a round that proves none ends them), and df-pn over the moves still
    unsettled, twice round (for the win of the side that made the move first, or, where half
    the moves or more lose, for the other's); last the position's df-pn, if its moves have
    not settled it. Once the position's verdict is known its moves get no more than
    KNOWN_SHARE of the budget in all: they are the answer's detail, and the answer comes
    sooner. The searches end MARGIN of the budget early, so the call returns within
    ``budget_s`` (p99 of the benchmark, bench/solve_offtree.py)."""
    budget_s *= 1.0 - MARGIN
    if not moves:
        return _verdict(board, budget_s)
    started = time.perf_counter()
    root = _verdict(board, 0.0)  # the proof and the threat search: no df-pn yet
    if root.proved_by == BOOK:  # on the proof's tree the answer is instant: no search at all
        budget_s = 0.0
    deadline = started + budget_s
    legal = board.legal_moves
    verdicts: dict[Cell, Verdict] = {}
    for cell in legal:
        board.push(cell)
        verdicts[cell] = _verdict(board, 0.0)
        board.pop()
    if root.verdict == UNKNOWN and not _settled(verdicts):
        for depth, width in PROBE_ROUNDS:
            root = _probed(board, depth, width, started + budget_s * ROOT_PROBE_SHARE)
            if root.verdict != UNKNOWN:
                break
    def lost() -> bool:
        """Whether half the moves or more are proved to lose (so far): the position is
        likeliest lost, and proved so through its moves."""
        return sum(v.verdict == WIN for v in verdicts.values()) * 2 >= len(verdicts)

    keep = 0.0
    if root.verdict == UNKNOWN and not _settled(verdicts) and not lost():
        keep = (deadline - time.perf_counter()) * ROOT_SHARE

    def end() -> float:
        """When the moves' search stops."""
        if root.verdict != UNKNOWN or _settled(verdicts):
            return min(deadline, started + budget_s * KNOWN_SHARE)
        return deadline if lost() else deadline - keep

    for depth, width in PROBE_ROUNDS:
        todo = [c for c in legal if verdicts[c].verdict == UNKNOWN]
        for index, cell in enumerate(todo):
            now = time.perf_counter()
            stop = end()
            share = (stop - now) / (len(todo) - index)
            if share <= 0:
                break
            board.push(cell)
            verdicts[cell] = _probed(board, depth, width, min(stop, now + PROBE_SLACK * share))
            board.pop()
        if all(verdicts[c].verdict == UNKNOWN for c in todo):
            break  # a round that proved nothing: the deeper ones would not either, mostly
    for _ in range(2):  # df-pn, a second time round with what the first left
        todo = [c for c in legal if verdicts[c].verdict == UNKNOWN]
        for index, cell in enumerate(todo):
            left = end() - time.perf_counter()
            if left <= 0:
                break
            board.push(cell)
            # does the move win? or, where most moves lose, does it lose too?
            verdicts[cell] = _verdict(board, left / (len(todo) - index), probe=False,
                                      first=board.turn if lost() else board.turn ^ 1)
            board.pop()
    found = sorted((Verdict(v.verdict, v.plies, v.proved_by, move=cell)
                    for cell, v in verdicts.items()), key=_rank)
    root = _from_moves(root, found)
    if root.verdict == UNKNOWN and deadline > time.perf_counter():
        root = _from_moves(_verdict(board, deadline - time.perf_counter(), probe=False), found)
    return Verdict(root.verdict, root.plies, root.proved_by, moves=tuple(found))


def _settled(verdicts: dict[Cell, Verdict]) -> bool:
    """Whether the moves' verdicts already settle the position (one wins, or all lose)."""
    return any(v.verdict == LOSS for v in verdicts.values()) or all(
        v.verdict == WIN for v in verdicts.values())


def _rank(v: Verdict) -> tuple[int, int]:
    """Best first for the mover: the opponent's fastest loss, draws, unknowns, the opponent's
    slowest win."""
    order = {LOSS: 0, DRAW: 1, UNKNOWN: 2, WIN: 3}[v.verdict]
    plies = 10**6 if v.plies is None else v.plies
    return order, plies if v.verdict == LOSS else -plies


def _from_moves(root: Verdict, moves: list[Verdict]) -> Verdict:
    """The position's verdict as its moves prove it, where that says more than its own."""
    derived = _derived(moves) if moves else None
    if derived is None or root.verdict not in (UNKNOWN, derived.verdict):
        return root
    if root.verdict == UNKNOWN or root.plies is None:
        return derived if derived.plies is not None or root.verdict == UNKNOWN else root
    if derived.plies is not None and derived.plies < root.plies:
        return derived
    return root


def _derived(moves: list[Verdict]) -> Verdict | None:
    best = moves[0]
    if best.verdict == LOSS:
        return Verdict(WIN, None if best.plies is None else best.plies + 1, best.proved_by)
    if all(m.verdict == WIN for m in moves):
        known = [m.plies for m in moves if m.plies is not None]
        plies = max(known) + 1 if len(known) == len(moves) else None
        return Verdict(LOSS, plies, BOOK if all(m.proved_by == BOOK for m in moves) else SEARCH)
    if best.verdict == DRAW and all(m.verdict in (WIN, DRAW) for m in moves):
        return Verdict(DRAW, None, SEARCH)
    return None


def _verdict(board: Board, seconds: float, *, probe: bool = True, first: int = 0) -> Verdict:
    """The verdict of one position (no moves), from the cache, the proof or a search (the
    probe skipped if ``probe`` is False: the caller has run it; df-pn for ``first``'s win
    first)."""
    x, o = board.stones
    key = (board.geometry.name, x, o)
    found = _cache.get(key)
    if found is not None and (found[0].verdict != UNKNOWN or found[1] >= seconds):
        _cache.move_to_end(key)
        return found[0]
    verdict = (_finished(board) or _table(board) or _book(board, seconds)
               or _search(board, seconds, probe=probe, first=first))
    _remember(board, verdict, seconds)
    return verdict


def _remember(board: Board, verdict: Verdict, seconds: float) -> None:
    x, o = board.stones
    _cache[(board.geometry.name, x, o)] = (verdict, seconds)
    if len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)


_cache: OrderedDict[tuple[str, int, int], tuple[Verdict, float]] = OrderedDict()


def _finished(board: Board) -> Verdict | None:
    outcome = board.outcome()
    if outcome is None:
        return None
    if outcome.winner is None:
        return Verdict(DRAW, 0, SEARCH)
    return Verdict(WIN if outcome.winner == board.turn else LOSS, 0, SEARCH)


def SMALL_BOARDS_PATH() -> Path:  # noqa: N802 (a constant of the package's data)
    """What the solver showed on the boards with no table (5x5, 5x5x5): the empty board and
    the first moves (``bench/small_boards.py --openings`` writes it)."""
    return Path(str(resources.files("engine") / "data" / "small_boards.json"))


@cache
def _small_boards() -> dict[str, dict[str, list[Any]]]:
    """Per variant with no table: verdict and plies by canonical position
    (``"<x hex> <o hex>"``)."""
    path = SMALL_BOARDS_PATH()
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {name: {**entry.get("positions", {}), **entry.get("first_moves", {})}
            for name, entry in data.items()}


def _table(board: Board) -> Verdict | None:
    """The small boards: 3x3 and 4x4 from their complete tables, 3x3x3 from its table to
    its depth (``proved_by`` ``book``) and by the exact search below it (``search``); on
    5x5 and 5x5x5 whatever the openings' file proved."""
    exact = small_boards.result(board)
    if exact is not None:
        verdict, plies, from_table = exact
        return Verdict(verdict, plies, BOOK if from_table else SEARCH)
    known = _small_boards().get(board.geometry.name)
    if not known:
        return None
    x, o = board.geometry.canonical(*board.stones)
    found = known.get(f"{x:x} {o:x}")
    if found is None or found[0] == UNKNOWN:
        return None
    return Verdict(found[0], found[1], BOOK)


def _book(board: Board, seconds: float) -> Verdict | None:
    """X's win where the proved strategy covers the position: the plies by replaying it, or,
    where the replay takes too long, by the position being one the proof proved."""
    if board.geometry.name != proof.VARIANT:
        return None
    plies = proof.strategy_height(board, max(seconds, WALK_SECONDS))
    if plies is None and not (x_proved(board) if board.turn == 0 else o_proved(board)):
        return None
    return Verdict(WIN if board.turn == 0 else LOSS, plies, BOOK)


def _search(board: Board, seconds: float, *, probe: bool = True, first: int = 0) -> Verdict:
    """The threat search; then, given time, the probe (half of it) and df-pn, for the win of
    ``first`` (by default the first player: it wins most) with three quarters of the time
    left, then for the other's with the rest."""
    side = board.turn
    line = threat_win(board, budget=THREAT_NODES)
    if line is not None:
        board.push(line[0])  # the threat's position is lost for the defender
        _remember(board, Verdict(LOSS, len(line) - 1, SEARCH), 0.0)
        board.pop()
        return Verdict(WIN, len(line), SEARCH)
    if seconds <= 0:
        return Verdict(UNKNOWN)
    if probe:
        started = time.perf_counter()
        for depth, width in PROBE_ROUNDS:
            found = _probe(board, depth, width, started + seconds * PROBE_SHARE)
            if found is not None:
                return found
        seconds -= time.perf_counter() - started
    proofs = {}
    ends = time.perf_counter() + seconds
    for attacker, share in ((first, 0.75), (first ^ 1, 1.0)):
        left = ends - time.perf_counter()  # the second gets what the first left
        solver = _solver(board.geometry, attacker)
        proofs[attacker] = solver.prove(board, attacker=attacker,
                                        seconds=max(left * share, 0.001))
        if proofs[attacker].proved:  # its plies from the proof's tree, if there is time
            plies = solver.proof_plies(board, attacker, max(ends, time.perf_counter()
                                                            + PLIES_SECONDS))
            return Verdict(WIN if attacker == side else LOSS, plies, SEARCH)
    if proofs[0].disproved and proofs[1].disproved:
        return Verdict(DRAW, None, SEARCH)
    return Verdict(UNKNOWN)


def _probed(board: Board, depth: int, width: int, deadline: float) -> Verdict:
    """The verdict of one position from the cache, else one round of the probe within
    ``deadline``; remembered if proved."""
    found = _verdict(board, 0.0)
    if found.verdict != UNKNOWN or time.perf_counter() >= deadline:
        return found
    proved = _probe(board, depth, width, deadline)
    if proved is None:
        return found
    _remember(board, proved, 0.0)
    return proved


def _probe(board: Board, depth: int, width: int, deadline: float) -> Verdict | None:
    """The side to move's win proved by :func:`engine.solved.probe.forced_win` at ``depth`` alone
    (the rounds before tried the shallower ones), following ``width`` replies beyond its
    leaves, or None; the position after its winning move is remembered as lost for the
    opponent."""
    proved, plies, move = forced_win(board, depth, deadline, shallowest=depth,
                                     hard_replies=width)
    if not proved:
        return None
    if move is not None:
        board.push(move)
        _remember(board, Verdict(LOSS, None if plies is None else plies - 1, SEARCH), 0.0)
        board.pop()
    return Verdict(WIN, plies, SEARCH)


@cache
def _solver(geometry: Geometry, attacker: int) -> Solver:
    """A df-pn solver per board and attacker (a table holds one attacker's proofs)."""
    return Solver(geometry, tt_bits=21)
