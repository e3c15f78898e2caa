"""The stores, SQLite and PostgreSQL, through one parametrised fixture: players and tokens,
games and moves, restarts, concurrent writers ("nodes") and fencing, bad files and databases."""

import asyncio
import contextlib
import hashlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engine import Board, X
from server.errors import StoreError
from server.game.records import GameRecord, GameStatus, MoveRecord, Seat, TimeControl
from server.store.base import Store
from server.store.factory import is_postgres_url, open_store
from server.store.schema import SCHEMA_VERSION
from server.store.sqlite import SQLiteStore
from tests.server.servers import read_only

ALICE, BOB = Seat.human("Alice"), Seat.human("Bob")


async def raw(database: str, sql: str) -> list[tuple[Any, ...]]:
    """Run one statement on the database behind the store's back; the rows it returns."""
    if not is_postgres_url(database):
        with contextlib.closing(sqlite3.connect(database)) as conn:
            rows = [tuple(row) for row in conn.execute(sql)]
            conn.commit()
            return rows
    conn = await asyncpg.connect(database)
    try:
        if not sql.lstrip().upper().startswith("SELECT"):
            await conn.execute(sql)  # which may hold several statements
            return []
        return [tuple(row) for row in await conn.fetch(sql)]
    finally:
        await conn.close()


async def play(store: Store, game_id: str, cells: list[int], start: float = 0.0) -> None:
    for ply, cell in enumerate(cells, 1):
        await store.record_move(game_id, MoveRecord(ply, cell, 60.0 - ply, 60.0, start + ply))


# Players and tokens.


async def test_a_new_player_can_log_in_with_the_token_only_once_shown(store: Store) -> None:
    player, token = await store.create_player("Alice", now=100.0)
    assert player.name == "Alice" and player.rating == 1500 and player.rd == 350
    assert await store.authenticate(token) == player
    assert await store.authenticate(token, name="alice") == player
    assert await store.authenticate(token, name="Bob") is None
    assert await store.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert await store.authenticate("") is None
    assert await store.get_player("ALICE") == player
    assert await store.get_player("Bob") is None


async def test_a_games_two_seats_are_read_at_once(store: Store) -> None:
    alice, _ = await store.create_player("Alice", now=0.0)
    bob, _ = await store.create_player("Bob", now=1.0)
    assert await store.get_players(["ALICE", "Bob", "nobody", "ALICE"]) == {
        "ALICE": alice, "Bob": bob, "nobody": None}
    assert await store.get_players([]) == {}


async def test_names_are_unique_regardless_of_case(store: Store) -> None:
    await store.create_player("Alice", now=0.0)
    with pytest.raises(StoreError) as refused:
        await store.create_player("aLICE", now=1.0)
    assert refused.value.code == "name_taken"
    assert (await store.get_player("alice")).name == "Alice"  # type: ignore[union-attr]


async def test_the_token_is_stored_only_as_its_hash(store: Store, database: str) -> None:
    _, token = await store.create_player("Alice", now=0.0)
    await store.flush()
    if not is_postgres_url(database):
        files = [Path(database), Path(f"{database}-wal")]
        assert not any(token.encode() in path.read_bytes() for path in files if path.exists())
        await store.close()
        assert token.encode() not in Path(database).read_bytes()
    (row,) = await raw(database, "SELECT * FROM devices")  # a token per device (issue 27)
    assert hashlib.sha256(token.encode()).digest() in row
    for table in ("players", "devices"):
        for row in await raw(database, f"SELECT * FROM {table}"):
            assert not any(isinstance(value, str | bytes) and token in str(value)
                           for value in row)


# Games and moves.


async def test_a_game_and_its_moves_round_trip(store: Store) -> None:
    await store.create_player("Alice", now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=TimeControl(300, 5), rated=False, now=10.0
    )
    assert len(game.id) >= 12 and game.status == GameStatus.ACTIVE
    await play(store, game.id, [0, 21, 42], start=10.0)
    loaded = await store.get_game(game.id)
    assert loaded is not None
    assert (loaded.variant, loaded.clock, loaded.rated) == ("4x4x4", (300, 5), False)
    assert (loaded.x, loaded.o, loaded.created) == (ALICE, BOB, 10.0)
    assert loaded.cells == [0, 21, 42]
    assert loaded.moves[1] == MoveRecord(2, 21, 58.0, 60.0, 12.0)
    assert Board(loaded.variant, loaded.cells).moves == [0, 21, 42]
    assert await store.get_game("nope") is None


