"""Tournaments in the database, on SQLite and PostgreSQL alike: scheduling, joining and
leaving, games recorded as they end, the list (server/store/tournaments.py)."""

from __future__ import annotations

import pytest

from server.errors import StoreError
from server.game.records import Seat, TimeControl
from server.store import tournaments as ops
from server.store.base import Store

# the store's fixtures: database and store on SQLite and PostgreSQL come from conftest.py


def arena(tournament_id: str = "T1", *, starts_at: float = 100.0, kind: ops.Kind = "arena",
          ) -> ops.TournamentRecord:
    swiss = kind == "swiss"
    return ops.TournamentRecord(
        id=tournament_id, name="Evening", kind=kind, status="created", starts_at=starts_at,
        ends_at=None, minutes=None if swiss else 60, rounds=3 if swiss else None, round=0,
        clock=(180, 2), variant="4x4x4", rated=True, created=1.0, created_by="host")


async def test_a_tournament_is_scheduled_with_its_computers(store: Store) -> None:
    await store.apply(ops.insert_tournament(arena(), [3, 3, 5]))
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    assert data.tournament.clock_text == "3+2" and data.tournament.status == "created"
    assert [(e.name, e.computer, e.rating) for e in data.entries] == [
        ("computer-3", 3, 1500), ("computer-3-2", 3, 1500), ("computer-5", 5, 1500)]
    assert await store.query(ops.tournament_data("T2")) is None
    assert await store.query(ops.unfinished_tournaments()) == ["T1"]


async def test_a_swiss_keeps_its_rounds_set_times(store: Store) -> None:
    from dataclasses import replace

    timed = replace(arena("S1", kind="swiss"), round_interval=600.0)
    listed = replace(arena("S2", kind="swiss"), round_times=(700.0, 1300.0))
    for tournament in (timed, listed):
        await store.apply(ops.insert_tournament(tournament, []))
    got = [await store.query(ops.tournament_data(t)) for t in ("S1", "S2", "T1")]
    assert got[0] is not None and got[0].tournament.round_interval == 600.0
    assert got[0].tournament.round_due(2, 150.0) == 750.0
    assert got[1] is not None and got[1].tournament.round_times == (700.0, 1300.0)
    assert got[1].tournament.round_due(3, 900.0) == 1300.0
    assert got[1].tournament.round_due(4, 1400.0) is None  # none set: when the last ends
    await store.apply(ops.insert_tournament(arena(), []))
    plain = await store.query(ops.tournament_data("T1"))
    assert plain is not None and plain.tournament.round_interval is None
    assert plain.tournament.round_times == ()


async def test_players_join_leave_and_come_back(store: Store) -> None:
    await store.create_player("ann", 0.0)
    await store.apply(ops.insert_tournament(arena(), []))
    await store.apply(ops.join_tournament("T1", "ANN", 5.0))
    await store.apply(ops.join_tournament("T1", "ann", 6.0))  # twice: one entry
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    assert [(e.name, e.rating, e.withdrawn, e.always) for e in data.entries] == [
        ("ann", 1500, None, False)]
    assert await store.query(ops.tournaments_of("ann")) == ["T1"]
    await store.apply(ops.withdraw("T1", "ann", 7.0))
    assert await store.query(ops.tournaments_of("ann")) == []
    await store.apply(ops.join_tournament("T1", "ann", 8.0, always=True))
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None and data.entries[0].withdrawn is None and data.entries[0].always
    for refused, code in (("T9", "no_such_tournament"),):
        with pytest.raises(StoreError) as error:
            await store.apply(ops.join_tournament(refused, "ann", 9.0))
        assert error.value.code == code
    with pytest.raises(StoreError) as error:
        await store.apply(ops.join_tournament("T1", "nobody", 9.0))
    assert error.value.code == "no_such_player"
    assert await store.apply(ops.finish_tournament("T1", 10.0))
    assert not await store.apply(ops.finish_tournament("T1", 11.0))
    with pytest.raises(StoreError) as error:
        await store.apply(ops.join_tournament("T1", "ann", 12.0))
    assert error.value.code == "tournament_over"


