"""A player is an id, a name is a label (issue 36, items 5 and 9), in both stores: a rename
or a deletion hands nothing to whoever takes the name next; an ongoing private game is
listed to its players only; a database written by name is attached to ids on upgrade."""

from __future__ import annotations

import time

import pytest

from engine.puzzles.mate import load_puzzles
from server.errors import StoreError
from server.game.records import MoveRecord, Seat
from server.node import levers
from server.store import lever_records as ops
from server.store import puzzles
from server.store.base import Store
from server.store.factory import is_postgres_url, open_store
from server.store.puzzles import PuzzleStore
from tests.server.store.schema_undo import IDS_VERSION, rewind
from tests.server.store.test_store import raw

ANN, BOB, CARL = Seat.human("Ann"), Seat.human("Bob"), Seat.human("Carl")


async def rated_game(store: Store, x: Seat, o: Seat, at: float, result: str = "1-0") -> str:
    game = await store.create_game(variant="4x4", x=x, o=o, clock=None, rated=True, now=at)
    await store.record_move(game.id, MoveRecord(1, 0, None, None, at))
    await store.finish_game(game.id, result=result, reason="resign", now=at + 1)
    return game.id


async def first_puzzle(store: Store) -> int:
    db = PuzzleStore(store)
    await db.write(puzzles.insert_puzzles(load_puzzles()[:1], now=0.0))
    return (await db.read(puzzles.ids_by_rating()))[0][0]


async def what_the_name_holds(store: Store, name: str) -> dict[str, object]:
    """Everything a player called ``name`` holds in the database."""
    page = await store.player_games(name)
    player = await store.get_player(name)
    exported = await levers.export_player(store, name)
    db = PuzzleStore(store)
    return {
        "games": [] if page is None else [g.id for g in page.games],
        "ratings": [] if page is None else list(page.ratings),
        "record": None if player is None else (player.rating, player.games, player.wins),
        "reports": [r.id for r in await levers.reports(store)
                    if name in (r.reporter, r.reported)],
        "sanctions": await store.query(ops.sanctions_of(name, None, time.time())),
        "roles": await levers.roles_of(store, name),
        "puzzles": (await db.read(puzzles.puzzle_player(name))).rated,
        "tries": await db.read(puzzles.history(name, 10)),
        "export": {key: exported[key] for key in ("games", "reports", "sanctions", "roles",
                                                   "audit")},
    }


NOTHING = {"games": [], "ratings": [], "record": (1500.0, 0, 0), "reports": [],
           "sanctions": [], "roles": set(), "puzzles": 0, "tries": [],
           "export": {"games": [], "reports": [], "sanctions": [], "roles": [], "audit": []}}
"""What a newcomer holds."""


async def test_a_rename_changes_one_row_and_the_old_name_brings_nothing(store: Store) -> None:
    for name in ("Ann", "Bob"):
        await store.create_player(name, 1.0)
    game = await rated_game(store, ANN, BOB, 10.0)
    puzzle = await first_puzzle(store)
    await PuzzleStore(store).write(puzzles.record_attempt("Ann", puzzle, "next", True, 11.0))
    report = await levers.report(store, "Bob", "Ann", "rude", game)
    await levers.report(store, "Ann", "Bob", "rude too", game)
    await levers.mute(store, "mod", "Ann", "caps", seconds=3600)
    await levers.grant(store, "host", "Ann", "moderator")
    held = await what_the_name_holds(store, "Ann")

    assert await levers.rename(store, "host", "ann", "Anna") == "Ann"
    record = await store.get_game(game)
    assert record is not None and (record.x.player, record.o.player) == ("Anna", "Bob")
    renamed = await what_the_name_holds(store, "Anna")
    assert renamed["games"] == held["games"] == [game] and renamed["record"] == held["record"]
    assert renamed["puzzles"] == 1 and len(renamed["sanctions"]) == 1  # type: ignore[arg-type]
    assert [(r.id, r.reported) for r in await levers.reports(store)][0] == (report, "Anna")

    # the newcomer registers after every record above (the levers date theirs now)
    await store.create_player("ann", time.time() + 1)  # the old name, in another case
    assert await what_the_name_holds(store, "ann") == NOTHING
    assert [(r.reporter, r.reported) for r in await levers.reports(store)] == [
        ("Bob", "Anna"), ("Anna", "Bob")]