async def test_an_untimed_game_against_the_computer(store: Store) -> None:
    game = await store.create_game(
        variant="3x3x3", x=Seat.computer(3), o=BOB, clock=None, rated=False, now=0.0
    )
    await store.record_move(game.id, MoveRecord(1, 13, None, None, 1.0))
    loaded = await store.get_game(game.id)
    assert loaded is not None and loaded.clock is None and loaded.x.computer_level == 3
    assert str(loaded.x) == "computer level 3" and loaded.moves[0].clock_x is None
    with pytest.raises(StoreError, match="cannot be rated"):
        await store.create_game(
            variant="3x3x3", x=Seat.computer(3), o=BOB, clock=None, rated=True, now=0.0
        )


async def test_moves_must_follow_each_other_in_an_active_game(store: Store) -> None:
    game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0.0)
    await play(store, game.id, [0, 5])
    for bad in (MoveRecord(2, 9, None, None, 3.0), MoveRecord(4, 9, None, None, 3.0)):
        with pytest.raises(StoreError) as refused:
            await store.record_move(game.id, bad)
        assert refused.value.code == "stale_move"
    with pytest.raises(StoreError) as refused:
        await store.record_move("nope", MoveRecord(1, 0, None, None, 0.0))
    assert refused.value.code == "no_such_game"
    await store.abort_game(game.id, reason="abandoned", now=5.0)
    with pytest.raises(StoreError, match="is over") as refused:
        await store.record_move(game.id, MoveRecord(3, 9, None, None, 6.0))
    assert refused.value.code == "game_over"
    with pytest.raises(StoreError, match="already aborted"):
        await store.finish_game(game.id, result="1-0", reason="resign", now=7.0)
    assert (await store.get_game(game.id)).cells == [0, 5]  # type: ignore[union-attr]


async def test_unfinished_games_survive_a_restart(database: str) -> None:
    store = await open_store(database)
    try:
        kept = await store.create_game(
            variant="4x4x4",
            x=ALICE,
            o=Seat.computer(5),
            clock=TimeControl(60),
            rated=False,
            now=1.0,
        )
        done = await store.create_game(
            variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=2.0
        )
        await play(store, kept.id, [0, 1, 2, 3, 4])
        await play(store, done.id, [0, 4, 1, 5, 2, 6, 3])
        await store.finish_game(
            done.id, result="1-0", reason="line", now=9.0, winning_line=[0, 1, 2, 3]
        )
    finally:
        await store.close()
    store = await open_store(database)
    try:
        unfinished = await store.unfinished_games()
        assert [game.id for game in unfinished] == [kept.id]
        assert unfinished[0].cells == [0, 1, 2, 3, 4] and unfinished[0].clock == (60, 0)
        finished = await store.get_game(done.id)
        assert finished is not None and finished.status == GameStatus.FINISHED
        assert finished.winning_line == (0, 1, 2, 3) and finished.ended == 9.0
        board = Board(finished.variant, finished.cells)
        outcome = board.outcome()
        assert outcome is not None and outcome.winner == X and outcome.result == finished.result
    finally:
        await store.close()


async def test_a_takeback_removes_the_last_moves_for_good(database: str) -> None:
    store = await open_store(database)
    try:
        game = await store.create_game(
            variant="4x4x4", x=ALICE, o=Seat.computer(5), clock=None, rated=False, now=1.0
        )
        await play(store, game.id, [0, 1, 2, 3, 4])
        await store.take_back(game.id, 2)
        await store.take_back(game.id, 2)  # nothing after ply 2 any more: no change
        for ply in (3, -1):
            with pytest.raises(StoreError) as refused:
                await store.take_back(game.id, ply)
            assert refused.value.code == "stale_move"
        with pytest.raises(StoreError) as refused:
            await store.take_back("nope", 0)
        assert refused.value.code == "no_such_game"
        await store.record_move(game.id, MoveRecord(3, 9, None, None, 9.0))  # play on from ply 2
    finally:
        await store.close()
    store = await open_store(database)
    try:
        (resumed,) = await store.unfinished_games()
        assert resumed.cells == [0, 1, 9]
        await store.abort_game(game.id, reason="abort", now=10.0)
        with pytest.raises(StoreError) as refused:
            await store.take_back(game.id, 1)
        assert refused.value.code == "game_over"
        assert (await store.get_game(game.id)).cells == [0, 1, 9]  # type: ignore[union-attr]
    finally:
        await store.close()


