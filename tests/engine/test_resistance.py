"""O's best resistance (engine/players/resistance.py): the replies ordered by X's sight, the proof's
depth, X's winning answers, the shortest of their lines, then traps; the opponent's horizon from
the game; the choice the same every time; the work bounded by counts. And the guard off the
proof's tree: the search's best reply the tree does not refute two plies down.

The oracle for the depths is ``strategy_height``; for X's winning replies, engine.solved.strategy's
``x_proved``/``o_proved`` (a separate, Python implementation of "the proof proves it")."""

from __future__ import annotations

import time

import pytest

from engine import Board
from engine.kernels.deepening import Thought
from engine.kernels.negamax import WIN
from engine.players import LEVELS, Limit, make_player
from engine.players.master import MasterPlayer
from engine.players.resistance import (
    EVERY_LINE,
    EXAMINED,
    FEW,
    LOOKUPS,
    NO_CHOICE,
    REPLAY_POSITIONS,
    TRAPPED,
    ProofTables,
    Resistance,
    Work,
    choose,
    guard,
    horizon,
    refuted_alone,
)
from engine.players.traps import SEEN, TrapFinder
from engine.rules.geometry import variant
from engine.rules.notation import parse_cell
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
    assert 1 < len(tied) <= EXAMINED
    counts = {}
    for cell in tied:
        board.push(cell)
        counts[cell] = winners_by_oracle(board)
        board.pop()
    assert {r.move: r.winners for r in standing if r.move in tied} == counts
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
    """Rule 5 (traps) examines at most TRAPPED replies, and only ties of rules 1-4; the
    work is within its counts: one replay a reply, one for each of X's winning answers after
    the EXAMINED replies and after X's past positions of at most FEW answers, each within
    REPLAY_POSITIONS; one threat search a reply examined; the proof's tables asked at most
    LOOKUPS positions for each of the gate, the horizon and the rest."""
    board = Board.from_notation("4x4x4", "1a1 1d4 4a1")  # a tie that rule 2 leaves to rule 3
    finder = TrapFinder(G)
    seen = []
    for _ in range(2):
        work = Work()
        chosen = choose(board, time.perf_counter() + SOON, finder, work)
        assert chosen is not None
        seen.append(chosen[0].move)
        answers = sum(r.winners for r in chosen[1] if r.winners not in (None, NO_CHOICE))
        assert len(board.legal_moves) < work.replays
        assert work.replays <= len(board.legal_moves) + answers + FEW * board.ply // 2
        assert work.positions <= work.replays * REPLAY_POSITIONS
        assert work.sights <= EXAMINED
        assert 0 < work.lookups <= 3 * LOOKUPS
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


def test_what_x_sees_comes_before_the_depth() -> None:
    """Rule 1: a reply after which X's win is out of its sight beats any after which it is in
    sight, however long the proof's line; then the depth (a forced block's two plies not
    counted), the fewest answers, and the longest of the shortest answer lines."""
    hidden = Resistance(0, plies=14, winners=3, answer=13, exposed=False)
    seen = Resistance(1, plies=40, winners=1, answer=9, exposed=True)
    unseen = Resistance(2, plies=40, winners=1)  # not examined: ranked as in sight
    assert hidden.key() > seen.key() and hidden.key() > unseen.key()
    deeper = Resistance(3, plies=16, winners=3, answer=13, exposed=False)
    fewer = Resistance(4, plies=14, winners=2, answer=13, exposed=False)
    longer = Resistance(5, plies=14, winners=3, answer=15, exposed=False)
    assert deeper.key() > fewer.key() > hidden.key()
    assert longer.key() > hidden.key()
    # O's three and X's forced block add two plies and no decision for X: a reply that
    # leaves X a single move is as deep as a quiet one two plies shorter, and ranked after it
    forcing = Resistance(6, plies=18, winners=NO_CHOICE, exposed=False)
    assert forcing.depth() == 16 and hidden.key() < forcing.key() < deeper.key()
    assert Resistance(7, plies=16, winners=9, answer=5, exposed=False).key() > forcing.key()


def test_the_horizon_from_the_game() -> None:
    """X's finds (one of at most FEW winning answers, all of lines beyond SEEN): none yet, the
    horizon is SEEN and a reply whose proof line is within it counts as in sight; after two
    (TWO_TIED's X played the strategy's answers), every line."""
    early = Board.from_notation("4x4x4", FOUR_TIED)
    work = Work()
    assert horizon(early, ProofTables(), time.perf_counter() + SOON, work) == SEEN
    late = Board.from_notation("4x4x4", TWO_TIED)
    assert horizon(late, ProofTables(), time.perf_counter() + SOON, work) == EVERY_LINE
    chosen = choose(early, time.perf_counter() + SOON, TrapFinder(G), work)
    assert chosen is not None and work.horizon == SEEN
    for reply in chosen[1]:
        if reply.exposed is not None and reply.answer is not None and reply.answer > SEEN:
            assert reply.exposed == (reply.plies - 1 <= SEEN)  # here no threat win: by depth
    chosen = choose(late, time.perf_counter() + SOON, None, work)
    assert chosen is not None and work.horizon == EVERY_LINE
    assert all(r.exposed for r in chosen[1] if r.exposed is not None)  # the depth decides


