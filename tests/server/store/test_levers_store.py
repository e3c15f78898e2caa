"""The host's levers in the database, on SQLite and PostgreSQL alike, and their pure parts: a
room's chat removal and ending by the host, the control channel's actions as text, addresses
and networks, durations. The end-to-end tests are test_levers.py and test_cluster_levers.py."""

from __future__ import annotations

import argparse
import time

import pytest

from qubic_cli.admin import duration
from server.errors import StoreError
from server.game.records import GameStatus
from server.node import control_actions as control
from server.node import levers
from server.protocol import ChatLine, ChatRemoved, GameEnd
from server.store import lever_records as ops
from server.store.base import Store
from tests.server.game.test_room import ANN, BOB, new_room, play, refused
from tests.server.store.test_store import ALICE

# the store's fixtures: database and store on SQLite and PostgreSQL come from conftest.py


async def test_sanctions_follow_the_player_expire_and_are_lifted(store: Store) -> None:
    await store.create_player("Ann", 0.0)
    await levers.mute(store, "mod", "ann", "caps", seconds=3600)
    await levers.ban(store, "mod", name="ANN", reason="spam", seconds=-1)  # expired already
    now = time.time()
    found = await store.query(ops.sanctions_of("ann", None, now))
    assert [(s.kind, s.name, s.reason) for s in found] == [("mute", "Ann", "caps")]
    await levers.rename(store, "host", "ann", "anna")
    assert [s.kind for s in await store.query(ops.sanctions_of("anna", None, now))] == ["mute"]
    assert await levers.unmute(store, "mod", "anna") == 1
    assert await store.query(ops.sanctions_of("anna", None, now)) == []


async def test_address_bans_cover_their_network(store: Store) -> None:
    await levers.ban(store, "host", address="203.0.113.0/24", reason="flood")
    await levers.ban(store, "host", address="2001:db8::1", reason="one")
    now = time.time()
    for address, banned in (("203.0.113.77", True), ("203.0.114.1", False),
                            ("2001:db8::1", True), ("2001:db8::2", True),  # its /64
                            ("2001:db8:0:1::1", False), ("", False)):
        found = await store.query(ops.sanctions_of(None, address, now))
        assert bool(found) is banned, address
    assert await levers.unban(store, "host", address="203.0.113.9/24") == 1  # normalised


async def test_roles_are_granted_once_and_revoked(store: Store) -> None:
    await store.create_player("ann", 0.0)
    for _ in range(2):
        assert await levers.grant(store, "host", "ANN", "moderator") == "ann"
    assert await levers.roles_of(store, "ann") == {"moderator"}
    assert await levers.revoke_role(store, "host", "ann", "moderator")
    assert not await levers.revoke_role(store, "host", "ann", "moderator")
    assert await levers.roles_of(store, "ann") == set()
    with pytest.raises(StoreError) as missing:
        await levers.grant(store, "host", "nobody", "admin")
    assert missing.value.code == "no_such_player"
    entries = await levers.audit(store)
    assert [e.action for e in entries] == ["revoke-role", "revoke-role", "grant", "grant"]


async def test_a_deleted_player_leaves_their_games_under_another_name(store: Store) -> None:
    await store.create_player("Alice", 0.0)
    await store.create_player("Bob", 0.0)
    game = await store.create_game(variant="4x4x4", x=ALICE, o=ALICE.human("Bob"), clock=None,
                                   rated=True, now=1.0)
    with pytest.raises(StoreError) as playing:
        await levers.delete_player(store, "host", "alice")
    assert playing.value.code == "not_allowed"
    await store.finish_game(game.id, result="1-0", reason="resign", now=2.0)
    await levers.report(store, "Bob", "alice", "rude", game.id)
    exported = await levers.export_player(store, "alice")
    assert exported["games"][0]["id"] == game.id and exported["reports"][0]["reason"] == "rude"
    gone = await levers.delete_player(store, "host", "alice")
    assert gone.startswith("deleted-")
    record = await store.get_game(game.id)
    assert record is not None and record.x.player == gone and record.result == "1-0"
    assert await store.get_player("alice") is None
    assert [(r.reporter, r.reported) for r in await levers.reports(store)] == [("Bob", gone)]


