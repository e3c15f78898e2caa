"""A tournament rebuilt from its rows (``server.node.tournament_view``), with no I/O: the
games replayed in the order they ended (an arena's streaks depend on it), a Swiss's byes and
aborted games, a withdrawal, and what clients are shown."""

from __future__ import annotations

from server.node.tournament_view import GAMES_SHOWN, Pages, Standings, tournament_info
from server.protocol import decode_server_message
from server.store.tournaments import (
    EntryRecord,
    TournamentData,
    TournamentGameRecord,
    TournamentRecord,
)


def tournament(kind: str = "arena", round_: int = 0) -> TournamentRecord:
    return TournamentRecord(
        id="T1", name="t", kind=kind, status="started", starts_at=0.0,  # type: ignore[arg-type]
        ends_at=3600.0 if kind == "arena" else None, minutes=60 if kind == "arena" else None,
        rounds=None if kind == "arena" else 3, round=round_, clock=(180, 2), variant="4x4x4",
        rated=True, created=0.0, created_by="host")


def entry(number: int, name: str, computer: int | None = None,
          withdrawn: float | None = None, bot: bool = False) -> EntryRecord:
    return EntryRecord(number, name, computer, 1500, 0.0, withdrawn, 0.0, False, bot)


def game(number: int, x: int, o: int | None, result: str | None, ended: float | None,
         plies: int = 10, round_: int | None = None) -> TournamentGameRecord:
    return TournamentGameRecord(number, None if o is None else f"g{number}", round_, x, o,
                                result, plies if ended else None, 0.0, ended)


def test_an_arena_is_replayed_in_the_order_its_games_ended() -> None:
    entries = [entry(1, "ann"), entry(2, "bob", bot=True), entry(3, "cat"),
               entry(4, "computer-2", 2)]
    games = [game(1, 1, 2, "1-0", 30.0), game(2, 1, 3, "1-0", 10.0),  # started 1, ended 2 first
             game(3, 1, 4, "1-0", 40.0), game(4, 2, 3, "*", 50.0, plies=0),
             game(5, 3, 4, None, None)]
    standings = Standings.from_data(TournamentData(tournament(), entries, games))
    rows = {row.name: row for row in standings.standings()}
    assert rows["ann"].points == [2, 2, 4] and rows["ann"].fire and rows["ann"].rank == 1
    assert rows["bob"].points == [0, 0] and rows["cat"].points == [0, 0]
    marks = {name: (row.bot, row.computer) for name, row in rows.items()}
    assert marks == {"ann": (False, None), "bob": (True, None), "cat": (False, None),
                     "computer-2": (False, 2)}  # a computer is no bot account: no page
    assert {name for name, row in rows.items() if row.playing} == {"cat", "computer-2"}
    shown = standings.state()
    assert [(g.id, g.result) for g in shown.games] == [  # newest first, the abort left out
        ("g5", None), ("g3", "1-0"), ("g2", "1-0"), ("g1", "1-0")]
    # a game ends: scored; a player withdraws: kept, marked, not paired
    standings.ended(game(5, 3, 4, "0-1", 60.0))
    standings.refresh([entry(3, "cat", withdrawn=61.0)])
    rows = {row.name: row for row in standings.standings()}
    assert rows["computer-2"].points == [0, 2] and not rows["cat"].playing
    assert rows["cat"].withdrawn
    assert standings.arena is not None and not standings.arena.entries["cat"].present
    # a rename: the rules know players by name, so the director rebuilds it from its rows
    assert not standings.refresh([entry(2, "bea")])


def test_a_swiss_is_replayed_with_its_bye_and_an_aborted_game() -> None:
    entries = [entry(1, "ann"), entry(2, "bob"), entry(3, "cat")]
    games = [game(1, 1, 2, "1/2-1/2", 10.0, round_=1), game(2, 3, None, "1-0", 0.0, round_=1),
             game(3, 3, 1, "*", 20.0, round_=2), game(4, 2, None, "1-0", 20.0, round_=2)]
    standings = Standings.from_data(TournamentData(tournament("swiss", 2), entries, games))
    assert standings.swiss is not None and standings.swiss.round_over
    rows = {row.name: row for row in standings.standings()}
    assert (rows["bob"].score, rows["bob"].points) == (1.5, [1, 2])
    assert (rows["cat"].score, rows["cat"].points) == (1, [2, 0])
    assert (rows["ann"].score, rows["ann"].points) == (0.5, [1, 0])
    assert rows["bob"].rank == 1 and rows["bob"].buchholz is not None
    assert standings.info().round == 2 and standings.info().ends_at is None


