"""Puzzles: "X to play and force a win in N" and "O to play and survive", found and checked
by an exact bounded search.

``Mate`` answers "can the side to move force a win within k of its moves?" full width, within a
node budget (``Exhausted`` past it); ``win_puzzle`` and ``survive_puzzle`` make a ``Puzzle``,
``check_puzzle`` re-checks one, ``positions_of_game`` picks the positions worth trying.
docs/engine.md, "Puzzles' exact search", says why the search is exact."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from engine.rules.board import Board
from engine.rules.geometry import Bitboard, Cell, Geometry, cells_of, variant
from engine.rules.notation import format_cell, parse_moves

WIN, SURVIVE = "win", "survive"
MAX_WIN = 5  # the longest win a puzzle asks for, in the winner's moves
HORIZON = 3  # a survival puzzle: no loss within this many of the attacker's moves
NODE_BUDGET = 200_000  # exact-search nodes for one puzzle before it is given up
MAX_TREE = 40  # answers a solution may hold (every accepted move at every step)
BASE_RATING = {1: 900.0, 2: 1200.0, 3: 1500.0, 4: 1750.0, 5: 1950.0}  # by N, a start
SURVIVE_RATING = 1400.0


class Exhausted(Exception):
    """The search ran past its node budget: the position is not settled."""


class Mate:
    """An exact "win within k moves" search over one position's bitboards (see the module)."""

    def __init__(self, geometry: Geometry, budget: int = NODE_BUDGET) -> None:
        self.geometry = geometry
        self.masks = geometry.line_masks
        self.through = tuple(tuple(self.masks[i] for i in geometry.lines_through[c])
                             for c in range(geometry.size))
        self.full = geometry.full_mask
        self.n = geometry.n
        self.budget = budget
        self.nodes = 0
        self._memo: dict[tuple[Bitboard, Bitboard, int], bool] = {}

    def win_cells(self, mine: Bitboard, theirs: Bitboard) -> Bitboard:
        """The empty cells that complete a line of ``mine``."""
        need = self.n - 1
        out = 0
        for m in self.masks:
            if not theirs & m and (mine & m).bit_count() == need:
                out |= m & ~mine
        return out

    def within(self, a: Bitboard, d: Bitboard, k: int) -> bool:
        """Whether the side to move (stones ``a``) forces a win within ``k`` of its moves
        against the other side (stones ``d``)."""
        if k <= 0:
            return False
        key = (a, d, k)
        found = self._memo.get(key)
        if found is not None:
            return found
        self.nodes += 1
        if self.nodes > self.budget:
            raise Exhausted(f"over {self.budget} nodes")
        result = self._within(a, d, k)
        self._memo[key] = result
        return result

    def _within(self, a: Bitboard, d: Bitboard, k: int) -> bool:
        if self.win_cells(a, d):
            return True
        empty = self.full & ~(a | d)
        if k == 1 or not empty or self.pair_cost(a, d, k - 1) > k - 1:
            return False
        return any(self.move_wins(a | 1 << cell, d, k) for cell in self.candidates(a, d))

    def pair_cost(self, a: Bitboard, d: Bitboard, most: int) -> int:
        """The fewest stones the attacker needs to hold two win cells at once if the
        defender never moved (more than ``most``: ``most + 1``). The defender blocks every
        single threat, so a win needs such a double threat first, and the defender's moves
        only make it dearer: a lower bound on the moves to a double threat."""
        empty = self.full & ~(a | d)
        need = self.n - 1
        lines = sorted((need - (a & m).bit_count(), m) for m in self.masks if not d & m)
        best = most + 1
        for i, (si, mi) in enumerate(lines):
            if 2 * si - 1 >= best:
                break
            for sj, mj in lines[i + 1:]:
                if si + sj - 1 >= best:
                    break
                best = min(best, si + sj - (1 if mi & mj & empty else 0))
        return best

    def candidates(self, a: Bitboard, d: Bitboard) -> list[Cell]:
        """The attacker's moves worth trying (no win cell of its own): the block of the
        defender's single win cell, none against two, else every empty cell, likeliest
        first."""
        blocks = self.win_cells(d, a)
        if blocks:
            return [] if blocks.bit_count() > 1 else [blocks.bit_length() - 1]
        empty = self.full & ~(a | d)
        return sorted(cells_of(empty), key=lambda c: -self._promise(a, d, c))

    def _promise(self, a: Bitboard, d: Bitboard, cell: Cell) -> int:
        return sum(4 ** (a & m).bit_count() for m in self.through[cell] if not d & m)

    def move_wins(self, a: Bitboard, d: Bitboard, k: int) -> bool:
        """After the attacker's move (``a`` holds it; the defender to move, with no win cell
        of its own): whether the attacker wins within ``k`` of its moves counting that one."""
        if self._completed(a):
            return True
        if k <= 1 or not self.full & ~(a | d):
            return False
        threats = self.win_cells(a, d)
        if threats.bit_count() >= 2:
            return True
        if threats:
            return self.within(a, d | threats, k - 1)
        if k - 1 < 2 or self.pair_cost(a, d, k - 2) > k - 2:
            return False
        if not self.within(a, d, k - 1):  # the pass: the defender's worst reply
            return False
        return all(self.within(a, d | 1 << r, k - 1) for r in self.replies(a, d))

    def _completed(self, a: Bitboard) -> bool:
        return any(a & m == m for m in self.masks)

    def replies(self, a: Bitboard, d: Bitboard) -> list[Cell]:
        """The defender's moves, those on the attacker's lines first (refutations come
        sooner)."""
        empty = self.full & ~(a | d)
        return sorted(cells_of(empty), key=lambda c: -self._promise(a, d, c))

    def least(self, a: Bitboard, d: Bitboard, most: int) -> int | None:
        """The least k <= ``most`` within which the side to move wins, or None."""
        for k in range(1, most + 1):
            if self.within(a, d, k):
                return k
        return None

    def winning_moves(self, a: Bitboard, d: Bitboard, k: int) -> list[Cell]:
        """Every move of the side to move that wins within ``k`` (``k`` counts it)."""
        wins = self.win_cells(a, d)
        if wins:
            return list(cells_of(wins))
        if k <= 1:
            return []
        return sorted(c for c in self.candidates(a, d) if self.move_wins(a | 1 << c, d, k))

    def resisting_reply(self, a: Bitboard, d: Bitboard, k: int) -> Cell:
        """The defender's reply (after the attacker's move in ``a``, which wins within
        ``k``) that puts the attacker's win furthest off, then leaves it the fewest winning
        moves, then the lowest cell."""
        threats = self.win_cells(a, d)
        if threats:
            return (threats & -threats).bit_length() - 1  # a block; every other reply loses
        best: tuple[int, int, int] | None = None
        for r in self.replies(a, d):
            d2 = d | 1 << r
            j = self.least(a, d2, k - 1)
            assert j is not None, "the move was proved to win within k"
            rank = (-j, len(self.winning_moves(a, d2, j)), r)
            if best is None or rank < best:
                best = rank
        assert best is not None
        return best[2]


