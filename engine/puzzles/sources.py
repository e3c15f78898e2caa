"""Where puzzles come from: finished games (the server's, self-play, the proof's X against
engine players), each harvested by :func:`harvest` and checked by the exact search.

A decided game holds one puzzle worth asking most: the earliest position from which its winner
forced the win within :data:`engine.puzzles.mate.MAX_WIN` moves (found walking back from the end, so
the opening's long searches are never run), and, just before it, the loser's move that let
it happen, when exactly one move would have survived. :class:`Harvest` counts what was tried
and why the solver turned each candidate down.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from engine.puzzles.mate import (
    MAX_WIN,
    NODE_BUDGET,
    Exhausted,
    Mate,
    NotAPuzzle,
    Puzzle,
    canonical_key,
    survive_puzzle,
    win_puzzle,
)
from engine.rules.board import Board
from engine.rules.geometry import Cell


@dataclass
class Harvest:
    """Puzzles found and the tally of the work: games read, candidates the solver was asked
    about, and its rejections by reason."""

    puzzles: list[Puzzle] = field(default_factory=list)
    games: int = 0
    candidates: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    seconds: float = 0.0
    _seen: set[tuple[int, int]] = field(default_factory=set, repr=False)

    def add(self, puzzle: Puzzle) -> None:
        key = canonical_key(Board(puzzle.variant, puzzle.position))
        if key in self._seen:
            self.duplicates += 1
            return
        self._seen.add(key)
        self.puzzles.append(puzzle)

    def report(self) -> dict[str, object]:
        rejected = sum(self.rejected.values())
        return {
            "games": self.games, "candidates": self.candidates, "puzzles": len(self.puzzles),
            "duplicates": self.duplicates, "rejected": rejected,
            "rejected_fraction": round(rejected / self.candidates, 3) if self.candidates else 0,
            "rejected_by_reason": dict(self.rejected.most_common()),
            "seconds": round(self.seconds, 1),
            "by_kind": dict(Counter(p.title.split(" ", 1)[1] for p in self.puzzles)),
        }


def _reason(error: NotAPuzzle) -> str:
    text = str(error)
    return "not settled within the node budget" if text.startswith("not settled") else text


def harvest(moves: Sequence[Cell], into: Harvest, *, variant: str = "4x4x4",
            source: str = "", budget: int = NODE_BUDGET, longest: int = MAX_WIN) -> None:
    """Add the puzzles of one finished game to ``into`` (see the module docstring): the
    win from the earliest position where it takes at most ``longest`` moves."""
    started = time.perf_counter()
    into.games += 1
    board = Board(variant, moves)
    outcome = board.outcome()
    if outcome is None or outcome.winner is None:
        into.seconds += time.perf_counter() - started
        return
    winner = outcome.winner
    start = _first_forced(moves, variant, winner, budget, longest)
    if start is not None:
        into.candidates += 1
        try:
            into.add(win_puzzle(Board(variant, moves[:start]), budget=budget, source=source))
        except NotAPuzzle as error:
            into.rejected[_reason(error)] += 1
        if start >= 1:
            into.candidates += 1
            try:
                into.add(survive_puzzle(Board(variant, moves[:start - 1]), budget=budget,
                                        source=source))
            except NotAPuzzle as error:
                into.rejected[_reason(error)] += 1
    into.seconds += time.perf_counter() - started


def _first_forced(moves: Sequence[Cell], variant: str, winner: int, budget: int,
                  longest: int) -> int | None:
    """The earliest ply, walking back from the winning move two plies at a time, at which
    the winner (to move) forced the win within ``longest`` moves."""
    last = len(moves) - 1  # the winning move is played at this ply
    found = None
    for ply in range(last, -1, -2):
        board = Board(variant, moves[:ply])
        assert board.turn == winner
        mate = Mate(board.geometry, budget)
        try:
            n = mate.least(board.stones[winner], board.stones[winner ^ 1], longest)
            if n is None:
                break
        except Exhausted:
            break
        found = ply
        if n == longest:
            break
    return found


def play_game(x_spec: str, o_spec: str, seed: int, variant: str = "4x4x4",
              depth: int = 2) -> list[Cell]:
    """One game between two engine players at a fixed depth (quick and reproducible)."""
    from engine.players import Limit, make_player

    board = Board(variant)
    players = (make_player(x_spec, seed), make_player(o_spec, seed + 1))
    while not board.is_game_over():
        board.push(players[board.turn].decide(board, Limit(depth=depth)).move)
    return list(board.moves)


def proof_game(o_spec: str, seed: int) -> list[Cell]:
    """The proof's X (the shipped strategy, no search) against an engine player as O."""
    from engine.players import Limit, make_player
    from engine.solved.strategy import strategy_move

    board = Board("4x4x4")
    o_player = make_player(o_spec, seed)
    rng = random.Random(seed)
    while not board.is_game_over():
        if board.turn == 0:
            cell = strategy_move(board)
            if cell is None:  # off the proof: cannot happen from the empty board
                cell = rng.choice(board.legal_moves)
        else:
            cell = o_player.decide(board, Limit(depth=2)).move
        board.push(cell)
    return list(board.moves)


SELF_PLAY = (("level3", "level4"), ("level4", "level3"), ("level5", "level2"),
             ("level2", "level5"), ("level4", "level6"), ("level6", "level4"))
PROOF_OPPONENTS = ("level2", "level3", "level4", "level5", "level6")


def self_play_games(count: int, seed: int = 0) -> Iterator[tuple[list[Cell], str]]:
    """``count`` games between the lobby's levels, with their source labels."""
    for i in range(count):
        x, o = SELF_PLAY[i % len(SELF_PLAY)]
        yield play_game(x, o, seed + i), f"self-play {x} v {o} seed {seed + i}"


def proof_games(count: int, seed: int = 0) -> Iterator[tuple[list[Cell], str]]:
    """``count`` games of the proof's X against the lobby's levels as O."""
    for i in range(count):
        o = PROOF_OPPONENTS[i % len(PROOF_OPPONENTS)]
        yield proof_game(o, seed + i), f"proof X v {o} seed {seed + i}"


def harvest_all(games: Iterable[tuple[Sequence[Cell], str]], into: Harvest | None = None,
                budget: int = NODE_BUDGET, longest: int = MAX_WIN) -> Harvest:
    """Every game's puzzles, in one :class:`Harvest`; the i-th game's win is asked from
    where it takes 2, 3, ... up to ``longest`` moves in turn, so the set spans the
    lengths (and the long searches past them are never run)."""
    into = into or Harvest()
    for index, (moves, source) in enumerate(games):
        harvest(moves, into, source=source, budget=budget,
                longest=2 + index % max(1, longest - 1))
    return into
