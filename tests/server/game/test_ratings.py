"""Glicko-2: Glickman's worked example, the one-game update and its bounds."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.game.ratings import (
    MAX_RD,
    Rating,
    expected_score,
    rate_game,
    update_rating,
)


def test_glickman_worked_example() -> None:
    # "Example of the Glicko-2 system", section "Example calculation", tau = 0.5.
    player = Rating(1500, 200, 0.06)
    after = update_rating(player, [(1400, 30, 1), (1550, 100, 0), (1700, 300, 0)], tau=0.5)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    after = update_rating(Rating(1600, 100, 0.06), [])
    assert after.rating == 1600 and after.volatility == 0.06
    assert after.rd == pytest.approx(math.sqrt(100**2 + (0.06 * 173.7178) ** 2))
    assert update_rating(Rating(1500, 349.9, 0.06), []).rd == MAX_RD


def test_expected_score_is_even_between_equals_and_favours_the_stronger() -> None:
    assert expected_score(Rating(1500, 50), Rating(1500, 50)) == pytest.approx(0.5)
    assert expected_score(Rating(1700, 50), Rating(1500, 50)) > 0.7
    assert expected_score(Rating(1500, 50), Rating(1700, 50)) < 0.3


def test_one_game_moves_both_players_in_opposite_directions() -> None:
    x, o = rate_game(Rating(), Rating(), 1.0)
    assert x.rating > 1500 > o.rating
    assert x.rating - 1500 == pytest.approx(1500 - o.rating)
    assert x.rd < 350 and o.rd < 350
    drawn_x, drawn_o = rate_game(Rating(1500, 80), Rating(1500, 80), 0.5)
    assert drawn_x.rating == pytest.approx(1500) and drawn_o.rating == pytest.approx(1500)


def test_an_upset_moves_more_than_an_expected_win() -> None:
    strong, weak = Rating(1800, 60), Rating(1400, 60)
    expected_x, _ = rate_game(strong, weak, 1.0)
    upset_x, _ = rate_game(weak, strong, 1.0)
    assert upset_x.rating - weak.rating > expected_x.rating - strong.rating > 0


def test_deviation_settles_instead_of_collapsing_after_many_games() -> None:
    x, o = Rating(), Rating()
    for game in range(300):
        x, o = rate_game(x, o, game % 2)
    assert 40 < x.rd < 80 and 40 < o.rd < 80
    assert x.rating == pytest.approx(1500, abs=30)


@given(
    st.floats(800, 2800),
    st.floats(30, MAX_RD),
    st.floats(800, 2800),
    st.floats(30, MAX_RD),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_rate_game_stays_finite_and_bounded(
    x_rating: float, x_rd: float, o_rating: float, o_rd: float, score: float
) -> None:
    x, o = Rating(x_rating, x_rd), Rating(o_rating, o_rd)
    new_x, new_o = rate_game(x, o, score)
    for before, after, s in ((x, new_x, score), (o, new_o, 1 - score)):
        assert math.isfinite(after.rating) and 0 < after.rd <= MAX_RD
        assert 0 < after.volatility < 1
        if s == 1.0:
            assert after.rating >= before.rating
        elif s == 0.0:
            assert after.rating <= before.rating
