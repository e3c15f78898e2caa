"""Matches between computer players: colours, counts, replays and the Elo estimate."""

import math
from collections.abc import Callable

import pytest

from engine import Board, UnknownPlayer, format_cell
from engine.players import Limit, make_player
from engine.players.arena import elo_estimate, game_seeds, play_game, run_match
from engine.players.exact_match import every_game, exact_match, merge_dead_cells
from engine.solved.book import board_of, canonical_frame


def test_counts_add_up_and_colours_alternate() -> None:
    result = run_match("wood", "random", games=6, variant_name="3x3x3", seed=3)
    assert result.games == 6
    assert result.a.wins + result.b.wins + result.draws == 6
    assert (result.a.wins, result.a.losses) == (result.b.losses, result.b.wins)
    assert [r.a_is_x for r in result.records] == [True, False] * 3
    assert result.a.wins_as_x + result.b.wins_as_x == sum(
        r.outcome.winner == 0 for r in result.records
    )
    data = result.to_json()
    assert data["games"] == data["a_wins"] + data["b_wins"] + data["draws"] == 6
    assert data["a"]["spec"] == "wood" and data["b"]["spec"] == "random"
    assert len(data["game_list"]) == 6


def test_records_replay_to_their_outcome_and_moves_are_attributed() -> None:
    result = run_match("freeness", "rubinoff:depth=2", games=4, seed=1)
    for record in result.records:
        board = Board("4x4x4", record.cells())
        assert board.outcome() == record.outcome
        x_player = "a" if record.a_is_x else "b"
        assert [m.player for m in record.moves][::2] == [x_player] * len(record.moves[::2])
    assert result.a.moves + result.b.moves == sum(len(r.moves) for r in result.records)
    assert result.b.average_branching is not None and result.b.average_evaluations > 0
    assert result.a.average_branching is None  # freeness does not search


def test_a_match_replays_from_its_seed_and_seeds_matter() -> None:
    first = run_match("random", "wood", games=4, variant_name="4x4", seed=11)
    again = run_match("random", "wood", games=4, variant_name="4x4", seed=11)
    other = run_match("random", "wood", games=4, variant_name="4x4", seed=12)
    assert [r.cells() for r in first.records] == [r.cells() for r in again.records]
    assert [r.cells() for r in first.records] != [r.cells() for r in other.records]
    assert game_seeds(11, 0) != game_seeds(11, 1)


def test_a_bad_spec_fails_before_any_game() -> None:
    played = []
    with pytest.raises(UnknownPlayer):
        run_match("wood", "rubinoff:depth=99", games=2, on_game=lambda r, m: played.append(r))
    assert played == []


def test_on_game_sees_every_game_in_order() -> None:
    seen: list[tuple[int, int]] = []
    run_match("random", "random", games=3, variant_name="3x3",
              on_game=lambda record, match: seen.append((record.index, match.games)))
    assert seen == [(0, 1), (1, 2), (2, 3)]


def test_play_game_labels_moves_and_respects_the_limit() -> None:
    searcher = make_player("bogenschutz")
    board, moves = play_game(searcher, make_player("random"), "3x3x3", Limit(depth=1),
                             names=("s", "r"))
    assert board.outcome() is not None
    assert [m.player for m in moves[:2]] == ["s", "r"]
    # at depth 1 each root move is evaluated once: at most 27 evaluations on 3x3x3
    assert all(m.evaluations <= 27 for m in moves if m.player == "s")


