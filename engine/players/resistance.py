"""O's best resistance: facing a loss the proof has proved, the reply that makes X's win hardest.

When every reply of O leaves X a position the proof proved (``o_proved``), the replies are
ranked by the proved strategy's longest line below them, then by X's fewest winning replies
(counted on the proof's tree, at most ``LOOKUPS`` look-ups), then by traps. docs/engine.md,
"O's best resistance", has the rules and why."""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine.players.traps import Trap, TrapFinder
from engine.rules.board import Board
from engine.rules.geometry import Cell
from engine.solved.proof import VARIANT, proof_prover, strategy_height
from engine.solved.strategy import strategy_move

TIED = 6  # replies of equal depth whose X replies are counted (rule 2), the first in board order
TRAPPED = 3  # replies still equal after rule 2 that the trap model examines (rule 3)
REPLAY_POSITIONS = 20_000  # X positions one replay of the strategy may expand (rule 1)
LOOKUPS = 20_000  # positions looked up in the proof's tables: for the gate, then for rule 2
NO_CHOICE = 1_000  # rule 2's count for a reply that leaves X a single move not losing at once
UNEXAMINED = (0, 0, -99, 0)  # rule 3's key for a reply the trap model did not examine
FULL = (1 << 64) - 1  # every cell of 4x4x4


@dataclass(frozen=True)
class Resistance:
    """One of O's replies as the rules see it (higher :meth:`key` is better for O)."""

    move: Cell
    plies: int  # to X's win along the proof's longest line, O's reply included
    winners: int | None = None  # X's moves the proof proves winning (None: not counted)
    trap: Trap | None = None  # what the trap model saw (None: not examined)

    def key(self) -> tuple[int, int, tuple[int, int, int, int]]:
        winners = NO_CHOICE + 1 if self.winners is None else self.winners
        trap = self.trap.key() if self.trap is not None else UNEXAMINED
        return self.plies, -winners, trap


@dataclass
class Work:
    """What one choice cost, in counts (the tests bound these, not the clock)."""

    replays: int = 0  # strategy replays (one per legal reply)
    positions: int = 0  # X positions the replays expanded
    lookups: int = 0  # positions looked up in the proof's tables: the gate and rule 2
    traps: int = 0  # replies the trap model examined


def choose(board: Board, deadline: float, finder: TrapFinder | None = None,
           work: Work | None = None, lookups: int = LOOKUPS,
           ) -> tuple[Resistance, list[Resistance]] | None:
    """O's reply by the three rules and every reply's standing (rule 1 for all, the others
    for those they examined), or None when the proof has not O lost here or a replay is not
    done by ``deadline`` (a ``time.perf_counter()`` value; then O searches as usual). Rule 3
    runs only with a ``finder``, and decides only when it has examined every reply still
    equal by ``deadline``; otherwise the first of them in board order stands.

    "The proof has O lost" is :func:`engine.solved.strategy.o_proved` asked of the proof's compiled
    tables (:class:`ProofTables`; ``o_proved`` canonicalises in Python: up to a second on a
    position of ply 7-9), within ``lookups`` positions looked up."""
    if board.geometry.name != VARIANT or board.turn != 1 or board.outcome() is not None:
        return None
    work = work if work is not None else Work()
    tables = ProofTables(lookups)
    try:
        if not tables.o_lost(*board.stones):
            return None
    except OutOfLookups:
        return None
    finally:
        work.lookups = tables.lookups
    moves = board.legal_moves
    standing: dict[Cell, Resistance] = {}
    for cell in moves:
        left = deadline - time.perf_counter()  # a safety net: REPLAY_POSITIONS bounds a replay
        if left <= 0:
            return None
        board.push(cell)
        try:
            work.replays += 1
            plies = strategy_height(board, left, REPLAY_POSITIONS)
            work.positions += proof_prover().tally.x_positions
        finally:
            board.pop()
        if plies is None:
            return None
        standing[cell] = Resistance(cell, plies + 1)
    longest = max(r.plies for r in standing.values())
    tied = [cell for cell in moves if standing[cell].plies == longest]
    if len(tied) > 1:
        counted = []
        tables = ProofTables(lookups)
        try:
            for cell in tied[:TIED]:
                board.push(cell)
                try:
                    counted.append(Resistance(cell, longest, tables.x_winning_replies(board)))
                finally:
                    board.pop()
        except OutOfLookups:
            pass  # rule 2 decides nothing: the first reply stands unless rule 3 decides
        else:
            standing.update((r.move, r) for r in counted)
            tied = _best(tied[:TIED], standing)
        finally:
            work.lookups += tables.lookups
    if len(tied) > 1 and finder is not None:
        traps = []
        for cell in tied[:TRAPPED]:
            work.traps += 1
            trap = finder.examine(board, cell, longest, deadline)
            if trap is None:
                break  # out of time: rule 3 decides nothing, the first reply stands
            traps.append(Resistance(cell, longest, standing[cell].winners, trap))
        else:
            standing.update((r.move, r) for r in traps)
            tied = _best(tied[:TRAPPED], standing)
    return standing[tied[0]], [standing[cell] for cell in moves]


