"""The tournaments' pure rules: an arena's points, streaks, standings and pairings
(server/game/arena.py), a Swiss's pairings, colours, bye and tie-breaks (server/game/swiss.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.game.arena import EXACT, Arena, Sheet
from server.game.swiss import Swiss, SwissError, allowed, colours_for, preference

# -- the arena ---------------------------------------------------------------------------------


def test_two_wins_in_a_row_set_a_player_on_fire_until_a_game_is_not_won() -> None:
    sheet = Sheet()
    for outcome in ("win", "win", "win", "draw", "win", "loss", "win", "win", "win"):
        sheet = sheet.after(outcome)  # type: ignore[arg-type]
    assert sheet.points == (2, 2, 4, 2, 2, 0, 2, 2, 4)
    assert sheet.score == 20 and sheet.fire


def test_an_early_game_scores_nothing_and_leaves_the_streak_alone() -> None:
    arena = Arena()
    for name, rating in (("ann", 1500), ("bob", 1500)):
        arena.join(name, rating)
    assert arena.record("ann", "bob", "x", 20) == (2, 0)
    assert arena.record("bob", "ann", "o", 30) == (0, 2)  # ann on fire from here
    assert arena.record("ann", "bob", None, 1) == (0, 0)  # aborted: one ply
    assert arena.entries["ann"].sheet.fire
    assert arena.record("ann", "bob", "x", 15) == (4, 0)


def test_standings_order_by_score_then_performance_and_share_ranks() -> None:
    arena = Arena()
    for name in ("ann", "bob", "cid", "dee"):
        arena.join(name, 1500)
    arena.record("ann", "bob", "x", 20)
    arena.record("cid", "dee", "x", 20)
    rows = arena.standings()
    assert [(row.rank, row.name, row.score) for row in rows] == [
        (1, "ann", 2), (1, "cid", 2), (3, "bob", 0), (3, "dee", 0)]


def test_standings_are_computed_once_until_a_result_or_a_join() -> None:
    """The director pairs several times a second and publishes once: the sorted standings
    are kept until something changes them, and each change is seen at once."""
    arena = Arena()
    for name in ("ann", "bob"):
        arena.join(name, 1500)
    first = arena.standings()
    assert arena.standings() is first
    arena.record("bob", "ann", "x", 20)
    assert [(row.name, row.score) for row in arena.standings()] == [("bob", 2), ("ann", 0)]
    arena.join("cid", 2400)  # a newcomer's performance is their rating: ahead of ann
    assert [row.name for row in arena.standings()] == ["bob", "cid", "ann"]
    arena.join("ann", 2600)  # back, with a new rating (her performance is her games')
    assert arena.standings()[2].name == "ann"


def test_the_order_kept_as_results_come_is_the_order_sorted_afresh() -> None:
    """The standings' order is kept as results come (each moves its two players) and a
    player's rank read from it: the same as sorting every player again."""
    rng = random.Random(7)
    arena = Arena()
    for n in range(40):
        arena.join(f"p{n:02}", 1400 + rng.randrange(300))
    for step in range(600):
        x, o = rng.sample(sorted(arena.entries), 2)
        arena.record(x, o, rng.choice(["x", "o", None]), rng.choice([1, 9, 20]))
        if step % 50 == 0:
            arena.join(f"n{step}", 1500)  # a newcomer
            arena.join("p00", 1300 + step)  # back with a new rating
        if step % 7 == 0:
            fresh = Arena(entries=arena.entries)  # sorts them all
            rows = arena.standings()
            assert rows == fresh.standings()
            assert all(arena.rank(row.name) == row.rank for row in rows)


def test_a_player_who_leaves_keeps_the_score_and_is_not_paired() -> None:
    arena = Arena()
    for name in ("ann", "bob", "cid"):
        arena.join(name, 1500)
    arena.record("ann", "bob", "x", 20)
    arena.leave("ann")
    assert arena.pair(["ann", "bob", "cid"]) in ([("bob", "cid")], [("cid", "bob")])
    assert arena.standings()[0].name == "ann"
    arena.join("ann", 1500)
    assert arena.entries["ann"].sheet.score == 2


