"""A game's review: the classes of moves against positions with known forced wins (the
forced-win suite), against the small boards' tables, and on the proof's tree."""

from __future__ import annotations

import json
import random

import pytest
from engine_helpers import FORCED_WINS

from engine import Board, parse_cell
from engine.solved import small_boards
from engine.solved.review import BEST, BLUNDER, FOUND, MISSED_THREAT, OK, review_game
from engine.solved.strategy import strategy_move
from engine.solved.truth import LOSS, WIN, solve

SUITE = json.loads((FORCED_WINS / "suite.json").read_text())
SOME = SUITE[2:8]  # six positions of the suite, each a forced win in 5 for X or O
# In the fifth (... 1c2 1b2) the solver proves none of the other moves losing (they are
# `unknown` to it, whatever the budget), so no blunder can be shown there.
NO_PROVED_BLUNDER = {SUITE[6]["moves"]}


def _review_last(moves: list[int], last: int) -> object:
    review = review_game("4x4x4", [*moves, last], position_budget=0.05, total_budget=5.0)
    return review.moves[-1]


@pytest.mark.parametrize("entry", SOME, ids=lambda e: e["moves"][-8:])
def test_the_winning_move_is_found_and_another_one_throws_the_win_away(entry: dict) -> None:
    """The suite's winning move keeps the forced win (``found``); a move the solver proves
    losing is a ``blunder``, with the line that would have won: the best move
    (one of the suite's), then best play, to the win in at most the suite's plies."""
    board = Board.from_notation("4x4x4", entry["moves"])
    winning = [parse_cell(m, board.geometry) for m in entry["winning"]]
    found = _review_last(board.moves, winning[0])
    assert found.before.verdict == WIN and found.kind == FOUND
    assert found.before.plies is None or found.before.plies >= entry["plies"]
    assert found.best and found.best[0] in entry["winning"]
    if entry["moves"] in NO_PROVED_BLUNDER:
        return
    losing = [m.move for m in solve(board, 2.0).moves if m.verdict == WIN]
    assert losing, "the solver proves no other move of this position losing"
    thrown = _review_last(board.moves, losing[0])
    assert thrown.kind == BLUNDER and thrown.after.verdict == LOSS
    assert thrown.line and thrown.line[0] == found.best[0]
    assert 1 < len(thrown.line) <= entry["plies"]


def test_3x3_every_move_against_its_table() -> None:
    """On 3x3, where every position is in the table, each move's verdicts are the table's
    and its class follows from them."""
    table = small_boards.table("3x3")
    assert table is not None
    rng = random.Random(7)
    for _ in range(20):
        board = Board("3x3")
        while board.outcome() is None:
            board.push(rng.choice(board.legal_moves))
        review = review_game("3x3", board.moves)
        replay = Board("3x3")
        for entry in review.moves:
            verdict, plies = _entry(table, replay)
            assert (entry.before.verdict, entry.before.plies) == (verdict, plies)
            replay.push(entry.cell)
            theirs, plies = _entry(table, replay)
            mine = {"win": "loss", "loss": "win", "draw": "draw"}[theirs]
            assert entry.after.verdict == mine
            assert entry.after.plies == plies  # a dead draw too: the table ends the game there
            if mine == WIN:
                assert entry.kind == FOUND
            elif verdict == "win" or (verdict, mine) == ("draw", "loss"):
                assert entry.kind == BLUNDER
            else:
                assert entry.kind in (BEST, OK, MISSED_THREAT)


def test_3x3x3_the_first_move_against_its_table() -> None:
    """3x3x3: only the centre wins (the table); a corner opening throws the win away and
    the review says the centre was best; the rest of the game is proved by the solver."""
    corner = review_game("3x3x3", [0, 13, 26, 1])
    first = corner.moves[0]
    assert (first.before.verdict, first.after.verdict, first.kind) == (WIN, LOSS, BLUNDER)
    assert first.best == ("2b2",) and first.line[0] == "2b2"
    centre = review_game("3x3x3", [13, 0, 26])
    assert centre.moves[0].kind == FOUND and centre.moves[0].after.verdict == WIN
    assert centre.start.verdict == WIN and centre.start.proved_by == "book"


def test_on_the_proofs_tree_x_finds_every_move() -> None:
    """X playing the proof against any O: every X move is ``found`` by the book, and O,
    lost from the start, never blunders (nothing to throw away)."""
    rng = random.Random(11)
    board = Board("4x4x4")
    while board.outcome() is None:
        move = strategy_move(board) if board.turn == 0 else rng.choice(board.legal_moves)
        assert move is not None
        board.push(move)
    review = review_game("4x4x4", board.moves)
    xs = [m for m in review.moves if m.side == "x"]
    assert all(m.kind == FOUND and m.before.proved_by == "book" for m in xs[:-1])
    assert xs[-1].after.plies == 0  # the last move completes the line
    assert all(m.kind != BLUNDER and m.before.verdict == LOSS
               for m in review.moves if m.side == "o")
    counts = review.summary()
    assert counts["x"][FOUND] == len(xs)


def test_a_threat_left_open() -> None:
    """O's three left open by X, with no win of X's own: ``missed_threat``."""
    # X: 1a1 1b1 scattered; O: 4a4 4b4 4c4 then X plays elsewhere instead of 4d4
    board = Board.from_notation("4x4x4", "1a1 4a4 1b2 4b4 2c1 4c4")
    cell = parse_cell("3a2", board.geometry)
    review = review_game("4x4x4", [*board.moves, cell], position_budget=0.05)
    last = review.moves[-1]
    assert last.kind == MISSED_THREAT and last.after.verdict == LOSS
    assert "4d4" in last.best


def test_json_shape() -> None:
    data = review_game("3x3", [4, 0, 8]).to_json()
    assert set(data) == {"variant", "start", "moves", "summary", "seconds"}
    assert set(data["moves"][0]) == {"ply", "side", "cell", "move", "before", "after",
                                     "class", "best", "line"}
    assert data["moves"][0]["move"] == "b2" and data["moves"][1]["side"] == "o"


def test_4x4_from_its_table() -> None:
    """4x4 is a draw (the table): X's first move keeps it (``best``); O leaving X's three open
    is ``missed_threat``, and X's completing the line ``found``."""
    board = Board.from_notation("4x4", "b2 a4 c2 d4 a2")
    review = review_game("4x4", [*board.moves, parse_cell("c4", board.geometry),
                                 parse_cell("d2", board.geometry)], position_budget=0.05)
    first = review.moves[0]
    assert review.start.verdict == "draw" and review.start.proved_by == "book"
    assert (first.before.verdict, first.kind) == ("draw", BEST)
    assert review.moves[5].kind == MISSED_THREAT and review.moves[5].best == ("d2",)
    assert review.moves[6].kind == FOUND and review.moves[6].after.plies == 0


def _entry(table: small_boards.SmallTable, board: Board) -> tuple[str, int]:
    x, o = board.geometry.canonical(*board.stones)
    value = table.value(x << board.geometry.size | o)
    assert value is not None
    return small_boards.VERDICTS[value >> 6], value & 63
