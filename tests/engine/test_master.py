"""The master: proved results checked by the separate solver, the forced-win suite, time
control, and the ladder of levels."""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pytest
from engine_helpers import FORCED_WINS, ShortWins, random_position

from engine import Board, parse_cell
from engine.kernels.deepening import MATE_BOUND, WIN, Master, SearchParams
from engine.kernels.solver import Solver
from engine.players import Limit, make_player, player_names

SUITE = json.loads((FORCED_WINS / "suite.json").read_text())


def game_positions(count: int, seed: int, spec_x: str = "wood", spec_o: str = "freeness"
                   ) -> list[Board]:
    """Positions from games of two cheap players, a few random moves mixed in."""
    rng = random.Random(seed)
    out: list[Board] = []
    game = 0
    while len(out) < count:
        players = (make_player(spec_x, seed + game), make_player(spec_o, seed + game + 1))
        board = Board("4x4x4")
        while board.outcome() is None and len(out) < count:
            if board.ply >= 8 and rng.random() < 0.3:
                out.append(board.copy())
            move = (rng.choice(board.legal_moves) if rng.random() < 0.2
                    else players[board.turn].decide(board).move)
            board.push(move)
        game += 1
    return out


def test_master_and_the_levels_are_registered() -> None:
    names = set(player_names())
    assert "master" in names
    assert {f"level{i}" for i in range(1, 9)} <= names
    assert make_player("level8").spec == "master"


@pytest.mark.parametrize("entry", SUITE, ids=lambda e: f"{e['plies']}-{e['moves'][-8:]}")
def test_master_finds_a_winning_move_in_the_forced_win_suite(entry: dict) -> None:
    board = Board.from_notation("4x4x4", entry["moves"])
    decision = make_player("master").decide(board, Limit(time=1.0))
    winning = {parse_cell(c, board.geometry) for c in entry["winning"]}
    assert decision.forced is not None and decision.forced.result == "win"
    if decision.move not in winning:  # a slower win: check it with the solver
        solver = ShortWins("4x4x4")
        mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
        assert solver.move_wins(mine, theirs, decision.move, decision.forced.plies)


def test_proved_results_agree_with_the_solver() -> None:
    solver = ShortWins("4x4x4")
    master = make_player("master")
    claims = 0
    for board in game_positions(40, seed=5):
        mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
        decision = master.decide(board, Limit(depth=3))
        shortest = solver.shortest_win(mine, theirs, 5)
        if shortest is not None and shortest <= 3:
            assert decision.forced is not None and decision.forced.result == "win"
        forced = decision.forced
        if forced is None:
            continue
        claims += 1
        if forced.result == "win":
            assert solver.move_wins(mine, theirs, decision.move, forced.plies) or (
                forced.plies == 1 and board.copy().is_legal(decision.move)
            ), board.notation()
        elif forced.plies <= 6:
            # every move loses: the opponent wins within the plies left after it
            for move in board.legal_moves:
                after = mine | 1 << move
                assert solver.wins_within(theirs, after, forced.plies - 1), board.notation()
    assert claims >= 10