async def test_whether_a_game_is_listed_survives_a_restart(database: str) -> None:
    """A public game stays listed and a private one unlisted across a restart; a game stored
    before the schema had the field comes back unlisted, as nobody knows whether it was
    private."""
    opened = await open_store(database)
    try:
        older = await opened.create_game(
            variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=1.0, listed=True
        )
    finally:
        await opened.close()
    # back to the schema before the field (version 2), undoing the versions after it too
    from tests.server.store.schema_undo import rewind

    await rewind(database, 2)
    await raw(database, "ALTER TABLE games DROP COLUMN listed")
    await raw(database, "DELETE FROM qubic_schema WHERE version >= 2")
    opened = await open_store(database)
    try:
        public = await opened.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=2.0, listed=True
        )
        private = await opened.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=3.0, listed=False
        )
        computer = await opened.create_game(
            variant="4x4x4", x=ALICE, o=Seat.computer(2), clock=None, rated=False, now=4.0
        )
        assert (public.listed, private.listed, computer.listed) == (True, False, False)
    finally:
        await opened.close()
    opened = await open_store(database)
    try:
        listed = {game.id: game.listed for game in await opened.unfinished_games()}
        assert listed == {older.id: False, public.id: True, private.id: False,
                          computer.id: False}
        loaded = await opened.get_game(public.id)
        assert loaded is not None and loaded.listed
    finally:
        await opened.close()


async def test_two_thousand_concurrent_moves(store: Store) -> None:
    games = [
        await store.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=float(i)
        )
        for i in range(200)
    ]
    commits_before = getattr(store, "commits", 0)
    for ply in range(1, 11):  # each game's moves in order; the games' moves all at once
        await asyncio.gather(
            *(
                store.record_move(game.id, MoveRecord(ply, ply, None, None, float(ply)))
                for game in games
            )
        )
    if isinstance(store, SQLiteStore):  # grouped, not one commit per move
        assert store.commits - commits_before < 2000 // 2
    unfinished = await store.unfinished_games()
    assert len(unfinished) == 200
    assert all(game.cells == list(range(1, 11)) for game in unfinished)


@pytest.mark.parametrize("interval", [0.0, 1.0])
async def test_moves_in_quick_succession_share_a_commit_within_the_interval(
    tmp_path: Path, interval: float
) -> None:
    """SQLite's commit interval (``--commit-interval``, issue 30): ten moves asked for one
    after another, each in its own turn of the loop (1 ms apart; 20 ms with no interval).
    With no interval each group commits as soon as it is queued (about one commit a move);
    with a second's interval the first
    commits at once (nothing was committed before it) and the nine after it wait for the
    interval and share one commit. Every move is written either way."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=interval)
    try:
        games = [await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None,
                                         rated=False, now=0) for _ in range(10)]
        await asyncio.sleep(interval)  # the games' own commits are behind the interval
        before = store.commits
        pending = []
        for game in games:
            pending.append(asyncio.create_task(
                store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0))))
            await asyncio.sleep(0.001 if interval else 0.02)
        await asyncio.gather(*pending)
        if interval:
            assert store.commits - before == 2
        else:
            assert store.commits - before > 2
        unfinished = await store.unfinished_games()
        assert sorted(game.cells for game in unfinished) == [[0]] * 10
    finally:
        await store.close()


async def test_a_window_of_moves_is_one_hand_over_and_one_commit(tmp_path: Path) -> None:
    """Group commit by window (issue 41): ten moves, each asked for in its own turn of the
    loop (1 ms apart), within a second's window after a quiet spell: the first goes at once,
    the nine after it are handed to the writer thread together when the window ends (one
    wake-up of it, not one a turn) and share one commit; each is acknowledged only then."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=0.0)
    try:
        games = [await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None,
                                         rated=False, now=0) for _ in range(10)]
        store.commit_interval = 1.0
        await asyncio.sleep(1.0)  # a quiet spell
        commits, hand_overs = store.commits, store.hand_overs
        loop = asyncio.get_running_loop()
        started = loop.time()
        pending = []
        for game in games:
            pending.append(asyncio.create_task(
                store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0))))
            await asyncio.sleep(0.001)
        await pending[0]
        assert loop.time() - started < 0.5  # the first, after the quiet spell: at once
        assert not any(task.done() for task in pending[1:])  # the rest wait for the window
        await asyncio.gather(*pending)
        assert loop.time() - started >= 0.9
        assert (store.commits - commits, store.hand_overs - hand_overs) == (2, 2)
    finally:
        await store.close()


