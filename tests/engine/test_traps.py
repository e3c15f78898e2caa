"""Traps (engine/players/traps.py): in a lost position the master plays the losing move whose win is
hardest for the opponent to find."""

from __future__ import annotations

import time

import pytest

from engine import Board, parse_cell
from engine.kernels.deepening import Master, SearchParams, mate_plies
from engine.kernels.solver import Solver
from engine.players import Limit, make_player
from engine.players.master import MasterPlayer
from engine.players.traps import Trap, TrapFinder

# O to move after alphabeta's X (1 s a move) in a game the master lost as O: the master's
# search proves the loss (in about 20 plies) here. X's most natural reply after 3b2 wins,
# after 4c3 it does not (the model's view).
LOST = "1a1 1d4 1d1 4d4 4a4 4a1 4d1 2d4 3d4"
FAR = 1e18  # a deadline that never comes


def cell(text: str) -> int:
    return parse_cell(text, Board().geometry)


@pytest.fixture(scope="module")
def lost() -> tuple[Board, TrapFinder, Master]:
    board = Board.from_notation("4x4x4", LOST)
    return board, TrapFinder(board.geometry), Master(board.geometry)


def test_the_model_sees_x_win_after_3b2_and_df_pn_agrees(lost) -> None:  # type: ignore[no-untyped-def]
    board, finder, _ = lost
    trap = finder.examine(board, cell("3b2"), 20, FAR)
    assert trap is not None and trap.natural_wins and not trap.easy
    assert board.notation() == Board.from_notation("4x4x4", LOST).notation()  # restored
    # the natural reply the model found winning is a win by the solver too
    board.push(cell("3b2"))
    view = finder.model.think(board, max_depth=2)
    board.push(view.ranking[0])
    try:
        proof = Solver(board.geometry, tt_bits=20).prove(board, attacker=0, seconds=60)
        assert proof.proved, board.notation()
    finally:
        board.pop()
        board.pop()


def test_a_move_with_a_threat_win_against_it_is_easy(lost) -> None:  # type: ignore[no-untyped-def]
    board, finder, _ = lost
    # O plays far from X's lines: X's continuous threats win at once
    move = cell("2b3")
    trap = finder.examine(board, move, 10, FAR)
    assert trap is not None
    board.push(move)
    try:
        threat_win = finder.model.root_threat_win(board, 1_000_000)
    finally:
        board.pop()
    assert trap.easy == (threat_win is not None)


def test_choose_prefers_the_trap_and_keeps_the_searchs_order_between_equals(lost) -> None:  # type: ignore[no-untyped-def]
    board, finder, master = lost
    thought = master.think(board, max_depth=6)
    assert thought.proved and thought.score < 0  # lost, every move
    move, traps = finder.choose(board, thought.ranking, thought.scores, FAR)
    best = max(t.key() for t in traps)
    chosen = next(t for t in traps if t.move == move)
    assert chosen.key() == best
    assert all(t.key() < best for t in traps[: traps.index(chosen)])
    # a move that loses sooner than the others, and within sight, is not examined
    longest = mate_plies(thought.scores[thought.ranking[0]])
    assert all(t.delay >= min(longest, 11) for t in traps)


def test_with_no_time_left_choose_falls_back_on_the_search(lost) -> None:  # type: ignore[no-untyped-def]
    board, finder, master = lost
    thought = master.think(board, max_depth=4)
    move, traps = finder.choose(board, thought.ranking, thought.scores, time.perf_counter())
    assert move == thought.ranking[0] and traps == []


def test_trap_keys_order_easy_natural_winners_delay() -> None:
    easy = Trap(1, True, True, 1, 30)
    natural = Trap(2, False, True, 1, 30)
    two = Trap(3, False, False, 2, 10)
    one = Trap(4, False, False, 1, 10)
    one_longer = Trap(5, False, False, 1, 12)
    order = sorted([easy, natural, two, one, one_longer], key=Trap.key)
    assert [t.move for t in order] == [1, 2, 3, 4, 5]


def test_the_master_sets_traps_only_when_lost_with_time_and_no_depth_cap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = TrapFinder.choose

    def spy(self, board, ranking, scores, deadline):  # type: ignore[no-untyped-def]
        calls.append(board.ply)
        return real(self, board, ranking, scores, deadline)

    monkeypatch.setattr(TrapFinder, "choose", spy)
    board = Board.from_notation("4x4x4", LOST)
    decision = make_player("master").decide(board, Limit(time=1.0))
    assert decision.forced is not None and decision.forced.result == "loss"
    assert calls == [board.ply]
    assert decision.move in board.legal_moves
    for spec in ("master:traps=off", "master:depth=6"):
        make_player(spec).decide(board, Limit(time=1.0))
    assert calls == [board.ply]  # neither looked for traps
    make_player("master").decide(Board.from_notation("4x4x4", "1a1 1d4 1d1"), Limit(time=0.3))
    assert calls == [board.ply]  # not lost: no traps


def test_the_traps_option_is_registered() -> None:
    assert MasterPlayer.options["traps"].default is True
    assert make_player("master:traps=off").settings["traps"] is False
    assert SearchParams().tss_root > 0
