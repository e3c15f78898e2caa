"""O's best resistance: facing a loss the proof has proved, the reply that makes X's win hardest.

When every reply of O leaves X a position the proof proved (``o_proved``), the replies are
ranked first by whether X's win is in a searcher's sight after them (a continuous-threat win,
or a winning answer whose proved line is within the opponent's horizon), then by the proved
strategy's longest line below them, then by X's fewest winning answers (counted on the proof's
tree, at most ``LOOKUPS`` look-ups), then by the shallowest of those answers' lines (deeper is
better), then by traps. The opponent's horizon is :data:`engine.players.traps.SEEN` plies, or every
line once the game shows X finding wins a searcher would not see (:func:`horizon`).
docs/engine.md, "O's best resistance", has the rules and why."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from engine.players.traps import SEEN, Trap, TrapFinder
from engine.rules.board import Board
from engine.rules.geometry import Cell
from engine.solved.proof import VARIANT, proof_prover, strategy_height
from engine.solved.strategy import strategy_move

EXAMINED = 12  # replies examined by rules 1-4, deepest first (board order among equals)
TRAPPED = 3  # replies still equal after rules 1-4 that the trap model examines (rule 5)
REPLAY_POSITIONS = 20_000  # X positions one replay of the strategy may expand (rules 2 and 4)
LOOKUPS = 20_000  # positions looked up in the proof's tables: the gate, the horizon, the rest
NO_CHOICE = 1_000  # rule 3's count for a reply that leaves X a single move not losing at once
SIGHT_NODES = 20_000  # threat-search nodes for X's continuous-threat win after a reply (rule 1)
FEW = 2  # X's winning answers at most this many, all out of its sight: finding one is a find
FINDS = 2  # X's finds that show it plays like the proof (its horizon then EVERY_LINE)
EVERY_LINE = 64  # plies: the horizon of an opponent that sees every line
GUARD_LOOKUPS = 5_000  # positions looked up for the guard off the proof's tree (one move)
UNEXAMINED = (0, 0, -99, 0)  # rule 5's key for a reply the trap model did not examine
FULL = (1 << 64) - 1  # every cell of 4x4x4


@dataclass(frozen=True)
class Resistance:
    """One of O's replies as the rules see it (higher :meth:`key` is better for O)."""

    move: Cell
    plies: int  # to X's win along the proof's longest line, O's reply included
    winners: int | None = None  # X's moves the proof proves winning (None: not counted)
    answer: int | None = None  # the shortest proved line of those, X's answer included
    exposed: bool | None = None  # X's win within its sight after the reply (None: not seen)
    trap: Trap | None = None  # what the trap model saw (None: not examined)

    def key(self) -> tuple[int, int, int, int, tuple[int, int, int, int]]:
        hidden = int(self.exposed is False)
        winners = NO_CHOICE + 1 if self.winners is None else self.winners
        answer = -1 if self.answer is None else self.answer
        trap = self.trap.key() if self.trap is not None else UNEXAMINED
        return hidden, self.depth(), -winners, answer, trap

    def depth(self) -> int:
        """Rule 2's depth: the plies, less the two of a reply that leaves X a single move (O's
        three and X's block lengthen the line but give X no decision to get wrong)."""
        return self.plies - 2 if self.winners == NO_CHOICE else self.plies


@dataclass
class Work:
    """What one choice cost, in counts (the tests bound these, not the clock)."""

    replays: int = 0  # strategy replays (one per legal reply, one per X answer examined)
    positions: int = 0  # X positions the replays expanded
    lookups: int = 0  # positions looked up in the proof's tables: the gate, the horizon, the rest
    sights: int = 0  # threat searches for X's win after a reply (rule 1)
    traps: int = 0  # replies the trap model examined
    horizon: int = SEEN  # the opponent's horizon the rules used (plies)


