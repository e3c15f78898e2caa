"""The searches count the same nodes as before the engine's pieces were shared (issue 25).

Every count here was read from main at 59037d3, before the kernel's frames, the master's pvs
and the df-pn kernel moved into shared helpers; a refactoring that changes what a search
visits (a bound read from an uninitialised frame, a threat search that counts into the wrong
slot, a changed move order) changes one of them. All are fixed-depth or node-budget searches
without a deadline, so they do not depend on the machine. The master runs with the root's
threat search off (``tss_root=0``): when it finds a win at the root, the master looks for a
faster one for a fraction of a second of wall clock, and its counts then depend on the clock.
"""

from __future__ import annotations

import pytest

from engine import Board
from engine.kernels.deepening import Master, SearchParams
from engine.kernels.negamax import EVAL_ABSOLUTE, search
from engine.kernels.perft import count_sequences
from engine.kernels.solver import Solver
from engine.players import make_player
from engine.players.base import Limit

# plies 12 and 20 of bogenschutz against rubinoff:depth=4, game seed 1 (bench/engine_speed.py)
PLY_12 = "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4 4d4 2a2 1a1 3c3"
PLY_20 = "2b3 1a4 2c2 4a4 2a4 2d1 2b2 2b4 4d4 2a2 1a1 3c3 2c3 3b2 3b3 4b4 2a1 2d4 4a3 1d3"
PROVED = 1 << 40  # the solver's infinite proof or disproof number


@pytest.mark.parametrize(("moves", "alphabeta", "nodes", "evaluations", "interior", "pv"), [
    (PLY_12, True, 83_983, 74_676, 9_308, (26, 3, 16, 31)),
    (PLY_20, True, 141_407, 128_922, 12_019, (30, 18, 27, 24)),
    (PLY_12, False, 135_304, 132_600, 2_705, (1, 2, 41)),
    (PLY_20, False, 81_400, 79_128, 1_937, (9, 57, 18)),
])
def test_the_kernel_counts_the_nodes_it_did(moves: str, alphabeta: bool, nodes: int,
                                             evaluations: int, interior: int,
                                             pv: tuple[int, ...]) -> None:
    board = Board.from_notation("4x4x4", moves)
    _, mine, theirs = make_player("bogenschutz").weights(board)  # type: ignore[attr-defined]
    if alphabeta:
        result = search(board, 4, w_mine=mine, w_theirs=theirs)
    else:
        result = search(board, 3, alphabeta=False, kind=EVAL_ABSOLUTE, w_mine=mine,
                        w_theirs=theirs)
    assert (result.nodes, result.evaluations, result.interior, result.pv) == (
        nodes, evaluations, interior, pv)
    assert result.children == nodes  # every node but the root is some node's child


@pytest.mark.parametrize(("moves", "move", "score", "nodes", "evaluations"), [
    (PLY_12, 37, 59, 30_557, 24_137),
    (PLY_20, 57, 68, 5_403, 4_637),
])
def test_the_alphabeta_player_counts_the_nodes_it_did(moves: str, move: int, score: int,
                                                      nodes: int, evaluations: int) -> None:
    decision = make_player("alphabeta").decide(Board.from_notation("4x4x4", moves),
                                               Limit(depth=5))
    assert (decision.move, decision.score, decision.nodes, decision.evaluations) == (
        move, score, nodes, evaluations)


@pytest.mark.parametrize(("moves", "move", "score", "nodes", "evaluations", "tss_nodes"), [
    (PLY_12, 37, 999_999_975, 52_628, 5_521, 1_033_254),
    (PLY_20, 57, 999_999_993, 3_975, 121, 99_797),
])
def test_the_master_counts_the_nodes_it_did(moves: str, move: int, score: int, nodes: int,
                                            evaluations: int, tss_nodes: int) -> None:
    board = Board.from_notation("4x4x4", moves)
    thought = Master(board.geometry, params=SearchParams(tss_root=0)).think(board, max_depth=4)
    assert (thought.move, thought.score, thought.nodes, thought.evaluations,
            thought.tss_nodes) == (move, score, nodes, evaluations, tss_nodes)


@pytest.mark.parametrize(("name", "moves", "pn", "dn", "nodes", "tss_nodes"), [
    ("4x4x4", PLY_12, 0, PROVED, 6_337, 255_609),
    ("4x4", "", PROVED, 0, 73_337, 178_318),
])
def test_the_solver_counts_the_nodes_it_did(name: str, moves: str, pn: int, dn: int,
                                            nodes: int, tss_nodes: int) -> None:
    board = Board.from_notation(name, moves) if moves else Board(name)
    solver = (Solver(board.geometry, tt_bits=16) if moves
              else Solver(board.geometry, tt_bits=18, sym_plies=6))
    proof = solver.prove(board, nodes=20_000 if moves else 2_000_000)
    assert (proof.pn, proof.dn, proof.nodes, proof.tss_nodes) == (pn, dn, nodes, tss_nodes)


@pytest.mark.parametrize("threats", [False, True])
def test_perft_from_a_middle_game_counts_what_it_did(threats: bool) -> None:
    assert count_sequences(Board.from_notation("4x4x4", PLY_12), 3, threats=threats) == 132_600
    assert count_sequences(Board.from_notation("4x4x4", PLY_20), 3, threats=threats) == 79_464