def _cutechess(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """cutechess-cli's EloDiff: the difference and the half-width of its 95% interval."""
    n = wins + draws + losses
    w, d, lo = wins / n, draws / n, losses / n
    mu = w + d / 2
    stdev = math.sqrt((w * (1 - mu) ** 2 + d * (0.5 - mu) ** 2 + lo * mu**2) / n)

    def diff(p: float) -> float:
        return -400 * math.log10(1 / p - 1)

    return diff(mu), (diff(mu + 1.959963985 * stdev) - diff(mu - 1.959963985 * stdev)) / 2


@pytest.mark.parametrize("wdl", [(60, 0, 40), (30, 40, 30), (12, 5, 3), (1, 18, 1)])
def test_elo_matches_cutechess(wdl: tuple[int, int, int]) -> None:
    estimate = elo_estimate(*wdl)
    elo, margin = _cutechess(*wdl)
    assert estimate.elo == pytest.approx(elo)
    assert estimate.margin == pytest.approx(margin, rel=1e-6)
    assert estimate.low is not None and estimate.high is not None and estimate.elo is not None
    assert estimate.low < estimate.elo < estimate.high
    assert "±" in estimate.describe()


def test_elo_of_even_scores_and_of_all_draws() -> None:
    assert elo_estimate(10, 0, 10).elo == pytest.approx(0.0)
    all_draws = elo_estimate(0, 8, 0)
    assert all_draws.elo == pytest.approx(0.0) and all_draws.margin == pytest.approx(0.0)


@pytest.mark.parametrize(("wdl", "sign"), [((20, 0, 0), "+inf"), ((0, 0, 7), "-inf")])
def test_elo_of_a_clean_sweep_is_infinite_and_says_so(wdl: tuple[int, int, int],
                                                      sign: str) -> None:
    estimate = elo_estimate(*wdl)
    assert estimate.elo is None and estimate.margin is None
    assert estimate.describe().startswith(sign) and "no finite estimate" in estimate.describe()


def test_elo_interval_reaching_a_sweep_is_unbounded() -> None:
    estimate = elo_estimate(3, 0, 1)  # 75% from four games: the interval passes 100%
    assert estimate.elo is not None and estimate.margin is None
    assert "unbounded" in estimate.describe()
    assert elo_estimate(0, 0, 0).elo is None


def test_a_game_can_start_from_a_position() -> None:
    start = Board.from_notation("4x4x4", "1a1 4d4 1b1 4c4 1c1")  # O must block 1d1
    board, moves = play_game(make_player("bogenschutz"), make_player("bogenschutz"),
                             start=start)
    assert board.moves[:5] == start.moves and len(start.moves) == 5
    assert [m.cell for m in moves] == board.moves[5:]
    assert moves[0].player == "b" and board.moves[5] == 3  # O's block at 1d1


def test_every_game_of_a_perfect_defender_on_3x3_is_never_lost() -> None:
    found, decisions = exact_match("master", "bogenschutz:depth=2", 1, Limit(depth=9),
                                   start=Board("3x3"), jobs=2, split=3)
    assert math.isclose(found.win + found.draw + found.loss, 1.0)
    assert found.loss == 0 and not found.lost
    assert len(decisions) > 3
    for (x, o), cell in decisions.items():
        assert x.bit_count() == o.bit_count() + 1 and not (x | o) >> cell & 1


def _canonical_player(spec: str) -> Callable[[Board], int]:
    """``spec``'s move, decided on the position's canonical image and mapped back."""
    player = make_player(spec)

    def play(board: Board) -> int:
        key, sym = canonical_frame(board)
        return sym.index(player.decide(board_of(board.geometry, key)).move)

    return play


def _walk_every_game(play_a: Callable[[Board], int], choices_b: Callable[[Board], list[int]],
                     board: Board, a_side: int) -> dict[str, float]:
    """Every game, the slow way: no memo, no symmetry."""
    outcome = board.outcome()
    if outcome is not None:
        result = ("draw" if outcome.winner is None
                  else "win" if outcome.winner == a_side else "loss")
        return {result: 1.0}
    branches = [play_a(board)] if board.turn == a_side else choices_b(board)
    chances = {"win": 0.0, "draw": 0.0, "loss": 0.0}
    for cell in branches:
        board.push(cell)
        for result, p in _walk_every_game(play_a, choices_b, board, a_side).items():
            chances[result] += p / len(branches)
        board.pop()
    return chances


@pytest.mark.parametrize(("spec_a", "a_side"), [("wood", 0), ("freeness", 1)])
def test_every_game_matches_a_walk_without_memo_or_symmetry(spec_a: str, a_side: int) -> None:
    # A plays by its lines alone, so B's moves on dead cells may be walked as one
    choices = make_player("bogenschutz:depth=2").choices  # type: ignore[attr-defined]
    found, decisions = every_game(_canonical_player(spec_a), choices, Board("4x4"), a_side)
    slow = _walk_every_game(_canonical_player(spec_a), choices, Board("4x4"), a_side)
    assert found.loss > 0 and found.win + found.draw > 0
    assert math.isclose(found.win, slow["win"], abs_tol=1e-9)
    assert math.isclose(found.draw, slow["draw"], abs_tol=1e-9)
    assert math.isclose(found.loss, slow["loss"], abs_tol=1e-9)
    assert math.isclose(sum(found.lost.values()), found.loss)
    for line in found.lost:
        outcome = Board.from_notation("4x4", line).outcome()
        assert outcome is not None and outcome.winner == 1 - a_side
    assert len(decisions) > 5


def test_moves_on_dead_cells_are_walked_as_one() -> None:
    # O threatens b3 on the diagonal a4-d1; c1, a2, c4 and b4 have no open line left
    board = Board.from_notation("4x4", "c3 c2 d3 a4 d2 d1 b1 a3 d4 b2 a1")
    merged = merge_dead_cells(board, board.legal_moves)
    assert {format_cell(c, board.geometry): n for c, n in merged.items()} == {"c1": 4, "b3": 1}
    board = Board.from_notation("4x4", "a1 b2 c3")
    assert set(merge_dead_cells(board, board.legal_moves).values()) == {1}