async def test_the_players_seen_are_marked_in_one_go(store: Store) -> None:
    """A node's note of who is connected: those named (and only those, of this tournament)
    are seen now; a name of nobody or of a player who did not join changes nothing."""
    for name in ("ann", "bob", "cat"):
        await store.create_player(name, 0.0)
    await store.apply(ops.insert_tournament(arena(), []))
    await store.apply(ops.insert_tournament(arena("T2"), []))
    for name in ("ann", "bob"):
        await store.apply(ops.join_tournament("T1", name, 5.0))
        await store.apply(ops.join_tournament("T2", name, 5.0))
    await store.apply(ops.mark_seen("T1", ["ann", "cat", "nobody"], 9.0))
    await store.apply(ops.mark_seen("T1", [], 10.0))
    seen = {}
    for tid in ("T1", "T2"):
        data = await store.query(ops.tournament_data(tid))
        assert data is not None
        seen[tid] = {e.name: e.seen for e in data.entries}
    assert seen == {"T1": {"ann": 9.0, "bob": 5.0}, "T2": {"ann": 5.0, "bob": 5.0}}


async def test_who_joined_over_http_is_seen_only_when_connected(store: Store) -> None:
    """A join over HTTP (``always``) is seen only if a connection of theirs is open
    (``connected``): a newcomer not at all, one who comes back as last seen; every node reads
    who has joined and not left, by tournament, to note those connected to it."""
    for name in ("ann", "bob", "cat"):
        await store.create_player(name, 0.0)
    for tid in ("T1", "T2"):
        await store.apply(ops.insert_tournament(arena(tid), [1]))
    await store.apply(ops.join_tournament("T1", "ann", 5.0, always=True, connected=False))
    await store.apply(ops.join_tournament("T1", "bob", 5.0, always=True))
    await store.apply(ops.join_tournament("T1", "cat", 5.0))
    await store.apply(ops.join_tournament("T2", "cat", 5.0, always=True, connected=False))
    assert await store.query(ops.still_joined(["T1", "T2", "T9"])) == {
        "T1": ["ann", "bob", "cat"], "T2": ["cat"]}
    assert await store.query(ops.still_joined([])) == {}
    await store.apply(ops.mark_seen("T1", ["ann"], 7.0))
    await store.apply(ops.withdraw("T1", "ann", 8.0))
    await store.apply(ops.withdraw("T1", "bob", 8.0))
    assert await store.query(ops.still_joined(["T1"])) == {"T1": ["cat"]}  # not who left
    await store.apply(ops.join_tournament("T1", "ann", 9.0, always=True, connected=False))
    await store.apply(ops.join_tournament("T1", "bob", 9.0, always=True))
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    assert {e.name: (e.seen, e.always) for e in data.entries if e.computer is None} == {
        "ann": (7.0, True), "bob": (9.0, True), "cat": (5.0, False)}
    other = await store.query(ops.tournament_data("T2"))
    assert other is not None and [e.seen for e in other.entries if e.name == "cat"] == [None]


async def test_a_swiss_is_joined_before_its_first_round(store: Store) -> None:
    for name in ("ann", "bob"):
        await store.create_player(name, 0.0)
    await store.apply(ops.insert_tournament(arena(kind="swiss"), []))
    await store.apply(ops.join_tournament("T1", "ann", 1.0))
    await store.apply(ops.start_tournament("T1", None))
    await store.apply(ops.set_round("T1", 1))
    with pytest.raises(StoreError) as error:
        await store.apply(ops.join_tournament("T1", "bob", 2.0))
    assert error.value.code == "tournament_started"
    await store.apply(ops.withdraw("T1", "ann", 3.0))
    await store.apply(ops.join_tournament("T1", "ann", 4.0))  # who joined may come back