async def test_a_deleted_player_is_a_tombstone_nobody_can_take_or_open(store: Store) -> None:
    ann, ann_token = await store.create_player("Ann", 1.0)
    await store.create_player("Bob", 1.0)
    await store.set_password("Ann", "scrypt$hash", [b"code"], keep=None, now=2.0)
    await store.add_device("Ann", "laptop", 2.0)
    game = await rated_game(store, ANN, BOB, 10.0)
    puzzle = await first_puzzle(store)
    await PuzzleStore(store).write(puzzles.record_attempt("Ann", puzzle, "next", True, 11.0))
    await levers.report(store, "Bob", "Ann", "rude", game)
    await levers.report(store, "Ann", "Bob", "rude too", game)
    await levers.ban(store, "mod", name="Ann", reason="spam")
    await levers.grant(store, "host", "Ann", "admin")

    gone = await levers.delete_player(store, "host", "ann")
    assert gone.startswith("deleted-")
    record = await store.get_game(game)
    assert record is not None and record.x.player == gone  # the game keeps its label
    assert [(r.reporter, r.reported) for r in await levers.reports(store)] == [
        ("Bob", gone), (gone, "Bob")]
    # Nobody can take the tombstone's name, or any name kept for deleted players ...
    for name in (gone, gone.upper(), "deleted-99999", "Deleted_7", "deleted7"):
        with pytest.raises(StoreError) as refused:
            await store.create_player(name, 20.0)
        assert refused.value.code in ("name_taken", "name_reserved"), name
    with pytest.raises(StoreError) as reserved:
        await levers.rename(store, "host", "Bob", "deleted-12345")
    assert reserved.value.code == "name_reserved"
    # ... or open it: no token, no password, no recovery code, not found by its name.
    assert await store.authenticate(ann_token) is None
    with pytest.raises(StoreError) as closed:
        await store.open_session(ann_token, None, 20.0)
    assert closed.value.code == "bad_token"
    assert await store.password_of(gone) is None and await store.devices(gone) == []
    with pytest.raises(StoreError) as no_code:
        await store.recover(gone, b"code", "x", None, 20.0)
    assert no_code.value.code == "bad_recovery_code"
    assert await store.get_player(gone) is None and await store.player_games(gone) is None
    assert gone not in [p.name for p in await store.leaderboard(min_rated_games=1)]
    for lever in (levers.delete_player, levers.kick):
        with pytest.raises(StoreError) as missing:
            await lever(store, "host", gone)
        assert missing.value.code == "no_such_player"
    assert await levers.sanctions(store) == []  # the ban went with the account

    await store.create_player("Ann", time.time() + 1)  # the deleted player's name is free
    assert await what_the_name_holds(store, "Ann") == NOTHING
    bob = await store.player_games("Bob")
    assert bob is not None and [(g.x.player, g.o.player) for g in bob.games] == [(gone, "Bob")]
    assert ann.name == "Ann"


async def test_an_ongoing_private_game_is_listed_to_its_players_only(store: Store) -> None:
    for name in ("Ann", "Bob", "Carl"):
        await store.create_player(name, 1.0)
    done = await store.create_game(variant="4x4", x=ANN, o=BOB, clock=None, rated=False,
                                   now=10.0, listed=False)
    await store.finish_game(done.id, result="1-0", reason="resign", now=11.0)
    public = await store.create_game(variant="4x4", x=ANN, o=CARL, clock=None, rated=False,
                                     now=20.0, listed=True)
    private = await store.create_game(variant="4x4", x=BOB, o=ANN, clock=None, rated=False,
                                      now=30.0, listed=False)
    computer = await store.create_game(variant="4x4", x=ANN, o=Seat.computer(3), clock=None,
                                       rated=False, now=40.0)
    everyone = [public.id, done.id]
    mine = [computer.id, private.id, public.id, done.id]
    for viewer, seen in ((None, everyone), ("Carl", everyone), ("nobody", everyone),
                         ("Ann", mine), ("ANN", mine),
                         ("Bob", [private.id, public.id, done.id])):
        page = await store.player_games("Ann", viewer=viewer)
        assert page is not None and [g.id for g in page.games] == seen, viewer
    with pytest.raises(StoreError) as hidden:  # nor is the hidden game a cursor for others
        await store.player_games("Ann", before=private.id, viewer="Carl")
    assert hidden.value.code == "no_such_game"
    after = await store.player_games("Ann", before=private.id, viewer="Bob")
    assert after is not None and [g.id for g in after.games] == [public.id, done.id]


def hash_literal(database: str, n: int) -> str:
    return f"decode('{n:064x}', 'hex')" if is_postgres_url(database) else f"X'{n:064x}'"