def test_the_live_update_is_paged_each_page_encoded_once() -> None:
    """25 players: 3 pages of 10; a follower sees the page of their own line (or the one
    asked for) and their line; the frame put together from encoded parts reads as the
    message; parts that did not change are equal (nothing is sent again)."""
    entries = [entry(n, f"p{n:02}") for n in range(1, 26)]
    games = [game(1, 1, 25, "1-0", 10.0), game(2, 2, 24, None, None),
             game(3, 15, 16, None, None)]
    standings = Standings.from_data(TournamentData(tournament(), entries, games))
    state = standings.state()
    assert len(state.standings) == 25 and state.pages == 3
    pages = Pages(state)
    assert pages.pages == 3
    me = state.standings[13].name  # the 14th line: page 2
    assert pages.page_for(None, me) == 2 and pages.page_for(None, "nobody") == 1
    assert pages.page_for(3, me) == 3 and pages.page_for(9, me) == 3  # past the last: last
    view = pages.view(2, me)
    assert [line.rank for line in view.standings] == [s.rank for s in state.standings[10:20]]
    assert view.me is not None and view.me.name == me and (view.page, view.pages) == (2, 3)
    names = {line.name for line in view.standings}
    assert view.games and all(g.x in names or g.o in names for g in view.games)
    assert view.games[0].result is None  # going on first
    frame = pages.frame(pages.parts(2, me), ref=7)
    assert decode_server_message(frame) == pages.view(2, me, ref=7)
    # one encoding of a page, whoever is on it
    assert pages.parts(2, me)[2] is pages.parts(2, state.standings[10].name)[2]
    # a watcher not in it: page 1, no line of their own
    assert decode_server_message(pages.frame(pages.parts(1, None))).me is None  # type: ignore[union-attr]
    # the next update: the leader withdrew; page 2's parts are as they were
    assert state.standings[0].name == "p01"
    standings.refresh([entry(1, "p01", withdrawn=30.0)])
    again = Pages(standings.state())
    assert again.parts(2, me) == pages.parts(2, me)
    assert again.parts(1, None) != pages.parts(1, None)


def test_a_follower_off_their_page_still_sees_their_own_game() -> None:
    entries = [entry(n, f"p{n:02}") for n in range(1, 26)]
    games = [game(1, 20, 21, "1-0", 10.0), game(2, 1, 25, None, None)]
    pages = Pages(Standings.from_data(TournamentData(tournament(), entries, games)).state())
    me = next(line.name for n, line in enumerate(pages.state.standings)
              if n >= 10 and line.playing)
    assert me in ("p01", "p25") and pages.page_for(None, me) != 1
    shown = decode_server_message(pages.frame(pages.parts(1, me)))
    assert shown.games[0].id == "g2"  # type: ignore[union-attr]


def test_a_state_of_many_games_shows_those_going_on_and_the_newest_ended() -> None:
    """Every game going on, however long ago it started, and the ``GAMES_SHOWN`` newest
    ended, newest first (the state stops looking once it has them: thousands of games)."""
    entries = [entry(n, f"p{n:02}") for n in range(1, 41)]
    games = [game(1, 1, 2, None, None)]  # the oldest, still going on
    games += [game(n, 3 + n % 17, 21 + n % 17, "1-0", float(n))
              for n in range(2, GAMES_SHOWN + 60)]
    games[100] = game(101, 38, 39, None, None)  # another going on, among the ended
    standings = Standings.from_data(TournamentData(tournament(), entries, games))
    shown = [g.id for g in standings.state().games]
    ended = [g for g in reversed(games) if g.ended is not None][:GAMES_SHOWN]
    expected = [g.game_id for g in reversed(games) if g.ended is None or g in ended]
    assert shown == expected and {"g1", "g101"} <= set(shown)
    assert len(shown) == GAMES_SHOWN + 2
    assert len(standings.state(every_game=True).games) == len(games)


def test_a_game_started_then_ended_is_scored_and_shown_with_its_result() -> None:
    entries = [entry(n, f"p{n:02}") for n in range(1, 5)]
    standings = Standings.from_data(TournamentData(
        tournament(), entries, [game(1, 1, 2, "1-0", 10.0), game(2, 3, 4, None, None)]))
    assert standings.next_game_id() == 3 and standings.entry_of("p03") == entries[2]
    standings.started(TournamentGameRecord(3, "g3", None, 2, 1, None, None, 20.0, None))
    assert standings.next_game_id() == 4 and set(standings.playing) == {"g2", "g3"}
    standings.ended(TournamentGameRecord(3, "g3", None, 2, 1, "1-0", 12, 20.0, 30.0))
    assert [(g.id, g.result) for g in standings.state().games] == [
        ("g3", "1-0"), ("g2", None), ("g1", "1-0")]
    assert {line.name: line.score for line in standings.state().standings}["p02"] == 2
    assert standings.entry_of("nobody") is None


def test_a_swiss_says_when_its_next_round_is_due() -> None:
    """By its set times, else the interval after the round being played began; none for
    rounds that wait for the last game, the last round, or before the first."""
    from dataclasses import replace
    swiss = replace(tournament("swiss", round_=1), round_interval=900.0)
    assert tournament_info(swiss, 4, 100.0).next_round_at == 1000.0
    timed = replace(swiss, round_times=(500.0, 700.0))
    assert tournament_info(timed, 4, 100.0).next_round_at == 500.0
    assert tournament_info(replace(timed, round=2), 4, 510.0).next_round_at == 700.0
    assert tournament_info(replace(timed, round=3), 4, 710.0).next_round_at is None  # last
    assert tournament_info(replace(swiss, round_interval=None), 4, 100.0).next_round_at \
        is None
    assert tournament_info(replace(swiss, round=0), 4, None).next_round_at is None
    assert tournament_info(tournament(), 4).next_round_at is None  # an arena
    standings = Standings.from_data(TournamentData(
        swiss, [entry(n, f"p{n}") for n in range(1, 5)],
        [TournamentGameRecord(1, "g1", 1, 1, 2, None, None, 120.0, None),
         TournamentGameRecord(2, "g2", 1, 3, 4, None, None, 115.0, None)]))
    assert standings.round_started() == 115.0
    assert standings.info().next_round_at == 1015.0