def test_the_last_opponent_is_never_paired_again_at_once() -> None:
    arena = Arena()
    for name in ("ann", "bob"):
        arena.join(name, 1500)
    arena.record("ann", "bob", "x", 20)
    assert arena.pair(["ann", "bob"]) == []  # they wait for someone else
    arena.join("cid", 1500)
    pairs = arena.pair(["ann", "bob", "cid"])
    assert len(pairs) == 1 and "cid" in pairs[0]


def test_pairing_prefers_near_ranks_and_alternates_colours() -> None:
    arena = Arena()
    for index, name in enumerate("abcdef"):
        arena.join(name, 1500 + index)
    arena.record("a", "b", "x", 20)
    arena.record("c", "d", "x", 20)
    arena.record("e", "f", None, 64)
    # ranks: a, c (2); e, f (1); b, d (0); not a-b, c-d, e-f again
    pairs = arena.pair("abcdef")
    assert sorted(tuple(sorted(pair)) for pair in pairs) == [("a", "c"), ("b", "d"), ("e", "f")
                                                             ] or len(pairs) == 3
    assert all(set(pair) not in ({"a", "b"}, {"c", "d"}, {"e", "f"}) for pair in pairs)
    for x, o in pairs:  # X to whoever had it less
        assert arena.entries[x].x_minus_o <= arena.entries[o].x_minus_o


def brute_force_cost(arena: Arena, waiting: list[str]) -> tuple[int, int]:
    """(-pairs, cost) of the best matching, by trying every one."""
    ranks = {row.name: row.rank for row in arena.standings()}
    entries = [arena.entries[name] for name in waiting]
    best = (0, 0)

    def walk(free: list, pairs: int, cost: int) -> None:
        nonlocal best
        best = min(best, (-pairs, cost))
        if len(free) < 2:
            return
        first, rest = free[0], free[1:]
        walk(rest, pairs, cost)
        for other in rest:
            if first.last_opponent == other.name or other.last_opponent == first.name:
                continue
            walk([e for e in rest if e is not other], pairs + 1,
                 cost + 1000 * abs(ranks[first.name] - ranks[other.name])
                 + abs(first.rating - other.rating))

    walk(entries, 0, 0)
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=2, max_value=8), st.integers(min_value=0, max_value=2**32))
def test_the_exact_pairing_is_the_best_matching(players: int, seed: int) -> None:
    rng = random.Random(seed)
    arena = Arena()
    names = [f"p{i}" for i in range(players)]
    for name in names:
        arena.join(name, rng.randrange(1000, 2000))
    for _ in range(rng.randrange(0, 10)):
        x, o = rng.sample(names, 2)
        arena.record(x, o, rng.choice(["x", "o", None]), 20)
    waiting = rng.sample(names, rng.randrange(0, players + 1))
    pairs = arena.pair(waiting)
    ranks = {row.name: row.rank for row in arena.standings()}
    cost = sum(1000 * abs(ranks[x] - ranks[o])
               + abs(arena.entries[x].rating - arena.entries[o].rating) for x, o in pairs)
    assert (-len(pairs), cost) == brute_force_cost(arena, waiting)
    assert len({name for pair in pairs for name in pair}) == 2 * len(pairs)


def test_a_crowd_past_the_exact_search_is_paired_by_rank() -> None:
    arena = Arena()
    names = [f"p{i:02}" for i in range(EXACT + 10)]
    for index, name in enumerate(names):
        arena.join(name, 2000 - index)
    pairs = arena.pair(names)
    assert len(pairs) == len(names) // 2
    assert [tuple(sorted(pair)) for pair in pairs][:2] == [("p00", "p01"), ("p02", "p03")]


# -- Swiss -------------------------------------------------------------------------------------