async def test_records_written_by_name_go_to_the_ids_that_held_them(database: str) -> None:
    """A database of the schema before ids, with what its renames and deletions left there:
    games and reports under ``deleted-4`` and a newcomer who registered that name; reports
    under a renamed player's old name and a newcomer who took it; puzzle rows by name key.
    The upgrade gives every record to the player who held it, and none to a newcomer."""
    store = await open_store(database)
    try:
        for name, at in (("Ann", 1.0), ("Bob", 2.0), ("Carl", 3.0), ("Dora", 4.0)):
            await store.create_player(name, at)
        with_ann = await rated_game(store, ANN, BOB, 10.0)
        with_dora = await rated_game(store, BOB, Seat.human("Dora"), 20.0, "0-1")
        with_carl = await rated_game(store, CARL, BOB, 30.0)
        puzzle = await first_puzzle(store)
    finally:
        await store.close()
    await rewind(database, IDS_VERSION - 1)
    true = "TRUE" if is_postgres_url(database) else "1"
    for statement in (
        # Dora deleted the old way (her records renamed deleted-4), then someone registered
        # deleted-4: her row stands for theirs (a newcomer at 500).
        "UPDATE games SET o_player = 'deleted-4' WHERE o_player = 'Dora'",
        "UPDATE players SET name = 'deleted-4', name_key = 'deleted-4', created = 500,"
        " rating = 1500, games = 0, wins = 0 WHERE name = 'Dora'",
        # Bob reported Carl and Carl reported Bob at 100; Carl was renamed Cal at 200 (his
        # games went with him, the reports stayed); a newcomer took Carl at 300.
        "INSERT INTO reports (at, reporter, reported, game, reason) VALUES"
        f" (100, 'Bob', 'Carl', '{with_carl}', 'rude')",
        "INSERT INTO reports (at, reporter, reported, game, reason) VALUES"
        f" (100, 'Carl', 'Bob', '{with_carl}', 'rude too')",
        "INSERT INTO reports (at, reporter, reported, reason) VALUES"
        " (110, 'Bob', 'deleted-4', 'was rude')",
        "INSERT INTO audit (at, actor, action, target, detail) VALUES"
        " (200, 'cli:host', 'rename', 'Carl', 'Cal')",
        "UPDATE players SET name = 'Cal', name_key = 'cal' WHERE name = 'Carl'",
        "UPDATE games SET x_player = 'Cal' WHERE x_player = 'Carl'",
        "INSERT INTO players (name, name_key, token_hash, created, rating, rd, volatility)"
        f" VALUES ('Carl', 'carl', {hash_literal(database, 7)}, 300, 1500, 350, 0.06)",
        # Ann's puzzle rating and try, by her name's key
        "INSERT INTO puzzle_players (name_key, rating, rd, volatility, rated)"
        " VALUES ('ann', 1600, 200, 0.06, 1)",
        "INSERT INTO puzzle_attempts (name_key, puzzle_id, mode, solved, rated, rating_before,"
        f" rating_after, at) VALUES ('ann', {puzzle}, 'next', {true}, {true}, 1500, 1600, 50)",
    ):
        await raw(database, statement)
    store = await open_store(database)
    try:
        assert await store.player_games("deleted-4") is not None  # the newcomer's, empty
        assert (await what_the_name_holds(store, "deleted-4"))["games"] == []
        bob = await store.player_games("Bob")
        assert bob is not None and [g.id for g in bob.games] == [with_carl, with_dora, with_ann]
        assert len(bob.ratings) == 3
        cal = await what_the_name_holds(store, "Cal")
        assert cal["games"] == [with_carl] and len(cal["reports"]) == 2  # type: ignore[arg-type]
        assert [(r.reporter, r.reported) for r in await levers.reports(store)] == [
            ("Bob", "Cal"), ("Cal", "Bob"), ("Bob", "deleted-4")]  # the last: a label only
        carl = await what_the_name_holds(store, "Carl")
        assert carl["games"] == [] and carl["reports"] == []
        ann = await what_the_name_holds(store, "Ann")
        assert ann["games"] == [with_ann] and ann["puzzles"] == 1
        assert len(ann["tries"]) == 1  # type: ignore[arg-type]
        # the newcomer named deleted-4 holds none of the reports under that name
        newcomer = await store.get_player("deleted-4")
        assert newcomer is not None
        rows = await raw(database, "SELECT reported_id FROM reports WHERE reported = 'deleted-4'")
        assert rows == [(None,)]
        # and a rename now changes one row, puzzles and all
        await levers.rename(store, "host", "Ann", "Anne")
        assert (await what_the_name_holds(store, "Anne"))["puzzles"] == 1
    finally:
        await store.close()
