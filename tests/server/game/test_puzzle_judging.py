"""Puzzle play without a server: judging attempts against a solution tree, the rating of a
try, the puzzle of the day and a streak's climb."""

from __future__ import annotations

import datetime

import pytest

from engine.puzzles.mate import Step
from server.game.puzzles import (
    Streak,
    daily_index,
    day_start,
    judge,
    nearest,
    rate_attempt,
    streak_index,
    utc_day,
)
from server.game.ratings import Rating, update_rating

# win in 2 with two accepted first moves: 5 (reply 6, then 7 or 8 wins) and 9 (reply 10,
# then 11 wins)
TREE = Step({
    5: (6, Step({7: (None, None), 8: (None, None)})),
    9: (10, Step({11: (None, None)})),
})


def test_right_then_solved() -> None:
    assert judge(TREE, [5]).verdict == "right" and judge(TREE, [5]).reply == 6
    solved = judge(TREE, [5, 8])
    assert solved.verdict == "solved" and solved.solution == (5, 6, 8)


def test_a_second_accepted_first_move_has_its_own_line() -> None:
    assert judge(TREE, [9]).reply == 10
    assert judge(TREE, [9, 11]).verdict == "solved"
    assert judge(TREE, [9, 7]).verdict == "wrong"  # 7 wins only after 5


def test_wrong_shows_the_solution_from_the_start() -> None:
    wrong = judge(TREE, [1])
    assert wrong.verdict == "wrong" and wrong.solution == (5, 6, 7)
    later = judge(TREE, [5, 1])
    assert later.verdict == "wrong" and later.solution == (5, 6, 7)


def test_moves_past_the_end_are_refused() -> None:
    with pytest.raises(ValueError, match="solved at move 2"):
        judge(TREE, [5, 7, 3])
    with pytest.raises(ValueError, match="at least one"):
        judge(TREE, [])


def test_a_try_is_one_glicko_2_game_against_the_puzzle() -> None:
    player, puzzle = Rating(1500, 200, 0.06), Rating(1700, 80, 0.06)
    after, puzzle_after = rate_attempt(player, puzzle, solved=True)
    assert after == update_rating(player, [(1700, 80, 1.0)])
    assert puzzle_after == update_rating(puzzle, [(1500, 200, 0.0)])
    assert after.rating > 1500 > rate_attempt(player, puzzle, solved=False)[0].rating


def test_the_day_is_utc_and_its_puzzle_fixed() -> None:
    day = datetime.date(2026, 11, 26)
    start = day_start(day)
    assert utc_day(start) == day and utc_day(start + 86399.9) == day
    assert utc_day(start - 0.1) == datetime.date(2026, 11, 25)
    assert daily_index(day, 101) == daily_index(day, 101)
    picks = {daily_index(day + datetime.timedelta(days=i), 101) for i in range(30)}
    assert len(picks) > 15  # days move through the set


def test_a_streak_climbs_and_stays_in_range() -> None:
    order = [streak_index(s, 100, run=3) for s in range(30)]
    assert order == sorted(order) and order[0] < 5 and order[-1] == 99
    assert streak_index(0, 1, 7) == 0


def test_a_streak_counts_solves_keeps_its_best_and_restarts_as_the_next_run() -> None:
    two = Streak().after(True).after(True)
    assert two == Streak(count=2, best=2, run=0)
    missed = two.after(False)
    assert missed == Streak(count=0, best=2, run=0)
    assert missed.after(True) == Streak(count=1, best=2, run=0)
    assert Streak(count=3, best=5, run=1).restarted() == Streak(count=0, best=5, run=2)


def test_nearest() -> None:
    assert nearest([(1, 1200.0), (2, 1450.0), (3, 1560.0)], 1500) == 2
    assert nearest([], 1500) is None