async def test_every_node_reads_the_control_actions_in_order(
    store: Store, other_node: Store,
) -> None:
    start = await other_node.query(ops.last_control())
    for text in ("one", "two", "three"):
        await levers.announce(store, "host", text)
    rows = await other_node.query(ops.control_since(start))
    assert [control.decode_action(text) for _, text in rows] == [
        control.Say(text=text) for text in ("one", "two", "three")]
    ids = [row_id for row_id, _ in rows]
    assert ids == sorted(ids) and await other_node.query(ops.control_since(ids[-1])) == []
    assert await store.apply(ops.prune_control(time.time() + 10)) == 2  # the newest stays
    await levers.announce(store, "host", "four")
    assert [i for i, _ in await other_node.query(ops.control_since(ids[-1]))] > ids


async def test_end_game_with_no_server_ends_it_in_the_database(store: Store) -> None:
    await store.create_player("Alice", 0.0)
    game = await store.create_game(variant="4x4x4", x=ALICE, o=ALICE.computer(1), clock=None,
                                   rated=False, now=1.0)
    how = await levers.end_game(store, "host", game.id, "*", wait=0.1)
    assert how.startswith("ended in the database")
    record = await store.get_game(game.id)
    assert record is not None and record.status is GameStatus.ABORTED and record.reason == "host"


# -- the pure parts --------------------------------------------------------------------------


def test_a_removed_chat_line_leaves_the_room_its_snapshot_and_its_catch_up() -> None:
    room = new_room()
    seen = room.version
    room.chat(ANN, "nasty", 1.0)
    room.chat(BOB, "kind", 2.0)
    line = room.snapshot(ANN, 2.0).chat[0].line
    (removed,) = room.remove_chat(line, 3.0)
    assert removed.message == ChatRemoved(game="g1", line=line)
    assert [c.text for c in room.snapshot(BOB, 3.0).chat] == ["kind"]
    caught = [e.message for e in room.catch_up(BOB, seen, 3.0)]
    assert [type(m) for m in caught] == [ChatLine, ChatRemoved]
    assert caught[0].text == "kind"
    with refused("not_allowed"):
        room.remove_chat(line, 4.0)


@pytest.mark.parametrize(("result", "winner"), [("1-0", "x"), ("0-1", "o"),
                                                ("1/2-1/2", None), ("*", None)])
def test_the_host_ends_a_game_with_the_result_chosen(result: str, winner: str | None) -> None:
    room = new_room()
    play(room, ["1a1", "2b2"])
    (end,) = [e.message for e in room.end_by_host(result, 5.0).events]
    assert isinstance(end, GameEnd) and (end.result, end.reason, end.winner) == (
        result, "host", winner)
    with refused("game_over"):
        room.end_by_host("1-0", 6.0)


def test_actions_round_trip_as_text_and_a_strange_one_is_refused() -> None:
    for action in (control.Say(text="hi"), control.Mute(name="ann", until=None, reason=""),
                   control.EndGame(game="g1", result="*"),
                   control.Disconnect(name="ann", code="kicked", reason="bye")):
        assert control.decode_action(control.encode_action(action)) == action
    with pytest.raises(Exception):  # noqa: B017 (msgspec's ValidationError)
        control.decode_action('{"do": "launch_missiles"}')


def test_addresses_and_durations() -> None:
    assert ops.address_matches("10.0.0.0/8", "10.2.3.4")
    assert not ops.address_matches("10.0.0.0/8", "11.0.0.1")
    assert ops.address_matches("::1", "::1") and not ops.address_matches("::1", "localhost")
    assert ops.address_matches("10.0.0.0/8", "::ffff:10.1.2.3")
    assert ops.check_address("203.0.113.9/24") == "203.0.113.0/24"
    assert ops.check_address("203.0.113.9") == "203.0.113.9"
    with pytest.raises(ValueError):
        ops.check_address("ann")
    assert [duration(t) for t in ("90", "90s", "30m", "12h", "7d", "2w")] == [
        90, 90, 1800, 43200, 604800, 1209600]
    for bad in ("", "0m", "-5m", "5y", "m"):
        with pytest.raises(argparse.ArgumentTypeError):
            duration(bad)
