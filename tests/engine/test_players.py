"""The registry and the seed papers' players: legal, seeded, and faithful to their papers."""

import random
import time

import pytest

from engine import Board, UnknownPlayer, variant
from engine.players import Decision, Limit, make_player, player_names

SEARCHERS = ["bogenschutz", "rubinoff", "rubinoff:eval=eval1", "rubinoff:eval=same",
             "rubinoff:eval=absolute", "rubinoff:ab=off,depth=2"]
NOT_RANDOM = ["wood", "freeness", *SEARCHERS]


def test_registry_names_the_seed_players() -> None:
    assert {"random", "wood", "freeness", "bogenschutz", "rubinoff"} <= set(player_names())


def test_specs_take_options_and_round_trip() -> None:
    player = make_player("rubinoff:eval=eval1,depth=2,ab=off")
    assert player.settings == {"eval": "eval1", "depth": 2, "ab": False}
    assert make_player(player.spec).settings == player.settings
    assert make_player("bogenschutz").spec == "bogenschutz"


@pytest.mark.parametrize(
    ("spec", "message"),
    [("nobody", "no player named 'nobody'"), ("rubinoff:depth=9", "depth must be 1-6"),
     ("rubinoff:eval=eval9", "eval must be one of"), ("wood:depth=2", "bad option"),
     ("rubinoff:depth", "bad option"), ("bogenschutz:ab=maybe", "ab must be on or off")],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(UnknownPlayer, match=message):
        make_player(spec)


def positions_with_a_single_threat(name: str, count: int, seed: int) -> list[tuple[Board, int]]:
    """Positions where exactly one cell completes a line for the side to move (or, when
    ``for_opponent``, for the other side), with that cell."""
    rng = random.Random(seed)
    g = variant(name)
    found: list[tuple[Board, int]] = []
    while len(found) < count:
        board = Board(name)
        while board.outcome() is None and len(found) < count:
            board.push(rng.choice(board.legal_moves))
            if board.outcome() is not None:
                break
            me, other = board.stones[board.turn], board.stones[1 - board.turn]
            mine = {(m & ~me).bit_length() - 1 for m in g.line_masks
                    if not m & other and (m & ~me).bit_count() == 1}
            theirs = {(m & ~other).bit_length() - 1 for m in g.line_masks
                      if not m & me and (m & ~other).bit_count() == 1}
            if len(mine) == 1:
                found.append((board.copy(), ("win", mine.pop())))  # type: ignore[arg-type]
            elif not mine and len(theirs) == 1:
                found.append((board.copy(), ("block", theirs.pop())))  # type: ignore[arg-type]
    return found


@pytest.mark.parametrize("name", ["4x4x4", "3x3x3", "4x4"])
@pytest.mark.parametrize("spec", NOT_RANDOM)
def test_takes_a_win_and_blocks_a_loss(name: str, spec: str) -> None:
    player = make_player(spec, seed=3)
    kinds = set()
    for board, (kind, cell) in positions_with_a_single_threat(name, 12, seed=len(spec)):
        kinds.add(kind)
        assert player.decide(board).move == cell, (kind, board.notation())
    assert kinds == {"win", "block"}


@pytest.mark.parametrize("spec", ["random", *NOT_RANDOM])
def test_players_only_play_legal_moves_to_the_end(spec: str) -> None:
    for name in ["4x4x4", "3x3x3", "4x4"]:
        board = Board(name)
        player = make_player(spec if "depth" in spec else spec, seed=1)
        opponent = make_player("random", seed=2)
        while board.outcome() is None:
            mover = player if board.turn == 0 else opponent
            decision = mover.decide(board, Limit(depth=2) if "bogenschutz" in spec else None)
            assert isinstance(decision, Decision)
            assert decision.move in board.legal_moves
            board.push(decision.move)


def test_same_seed_same_game_and_other_seeds_differ() -> None:
    def game(seed: int) -> list[int]:
        board = Board("4x4x4")
        a, b = make_player("wood", seed=seed), make_player("random", seed=seed)
        while board.outcome() is None:
            board.push((a if board.turn == 0 else b).decide(board).move)
        return board.moves

    assert game(7) == game(7)
    assert len({tuple(game(s)) for s in range(5)}) > 1


def test_decide_leaves_the_board_as_it_was() -> None:
    board = Board.from_notation("4x4x4", "1a1 2b2 3c3")
    copy = board.copy()
    for spec in ["random", *NOT_RANDOM]:
        make_player(spec).decide(board)
        assert board == copy and board.stones == copy.stones


def test_alphabeta_on_and_off_choose_moves_of_equal_value_with_fewer_nodes() -> None:
    rng = random.Random(4)
    for _ in range(3):
        board = Board("4x4x4")
        for _ in range(5):
            board.push(rng.choice(board.legal_moves))
        on = make_player("rubinoff:depth=3,ab=on").decide(board)
        off = make_player("rubinoff:depth=3,ab=off").decide(board)
        assert on.score == off.score
        assert on.nodes < off.nodes and on.evaluations < off.evaluations
        assert on.branching is not None and off.branching is not None


def test_wood_scores_moves_by_their_lines() -> None:
    # 3x3, X to move, no wins or blocks: the centre lies on 4 open lines, a corner on 3.
    board = Board.from_notation("3x3", "")
    decision = make_player("wood").decide(board)
    assert decision.move == 4
    board = Board.from_notation("3x3", "b2 a1")
    # X's lines through b2 all count one stone; a corner adds to three lines (two open).
    assert make_player("wood").decide(board).move in {2, 6, 8}


def test_freeness_uses_the_average_before_the_sum() -> None:
    # 3x3x3 with X at the centre: every free line through the centre rates 2 for X.
    board = Board.from_notation("3x3x3", "2b2 1a1")
    decision = make_player("freeness").decide(board)
    g = board.geometry
    mine, theirs = board.stones[0], board.stones[1]
    averages = {}
    for cell in board.legal_moves:
        r = [0 if g.line_masks[i] & theirs else 2 if g.line_masks[i] & mine else 1
             for i in g.lines_through[cell]]
        averages[cell] = sum(r) / len(r)
    assert max(averages.values()) > 1
    assert averages[decision.move] == max(averages.values())


def test_searchers_report_forced_wins_and_losses() -> None:
    win = Board.from_notation("3x3", "b2 a2 c1 a3")  # X to move wins in 3
    decision = make_player("bogenschutz").decide(win)
    assert decision.forced is not None and decision.forced.result == "win"
    assert decision.forced.plies == 3
    lost = Board.from_notation("3x3", "b2 a2 c1 a3 a1")  # O to move, X threatens b1 and c3
    decision = make_player("rubinoff").decide(lost)
    assert decision.forced is not None and decision.forced.result == "loss"
    assert decision.forced.plies == 2


def test_a_time_limit_is_kept_and_deepens_iteratively() -> None:
    """The deadline is placed with Limit.started, not measured: with time to spare the
    search deepens to its depth; a move whose time ran out before it began is answered at
    the search's first look at the clock (every few thousand nodes), short of that depth.
    How fast it answers is for bench/."""
    board = Board("4x4x4")
    player = make_player("bogenschutz:depth=8")
    ample = player.decide(board, Limit(time=3600, depth=4))
    assert ample.depth == 4 and ample.move in board.legal_moves
    spent = player.decide(board, Limit(time=0.2, depth=4, started=time.perf_counter() - 1))
    assert 1 <= spent.depth < 4 and spent.move in board.legal_moves


@pytest.mark.parametrize("moves", ["", "1a1 2b2 1d4", "2b2 2c3 1a1 3b2 2b3"])
def test_searchers_choose_among_their_choices_and_every_choice_is_chosen(moves: str) -> None:
    board = Board.from_notation("4x4x4", moves)
    player = make_player("bogenschutz:depth=2")
    choices = player.choices(board)
    picked = {make_player("bogenschutz:depth=2", seed).decide(board, Limit(time=5)).move
              for seed in range(60)}
    assert picked <= set(choices)
    assert len(choices) <= 4 or len(picked) > 1  # the seeded shuffle reaches more than one
    if len(choices) <= 3:
        assert picked == set(choices)


def test_bogenschutz_weighs_lines_as_the_seed_paper_does() -> None:
    """Seed 000's table: an open line with 3/2/1/0 stones is worth 10000/100/10/1, the same
    for both sides (computer minus user), on 4x4x4; other boards scale the same way."""
    from engine.kernels import negamax as kernel
    from engine.players.searching import BogenschutzPlayer

    kind, mine, theirs = BogenschutzPlayer().weights(Board("4x4x4"))
    assert kind == kernel.EVAL_LINEAR
    assert mine.tolist() == theirs.tolist() == [1, 10, 100, 10000, 0]
    _, mine, _ = BogenschutzPlayer().weights(Board("3x3x3"))
    assert mine.tolist() == [1, 10, 1000, 0]