@pytest.mark.parametrize("name", ["3x3", "4x4", "3x3x3"])
def test_full_width_search_without_threats_proves_only_true_results(name: str) -> None:
    solver = ShortWins(name)
    rng = random.Random(len(name))
    g = Board(name).geometry
    master = Master(g, tt_bits=12, params=SearchParams(tss_interior=0, tss_leaf=0, tss_root=0))
    for _ in range(25):
        board = Board(name)
        for _ in range(rng.randrange(1, g.size // 2)):
            board.push(rng.choice(board.legal_moves))
            if board.outcome() is not None:
                board.pop()
                break
        mine, theirs = board.stones[board.turn], board.stones[board.turn ^ 1]
        thought = master.think(board, max_depth=5)
        if thought.proved and thought.score > MATE_BOUND:
            assert solver.wins_within(mine, theirs, WIN - thought.score), board.notation()
        elif solver.wins_within(mine, theirs, 5):
            assert thought.proved and thought.score > MATE_BOUND, board.notation()


def test_a_double_threat_against_it_is_a_proved_loss() -> None:
    # X has two win cells on level 1 (1d1 and 1a4); O to move cannot block both
    board = Board.from_notation("4x4x4", "1a1 4d4 1b1 2c3 1c1 3b1 1a2 4a2 1a3")
    decision = make_player("master").decide(board, Limit(time=0.5))
    assert decision.forced is not None and decision.forced.result == "loss"
    assert decision.forced.plies == 2


def test_it_takes_wins_and_blocks() -> None:
    master = make_player("master")
    board = Board.from_notation("4x4x4", "1a1 4d4 1b1 2c3 1c1")  # O must block 1d1
    assert master.decide(board, Limit(time=0.3)).move == board.geometry.cell_at([3, 0, 0])
    board.push(board.geometry.cell_at([0, 3, 3]))  # O elsewhere: X completes the row
    decision = master.decide(board, Limit(time=0.3))
    assert decision.move == board.geometry.cell_at([3, 0, 0])
    assert decision.forced is not None and decision.forced.plies == 1


def test_time_limit_and_stop_flag_are_kept() -> None:
    """The deadline is placed with Limit.started, not measured (speed is for bench/): with
    time to spare the search reaches its depth; a move whose time ran out before it began,
    or whose stop flag is raised, is answered at the search's first look (every few
    thousand nodes), short of that depth."""
    board = Board.from_notation("4x4x4", "1a1 2b2 1d4")
    player = make_player("master")
    ample = player.decide(board, Limit(time=3600, depth=3))
    assert ample.depth == 3 and ample.move in board.legal_moves
    spent = player.decide(board, Limit(time=0.3, depth=3, started=time.perf_counter() - 1))
    assert spent.depth < 3 and spent.move in board.legal_moves
    stop = np.ones(1, dtype=np.int8)
    stopped = make_player("master").decide(board, Limit(time=3600, depth=3, stop=stop))
    assert stopped.depth < 3 and stopped.move in board.legal_moves


# X to move; the 1 s search played 2b3 here in self-play and lost. df-pn proves X's win.
DEEP_WIN = "1a1 1d1 1d4 1a4 4a1 2c3 4d4 2c2 1c3 1b2 4b2 4c3"


def test_the_first_player_plays_a_win_that_df_pn_proves() -> None:
    board = Board.from_notation("4x4x4", DEEP_WIN)
    player = make_player("master")
    decision = player.decide(board, Limit(time=10))  # the proof phase gets its share, loaded or not
    solver = player._solvers["4x4x4"]  # the proof phase ran, and proved the root
    assert solver.status(board) is not None and solver.status(board)[0] == 0
    board.push(decision.move)
    assert Solver(board.geometry).prove(board, attacker=0, seconds=60).proved


def test_depth_capped_players_and_prove_off_do_not_prove() -> None:
    board = Board.from_notation("4x4x4", DEEP_WIN)
    capped = make_player("level7")
    capped.decide(board, Limit(time=0.5))
    off = make_player("master:prove=off")
    off.decide(board, Limit(time=0.5))
    assert capped._solvers == off._solvers == {}


def test_same_seed_same_move() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2")
    moves = {make_player("master", seed=3).decide(board, Limit(depth=3)).move for _ in range(2)}
    assert len(moves) == 1


@pytest.mark.parametrize("level", range(1, 9))
def test_levels_play_legal_games_to_the_end(level: int) -> None:
    player = make_player(f"level{level}", seed=level)
    opponent = make_player("wood", seed=level)
    board = Board("4x4x4")
    limit = Limit(time=0.05)
    while board.outcome() is None:
        mover = player if board.turn == level % 2 else opponent
        move = mover.decide(board, limit).move
        assert move in board.legal_moves
        board.push(move)


def test_master_beats_the_seed_players_at_a_shallow_depth() -> None:
    for spec in ("wood", "bogenschutz:depth=2"):
        for master_side in (0, 1):
            board = Board("4x4x4")
            players = [make_player(spec, seed=1), make_player(spec, seed=1)]
            players[master_side] = make_player("master", seed=1)
            while board.outcome() is None:
                board.push(players[board.turn].decide(board, Limit(depth=4)).move)
            outcome = board.outcome()
            assert outcome is not None and outcome.winner == master_side, (spec, master_side)


def test_it_refuses_moves_that_leave_the_opponent_a_threat_win() -> None:
    from engine.kernels.threats import threat_win

    rng = random.Random(21)
    checked = 0
    while checked < 6:
        board = random_position(rng, (8, 20))
        if board is None or threat_win(board) is not None:
            continue
        if threat_win(board, side=board.turn ^ 1) is None:
            continue  # the opponent threatens nothing
        safe = []
        for move in board.legal_moves:
            board.push(move)
            if board.winning_line is None and threat_win(board) is None:
                safe.append(move)
            board.pop()
        if not safe:
            continue
        decision = make_player("master").decide(board, Limit(time=0.5))
        assert decision.move in safe, board.notation()
        checked += 1



def test_wary_weights_scale_the_terms_of_the_side_not_to_move() -> None:
    from engine.kernels.pvs import DEFAULT_EVAL, THEIR_TERMS, wary_weights

    assert (wary_weights(100) == DEFAULT_EVAL).all()
    wary = wary_weights(200)
    for term in range(len(DEFAULT_EVAL)):
        assert wary[term] == DEFAULT_EVAL[term] * (2 if term in THEIR_TERMS else 1)


def test_only_the_second_players_search_is_wary() -> None:
    from engine.kernels.deepening import wary_weights

    player = make_player("master:wary=250,book=off")
    for moves in ("1a1", "1a1 2b2"):
        board = Board.from_notation("4x4x4", moves)
        player.decide(board, Limit(depth=2))
    x_search, o_search = player._masters["4x4x4", 0], player._masters["4x4x4", 1]
    assert (x_search.params.weights == wary_weights(100)).all()
    assert (o_search.params.weights == wary_weights(250)).all()


def test_the_iterate_option_sets_when_the_search_starts_no_new_iteration() -> None:
    board = Board.from_notation("4x4x4", "1a1")
    player = make_player("master:iterate=90,book=off")
    player.decide(board, Limit(depth=1))
    assert player._masters["4x4x4", 1].params.iterate == 90
    assert make_player("master").settings["iterate"] == 50