def swiss_of(ratings: dict[str, int], rounds: int) -> Swiss:
    swiss = Swiss(rounds)
    for name, rating in ratings.items():
        swiss.join(name, rating)
    return swiss


def test_colour_preferences_and_what_is_allowed() -> None:
    assert preference([]) == (None, 0)
    assert preference(["x"]) == ("o", 1)
    assert preference(["x", "o"]) == ("x", 0)
    assert not allowed(["x", "x"], "x")  # three in a row
    assert not allowed(["x", "o", "x", "x"], "x") and allowed(["x", "o", "x"], "x")
    assert not allowed(["x", "x", "o", "x"], "x")  # X three more times than O
    a_gets_x, fit = colours_for(["o"], ["x"])
    assert a_gets_x and fit == 2
    a_gets_x, fit = colours_for(["x"], ["x", "o", "x"])  # equal: a, the higher, has O
    assert not a_gets_x and fit == 1
    a_gets_x, fit = colours_for(["x", "o"], ["x", "x"])  # b's preference is the stronger
    assert a_gets_x and fit == 2


def test_round_one_pairs_the_top_half_with_the_bottom_half() -> None:
    swiss = swiss_of({"a": 2000, "b": 1900, "c": 1800, "d": 1700}, 3)
    first = swiss.pair_round()
    assert sorted(tuple(sorted(pair)) for pair in first.pairs) == [("a", "c"), ("b", "d")]
    assert first.bye is None


def test_a_leader_group_whose_two_have_met_floats_one_down() -> None:
    """After round one (a, b, c won), round two pairs two of the three leaders and floats the
    third down to the best of the next group; nobody meets a first-round opponent again."""
    swiss = swiss_of({"a": 2000, "b": 1990, "c": 1980, "d": 1970, "e": 1960, "f": 1950}, 3)
    played = swiss.pair_round()
    assert sorted(tuple(sorted(pair)) for pair in played.pairs) == [
        ("a", "d"), ("b", "e"), ("c", "f")]
    for x, o in played.pairs:
        swiss.record(x, o, "x" if x < o else "o")  # the earlier letter wins
    second = swiss.pair_round()
    met_before = {frozenset(pair) for pair in played.pairs}
    assert all(frozenset(pair) not in met_before for pair in second.pairs)
    assert {frozenset(pair) for pair in second.pairs} == {
        frozenset("ab"), frozenset("cd"), frozenset("ef")}


def test_the_lowest_without_a_bye_gets_it_and_nobody_gets_two() -> None:
    swiss = swiss_of({name: 2000 - i for i, name in enumerate("abcdefg")}, 4)
    byes = []
    for _ in range(4):
        played = swiss.pair_round()
        byes.append(played.bye)
        for x, o in played.pairs:
            swiss.record(x, o, "x")
    assert len(set(byes)) == 4  # four rounds, four different players
    assert byes[0] == "g"  # the lowest in round one
    assert all(row.score * 2 == swiss.entrants[row.name].score for row in swiss.standings())


def test_the_round_must_end_before_the_next_is_paired() -> None:
    swiss = swiss_of({"a": 2000, "b": 1900}, 2)
    played = swiss.pair_round()
    with pytest.raises(SwissError) as refused:
        swiss.pair_round()
    assert refused.value.code == "round_not_over"
    swiss.record(*played.pairs[0], None)
    with pytest.raises(SwissError) as repeat:
        swiss.pair_round()  # two players: only a rematch is left, and there is none
    assert repeat.value.code == "no_pairing" and swiss.current == 1


