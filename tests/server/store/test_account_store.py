"""The accounts' side of both stores, SQLite and PostgreSQL (issue 27): devices and their
tokens, revocation, passwords and recovery codes, and an old database's token moved into a
device row by the migration."""

from __future__ import annotations

import hashlib

import pytest

from server.errors import StoreError
from server.passwords import hash_recovery_code
from server.store.base import Store
from server.store.factory import open_store
from server.store.schema import MIGRATIONS
from tests.server.store.schema_undo import rewind
from tests.server.store.test_store import raw

ACCOUNTS_VERSION = next(i + 1 for i, steps in enumerate(MIGRATIONS)
                        if any("CREATE TABLE devices" in str(step) for step in steps))


async def code_of(store: Store, token: str, name: str | None = None) -> str:
    with pytest.raises(StoreError) as refused:
        await store.open_session(token, name, 1.0)
    return refused.value.code


async def test_each_device_has_its_own_token(store: Store) -> None:
    first = await store.register("Ann", 1.0, "10.0.0.1")
    second = await store.add_device("ann", "laptop", 2.0, "10.0.0.2")
    assert first.token != second.token and first.device != second.device
    opened = await store.open_session(second.token, "ANN", 3.0, "10.0.0.3")
    assert (opened.player.name, opened.device) == ("Ann", second.device)
    devices = await store.devices("ann")
    assert [(d.id, d.label, d.address, d.last_seen) for d in devices] == [
        (first.device, None, "10.0.0.1", 1.0), (second.device, "laptop", "10.0.0.3", 3.0)]
    assert await code_of(store, second.token, "bob") == "bad_token"
    assert await code_of(store, "no such token") == "bad_token"


async def test_a_revoked_token_is_refused_at_once(store: Store, database: str) -> None:
    first = await store.register("ann", 1.0)
    others = [await store.add_device("ann", f"d{i}", 2.0) for i in range(3)]
    other_node = await open_store(database)  # a second node on the same database
    try:
        assert await store.revoke("ann", [others[0].device], keep=None, now=3.0) == [
            others[0].device]
        assert await code_of(other_node, others[0].token) == "token_revoked"
        assert await store.authenticate(others[0].token) is None
        assert await store.revoke("ann", [others[0].device], keep=None, now=3.0) == []
        left = await store.revoke("ann", None, keep=first.device, now=4.0)
        assert left == [others[1].device, others[2].device]
        assert [d.id for d in await other_node.devices("ann")] == [first.device]
        assert (await other_node.open_session(first.token, None, 5.0)).device == first.device
    finally:
        await other_node.close()


async def test_a_password_replaces_the_codes_and_logs_out_the_other_devices(
        store: Store) -> None:
    first = await store.register("ann", 1.0)
    second = await store.add_device("ann", None, 2.0)
    assert await store.password_of("ann") == (
        (await store.get_player("ann")), None)
    codes = [hash_recovery_code(f"code{i}") for i in range(10)]
    revoked = await store.set_password("ann", "scrypt$hash", codes, keep=first.device, now=3.0)
    assert revoked == [second.device]
    found = await store.password_of("ANN")
    assert found is not None and found[1] == "scrypt$hash"
    assert await store.recovery_codes_left("ann") == 10
    newer = [hash_recovery_code("fresh")]
    await store.set_password("ann", "scrypt$other", newer, keep=first.device, now=4.0)
    assert await store.recovery_codes_left("ann") == 1
    assert await store.password_of("nobody") is None


async def test_a_recovery_code_is_spent_once(store: Store) -> None:
    first = await store.register("ann", 1.0)
    code = hash_recovery_code("abcd-efgh")
    await store.set_password("ann", "old", [code, hash_recovery_code("spare")],
                             keep=first.device, now=2.0)
    issued, revoked = await store.recover("ann", hash_recovery_code("ABCD EFGH"), "new",
                                          "phone", 3.0, "10.0.0.9")
    assert revoked == [first.device] and issued.player.name == "ann"
    assert (await store.open_session(issued.token, "ann", 4.0)).device == issued.device
    assert (await store.password_of("ann"))[1] == "new"  # type: ignore[index]
    assert await store.recovery_codes_left("ann") == 1
    for name, guess in (("ann", code), ("ann", hash_recovery_code("guess")),
                        ("nobody", hash_recovery_code("spare"))):
        with pytest.raises(StoreError) as refused:
            await store.recover(name, guess, "x", None, 5.0)
        assert refused.value.code == "bad_recovery_code"


async def test_an_old_databases_tokens_become_devices(database: str) -> None:
    """A database from before devices: its players' tokens open sessions as devices."""
    opened = await open_store(database)
    try:
        ann = await opened.register("ann", 1.0)
    finally:
        await opened.close()
    token_hash = hashlib.sha256(ann.token.encode()).digest()
    hex_hash = token_hash.hex()
    blob = f"X'{hex_hash}'" if "://" not in database else f"decode('{hex_hash}', 'hex')"
    await rewind(database, ACCOUNTS_VERSION - 1)
    await raw(database, f"UPDATE players SET token_hash = {blob}")  # where the token lived
    opened = await open_store(database)
    try:
        session = await opened.open_session(ann.token, "ann", 2.0)
        assert session.player.name == "ann"
        assert [d.created for d in await opened.devices("ann")] == [1.0]
        new = await opened.register("bob", 3.0)  # a new player after the migration
        assert (await opened.open_session(new.token, None, 4.0)).player.name == "bob"
    finally:
        await opened.close()
