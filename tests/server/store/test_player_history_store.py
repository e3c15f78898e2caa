"""A player's history, the leaderboard's rules and folded names, in both stores (issue 27,
items 5, 11 and 12): SQLite and PostgreSQL through one parametrised fixture."""

from __future__ import annotations

import contextlib
import sqlite3

import asyncpg
import pytest

from server.errors import StoreError
from server.game.records import MoveRecord, Seat
from server.store.base import Store
from server.store.factory import is_postgres_url, open_store
from server.store.schema import MIGRATIONS, refold_names
from tests.server.store.schema_undo import rewind

ALICE, BOB, CARL = Seat.human("Alice"), Seat.human("Bob"), Seat.human("Carl")
NAMES_VERSION = next(i + 1 for i, steps in enumerate(MIGRATIONS) if refold_names in steps)
"""The schema version that folds look-alike names and adds ``last_rated``."""




async def raw(database: str, *statements: str) -> None:
    """Run statements on the database behind the store's back, in one transaction."""
    if not is_postgres_url(database):
        with contextlib.closing(sqlite3.connect(database)) as conn:
            for statement in statements:
                conn.execute(statement)
            conn.commit()
        return
    conn = await asyncpg.connect(database)
    try:
        async with conn.transaction():
            for statement in statements:
                await conn.execute(statement)
    finally:
        await conn.close()


async def played(store: Store, x: Seat, o: Seat, at: float, result: str | None = "1-0",
                 rated: bool = True, listed: bool = False) -> str:
    """A game between ``x`` and ``o`` started at ``at``, with three moves, ended with
    ``result`` at ``at + 1`` (None: still going)."""
    game = await store.create_game(variant="4x4", x=x, o=o, clock=None, rated=rated, now=at,
                                   listed=listed)
    for ply, cell in enumerate((0, 4, 1), start=1):
        await store.record_move(game.id, MoveRecord(ply, cell, None, None, at))
    if result is not None:
        await store.finish_game(game.id, result=result, reason="resign", now=at + 1)
    return game.id


async def test_a_players_games_come_newest_first_a_page_at_a_time(store: Store) -> None:
    for name in ("Alice", "Bob", "Carl"):
        await store.create_player(name, 0.0)
    first = await played(store, ALICE, BOB, 10.0)
    computer = await played(store, Seat.computer(3), ALICE, 20.0, "0-1", rated=False)
    await played(store, BOB, CARL, 25.0)  # not Alice's
    third = await played(store, BOB, ALICE, 30.0, "1/2-1/2")
    going = await played(store, ALICE, CARL, 40.0, None, listed=True)
    page = await store.player_games("ALICE", limit=2)  # any case finds her
    assert page is not None and page.player.name == "Alice" and page.more
    assert [game.id for game in page.games] == [going, third]
    assert page.games[1].cells == [0, 4, 1] and page.games[0].result is None
    older = await store.player_games("alice", before=third, limit=2)
    assert older is not None and not older.more
    assert [game.id for game in older.games] == [computer, first]
    # the rating after each rated game, oldest first, from the games' stored changes
    first_game, third_game = await store.get_game(first), await store.get_game(third)
    assert first_game is not None and third_game is not None
    assert first_game.x_rating is not None and first_game.x_rating_change is not None
    assert third_game.o_rating is not None and third_game.o_rating_change is not None
    assert page.ratings == older.ratings == (
        (11.0, first_game.x_rating + first_game.x_rating_change),
        (31.0, third_game.o_rating + third_game.o_rating_change),
    )
    assert page.ratings[-1][1] == page.player.rating
    with pytest.raises(StoreError) as refused:  # a game of others is no cursor of hers
        await store.player_games("Alice", before="nothing")
    assert refused.value.code == "no_such_game"
    assert await store.player_games("nobody") is None


async def test_the_leaderboard_lists_players_with_rated_games_lately(store: Store) -> None:
    for name in ("Alice", "Bob", "Carl", "Dora"):
        await store.create_player(name, 0.0)
    await played(store, ALICE, BOB, 100.0)  # rated, ended at 101
    await played(store, CARL, Seat.computer(2), 200.0, rated=False)  # Carl: no rated game
    await played(store, Seat.human("Dora"), BOB, 300.0, "0-1")  # ended at 301
    board = [p.name for p in await store.leaderboard(min_rated_games=1)]
    assert sorted(board) == ["Alice", "Bob", "Dora"]
    lately = await store.leaderboard(min_rated_games=1, active_since=200.0)
    assert sorted(p.name for p in lately) == ["Bob", "Dora"]  # Alice's last ended at 101
    bob = await store.get_player("bob")
    assert bob is not None and bob.last_rated == 301.0


async def test_names_that_fold_together_after_the_upgrade_both_stay(database: str) -> None:
    """Two players registered when names were only case-folded, whose names fold together
    now: both keep their names and tokens; the older takes the folded key, the other is found
    by its exact name; their games are theirs; newcomers get neither."""
    opened = await open_store(database)
    try:
        _, bill_token = await opened.create_player("Bill", 1.0)
        _, other_token = await opened.create_player("Olga", 2.0)
    finally:
        await opened.close()
    # Back to the schema before the folding, with the names' keys as it made them, and a
    # look-alike (digit ones for the letters i and l) that it let in as another name.
    await rewind(database, NAMES_VERSION)
    await raw(
        database,
        "DROP INDEX players_by_name", "DROP INDEX games_by_x_player",
        "DROP INDEX games_by_o_player", "ALTER TABLE players DROP COLUMN last_rated",
        f"DELETE FROM qubic_schema WHERE version >= {NAMES_VERSION}",
        "UPDATE players SET name = 'B1ll', name_key = 'b1ll' WHERE name = 'Olga'",
        "UPDATE players SET name_key = 'bill' WHERE name = 'Bill'",
    )
    store = await open_store(database)
    try:
        bill, b1ll = await store.get_player("Bill"), await store.get_player("B1ll")
        assert bill is not None and b1ll is not None and (bill.name, b1ll.name) == ("Bill", "B1ll")
        looked_up = await store.get_player("BILL")
        assert looked_up is not None and looked_up.name == "Bill"  # the older holds the key
        assert (await store.authenticate(other_token, "b1ll")) == b1ll  # a case of its own
        assert (await store.authenticate(bill_token, "bill")) == bill
        for newcomer in ("bi11", "B1LL", "BiLl"):
            with pytest.raises(StoreError) as taken:
                await store.create_player(newcomer, 3.0)
            assert taken.value.code == "name_taken"
        game = await played(store, Seat.human("Bill"), Seat.human("B1ll"), 10.0)
        after_bill, after_b1ll = await store.get_player("Bill"), await store.get_player("B1ll")
        assert after_bill is not None and after_b1ll is not None
        assert (after_bill.wins, after_b1ll.losses) == (1, 1)  # two players, not one
        assert after_bill.rating > bill.rating > after_b1ll.rating
        page = await store.player_games("B1ll")
        assert page is not None and [g.id for g in page.games] == [game]
    finally:
        await store.close()
