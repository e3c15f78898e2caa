"""Issue 36 item 6: names that differ only by separators are one name, and reserved words are
refused inside a name, not only as a whole one.

The folding and the reserved words (pure); the upgrade that refolds a database's keys, its
players' puzzle rows moved along, on SQLite and PostgreSQL; newcomers against a real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.puzzles.mate import load_puzzles
from server.errors import StoreError
from server.game.names import ReservedNames, fold_name, words
from server.store import puzzles as puzzle_ops
from server.store.factory import open_store
from server.store.puzzles import PuzzleStore
from tests.server.servers import Server
from tests.server.store.schema_undo import SEPARATORS_VERSION, rewind
from tests.server.store.test_store import raw

# -- pure -------------------------------------------------------------------------------------


def test_separators_fold_away() -> None:
    assert {fold_name(n) for n in ("alice", "alice_", "a-l-i-c-e", "Al.ice", "_ALICE-")} == {
        fold_name("alice")}
    assert fold_name("target-1") == fold_name("target1") == fold_name("target_1")
    assert fold_name("target1b") != fold_name("target1")  # another name (a ban holds these)
    assert fold_name("_") != fold_name("-")  # a name of separators alone keeps them


def test_words_split_at_separators_capitals_and_digits() -> None:
    assert words("Admin-Team") == ["Admin", "Team"]
    assert words("SuperAdmin") == ["Super", "Admin"]
    assert words("MAdmin") == ["M", "Admin"]
    assert words("Moderator2") == ["Moderator", "2"]
    assert words("xLevel8_") == ["x", "Level", "8"]
    assert words("badminton") == ["badminton"]


@pytest.mark.parametrize("name", [
    "Admin", "admin_", "Admin-Team", "TeamAdmin", "SuperAdmin", "MAdmin", "Moderator2",
    "moderator-1", "Computer-Level-9", "computer9", "xLevel8", "level-8", "adm1n", "ad_min",
    "r00t", "Official_Bob", "QUBIC-staff", "Mod_Squad", "master", "Random_", "B0SS",
    "BossMan",
])
def test_a_reserved_word_in_a_name_reserves_it(name: str) -> None:
    assert name in ReservedNames(["boss"])


@pytest.mark.parametrize("name", [
    "badminton", "Madmin", "administrators", "Modern", "Woodstock", "MasterChief",
    "RandomGuy", "Leveller", "computers", "Systematic", "alice", "embossed",
])
def test_a_word_inside_another_word_does_not(name: str) -> None:
    assert name not in ReservedNames(["boss"])


# -- the upgrade ------------------------------------------------------------------------------


async def test_the_upgrade_refolds_keys_and_moves_puzzle_rows(database: str) -> None:
    """Players registered when separators still told names apart: a lone one takes the key
    its name folds to now, with its puzzle rating and tries; one whose key another holds
    keeps its old key and is found by its exact name; newcomers get none of these names."""
    store = await open_store(database)
    try:
        puzzles = PuzzleStore(store)
        await puzzles.write(puzzle_ops.insert_puzzles(load_puzzles()[:2], now=0.0))
        first, second = [i for i, _ in await puzzles.read(puzzle_ops.ids_by_rating())]
        for name, at in (("alice_", 1.0), ("carl", 2.0), ("carlx", 3.0)):
            await store.create_player(name, at)
    finally:
        await store.close()
    await rewind(database, SEPARATORS_VERSION - 1)
    for statement in (  # the keys as the folding before made them, and alice_'s puzzle rows
        "UPDATE players SET name_key = 'allce_' WHERE name = 'alice_'",
        "UPDATE players SET name = 'carl-', name_key = 'carl-' WHERE name = 'carlx'",
        "INSERT INTO puzzle_players (name_key, rating, rd, volatility, rated, streak,"
        " best_streak, streak_run) VALUES ('allce_', 1612.5, 80.0, 0.06, 2, 1, 3, 7)",
        "INSERT INTO puzzle_attempts (name_key, puzzle_id, mode, solved, rated,"
        f" rating_before, rating_after, at) VALUES ('allce_', {first}, 'next', TRUE, TRUE,"
        " 1500.0, 1580.0, 10.0)",
        "INSERT INTO puzzle_attempts (name_key, puzzle_id, mode, solved, rated,"
        f" rating_before, rating_after, at) VALUES ('allce_', {second}, 'next', TRUE, TRUE,"
        " 1580.0, 1612.5, 10.0)",
    ):
        await raw(database, statement)
    store = await open_store(database)
    try:
        puzzles = PuzzleStore(store)
        alice = await store.get_player("A-L-I-C-E")
        assert alice is not None and alice.name == "alice_"
        rated = await puzzles.read(puzzle_ops.puzzle_player("alice_"))
        assert (rated.rating.rating, rated.rated) == (1612.5, 2)
        tries = await puzzles.read(puzzle_ops.history("alice_", 10))
        assert [t.puzzle_id for t in tries] == [second, first]  # their order kept
        carl, other = await store.get_player("carl"), await store.get_player("carl-")
        assert carl is not None and other is not None
        assert (carl.name, other.name) == ("carl", "carl-")
        for newcomer in ("alice", "a-l-i-c-e", "Alice.", "car-l", "CARL__"):
            with pytest.raises(StoreError) as taken:
                await store.create_player(newcomer, 4.0)
            assert taken.value.code == "name_taken", newcomer
    finally:
        await store.close()


# -- newcomers --------------------------------------------------------------------------------


async def test_newcomers_get_no_name_that_differs_by_separators_or_holds_a_staff_word(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "q.db")
    await server.start()
    try:
        await server.client("alice")
        for name in ("alice_", "a-l-i-c-e", "_Alice-"):
            refused = await (await server.client()).request(t="hello", name=name)
            assert refused["code"] == "name_taken", name
        for name in ("Admin-Team", "Moderator2", "Computer-Level-9"):
            refused = await (await server.client()).request(t="hello", name=name)
            assert refused["code"] == "name_reserved", name
        for name in ("badminton", "Madmin"):
            assert (await (await server.client()).hello(name))["name"] == name
    finally:
        await server.stop()
