"""SQLite's move journal (server/store/journal.py, issue 41): a move of a game the writer knows
is appended to ``move_journal`` and settled into ``move_rows`` later; every reader sees every
committed move through the view ``moves``, after a crash too; a game's end, call-off and
take-back settle its rows first; the writer's check forgets what it knew when another
connection commits or a write of its fails."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from server.errors import StoreError
from server.game.records import GameRecord, MoveRecord, Seat
from server.store.sqlite import SQLiteStore

ALICE, BOB = Seat.human("Alice"), Seat.human("Bob")


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(tmp_path / "q.db", commit_interval=0)
    try:
        yield opened
    finally:
        await opened.close()


def rows(path: str | Path, table: str) -> list[tuple[str, int, int]]:
    """The moves in ``table`` (game, ply, cell), as another connection reads them."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT game_id, ply, cell FROM {table} ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


async def a_game(store: SQLiteStore, moves: int) -> GameRecord:
    game = await store.create_game(variant="4x4", x=ALICE, o=BOB, clock=None, rated=False,
                                   now=0)
    for ply in range(1, moves + 1):
        await store.record_move(game.id, MoveRecord(ply, ply, None, None, float(ply)))
    return game


def cells(record: GameRecord | None) -> list[int]:
    assert record is not None
    return [move.cell for move in record.moves]


async def test_a_known_games_moves_are_journaled_and_every_reader_sees_them(
    store: SQLiteStore,
) -> None:
    game = await a_game(store, 3)
    assert rows(store.path, "move_journal") == [(game.id, 1, 1), (game.id, 2, 2), (game.id, 3, 3)]
    assert rows(store.path, "move_rows") == []
    assert rows(store.path, "moves") == rows(store.path, "move_journal")
    assert cells(await store.get_game(game.id)) == [1, 2, 3]
    assert [cells(g) for g in await store.unfinished_games()] == [[1, 2, 3]]


async def test_a_crash_leaves_the_journal_whole_and_the_next_opening_settles_it(
    store: SQLiteStore, tmp_path: Path,
) -> None:
    game = await a_game(store, 4)
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for name in ("q.db", "q.db-wal"):  # the files as kill -9 leaves them: committed, open
        shutil.copy(tmp_path / name, crashed / name)
    assert len(rows(crashed / "q.db", "move_journal")) == 4
    reopened = await SQLiteStore.open(crashed / "q.db")
    try:
        assert cells(await reopened.get_game(game.id)) == [1, 2, 3, 4]
        assert rows(crashed / "q.db", "move_journal") == []
        assert len(rows(crashed / "q.db", "move_rows")) == 4
        await reopened.record_move(game.id, MoveRecord(5, 5, None, None, 5.0))  # checked
        assert cells(await reopened.get_game(game.id)) == [1, 2, 3, 4, 5]
    finally:
        await reopened.close()


async def test_an_end_settles_the_games_rows_and_the_record_holds_every_move(
    store: SQLiteStore,
) -> None:
    game, other = await a_game(store, 3), await a_game(store, 2)
    ended = await store.finish_game(game.id, result="1-0", reason="line", now=9.0,
                                    move=MoveRecord(4, 4, None, None, 4.0))
    assert cells(ended) == [1, 2, 3, 4]
    assert rows(store.path, "move_rows") == [(game.id, p, p) for p in range(1, 5)]
    assert rows(store.path, "move_journal") == [(other.id, 1, 1), (other.id, 2, 2)]
    aborted = await store.abort_game(other.id, reason="aborted", now=9.0)
    assert cells(aborted) == [1, 2] and rows(store.path, "move_journal") == []
    with pytest.raises(StoreError) as over:  # the end is known: checked in SQL
        await store.record_move(game.id, MoveRecord(5, 5, None, None, 5.0))
    assert over.value.code == "game_over"


async def test_a_take_back_removes_journaled_moves(store: SQLiteStore) -> None:
    game = await a_game(store, 4)
    await store.take_back(game.id, 2)
    assert cells(await store.get_game(game.id)) == [1, 2]
    await store.record_move(game.id, MoveRecord(3, 9, None, None, 3.0))
    await store.record_move(game.id, MoveRecord(4, 8, None, None, 4.0))
    assert cells(await store.get_game(game.id)) == [1, 2, 9, 8]


async def test_a_wrong_ply_is_refused_as_before(store: SQLiteStore) -> None:
    game = await a_game(store, 2)
    for ply in (2, 4):
        with pytest.raises(StoreError) as refused:
            await store.record_move(game.id, MoveRecord(ply, 7, None, None, 3.0))
        assert refused.value.code == "stale_move"
    await store.record_move(game.id, MoveRecord(3, 7, None, None, 3.0))
    assert cells(await store.get_game(game.id)) == [1, 2, 7]


async def test_the_whole_journal_is_settled_sorted_when_due(store: SQLiteStore) -> None:
    first, second = await a_game(store, 2), await a_game(store, 2)
    await store.record_move(first.id, MoveRecord(3, 3, None, None, 3.0))
    store.journal.settle_every = 0.0  # due after the next group
    await store.record_move(second.id, MoveRecord(3, 3, None, None, 3.0))
    await store.flush()  # a group after it: the settling ran before it was taken
    assert rows(store.path, "move_journal") == []
    assert rows(store.path, "move_rows") == sorted(
        [(first.id, p, p) for p in (1, 2, 3)] + [(second.id, p, p) for p in (1, 2, 3)])
    assert cells(await store.get_game(first.id)) == [1, 2, 3]


async def test_another_connections_commit_makes_the_writer_check_in_sql_again(
    store: SQLiteStore,
) -> None:
    """A tool on the same file ends the game: the writer, which knew it active, must not
    journal its next move (PRAGMA data_version)."""
    game = await a_game(store, 2)
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("UPDATE games SET status = 'finished', result = '1-0' WHERE id = ?",
                     (game.id,))
    conn.close()
    with pytest.raises(StoreError) as over:
        await store.record_move(game.id, MoveRecord(3, 3, None, None, 3.0))
    assert over.value.code == "game_over"
    assert cells(await store.get_game(game.id)) == [1, 2]


async def test_a_failed_end_forgets_and_the_next_end_finds_every_row(
    store: SQLiteStore,
) -> None:
    """The settling of a write that fails is taken back with it: the writer then finds the
    game's journal rows by its id."""
    game = await a_game(store, 3)
    with pytest.raises(StoreError) as stale:  # settled, then refused: all rolled back
        await store.finish_game(game.id, result="1-0", reason="line", now=9.0,
                                move=MoveRecord(7, 4, None, None, 4.0))
    assert stale.value.code == "stale_move"
    assert len(rows(store.path, "move_journal")) == 3
    ended = await store.finish_game(game.id, result="1-0", reason="line", now=9.0,
                                    move=MoveRecord(4, 4, None, None, 4.0))
    assert cells(ended) == [1, 2, 3, 4]
    assert rows(store.path, "move_journal") == []