async def test_games_are_recorded_as_they_end(store: Store) -> None:
    for name in ("ann", "bob"):
        await store.create_player(name, 0.0)
    await store.apply(ops.insert_tournament(arena(), [2]))
    for name in ("ann", "bob"):
        await store.apply(ops.join_tournament("T1", name, 1.0))
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    computer, ann, bob = (e.id for e in data.entries)
    clock = TimeControl(180, 2)
    first = await store.create_game(variant="4x4x4", x=Seat.human("ann"), o=Seat.human("bob"),
                                    clock=clock, rated=True, now=2.0, tournament="T1")
    second = await store.create_game(variant="4x4x4", x=Seat.computer(2), o=Seat.human("ann"),
                                     clock=clock, rated=False, now=2.0, tournament="T1")
    assert (await store.get_game(first.id)).tournament == "T1"  # type: ignore[union-attr]
    await store.apply(ops.add_game("T1", first.id, None, ann, bob, 2.0))
    await store.apply(ops.add_game("T1", second.id, None, computer, ann, 2.0))
    await store.apply(ops.add_game("T1", None, 1, bob, None, 2.0))  # a bye
    assert await store.apply(ops.record_ended("T1", 3.0)) == []
    await store.abort_game(second.id, reason="abort", now=4.0)
    await store.finish_game(first.id, result="0-1", reason="resign", now=5.0)
    ended = await store.apply(ops.record_ended("T1", 6.0))
    assert [(g.game_id, g.result, g.plies) for g in ended] == [
        (second.id, "*", 0), (first.id, "0-1", 0)]
    assert await store.apply(ops.record_ended("T1", 7.0)) == []
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    assert [(g.game_id, g.x, g.o, g.result) for g in data.games] == [
        (first.id, ann, bob, "0-1"), (second.id, computer, ann, "*"), (None, bob, None, "1-0")]


async def test_the_list_shows_the_coming_then_the_recently_finished(store: Store) -> None:
    for number, starts in ((1, 300.0), (2, 200.0), (3, 100.0), (4, 50.0)):
        await store.apply(ops.insert_tournament(arena(f"T{number}", starts_at=starts), []))
    await store.apply(ops.finish_tournament("T3", 1000.0))
    await store.apply(ops.finish_tournament("T4", 1000.0 - ops.LISTED_FOR - 1))
    listed = await store.query(ops.list_tournaments(1001.0))
    assert [t.id for t in listed] == ["T2", "T1", "T3"]
    assert listed[2].status == "finished" and listed[2].ends_at == 1000.0


async def test_an_entry_says_whether_its_player_is_a_bot_account(store: Store) -> None:
    """A bot account's entry is marked ``bot`` (read with its name); a computer's is not:
    it has a level."""
    from server.node import levers

    await store.apply(ops.insert_tournament(arena(), [3]))
    for name in ("ann", "robo"):
        await store.create_player(name, 1.0)
        await store.apply(ops.join_tournament("T1", name, 2.0))
    await levers.grant(store, "host", "robo", "bot")
    data = await store.query(ops.tournament_data("T1"))
    assert data is not None
    assert [(e.name, e.bot, e.computer) for e in data.entries] == [
        ("computer-3", False, 3), ("ann", False, None), ("robo", True, None)]


async def test_the_list_reads_when_a_swiss_round_being_played_began(store: Store) -> None:
    """For its next round's due time (``TournamentInfo.next_round_at``): the first game (or
    bye) of the round being played; none before the first round."""
    for name in ("ann", "bob", "cat"):
        await store.create_player(name, 0.0)
    await store.apply(ops.insert_tournament(arena("S1", kind="swiss"), []))
    for name in ("ann", "bob", "cat"):
        await store.apply(ops.join_tournament("S1", name, 5.0))
    listed = await store.query(ops.list_tournaments(100.0))
    assert [(t.id, t.round_started) for t in listed] == [("S1", None)]
    data = await store.query(ops.tournament_data("S1"))
    assert data is not None
    ann, _, cat = (e.id for e in data.entries)
    await store.apply(ops.start_tournament("S1", None))
    await store.apply(ops.set_round("S1", 1))
    await store.apply(ops.add_game("S1", None, 1, cat, None, 102.0))  # (byes: no game row)
    await store.apply(ops.add_game("S1", None, 1, ann, None, 101.5))
    listed = await store.query(ops.list_tournaments(110.0))
    assert listed[0].round == 1 and listed[0].round_started == 101.5
