"""Matchmaking: seeks, quick-pairing pools with a widening window, private rooms. No I/O."""

import random
import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.errors import MatchmakingError
from server.game.matchmaking import (
    Matchmaker,
    PairingPool,
    RatingWindow,
    WaitingSeek,
    new_private_code,
)
from server.game.records import TimeControl

BLITZ = TimeControl(180, 2)


def refusal(call: Callable[[], object]) -> str:
    """The code of the MatchmakingError that ``call`` raises."""
    with pytest.raises(MatchmakingError) as error:
        call()
    return error.value.code


# The rating window and the pools.


def test_the_window_widens_by_steps_up_to_its_cap() -> None:
    window = RatingWindow(initial=100, step=50, every=5, maximum=500)
    assert [window.at(t) for t in (0, 4.9, 5, 12, 30)] == [100, 100, 150, 200, 400]
    assert window.at(3600) == 500 and window.at(-1) == 100


def test_two_players_far_apart_are_paired_once_both_windows_reach() -> None:
    pool = PairingPool("4x4x4", BLITZ, rng=random.Random(1))
    pool.join("alice", 1500, now=0)
    pool.join("bob", 1760, now=0)
    for now in (0, 5, 10, 15):  # windows 100, 150, 200, 250: the gap is 260
        assert pool.pair_waiting_players(now) == []
    [pairing] = pool.pair_waiting_players(20)  # window 300
    assert {pairing.x, pairing.o} == {"alice", "bob"}
    assert (pairing.variant, pairing.clock, pairing.rated) == ("4x4x4", BLITZ, True)
    assert len(pool) == 0 and pool.pair_waiting_players(25) == []


def test_a_newcomer_is_paired_only_within_his_own_window_too() -> None:
    pool = PairingPool("4x4x4", None)
    pool.join("veteran", 1500, now=0)
    pool.join("newcomer", 1800, now=100)  # the veteran's window is at its cap of 500
    assert pool.pair_waiting_players(100) == []
    assert pool.pair_waiting_players(119.9) == []  # the newcomer's window: 250
    assert len(pool.pair_waiting_players(120)) == 1  # 300


def test_the_oldest_waiter_chooses_first_and_takes_the_closest_rating() -> None:
    pool = PairingPool("4x4x4", None)
    pool.join("old", 1500, now=0)
    pool.join("far", 1590, now=1)
    pool.join("near", 1460, now=2)
    pool.join("late", 1595, now=3)
    pairings = pool.pair_waiting_players(4)
    assert [{p.x, p.o} for p in pairings] == [{"old", "near"}, {"far", "late"}]


def test_between_equally_close_ratings_the_older_waiter_wins() -> None:
    pool = PairingPool("4x4x4", None)
    pool.join("first", 1500, now=0)
    pool.join("above", 1550, now=2)
    pool.join("below", 1450, now=1)
    [pairing] = pool.pair_waiting_players(3)
    assert {pairing.x, pairing.o} == {"first", "below"}
    assert "above" in pool


def test_pool_colours_come_from_the_injected_random() -> None:
    def colours(seed: int) -> list[str]:
        pool = PairingPool("4x4", None, rng=random.Random(seed))
        result = []
        for game in range(40):
            pool.join(f"a{game}", 1500, now=game)
            pool.join(f"b{game}", 1500, now=game)
            result += [p.x[0] for p in pool.pair_waiting_players(game)]
        return result

    assert colours(7) == colours(7)
    assert set(colours(7)) == {"a", "b"}


def test_joining_a_pool_twice_is_refused_and_leaving_says_whether_one_waited() -> None:
    pool = PairingPool("4x4x4", None)
    pool.join("alice", 1500, now=0)
    assert refusal(lambda: pool.join("alice", 1500, now=1)) == "already_queued"
    assert pool.leave("alice") and not pool.leave("alice")
    assert "alice" not in pool