def choose(board: Board, deadline: float, finder: TrapFinder | None = None,
           work: Work | None = None, lookups: int = LOOKUPS,
           ) -> tuple[Resistance, list[Resistance]] | None:
    """O's reply by the rules and every reply's standing (its depth for all, the rest for
    those the rules examined), or None when the proof has not O lost here or a replay is not
    done by ``deadline`` (a ``time.perf_counter()`` value; then O searches as usual). Rules 1
    (the threat search's part) and 5 run only with a ``finder``; rule 5 decides only when it
    has examined every reply still equal by ``deadline``, otherwise the first of them in the
    rules' order stands.

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
        board.push(cell)
        try:
            plies = _height(board, deadline, work)
        finally:
            board.pop()
        if plies is None:
            return None
        standing[cell] = Resistance(cell, plies + 1)
    order = sorted(moves, key=lambda cell: -standing[cell].plies)  # stable: board order
    tables = ProofTables(lookups)
    try:
        work.horizon = horizon(board, tables, deadline, work)
    except (OutOfLookups, OutOfTime):
        work.horizon = SEEN  # what the game showed is not known: what any searcher sees
    finally:
        work.lookups += tables.lookups
    tables = ProofTables(lookups)
    try:
        for cell in order[:EXAMINED]:
            standing[cell] = _examine(board, standing[cell], tables, finder, deadline, work)
    except (OutOfLookups, OutOfTime):
        pass  # the replies examined so far decide (and none: the deepest first stands)
    finally:
        work.lookups += tables.lookups
    examined = [cell for cell in order if standing[cell].exposed is not None] or order[:1]
    tied = _best(examined, standing)
    if len(tied) > 1 and finder is not None:
        traps = []
        longest = standing[tied[0]].plies
        for cell in tied[:TRAPPED]:
            work.traps += 1
            trap = finder.examine(board, cell, longest, deadline)
            if trap is None:
                break  # out of time: rule 5 decides nothing, the first reply stands
            traps.append(replace(standing[cell], trap=trap))
        else:
            standing.update((r.move, r) for r in traps)
            tied = _best(tied[:TRAPPED], standing)
    return standing[tied[0]], [standing[cell] for cell in moves]


class OutOfTime(Exception):
    """The deadline passed while the rules examined a reply."""


def _height(board: Board, deadline: float, work: Work) -> int | None:
    """``strategy_height`` within the deadline and :data:`REPLAY_POSITIONS`, counted."""
    left = deadline - time.perf_counter()  # a safety net: REPLAY_POSITIONS bounds a replay
    if left <= 0:
        return None
    work.replays += 1
    plies = strategy_height(board, left, REPLAY_POSITIONS)
    work.positions += proof_prover().tally.x_positions
    return plies


def _answers(board: Board, tables: ProofTables, deadline: float,
             work: Work) -> tuple[int, int | None]:
    """X to move in a position the proof proved: X's winning answers (rule 3's count, or
    :data:`NO_CHOICE`) and the shortest proved line among them, X's answer included (None
    when a replay did not finish, or X has no choice)."""
    answers = tables.x_winning_answers(board)
    if answers is None:
        return NO_CHOICE, None
    shortest: int | None = None
    for cell in answers:
        board.push(cell)
        try:
            if board.outcome() is not None:
                plies: int | None = 0
            else:
                plies = _height(board, deadline, work)
        finally:
            board.pop()
        if plies is None:
            if time.perf_counter() > deadline:
                raise OutOfTime
            return len(answers), None
        shortest = plies + 1 if shortest is None else min(shortest, plies + 1)
    return len(answers), shortest


def _examine(board: Board, reply: Resistance, tables: ProofTables, finder: TrapFinder | None,
             deadline: float, work: Work) -> Resistance:
    """Rules 1, 3 and 4 for one reply: X's winning answers, the shortest of their lines, and
    whether X's win is in its sight (within the horizon, or a continuous-threat win)."""
    board.push(reply.move)
    try:
        winners, answer = _answers(board, tables, deadline, work)
        exposed = (answer is not None and answer <= work.horizon) or reply.plies - 1 <= work.horizon
        if not exposed and finder is not None:
            work.sights += 1
            exposed = finder.model.root_threat_win(board, SIGHT_NODES, deadline) is not None
        if time.perf_counter() > deadline:
            raise OutOfTime
    finally:
        board.pop()
    return replace(reply, winners=winners, answer=answer, exposed=exposed)