@dataclass
class Step:
    """One move of the solver of a puzzle: the moves accepted there, each with the
    opponent's reply (None once the move wins or the puzzle is over) and what follows."""

    accepted: dict[Cell, tuple[Cell | None, Step | None]] = field(default_factory=dict)

    def size(self) -> int:
        return len(self.accepted) + sum(s.size() for _, s in self.accepted.values()
                                        if s is not None)

    def to_json(self) -> dict[str, Any]:
        return {str(cell): {"reply": reply, "next": None if nxt is None else nxt.to_json()}
                for cell, (reply, nxt) in self.accepted.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        return cls({int(cell): (entry["reply"], None if entry["next"] is None
                                else cls.from_json(entry["next"]))
                    for cell, entry in data.items()})

    def main_line(self) -> list[Cell]:
        """The first accepted move at every step, with the replies between them."""
        line: list[Cell] = []
        step: Step | None = self
        while step is not None and step.accepted:
            cell = min(step.accepted)
            reply, step = step.accepted[cell]
            line.append(cell)
            if reply is not None:
                line.append(reply)
        return line


@dataclass
class Puzzle:
    """A position, the task (``win`` in ``moves`` of the side to move, or ``survive`` for
    ``moves`` = 1 move against a loss within ``horizon``), and its checked solution."""

    variant: str
    position: tuple[Cell, ...]  # the moves that led to it
    kind: str
    moves: int  # win: N, the solver's moves to the win; survive: 1
    solution: Step
    horizon: int = 0  # survive: the attacker's moves it cannot win within
    source: str = ""

    @property
    def side(self) -> str:
        return "x" if len(self.position) % 2 == 0 else "o"

    @property
    def title(self) -> str:
        side = self.side.upper()
        if self.kind == SURVIVE:
            return f"{side} to play and survive"
        if self.moves == 1:
            return f"{side} to play and win"
        return f"{side} to play and win in {self.moves}"

    @property
    def first_moves(self) -> list[Cell]:
        return sorted(self.solution.accepted)

    @property
    def rating(self) -> float:
        """Where its rating starts: by the task, before anyone has tried it."""
        return SURVIVE_RATING if self.kind == SURVIVE else BASE_RATING.get(self.moves, 2000.0)

    def to_json(self) -> dict[str, Any]:
        geometry = variant(self.variant)
        return {
            "variant": self.variant,
            "position": " ".join(format_cell(c, geometry) for c in self.position),
            "kind": self.kind, "moves": self.moves, "horizon": self.horizon,
            "solution": self.solution.to_json(), "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Puzzle:
        geometry = variant(data["variant"])
        return cls(data["variant"], tuple(parse_moves(data["position"], geometry)),
                   data["kind"], data["moves"], Step.from_json(data["solution"]),
                   data.get("horizon", 0), data.get("source", ""))


class NotAPuzzle(Exception):
    """Why a position makes no puzzle (the solver's rejection)."""


def _sides(board: Board) -> tuple[Bitboard, Bitboard]:
    mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
    return mine, theirs


def win_puzzle(board: Board, *, most: int = MAX_WIN, least: int = 2,
               budget: int = NODE_BUDGET, source: str = "") -> Puzzle:
    """The puzzle "to play and win in N" at ``board`` (``least`` <= N <= ``most``), every
    accepted move at every step solved; ``NotAPuzzle`` saying why not."""
    if board.is_game_over():
        raise NotAPuzzle("the game is over")
    mate = Mate(board.geometry, budget)
    a, d = _sides(board)
    try:
        n = mate.least(a, d, most)
        if n is None:
            raise NotAPuzzle(f"no win within {most}")
        if n < least:
            raise NotAPuzzle(f"a win in {n}: too short")
        solution = _solve(mate, a, d, n, [0])
    except Exhausted as error:
        raise NotAPuzzle(f"not settled: {error}") from None
    return Puzzle(board.geometry.name, tuple(board.moves), WIN, n, solution, source=source)


def _solve(mate: Mate, a: Bitboard, d: Bitboard, k: int, size: list[int]) -> Step:
    step = Step()
    for cell in mate.winning_moves(a, d, k):
        size[0] += 1
        if size[0] > MAX_TREE:
            raise NotAPuzzle(f"over {MAX_TREE} accepted moves in the solution")
        a2 = a | 1 << cell
        if mate._completed(a2):
            step.accepted[cell] = (None, None)
            continue
        reply = mate.resisting_reply(a2, d, k)
        step.accepted[cell] = (reply, _solve(mate, a2, d | 1 << reply, k - 1, size))
    return step


def survive_puzzle(board: Board, *, horizon: int = HORIZON, most_survivors: int = 1,
                   budget: int = NODE_BUDGET, source: str = "") -> Puzzle:
    """The puzzle "to play and survive" at ``board``: the side to move (the defender) has at
    most ``most_survivors`` moves after which the other side cannot win within
    ``horizon`` of its moves, while a pass would lose within it (the threat is real)."""
    if board.is_game_over():
        raise NotAPuzzle("the game is over")
    mate = Mate(board.geometry, budget)
    d, a = _sides(board)  # d to move
    try:
        if mate.win_cells(d, a):
            raise NotAPuzzle("the side to move wins at once")
        if not mate.within(a, d, horizon):
            raise NotAPuzzle(f"no threat within {horizon}")
        survivors = [r for r in board.legal_moves
                     if not mate.within(a, d | 1 << r, horizon)]
    except Exhausted as error:
        raise NotAPuzzle(f"not settled: {error}") from None
    if not survivors:
        raise NotAPuzzle(f"lost within {horizon} whatever the move")
    if len(survivors) > most_survivors:
        raise NotAPuzzle(f"{len(survivors)} moves survive")
    step = Step({cell: (None, None) for cell in survivors})
    return Puzzle(board.geometry.name, tuple(board.moves), SURVIVE, 1, step, horizon,
                  source=source)


def check_puzzle(puzzle: Puzzle, budget: int = NODE_BUDGET) -> list[str]:
    """What is wrong with a stored puzzle, solved again from its position (empty: sound)."""
    board = Board(puzzle.variant, puzzle.position)
    try:
        if puzzle.kind == SURVIVE:
            again = survive_puzzle(board, horizon=puzzle.horizon,
                                   most_survivors=len(puzzle.first_moves), budget=budget)
        else:
            again = win_puzzle(board, most=puzzle.moves, least=puzzle.moves, budget=budget)
    except NotAPuzzle as error:
        return [str(error)]
    if again.solution.to_json() != puzzle.solution.to_json():
        return ["the solution differs from the solver's"]
    return []


def shipped_path() -> Path:
    """The starting set a fresh server serves (``qubic puzzles generate`` wrote it)."""
    return Path(str(resources.files("engine") / "data" / "puzzles_4x4x4.json"))


def save_puzzles(puzzles: Sequence[Puzzle], path: Path) -> None:
    """Write puzzles as JSON, one object each in a list."""
    path.write_text(json.dumps([p.to_json() for p in puzzles], indent=1) + "\n")


def load_puzzles(path: Path | None = None) -> list[Puzzle]:
    """The puzzles of a file (default: the shipped set)."""
    path = path or shipped_path()
    return [Puzzle.from_json(item) for item in json.loads(path.read_text())]


def positions_of_game(moves: Sequence[Cell], variant_name: str = "4x4x4"
                      ) -> Iterator[Board]:
    """Every position of a game before its end, from the start."""
    board = Board(variant_name)
    for cell in moves:
        if board.is_game_over():
            return
        yield board.copy()
        board.push(cell)


def canonical_key(board: Board) -> tuple[int, int]:
    """One key for a position and its images under the board's symmetries."""
    return board.geometry.canonical(*board.stones)


__all__ = ["HORIZON", "MAX_WIN", "SURVIVE", "WIN", "Exhausted", "Mate", "NotAPuzzle",
           "Puzzle", "Step", "canonical_key", "check_puzzle", "load_puzzles",
           "positions_of_game", "save_puzzles", "shipped_path", "survive_puzzle",
           "win_puzzle"]