def test_pools_of_other_variants_or_clocks_never_mix() -> None:
    lobby = Matchmaker()
    lobby.join_pool("alice", "4x4x4", BLITZ, 1500, now=0)
    lobby.join_pool("bob", "4x4x4", TimeControl(600, 0), 1500, now=0)
    lobby.join_pool("carol", "3x3x3", BLITZ, 1500, now=0)
    assert lobby.pair_waiting_players(now=1) == []
    assert lobby.pool_sizes() == {
        ("4x4x4", BLITZ): 1,
        ("4x4x4", (600, 0)): 1,
        ("3x3x3", BLITZ): 1,
    }
    lobby.join_pool("dave", "3x3x3", TimeControl(180, 2), 1500, now=1)
    [pairing] = lobby.pair_waiting_players(now=2)
    assert {pairing.x, pairing.o} == {"carol", "dave"} and pairing.variant == "3x3x3"
    assert lobby.waiting_in("carol") is None and lobby.waiting_in("alice") == ("4x4x4", BLITZ)
    lobby.leave_pool("alice")
    assert refusal(lambda: lobby.leave_pool("alice")) == "not_queued"


# One place at a time.


def test_a_player_waits_in_one_place_at_a_time() -> None:
    lobby = Matchmaker()
    seek = lobby.create_seek("alice", "4x4x4", None, False, "random", now=0)
    assert lobby.waiting_in("alice") == seek
    assert refusal(lambda: lobby.create_seek("alice", "4x4", None, False, "x", 1)) == (
        "too_many_seeks"
    )
    assert refusal(lambda: lobby.join_pool("alice", "4x4x4", None, 1500, 1)) == ("too_many_seeks")
    lobby.join_pool("bob", "4x4x4", None, 1500, now=0)
    assert refusal(lambda: lobby.create_seek("bob", "4x4", None, False, "x", 1)) == (
        "already_queued"
    )
    lobby.create_private_room("carol", "4x4x4", None, False, "random", now=0)
    assert refusal(lambda: lobby.join_pool("carol", "4x4x4", None, 1500, 1)) == ("already_queued")
    assert lobby.withdraw("carol") is not None and lobby.withdraw("carol") is None
    lobby.join_pool("carol", "4x4x4", None, 1500, now=2)


# Seeks.


def test_seeks_are_listed_cancelled_and_accepted_with_the_chosen_colour() -> None:
    lobby = Matchmaker(rng=random.Random(3))
    as_x = lobby.create_seek("alice", "4x4x4", BLITZ, True, "x", now=0, rating=1620)
    as_o = lobby.create_seek("bob", "3x3x3", None, False, "o", now=1)
    anyhow = lobby.create_seek("carol", "4x4", None, False, "random", now=2)
    assert lobby.seeks() == [as_x, as_o, anyhow]
    assert (
        isinstance(as_x, WaitingSeek)
        and as_x.rating == 1620
        and len({s.id for s in lobby.seeks()}) == 3
    )

    pairing = lobby.accept_seek(as_x.id, "dave")
    assert (pairing.x, pairing.o, pairing.variant, pairing.clock, pairing.rated) == (
        "alice",
        "dave",
        "4x4x4",
        BLITZ,
        True,
    )
    pairing = lobby.accept_seek(as_o.id, "erin")
    assert (pairing.x, pairing.o) == ("erin", "bob")
    assert refusal(lambda: lobby.accept_seek(as_x.id, "frank")) == "no_such_seek"
    assert refusal(lambda: lobby.accept_seek(anyhow.id, "carol")) == "own_seek"
    assert refusal(lambda: lobby.cancel_seek(anyhow.id, "frank")) == "not_allowed"
    assert lobby.cancel_seek(anyhow.id, "carol") == anyhow
    assert lobby.seeks() == [] and lobby.waiting_in("carol") is None
    assert refusal(lambda: lobby.cancel_seek(anyhow.id, "carol")) == "no_such_seek"


def test_a_random_colour_seek_gives_either_colour() -> None:
    lobby = Matchmaker(rng=random.Random(5))
    seekers_as_x = set()
    for game in range(30):
        seek = lobby.create_seek(f"s{game}", "4x4x4", None, False, "random", now=game)
        seekers_as_x.add(lobby.accept_seek(seek.id, f"t{game}").x == f"s{game}")
    assert seekers_as_x == {True, False}


def test_accepting_a_seek_takes_the_acceptor_out_of_his_pool() -> None:
    lobby = Matchmaker()
    lobby.join_pool("bob", "4x4x4", None, 1500, now=0)
    seek = lobby.create_seek("alice", "4x4x4", None, False, "x", now=0)
    lobby.accept_seek(seek.id, "bob")
    assert lobby.waiting_in("bob") is None and lobby.pool_sizes() == {}


# Private rooms.