def _best(cells: list[Cell], standing: dict[Cell, Resistance]) -> list[Cell]:
    """The cells whose standing is best, in their order."""
    top = max(standing[cell].key() for cell in cells)
    return [cell for cell in cells if standing[cell].key() == top]


class OutOfLookups(Exception):
    """The proof's tables were asked more than their budget of questions."""


class ProofTables:
    """Questions to the proof's tables about one choice: memoised, and at most ``budget``
    positions looked up (then :class:`OutOfLookups`), so the work is bounded by a count and
    its answer does not depend on the clock."""

    def __init__(self, budget: int = LOOKUPS) -> None:
        self.prover = proof_prover()
        self.budget = budget
        self.lookups = 0
        self._held: dict[tuple[int, int], bool] = {}

    def x_winning_replies(self, board: Board) -> int:
        """X to move in a position the proof proved: how many of X's moves keep its win as
        the proof's tree proves it (the module's rule 2), or :data:`NO_CHOICE` when X has a
        single move that does not lose at once (or a line to complete)."""
        x, o = board.stones
        if self.prover.wins(x, o) or self.prover.wins(o, x):
            return NO_CHOICE  # X completes a line, or blocks O's three or loses at once
        strategic = strategy_move(board)
        winners = 0
        for cell in board.legal_moves:
            winners += cell == strategic or self.o_lost(x | 1 << cell, o)
        return winners

    def o_lost(self, x: int, o: int) -> bool:
        """O to move in (x, o), no line complete: the proof proves O lost (every reply
        leaves X a line to complete, a position of the proof's tables, or O's single three
        to block into a position where this holds again)."""
        wins = self.prover.wins
        if wins(o, x):
            return False  # O completes a line
        threats = wins(x, o)
        if threats.bit_count() >= 2:
            return True  # O can block one three only
        replies = threats if threats else FULL & ~(x | o)
        while replies:
            reply = (replies & -replies).bit_length() - 1
            replies &= replies - 1
            if not self.x_holds(x, o | 1 << reply):
                return False
        return True

    def x_holds(self, x: int, o: int) -> bool:
        """X to move in (x, o) wins by the proof: a line to complete, a position of the
        dictionary or of the completed dictionary, or the block of O's single three into a
        position where O is lost."""
        wins = self.prover.wins
        if wins(x, o):
            return True
        held = self._held.get((x, o))
        if held is not None:
            return held
        threes = wins(o, x)
        if threes:
            held = threes.bit_count() == 1 and self.o_lost(x | threes, o)
        else:
            self.lookups += 1
            if self.lookups > self.budget:
                raise OutOfLookups
            key = self.prover.least_image(x, o)[:2]
            held = key in self.prover.book.entries or key in self.prover.strategy.entries
        self._held[x, o] = held
        return held


__all__ = ["OutOfLookups", "ProofTables", "Resistance", "Work", "choose"]
