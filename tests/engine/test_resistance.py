"""O's best resistance (engine/players/resistance.py): the replies ordered by the proof's depth,
then X's winning replies, then traps; the choice the same every time; the work bounded by counts.

The oracle for the depths is ``strategy_height``; for X's winning replies, engine.solved.strategy's
``x_proved``/``o_proved`` (a separate, Python implementation of "the proof proves it")."""

from __future__ import annotations

import time

import pytest

from engine import Board
from engine.players import LEVELS, Limit, make_player
from engine.players.resistance import (
    LOOKUPS,
    NO_CHOICE,
    REPLAY_POSITIONS,
    TIED,
    TRAPPED,
    ProofTables,
    Work,
    choose,
)
from engine.players.traps import TrapFinder
from engine.rules.geometry import variant
from engine.solved.proof import strategy_height
from engine.solved.strategy import o_proved, strategy_move, win_cells

G = variant("4x4x4")
# O to move, lost by the proof. Two replies share the longest depth (14 plies): after 2d1
# the proof proves two of X's moves winning, after 3d1 one only, so rule 2 picks 3d1.
TWO_TIED = "1a1 4d3 1a4 1a2 1d1 3a4 4d1"
# Four replies share 48 plies; X's winning replies 2, 4, 1 and 1: the first of the ones
# (in board order) is chosen, 3c2.
FOUR_TIED = "1a1 2c3 4a1"
SOON = 60.0  # seconds: a deadline no test reaches (the counts bound the work, not the clock)


def winners_by_oracle(board: Board) -> int:
    """X to move: X's moves that complete a line, are the strategy's, or leave O lost by
    ``o_proved``; NO_CHOICE when X must complete or block a line."""
    x, o = board.stones
    if win_cells(x, o, G.line_masks) or win_cells(o, x, G.line_masks):
        return NO_CHOICE
    strategic = strategy_move(board)
    count = 0
    for cell in board.legal_moves:
        board.push(cell)
        count += cell == strategic or o_proved(board)
        board.pop()
    return count


def depths(board: Board) -> dict[int, int]:
    out = {}
    for cell in board.legal_moves:
        board.push(cell)
        height = strategy_height(board, SOON)
        board.pop()
        assert height is not None
        out[cell] = height + 1
    return out


@pytest.mark.parametrize("moves, expected", [(TWO_TIED, "3d1"), (FOUR_TIED, "3c2")])
def test_the_longest_depth_then_the_fewest_winning_replies(moves: str, expected: str) -> None:
    board = Board.from_notation("4x4x4", moves)
    assert o_proved(board)
    chosen = choose(board, time.perf_counter() + SOON)
    assert chosen is not None
    best, standing = chosen
    depth = depths(board)
    longest = max(depth.values())
    assert {r.move: r.plies for r in standing} == depth
    assert best.plies == longest
    tied = [cell for cell in board.legal_moves if depth[cell] == longest]
    assert 1 < len(tied) <= TIED
    counts = {}
    for cell in tied:
        board.push(cell)
        counts[cell] = winners_by_oracle(board)
        board.pop()
    assert {r.move: r.winners for r in standing if r.winners is not None} == counts
    fewest = min(counts.values())
    assert best.move == next(cell for cell in tied if counts[cell] == fewest)
    assert best.move == Board.from_notation("4x4x4", expected).moves[0]
    assert len(set(counts.values())) > 1  # rule 2 decided between them, not board order


def test_the_master_resists_by_the_rules_and_the_same_every_time() -> None:
    """The master (level 8: resist on by default, traps on) plays rule 2's unique choice,
    reports the proved loss, and two players of the same seed (and a second call) play the
    same; with resist=off it searches instead."""
    board = Board.from_notation("4x4x4", TWO_TIED)
    assert LEVELS[8] == "master"
    first = make_player("master", seed=11)
    moves = set()
    for player in (first, first, make_player("master", seed=11)):
        decision = player.decide(board, Limit(time=5.0))
        assert decision.forced is not None and decision.forced.result == "loss"
        assert decision.forced.plies == 14 and decision.nodes == 0
        moves.add(decision.move)
    assert moves == {Board.from_notation("4x4x4", "3d1").moves[0]}
    searched = make_player("master:resist=off", seed=11).decide(board, Limit(time=0.5))
    assert searched.nodes > 0


def test_the_choice_is_the_same_with_traps_and_counts_its_work() -> None:
    """Rule 3 (traps) examines at most TRAPPED replies, and only ties of rules 1-2; the
    work is within its counts: one replay a reply, each within REPLAY_POSITIONS, and the
    proof's tables asked at most LOOKUPS positions for each of the gate and rule 2."""
    board = Board.from_notation("4x4x4", "1a1 1d4 4a1")  # a tie that rule 2 leaves to rule 3
    finder = TrapFinder(G)
    seen = []
    for _ in range(2):
        work = Work()
        chosen = choose(board, time.perf_counter() + SOON, finder, work)
        assert chosen is not None
        seen.append(chosen[0].move)
        assert work.replays == len(board.legal_moves)
        assert work.positions <= work.replays * REPLAY_POSITIONS
        assert 0 < work.lookups <= 2 * LOOKUPS
        assert work.traps <= TRAPPED
    assert seen[0] == seen[1]


def test_the_tables_stop_at_their_budget() -> None:
    """A budget of lookups too small for the gate: no answer (O searches as usual), and no
    more lookups than the budget."""
    board = Board.from_notation("4x4x4", TWO_TIED)
    work = Work()
    assert choose(board, time.perf_counter() + SOON, work=work, lookups=5) is None
    assert work.lookups <= 6  # the one over the budget raised
    tables = ProofTables(budget=10**6)
    assert tables.o_lost(*board.stones) and tables.lookups < LOOKUPS


def test_a_forced_block_gives_x_no_choice() -> None:
    """X to move facing O's three: its only move that does not lose at once is the block,
    so rule 2 ranks such a reply after every reply that leaves X a choice."""
    board = Board.from_notation("4x4x4", "1a1 1a2 4d4 1b2 2b3 1c2")
    x, o = board.stones
    assert win_cells(o, x, G.line_masks)  # 1d2 completes O's line
    assert ProofTables().x_winning_replies(board) == NO_CHOICE


def test_no_resistance_off_the_proof() -> None:
    """X to move, another board, or an O position the proof does not cover: no answer."""
    deadline = time.perf_counter() + SOON
    assert choose(Board("4x4x4"), deadline) is None
    assert choose(Board("3x3x3", [0]), deadline) is None
    off = Board.from_notation("4x4x4", "1a2 1b1 1a3")  # X's stones not the strategy's
    assert not o_proved(off)
    assert choose(off, deadline) is None


def test_bookfirst_keeps_the_book_where_it_has_a_move() -> None:
    """After 1a1 the proof's longest line follows O's 2c2-class replies (the game ends at ply
    51), the book answers 1d4 (ply 47): with bookfirst=off the master plays the first, by
    default (bookfirst on) the second; where the book is silent (TWO_TIED), it resists all
    the same."""
    board = Board.from_notation("4x4x4", "1a1")
    deepest = make_player("master:bookfirst=off").decide(board, Limit(time=5.0))
    assert deepest.forced is not None and deepest.forced.plies == 50
    booked = make_player("master").decide(board, Limit(time=5.0))
    assert booked.move == Board.from_notation("4x4x4", "1d4").moves[0]
    assert booked.forced is None
    quiet = Board.from_notation("4x4x4", TWO_TIED)
    resisted = make_player("master").decide(quiet, Limit(time=5.0))
    assert resisted.move == Board.from_notation("4x4x4", "3d1").moves[0]
