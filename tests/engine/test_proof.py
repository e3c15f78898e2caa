"""The proof that X wins: a subtree proved by search, the shipped completed dictionary replayed
with no search, gaps reported, and the strategy file's round trip."""

from __future__ import annotations

import pytest

from engine import Board, format_moves, parse_moves, proof
from engine.geometry import variant
from engine.strategy import strategy_move

G = variant("4x4x4")
SUBTREE = "1a1 4d4 4a1 1a4 1d1 1b1"  # a few thousand positions: proved in about a second


def moves(text: str) -> list[int]:
    return parse_moves(text, G)


def test_subtree_is_proved_by_search() -> None:
    tally, strategy = proof.prove(moves(SUBTREE))
    assert not tally.gaps
    assert tally.x_positions > 100 and tally.threat_searches > 0
    assert tally.longest > 6 and len(strategy) == tally.threat_searches
    # the strategy found replays with no search
    again, _ = proof.prove(moves(SUBTREE), verify=True, strategy=strategy)
    assert not again.gaps and again.threat_searches == 0 and again.dfpn_searches == 0
    assert again.x_positions == tally.x_positions and again.longest == tally.longest


def test_shipped_strategy_replays_a_subtree() -> None:
    """From the shipped file alone: every position of a ply-4 subtree is covered, and the
    heights recorded for its early positions are those the replay finds."""
    shipped = proof.shipped_strategy()
    assert len(shipped) > 100_000
    prover = proof.Prover(verify=True)
    board = Board.from_notation("4x4x4", "1a1 4d4 4a1 1a4")
    height = prover.prove(board)
    assert not prover.tally.gaps and prover.tally.threat_searches == 0
    assert height is not None and prover.tally.stored_moves > 1000
    found = prover.shallow_heights()
    assert found and all(shipped.heights[key] == plies for key, plies in found.items())


@pytest.mark.slow
def test_shipped_strategy_proves_the_game() -> None:
    """The whole proof replayed from the shipped file with no search (about 30 s)."""
    tally, _ = proof.prove(verify=True)
    assert not tally.gaps and tally.threat_searches == 0 and tally.dfpn_searches == 0
    assert tally.book_moves == 2929  # every dictionary entry is used
    assert tally.stored_moves == len(proof.shipped_strategy())
    assert tally.longest == proof.shipped_strategy().heights[(0, 0)]


def test_gaps_are_listed_with_their_position() -> None:
    empty = proof.Strategy(G)
    tally, _ = proof.prove(moves(SUBTREE), verify=True, strategy=empty)
    assert tally.gaps
    for gap in tally.gaps:
        board = Board.from_notation("4x4x4", gap.moves)  # in our notation, and legal
        assert board.turn == 0 and gap.reason == "not in the completed dictionary"


def test_two_o_threes_are_a_gap() -> None:
    # X to move, O threatens 1a2-1d2 (row 2 of level 1) and 4a4-4d4 (row 4 of level 4)
    board = Board.from_notation("4x4x4", "1a1 1a2 1b1 1b2 3c3 1c2 2c4 4a4 3d1 4b4 2d2 4c4")
    prover = proof.Prover(verify=True)
    assert prover.prove(board) is None
    assert prover.tally.gaps[0].reason == "O has two threes"


def test_start_must_leave_x_to_move() -> None:
    with pytest.raises(ValueError):
        proof.prove(moves("1a1"))


def test_strategy_file_round_trips() -> None:
    _, strategy = proof.prove(moves(SUBTREE))
    back = proof.Strategy.loads(strategy.dumps())
    assert back.entries == strategy.entries and back.heights == strategy.heights
    packed = proof.Strategy.from_bytes(strategy.to_bytes())
    assert dict(packed.entries.items()) == strategy.entries
    assert packed.heights == strategy.heights
    assert packed.entries.get((1, 2)) is None and (1, 2) not in packed.entries
    board = Board.from_notation("4x4x4", SUBTREE)
    assert packed.move(board) == strategy.move(board)


def test_strategy_move_covers_the_start_and_a_block() -> None:
    assert strategy_move(Board("4x4x4")) == 0  # the dictionary's first move, 1a1
    assert strategy_move(Board("4x4x4", [0])) is None  # O to move
    assert strategy_move(Board("3x3x3")) is None
    board = Board.from_notation("4x4x4", "1a1 1a2 1b1 1b2 3c3 1c2")
    assert format_moves([strategy_move(board)], G) == "1d2"  # the block