async def test_a_full_group_goes_without_waiting_out_the_window(tmp_path: Path) -> None:
    """Group commit by size (``--commit-max``, issue 41): with a long window and groups of
    four, nine moves asked for one turn after another go as 1 (after the quiet spell), 4 and
    4, each group as soon as it is full, long before the window ends."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=30.0, commit_max=4)
    try:
        store.commit_max = 1  # the games' groups of one each: full at once
        games = [await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None,
                                         rated=False, now=0) for _ in range(9)]
        store.commit_max = 4
        store._handed_at = float("-inf")  # noqa: SLF001  (as after a quiet spell)
        commits = store.commits
        pending = []
        for game in games:
            pending.append(asyncio.create_task(
                store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0))))
            await asyncio.sleep(0.001)
        await asyncio.wait_for(asyncio.gather(*pending), 5.0)
        assert store.commits - commits == 3
        unfinished = await store.unfinished_games()
        assert sorted(game.cells for game in unfinished) == [[0]] * 9
    finally:
        await store.close()


async def games_and_a_waiting_move(store: SQLiteStore, count: int
                                   ) -> tuple[list[GameRecord], asyncio.Task[None]]:
    """``count`` games started one after another (nothing waits: each at once, whatever the
    window), then a move in the first, waiting for the window."""
    games = [await asyncio.wait_for(
        store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0),
        5.0) for _ in range(count)]
    move = asyncio.create_task(
        store.record_move(games[0].id, MoveRecord(1, 0, None, None, 1.0)))
    await asyncio.sleep(0.01)
    assert not move.done()  # a move waits for the window
    return games, move


async def test_a_write_other_than_a_move_does_not_wait_out_the_window(tmp_path: Path) -> None:
    """Moves wait for the window (issue 41); a rare write (a new player here) goes at the
    end of the loop's turn, and takes a waiting move's group along."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=30.0)
    try:
        _, move = await games_and_a_waiting_move(store, 5)
        commits = store.commits
        await asyncio.wait_for(store.create_player("carol", now=0), 5.0)
        assert move.done() and move.exception() is None
        assert store.commits - commits == 1  # one group: the move and the player
    finally:
        await store.close()