def test_private_codes_carry_eighty_random_bits() -> None:  # 16 base32 characters
    codes = {new_private_code() for _ in range(1000)}
    assert len(codes) == 1000
    assert all(re.fullmatch(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){3}", code) for code in codes)


def test_a_private_room_pairs_its_host_with_the_holder_of_the_code() -> None:
    lobby = Matchmaker(rng=random.Random(2))
    room = lobby.create_private_room("alice", "4x4x4", BLITZ, False, "o", now=0)
    assert lobby.waiting_in("alice") == room
    assert refusal(lambda: lobby.join_private_room(room.code, "alice", 1)) == "not_allowed"
    typed = room.code.replace("-", "").lower()  # as a friend might type it
    pairing = lobby.join_private_room(typed, "bob", now=1)
    assert (pairing.x, pairing.o, pairing.clock, pairing.rated) == ("bob", "alice", BLITZ, False)
    assert lobby.waiting_in("alice") is None
    assert refusal(lambda: lobby.join_private_room(room.code, "carol", 2)) == "no_such_code"


def test_a_wrong_code_is_refused() -> None:
    lobby = Matchmaker()
    room = lobby.create_private_room("alice", "4x4x4", None, False, "random", now=0)
    wrong = ("B" if room.code[0] == "A" else "A") + room.code[1:]
    for code in (wrong, "", "AAAA-AAAA-AAAA-AAAA", room.code[:-1]):
        with pytest.raises(MatchmakingError) as error:
            lobby.join_private_room(code, "bob", 1)
        assert error.value.code == "no_such_code"
    assert lobby.waiting_in("alice") == room


def test_private_rooms_expire() -> None:
    lobby = Matchmaker(private_ttl=60)
    early = lobby.create_private_room("alice", "4x4x4", None, False, "x", now=0)
    late = lobby.create_private_room("bob", "4x4x4", None, False, "x", now=30)
    assert refusal(lambda: lobby.join_private_room(early.code, "carol", 60)) == "no_such_code"
    assert lobby.expire(now=59) == []
    assert lobby.expire(now=60) == [early]
    assert lobby.waiting_in("alice") is None and lobby.waiting_in("bob") == late
    lobby.create_seek("alice", "4x4x4", None, False, "x", now=61)
    assert lobby.join_private_room(late.code, "carol", now=89).o == "carol"


# Properties.

ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.integers(0, 11), st.integers(1000, 2200), st.booleans()),
        st.tuples(st.just("leave"), st.integers(0, 11)),
        st.tuples(st.just("wait"), st.floats(0, 20)),
        st.tuples(st.just("pair")),
    ),
    max_size=80,
)


@given(ACTIONS, st.integers(0, 2**32))
def test_nobody_is_paired_twice_or_with_himself(actions: list[tuple], seed: int) -> None:
    window = RatingWindow()
    lobby = Matchmaker(rng=random.Random(seed), window=window)
    now = 0.0
    joined: dict[str, tuple[float, float, tuple]] = {}  # player -> (rating, since, pool)
    for action in actions:
        if action[0] == "join":
            _, number, rating, blitz = action
            player = f"p{number}"
            clock = BLITZ if blitz else None
            if lobby.waiting_in(player) is None:
                lobby.join_pool(player, "4x4x4", clock, rating, now)
                joined[player] = (rating, now, ("4x4x4", clock))
            else:
                with pytest.raises(MatchmakingError):
                    lobby.join_pool(player, "4x4x4", clock, rating, now)
        elif action[0] == "leave":
            player = f"p{action[1]}"
            if player in joined:
                lobby.leave_pool(player)
                del joined[player]
        elif action[0] == "wait":
            now += action[1]
        else:
            pairings = lobby.pair_waiting_players(now)
            seated = [name for pairing in pairings for name in (pairing.x, pairing.o)]
            assert len(seated) == len(set(seated))
            for pairing in pairings:
                assert pairing.x != pairing.o
                (x_rating, x_since, x_pool), (o_rating, o_since, o_pool) = (
                    joined.pop(pairing.x),
                    joined.pop(pairing.o),
                )
                assert x_pool == o_pool == (pairing.variant, pairing.clock)
                gap = abs(x_rating - o_rating)
                assert gap <= min(window.at(now - x_since), window.at(now - o_since))
            assert all(lobby.waiting_in(name) is None for name in seated)
    assert set(joined) == {f"p{n}" for n in range(12) if lobby.waiting_in(f"p{n}")}
