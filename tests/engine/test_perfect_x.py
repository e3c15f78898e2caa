"""Perfect X: the master (and the lobby's level 8) as X plays the proved strategy at once on
the proof's tree, and wins along it; the lower levels do not."""

from __future__ import annotations

import pytest

from engine import Board
from engine.players import LEVELS, Limit, make_player
from engine.rules.geometry import variant
from engine.solved.strategy import shipped_strategy, strategy_move

G = variant("4x4x4")


def replies(board: Board) -> list[int]:
    """O's moves, one per class of equivalent positions."""
    seen: set[tuple[int, int]] = set()
    out = []
    for cell in board.legal_moves:
        x, o = board.stones
        key = G.canonical(x, o | 1 << cell)
        if key not in seen:
            seen.add(key)
            out.append(cell)
    return out


def test_x_follows_the_proof_against_every_reply_at_plies_2_and_4() -> None:
    master = make_player("master")
    board = Board("4x4x4")
    first = master.decide(board, Limit(time=1.0))
    assert first.move == strategy_move(board) and first.nodes == 0
    board.push(first.move)
    checked = 0
    for second in replies(board):
        board.push(second)
        third = master.decide(board, Limit(time=1.0))
        assert third.move == strategy_move(board) and third.nodes == 0
        board.push(third.move)
        for fourth in replies(board):
            board.push(fourth)
            expected = strategy_move(board)
            assert expected is not None, board.moves
            fifth = master.decide(board, Limit(time=1.0))
            assert fifth.move == expected and fifth.nodes == 0
            checked += 1
            board.pop()
        board.pop()
        board.pop()
    assert checked == 445  # O's second moves up to symmetry, over its 12 first


@pytest.mark.parametrize("o_spec", ["random", "bogenschutz", "freeness", "master"])
def test_x_wins_along_the_proof(o_spec: str) -> None:
    players = (make_player(LEVELS[8], seed=3), make_player(o_spec, seed=5))
    board = Board("4x4x4")
    while board.outcome() is None:
        side = board.turn
        if side == 0:
            expected = strategy_move(board)
            assert expected is not None, f"off the proof at {board}"
        decision = players[side].decide(board, Limit(time=0.1))
        if side == 0:
            assert decision.move == expected
        board.push(decision.move)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner == 0
    assert board.ply <= shipped_strategy().heights[(0, 0)]  # within the proof's longest line


def test_lower_levels_keep_their_own_play() -> None:
    """The strategy is played with no depth cap only: levels 1-7 all have one (their strength
    is calibrated), level 8 has none."""
    for level in range(1, 8):
        assert make_player(LEVELS[level]).settings["depth"] < 64
    top = make_player(LEVELS[8])
    assert top.settings["depth"] == 64 and top.settings["proof"]


def test_the_levels_below_8_search_on_the_proofs_tree() -> None:
    """Where level 8 plays the strategy with no search, levels 1-7 think as before: the
    depth cap keeps the proof out of their play, not only out of their settings."""
    board = Board.from_notation("4x4x4", "1a1 4d4 4a1 1a4 1d1 1b1")  # X to move, no threat
    expected = strategy_move(board)
    assert expected is not None
    top = make_player(LEVELS[8]).decide(board, Limit(time=0.2))
    assert top.move == expected and top.nodes == 0
    for level in (3, 7):  # (levels 1 and 2 play a random move by design now and then)
        decision = make_player(LEVELS[level], seed=1).decide(board, Limit(time=0.2))
        assert decision.nodes > 0, level


def test_off_the_proof_the_master_searches() -> None:
    """X deviated at move one (1b2 is not of the strategy's corner class): the strategy has
    no move there, and the master as X searches as it did before the proof."""
    board = Board.from_notation("4x4x4", "1b2 4d4")
    assert strategy_move(board) is None
    decision = make_player("master").decide(board, Limit(time=0.3))
    assert decision.nodes > 0 and board.is_legal(decision.move)


def test_lost_o_resists_longest() -> None:
    """The master as O where the proof has it lost (and, with bookfirst=off, before its book
    too): the reply with the longest line under the strategy, reported as a proved loss in
    that many plies."""
    from engine.solved.proof import strategy_height

    board = Board.from_notation("4x4x4", "1a1 2b2")
    move = strategy_move(board)
    assert move is not None
    board.push(move)
    heights = []
    for reply in board.legal_moves:
        board.push(reply)
        heights.append(strategy_height(board, 5.0))
        board.pop()
    assert None not in heights
    longest = max(h for h in heights if h is not None) + 1
    decision = make_player("master:bookfirst=off").decide(board, Limit(time=5.0))
    assert decision.forced is not None and decision.forced.result == "loss"
    assert decision.forced.plies == longest and decision.nodes == 0
    board.push(decision.move)
    assert strategy_height(board, 5.0) == longest - 1