async def test_a_games_start_and_end_go_with_the_moves_waiting_for_the_window(
        tmp_path: Path) -> None:
    """A game's start or end is as frequent as the moves under load (issue 41): it goes
    with a group waiting for the window rather than making a commit of its own; with no
    group waiting (one after another here, as a quiet server sees them) each goes at the end
    of the loop's turn, as before."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=30.0)
    try:
        games, move = await games_and_a_waiting_move(store, 3)
        commits = store.commits
        start = asyncio.create_task(store.create_game(
            variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0))
        end = asyncio.create_task(store.finish_game(
            games[1].id, result="1/2-1/2", reason="agreement", now=1.0))
        await asyncio.sleep(0.05)
        assert not start.done() and not end.done()  # with the move, waiting for the window
        assert store.commits == commits
        await asyncio.wait_for(store.flush(), 5.0)
        await asyncio.wait_for(asyncio.gather(move, start, end), 5.0)
        assert store.commits - commits == 1  # the move, the start and the end: one commit
        assert (await store.get_game(games[1].id)).status is GameStatus.FINISHED
    finally:
        await store.close()


async def test_flush_does_not_wait_out_the_window(tmp_path: Path) -> None:
    """``flush`` hands the group gathered so far over at once, whatever the window."""
    store = await SQLiteStore.open(tmp_path / "q.db", commit_interval=30.0)
    try:
        game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None,
                                       rated=False, now=0)  # after the quiet spell: at once
        move = asyncio.create_task(store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0)))
        await asyncio.sleep(0.01)
        assert not move.done()  # waiting for the window
        await asyncio.wait_for(store.flush(), 5.0)
        assert move.done() and move.exception() is None
    finally:
        await store.close()


async def test_close_commits_every_queued_write(database: str) -> None:
    store = await open_store(database)
    games = [
        await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0)
        for _ in range(50)
    ]
    pending = [
        asyncio.create_task(store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0)))
        for game in games
    ]
    await asyncio.sleep(0)  # the tasks have queued their writes
    await store.close()
    await store.close()
    assert all(task.done() and task.exception() is None for task in pending)
    with pytest.raises(StoreError, match="closed"):
        await store.record_move(games[0].id, MoveRecord(2, 1, None, None, 2.0))
    with pytest.raises(StoreError, match="closed"):
        await store.get_game(games[0].id)
    reopened = await open_store(database)
    try:
        assert all(len(game.moves) == 1 for game in await reopened.unfinished_games())
    finally:
        await reopened.close()


# The end of a game and ratings.


async def test_finishing_a_rated_game_updates_both_players(store: Store) -> None:
    for name in ("Alice", "Bob", "Carol"):
        await store.create_player(name, now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=TimeControl(300, 2), rated=True, now=1.0
    )
    finished = await store.finish_game(game.id, result="1-0", reason="resign", now=50.0)
    assert finished.status == GameStatus.FINISHED and finished.result == "1-0"
    assert finished.x_rating == finished.o_rating == 1500
    assert finished.x_rating_change is not None and finished.x_rating_change > 100
    assert finished.o_rating_change == pytest.approx(-finished.x_rating_change)
    alice, bob = await store.get_player("alice"), await store.get_player("bob")
    assert alice is not None and bob is not None
    assert alice.rating == pytest.approx(1500 + finished.x_rating_change) and alice.rd < 350
    assert (alice.games, alice.rated_games, alice.wins, alice.losses) == (1, 1, 1, 0)
    assert (bob.games, bob.rated_games, bob.wins, bob.losses) == (1, 1, 0, 1)
    board = [player.name for player in await store.leaderboard()]
    assert board == ["Alice", "Carol", "Bob"]
    assert [p.name for p in await store.leaderboard(min_rated_games=1)] == ["Alice", "Bob"]
    assert [p.name for p in await store.leaderboard(limit=1)] == ["Alice"]


async def test_unrated_games_count_but_do_not_move_ratings(store: Store) -> None:
    await store.create_player("Bob", now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=Seat.computer(2), o=BOB, clock=None, rated=False, now=1.0
    )
    finished = await store.finish_game(game.id, result="1/2-1/2", reason="full", now=2.0)
    assert finished.x_rating_change is None and finished.o_rating_change is None
    bob = await store.get_player("Bob")
    assert bob is not None
    assert (bob.rating, bob.games, bob.rated_games, bob.draws) == (1500, 1, 0, 1)
    with pytest.raises(StoreError, match="not a registered player"):
        await store.create_game(
            variant="4x4x4", x=Seat.human("Guest"), o=BOB, clock=None, rated=True, now=3.0
        )


FREEZE_PLAYERS = {
    "sqlite": "CREATE TRIGGER frozen BEFORE UPDATE ON players"
    " BEGIN SELECT RAISE(ABORT, 'frozen'); END",
    "postgresql": """CREATE FUNCTION frozen() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'frozen'; END $$;
        CREATE TRIGGER frozen BEFORE UPDATE ON players FOR EACH ROW EXECUTE FUNCTION frozen()""",
}


async def test_the_end_of_a_game_and_its_rating_updates_commit_together(
    store: Store, database: str
) -> None:
    await store.create_player("Alice", now=0.0)
    await store.create_player("Bob", now=0.0)
    rated = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=True, now=1.0
    )
    other = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=1.0
    )
    kind = "postgresql" if is_postgres_url(database) else "sqlite"
    await raw(database, FREEZE_PLAYERS[kind])  # players can no longer be updated
    finishing = store.finish_game(rated.id, result="0-1", reason="time", now=5.0)
    moving = store.record_move(other.id, MoveRecord(1, 0, None, None, 5.0))
    outcomes = await asyncio.gather(finishing, moving, return_exceptions=True)
    assert isinstance(outcomes[0], StoreError) and "frozen" in str(outcomes[0])
    assert outcomes[1] is None  # a write grouped (in SQLite) with the failed one still commits
    game = await store.get_game(rated.id)
    assert game is not None and game.status == GameStatus.ACTIVE and game.result is None
    assert game.x_rating_change is None
    alice = await store.get_player("Alice")
    assert alice is not None and (alice.rating, alice.games) == (1500, 0)
    assert (await store.get_game(other.id)).cells == [0]  # type: ignore[union-attr]


# Two nodes on one database.


async def test_a_name_is_registered_once_across_nodes(store: Store, other_node: Store) -> None:
    spellings = ["Alice", "alice", "ALICE", "aLiCe", "Ａｌｉｃｅ"]  # the last one in full width
    attempts = [
        node.create_player(name, now=0.0) for name in spellings for node in (store, other_node)
    ]
    outcomes = await asyncio.gather(*attempts, return_exceptions=True)
    registered = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, StoreError)]
    assert len(registered) == 1 and len(refused) == len(attempts) - 1
    assert all(error.code == "name_taken" for error in refused)
    player, token = registered[0]
    for node in (store, other_node):
        assert await node.authenticate(token) == player == await node.get_player("alice")


async def test_a_game_ends_and_moves_ratings_once_when_two_nodes_finish_it(
    store: Store, other_node: Store
) -> None:
    for name in ("Alice", "Bob"):
        await store.create_player(name, now=0.0)
    game = await store.create_game(
        variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=True, now=1.0
    )
    outcomes = await asyncio.gather(
        store.finish_game(game.id, result="1-0", reason="resign", now=5.0),
        other_node.finish_game(game.id, result="0-1", reason="time", now=5.0),
        other_node.abort_game(game.id, reason="abandoned", now=5.0),
        return_exceptions=True,
    )
    done = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, StoreError)]
    assert len(done) == 1 and len(refused) == 2
    assert all(error.code == "game_over" for error in refused)
    final = await other_node.get_game(game.id)
    assert final == done[0]
    alice, bob = await store.get_player("Alice"), await store.get_player("Bob")
    assert alice is not None and bob is not None
    assert alice.games == bob.games == (0 if final.status == GameStatus.ABORTED else 1)
    assert alice.rated_games == bob.rated_games == alice.games


async def test_one_move_per_ply_when_two_nodes_write_it(store: Store, other_node: Store) -> None:
    game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0)
    for ply in range(1, 9):
        outcomes = await asyncio.gather(
            store.record_move(game.id, MoveRecord(ply, ply, None, None, ply)),
            other_node.record_move(game.id, MoveRecord(ply, 15 - ply, None, None, ply)),
            return_exceptions=True,
        )
        refused = [outcome for outcome in outcomes if outcome is not None]
        assert len(refused) == 1 and isinstance(refused[0], StoreError)
        assert refused[0].code == "stale_move"
    moves = (await store.get_game(game.id)).moves  # type: ignore[union-attr]
    assert [move.ply for move in moves] == list(range(1, 9))


async def test_moves_of_many_games_at_once_each_get_their_own_answer(
    store: Store, other_node: Store
) -> None:
    # Asked for at once (PostgreSQL: concurrent statements on pooled connections; SQLite:
    # one group's transaction), yet each move is refused or kept on its own account.
    games = [
        await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0)
        for _ in range(24)
    ]
    await asyncio.gather(*(
        store.record_move(g.id, MoveRecord(1, 0, None, None, 1.0), fence=5) for g in games
    ))
    over, stale, fenced = games[0], games[1], games[2]
    await store.finish_game(over.id, result="1-0", reason="resign", now=2.0, fence=5)
    await other_node.record_move(fenced.id, MoveRecord(2, 1, None, None, 2.0), fence=9)
    outcomes = await asyncio.gather(
        store.record_move(over.id, MoveRecord(2, 1, None, None, 3.0), fence=5),
        store.record_move(stale.id, MoveRecord(3, 1, None, None, 3.0), fence=5),
        store.record_move(fenced.id, MoveRecord(3, 2, None, None, 3.0), fence=5),
        store.record_move("nope", MoveRecord(1, 0, None, None, 3.0), fence=5),
        *(store.record_move(g.id, MoveRecord(2, 7, 1.5, 2.5, 3.0), fence=6) for g in games[3:]),
        return_exceptions=True,
    )
    codes = [o.code if isinstance(o, StoreError) else o for o in outcomes]
    assert codes == ["game_over", "stale_move", "fenced", "no_such_game"] + [None] * 21
    for game in games[3:]:
        loaded = await store.get_game(game.id)
        assert loaded is not None and loaded.cells == [0, 7] and loaded.fence == 6
        assert (loaded.moves[1].clock_x, loaded.moves[1].clock_o) == (1.5, 2.5)
    for game, cells in ((over, [0]), (stale, [0]), (fenced, [0, 1])):
        loaded = await store.get_game(game.id)
        assert loaded is not None and loaded.cells == cells


async def test_the_embedded_servers_moves_in_one_group_each_get_their_own_answer(
    store: Store,
) -> None:
    # Without a fencing token (the embedded server) SQLite writes a move in one statement and
    # no savepoint: a refused one, between writes that change several rows, undoes nothing
    # of theirs, and each gets its own answer.
    for name in ("Alice", "Bob"):
        await store.create_player(name, now=0.0)
    games = [
        await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=True, now=0)
        for _ in range(8)
    ]
    await asyncio.gather(
        *(store.record_move(g.id, MoveRecord(1, 0, None, None, 1.0)) for g in games)
    )
    over, stale, ending = games[0], games[1], games[2]
    await store.finish_game(over.id, result="1-0", reason="resign", now=2.0)
    outcomes = await asyncio.gather(
        store.record_move(over.id, MoveRecord(2, 1, None, None, 3.0)),
        store.finish_game(ending.id, result="0-1", reason="resign", now=3.0),
        store.record_move(stale.id, MoveRecord(3, 1, None, None, 3.0)),
        store.record_move(stale.id, MoveRecord(1, 1, None, None, 3.0)),
        store.record_move("nope", MoveRecord(1, 0, None, None, 3.0)),
        *(store.record_move(g.id, MoveRecord(2, 7, 1.5, 2.5, 3.0)) for g in games[3:]),
        return_exceptions=True,
    )
    codes = [o.code if isinstance(o, StoreError) else None for o in outcomes]
    assert codes == ["game_over", None, "stale_move", "stale_move", "no_such_game"] + [None] * 5
    for game in games[3:]:
        loaded = await store.get_game(game.id)
        assert loaded is not None and loaded.cells == [0, 7]
        assert (loaded.moves[1].clock_x, loaded.moves[1].clock_o) == (1.5, 2.5)
    for game, cells in ((over, [0]), (stale, [0]), (ending, [0])):
        loaded = await store.get_game(game.id)
        assert loaded is not None and loaded.cells == cells
    finished = await store.get_game(ending.id)
    assert finished is not None and finished.result == "0-1"
    alice = await store.get_player("Alice")
    assert alice is not None and alice.games == 2


async def test_a_write_with_a_stale_fencing_token_is_refused(
    store: Store, other_node: Store
) -> None:
    game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False, now=0)
    await store.record_move(game.id, MoveRecord(1, 0, None, None, 1.0), fence=7)
    await other_node.record_move(game.id, MoveRecord(2, 5, None, None, 2.0), fence=9)  # took over
    for stale in (
        store.record_move(game.id, MoveRecord(3, 1, None, None, 3.0), fence=7),
        store.abort_game(game.id, reason="abandoned", now=3.0, fence=8),
        store.finish_game(game.id, result="1-0", reason="resign", now=3.0, fence=7),
    ):
        with pytest.raises(StoreError, match="stale") as refused:
            await stale
        assert refused.value.code == "fenced"
    await other_node.record_move(game.id, MoveRecord(3, 1, None, None, 3.0), fence=9)
    loaded = await store.get_game(game.id)
    assert loaded is not None and loaded.cells == [0, 5, 1] and loaded.fence == 9
    assert loaded.status == GameStatus.ACTIVE
    # A refused write leaves the token as it was, even when its token was the newest.
    with pytest.raises(StoreError, match="expects ply 4"):
        await store.record_move(game.id, MoveRecord(9, 2, None, None, 4.0), fence=10)
    assert (await store.get_game(game.id)).fence == 9  # type: ignore[union-attr]
    ended = await other_node.finish_game(game.id, result="0-1", reason="resign", now=4, fence=9)
    assert ended.status == GameStatus.FINISHED and ended.fence == 9


# Files the store cannot use.


async def test_a_missing_directory_or_a_directory_cannot_be_opened(tmp_path: Path) -> None:
    for path in (tmp_path / "missing" / "qubic.db", tmp_path):
        with pytest.raises(StoreError, match="cannot be opened"):
            await SQLiteStore.open(path)


async def test_a_file_that_is_not_a_database_is_refused(db: Path) -> None:
    db.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreError, match="not a SQLite database"):
        await SQLiteStore.open(db)


async def test_a_database_locked_by_another_writer_is_refused(db: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="locked by another process"):
            await SQLiteStore.open(db, busy_timeout=0.1)
        other.execute("ROLLBACK")
    await (await SQLiteStore.open(db)).close()


async def test_a_read_only_database_is_refused(db: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with read_only(db), pytest.raises(StoreError, match="read-only"):
        await SQLiteStore.open(db)


async def test_a_newer_schema_or_a_foreign_database_is_refused(db: Path, tmp_path: Path) -> None:
    await (await SQLiteStore.open(db)).close()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("INSERT INTO qubic_schema (version) VALUES (?)", (SCHEMA_VERSION + 1,))
        conn.commit()
    with pytest.raises(StoreError, match="newer qubic"):
        await SQLiteStore.open(db)
    foreign = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.commit()
    with pytest.raises(StoreError, match="another program"):
        await SQLiteStore.open(foreign)


KILLED_WRITER = """
import asyncio, sys
from server.store.factory import open_store
from server.game.records import MoveRecord, Seat