# O to move off the proof's tree (X's 2c3 is not the strategy's): 25 of O's replies are
# refuted by the tree two plies down (2c2: X answers 2b3 into a position of the proof), the
# others not (3c1 among them).
OFF_TREE = "3b3 3c2 3b2 3c3 2c3"


def test_the_guard_refutes_by_the_tree_and_keeps_the_search_best_otherwise() -> None:
    board = Board.from_notation("4x4x4", OFF_TREE)
    refuted, free = parse_cell("2c2", G), parse_cell("3c1", G)
    tables = ProofTables(10**6)
    assert not tables.o_lost(*board.stones)  # not a position for the resistance
    assert tables.refutes(board, refuted) and not tables.refutes(board, free)
    board.push(refuted)
    board.push(parse_cell("2b3", G))
    assert o_proved(board)  # the oracle: X's answer leaves O lost by the proof
    board.pop()
    board.pop()
    deadline = time.perf_counter() + SOON
    assert guard(board, [refuted, free], set(), deadline) == free
    assert guard(board, [free, refuted], set(), deadline) is None  # the best stands
    assert guard(board, [refuted, free, 0], {free}, deadline) == 0  # proved lost: skipped
    assert guard(board, [refuted], set(), deadline) is None  # every one refuted
    assert guard(board, [refuted, free], set(), deadline, lookups=5) is None  # out of budget
    assert guard(Board.from_notation("4x4x4", FOUR_TIED), [0], set(), deadline) is None


def test_the_master_as_o_replaces_a_best_reply_the_tree_refutes() -> None:
    """The master's guard takes the search's best, then its ranking: the best (2c2) refuted,
    the next (3c1) played with its score; a reply the search proved lost is passed over; a
    best not refuted stands. And the decision at OFF_TREE is not refuted."""
    board = Board.from_notation("4x4x4", OFF_TREE)
    refuted, free, other = (parse_cell(c, G) for c in ("2c2", "3c1", "1a1"))
    player = make_player("master")
    assert isinstance(player, MasterPlayer)

    def guarded(ranking: list[int], scores: dict[int, int], best: int | None = None) -> Thought:
        best = ranking[0] if best is None else best
        thought = Thought(move=best, score=scores[best], depth=4, pv=(best,), ranking=ranking,
                          scores=scores)
        player._guard(board, time.perf_counter() + SOON, thought)
        return thought

    thought = guarded([refuted, free], {refuted: 10, free: -5})
    assert (thought.move, thought.pv, thought.score) == (free, (free,), -5)
    lost = -WIN + 9  # a proved loss in 9 plies
    assert guarded([refuted, free, other], {refuted: 10, free: lost, other: -7}).move == other
    assert guarded([free, refuted], {free: 10, refuted: 5}).move == free
    # the move an unfinished iteration found better than the ranking's first (which the
    # ranking of the last finished iteration does not show) is the one checked
    assert guarded([free, refuted], {free: 10, refuted: 12}, best=refuted).move == free
    decision = player.decide(board, Limit(time=1.0))
    assert not ProofTables(10**6).refutes(board, decision.move)


# O to move after X left the proof's tree at ply 2: the book answers 4a4, which the tree refutes
# (X's corners 1d1, 1a4, 4a1 and 4d4 each leave O lost by the proof), while 31 replies are not
# refuted. After 1a1 1d4 2c3 the book's 4d4 is not refuted; after 1a1 1d4 4a1 every reply is
# (the proof has O lost: the resistance's, where the book is kept first).
BOOK_REFUTED = "1a1 1d4 4d1"


def test_the_book_move_the_tree_refutes_alone_is_searched_and_guarded() -> None:
    """With bookguard on (off by default): the book's move the tree refutes while other replies
    are not refuted is passed over, the search's reply guarded; elsewhere the book stands."""
    board = Board.from_notation("4x4x4", BOOK_REFUTED)
    book = make_player("master").book_move(board)
    assert book == parse_cell("4a4", G)
    tables = ProofTables(10**6)
    assert not tables.o_lost(*board.stones) and tables.refutes(board, book)
    board.push(book)
    for answer in ("1d1", "1a4", "4a1", "4d4"):
        board.push(parse_cell(answer, G))
        assert o_proved(board), answer  # the oracle: X's natural answer leaves O lost
        board.pop()
    board.pop()
    assert refuted_alone(board, book)
    assert not refuted_alone(board, book, lookups=5)  # out of budget: the book stands
    player = make_player("master:bookguard=on")
    assert isinstance(player, MasterPlayer)
    decision = player.decide(board, Limit(time=1.0))
    assert decision.move != book and not tables.refutes(board, decision.move)
    assert player.quick(board) is None  # it searches: no quick move
    for spec in ("master", "master:bookguard=on,guard=off"):  # off by default; under the guard
        assert make_player(spec).decide(board, Limit(time=1.0)).move == book, spec
    for moves, kept in (("1a1 1d4 2c3", "4d4"), ("1a1 1d4 4a1", "4d4"), ("1a1", "1d4")):
        board = Board.from_notation("4x4x4", moves)
        assert player.book_move(board) == parse_cell(kept, G)
        assert not refuted_alone(board, parse_cell(kept, G)), moves
        assert player.decide(board, Limit(time=1.0)).move == parse_cell(kept, G), moves


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