def test_a_round_due_by_time_leaves_out_those_still_playing() -> None:
    """Round 2 paired at its set time while a game of round 1 goes on: its two players sit
    round 2 out (no game, no bye); their game scores for round 1 when it ends."""
    swiss = swiss_of({"a": 2000, "b": 1900, "c": 1800, "d": 1700, "e": 1600}, 3)
    first = swiss.pair_round()
    assert first.bye is not None and len(first.pairs) == 2
    done, going = first.pairs
    swiss.record(*done, "x")
    assert swiss.playing == set(going)
    with pytest.raises(SwissError):
        swiss.pair_round()  # not early: the round is not over
    second = swiss.pair_round(early=True)
    paired = {name for pair in second.pairs for name in pair}
    assert second.number == 2 and not paired & set(going) and second.bye not in going
    assert len(second.pairs) == 1 and second.bye is not None  # three free: a pair and a bye
    for name in going:
        assert 2 not in swiss.entrants[name].games
    x, o = going  # round 1's game ends now: it scores for round 1
    swiss.entrants[x].games[1] = swiss.entrants[x].games[1].__class__(o, "x", 2)
    swiss.entrants[o].games[1] = swiss.entrants[o].games[1].__class__(x, "o", 0)
    assert swiss.entrants[x].score == 2 and swiss.playing == paired
    assert not swiss.finished


def test_buchholz_and_sonneborn_berger_by_hand() -> None:
    """a beats b, c beats d; then a beats c, b draws d. Scores a 2, c 1, b ½, d ½.
    Buchholz: a: b+c = 1.5, c: d+a = 2.5, b: a+d = 2.5, d: c+b = 1.5.
    Sonneborn-Berger: a: b+c = 1.5; c: d = 0.5; b: ½·d = 0.25; d: ½·b = 0.25."""
    swiss = swiss_of({"a": 2000, "b": 1900, "c": 1800, "d": 1700}, 2)
    swiss.pair_round()
    swiss.entrants = {name: swiss.entrants[name] for name in "abcd"}
    for entrant in swiss.entrants.values():
        entrant.games.clear()
    from server.game.swiss import Game

    def play(round_number: int, x: str, o: str, points_x: int) -> None:
        swiss.entrants[x].games[round_number] = Game(o, "x", points_x)
        swiss.entrants[o].games[round_number] = Game(x, "o", 2 - points_x)

    play(1, "a", "b", 2)
    play(1, "c", "d", 2)
    play(2, "c", "a", 0)
    play(2, "b", "d", 1)
    swiss.current = 2
    rows = {row.name: row for row in swiss.standings()}
    assert [(rows[n].score, rows[n].buchholz, rows[n].sonneborn_berger) for n in "abcd"] == [
        (2, 1.5, 1.5), (0.5, 2.5, 0.25), (1, 2.5, 0.5), (0.5, 1.5, 0.25)]
    assert [row.name for row in swiss.standings()] == ["a", "c", "b", "d"]


def has_perfect_matching(names: list[str], met: dict[str, set[str]]) -> bool:
    if not names:
        return True
    first, rest = names[0], names[1:]
    return any(has_perfect_matching([n for n in rest if n != other], met)
               for other in rest if other not in met[first])


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=3, max_value=11), st.integers(min_value=0, max_value=2**32))
def test_no_rematch_while_one_can_be_avoided_and_colours_stay_within_bounds(
        players: int, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    swiss = swiss_of({name: rng.randrange(1200, 2200) for name in names}, min(players - 1, 6))
    while not swiss.finished:
        before = {name: set(entrant.opponents()) for name, entrant in swiss.entrants.items()}
        try:
            played = swiss.pair_round()
        except SwissError as ended:  # only when no pairing without a rematch exists
            assert ended.code == "no_pairing"
            assert not any(has_perfect_matching([n for n in names if n != bye], before)
                           for bye in (names if players % 2 else [None]))
            break
        seated = [name for pair in played.pairs for name in pair]
        assert sorted(seated + ([played.bye] if played.bye else [])) == sorted(names)
        if any(o in before[x] for x, o in played.pairs):
            assert not has_perfect_matching(sorted(seated), before)
        for x, o in played.pairs:
            swiss.record(x, o, rng.choice(["x", "o", None]))
    for entrant in swiss.entrants.values():
        colours = entrant.colours()
        assert abs(colours.count("x") - colours.count("o")) <= 2 or players <= 4
    assert [row.rank for row in swiss.standings()][0] == 1