async def main() -> None:
    store = await open_store(sys.argv[1], synchronous="NORMAL")
    game = await store.create_game(
        variant="4x4x4", x=Seat.human("a"), o=Seat.human("b"), clock=None, rated=False, now=0
    )
    print(game.id, flush=True)
    for ply in range(1, 65):
        await store.record_move(game.id, MoveRecord(ply, ply - 1, None, None, float(ply)))
        print(ply, flush=True)  # acknowledged
    await asyncio.sleep(60)

asyncio.run(main())
"""


async def test_every_acknowledged_move_survives_kill_9(database: str) -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", KILLED_WRITER, database,
        stdout=asyncio.subprocess.PIPE, cwd=Path(__file__).parents[3],
    )  # fmt: skip
    assert child.stdout is not None
    game_id = (await child.stdout.readline()).decode().strip()
    acknowledged = 0
    while acknowledged < 20:
        acknowledged = int(await child.stdout.readline())
    child.kill()  # SIGKILL, with the writer thread mid-stream
    await child.wait()
    store = await open_store(database)
    try:
        game = await store.get_game(game_id)
    finally:
        await store.close()
    assert game is not None and len(game.moves) >= acknowledged
    assert game.cells == list(range(len(game.moves)))


async def test_a_review_is_kept_once(database: str) -> None:
    """A game's review is kept as written; a second one (another node's) leaves it as it
    was; a game nobody reviewed has none."""
    store = await open_store(database)
    try:
        game = await store.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=1.0)
        other = await store.create_game(
            variant="4x4x4", x=ALICE, o=BOB, clock=None, rated=False, now=2.0)
        await store.save_review(game.id, '{"moves": []}', 10.0)
        await store.save_review(game.id, '{"moves": [1]}', 11.0)
        assert await store.get_review(game.id) == ('{"moves": []}', 10.0)
        assert await store.get_review(other.id) is None
    finally:
        await store.close()


def test_every_version_can_be_undone() -> None:
    """A migration appended to the schema needs its undo in tests/server/store/schema_undo.py, so
    that the upgrade tests can take a database back to any version."""
    from server.store.schema import SCHEMA_VERSION
    from tests.server.store.schema_undo import UNDO

    assert set(UNDO) == set(range(3, SCHEMA_VERSION + 1))


def test_a_game_id_never_begins_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command line reads ``-x3F...`` as an option (``qubic admin end-game ID``)."""
    import secrets

    from server.store.base import new_game_id

    drawn = iter(["-abcdefghijk", "-bcdefghijkl", "Xbcdefghijkl"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: next(drawn))
    assert new_game_id() == "Xbcdefghijkl"