def horizon(board: Board, tables: ProofTables, deadline: float, work: Work) -> int:
    """The opponent's horizon in plies, as the game so far shows it: :data:`SEEN` (what any
    searching opponent sees), or :data:`EVERY_LINE` once X has made :data:`FINDS` hard finds:
    played one of at most :data:`FEW` winning answers whose lines were all longer than it
    sees (neither chance nor sight explains that: X plays like the proof, and O makes the
    game longest). Only X's moves in positions the proof proved count."""
    finds = 0
    past = Board(board.geometry)
    for ply, cell in enumerate(board.moves):
        answers = (tables.x_winning_answers(past)
                   if ply % 2 == 0 and ply >= 2 and tables.x_holds(*past.stones) else None)
        if answers is not None and len(answers) <= FEW:
            _, answer = _answers(past, tables, deadline, work)
            if answer is not None and answer > SEEN:
                past.push(cell)
                finds += past.outcome() is None and tables.o_lost(*past.stones)
                past.pop()
                if finds >= FINDS:
                    return EVERY_LINE
        past.push(cell)
    return SEEN


def _best(cells: list[Cell], standing: dict[Cell, Resistance]) -> list[Cell]:
    """The cells whose standing is best, in their order."""
    top = max(standing[cell].key() for cell in cells)
    return [cell for cell in cells if standing[cell].key() == top]


def guard(board: Board, ranking: list[Cell], refused: set[Cell], deadline: float,
          lookups: int = GUARD_LOOKUPS) -> Cell | None:
    """O to move off the proof's tree (O's search chose, best first, ``ranking``): the first
    reply after which the proof's tree proves no winning answer for X, or None when
    ``ranking[0]`` is one, none is found within ``lookups`` positions looked up or by
    ``deadline``, or every reply ranked is refuted. A reply is refuted when it leaves X a
    position of the proof (``x_holds``) or X has an answer into one where O is lost
    (``o_lost``): X's win is then the proof's, which a strong X may know or find; after the
    others X has to find a win the proof does not give (if it has one). ``refused`` (the
    replies the search proved lost) are skipped."""
    if board.geometry.name != VARIANT or board.turn != 1 or board.outcome() is not None:
        return None
    tables = ProofTables(lookups)
    try:
        for index, cell in enumerate(ranking):
            if time.perf_counter() > deadline:
                return None
            if cell in refused:
                continue
            if not tables.refutes(board, cell):
                return None if index == 0 else cell
    except OutOfLookups:
        pass
    return None


def refuted_alone(board: Board, cell: Cell, lookups: int = GUARD_LOOKUPS) -> bool:
    """O to move: whether the proof's tree refutes ``cell`` (as :func:`guard` does) while it
    refutes not every reply: then ``cell`` is no move to play unsearched (the opening book's),
    and O searches and guards as off the book. False when the proof has O lost (every reply
    refuted: the resistance's), another board, or ``lookups`` positions looked up first."""
    if board.geometry.name != VARIANT or board.turn != 1 or board.outcome() is not None:
        return False
    tables = ProofTables(lookups)
    try:
        if tables.o_lost(*board.stones) or not tables.refutes(board, cell):
            return False
        return any(not tables.refutes(board, other) for other in board.legal_moves
                   if other != cell)
    except OutOfLookups:
        return False


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
        the proof's tree proves it (the module's rule 3), or :data:`NO_CHOICE` when X has a
        single move that does not lose at once (or a line to complete)."""
        answers = self.x_winning_answers(board)
        return NO_CHOICE if answers is None else len(answers)

    def x_winning_answers(self, board: Board) -> list[Cell] | None:
        """X's moves (in board order) that keep its win as the proof's tree proves it, or
        None when X has a single move that does not lose at once (or a line to complete)."""
        x, o = board.stones
        if self.prover.wins(x, o) or self.prover.wins(o, x):
            return None  # X completes a line, or blocks O's three or loses at once
        strategic = strategy_move(board)
        return [cell for cell in board.legal_moves
                if cell == strategic or self.o_lost(x | 1 << cell, o)]

    def refutes(self, board: Board, reply: Cell) -> bool:
        """O to move: whether the proof's tree proves ``reply`` lost, X to move after it
        holding a position of the proof or having an answer into one where O is lost."""
        x, o = board.stones
        o |= 1 << reply
        if self.x_holds(x, o):
            return True
        empty = FULL & ~(x | o)
        while empty:
            answer = (empty & -empty).bit_length() - 1
            empty &= empty - 1
            if self.o_lost(x | 1 << answer, o):
                return True
        return False

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


__all__ = ["OutOfLookups", "OutOfTime", "ProofTables", "Resistance", "Work", "choose", "guard",
           "horizon", "refuted_alone"]
