"""The store's side of accounts: a token per device, the password, the recovery codes.

Each player has devices: one row per token given out (at the first hello, a ``login`` or a
``recover``), with the SHA-256 of the token (``hash_token``), a label, when it was made and
last used and from where, and when it was revoked. A revoked device's row is kept, so a hello
with its token is told ``token_revoked`` rather than ``bad_token``. The password is
``players.password`` (an scrypt hash made by ``server.passwords``, None when the name
is not protected); recovery codes are rows of ``recovery_codes`` (SHA-256, ``used`` once).

As ``server.store.operations``, each operation here is sans-I/O (an ``Op``) and runs in one
transaction; ``server.store.account_records.AccountStore`` is the interface, ``SQLAccounts``
its methods over SQL, mixed into ``server.store.sql.SQLStore``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import TypeVar

from server.errors import StoreError
from server.game.records import PlayerRecord
from server.store import operations
from server.store.account_records import DeviceRecord, Holder, Issued, Opened
from server.store.base import Row, hash_token, name_key, new_token, player_from_row
from server.store.lever_records import (
    AuditEntry,
    append_audit,
    append_control,
    roles_of,
    sanctions_of,
)
from server.store.query import Dialect, Op, change, every, fetch_all, fetch_one, one, run_count
from server.store.runner import SQLRunner

T = TypeVar("T")

LOGGED_OUT = "this device was logged out: log in again with your password"


def _device(row: Row) -> DeviceRecord:
    return DeviceRecord(row["id"], row["label"], row["created"], row["last_seen"],
                        row["address"], row["revoked"])


# -- operations ---------------------------------------------------------------------------------


def _player_row(name: str, dialect: Dialect | None = None) -> Op[Row | None]:
    """The row of the player called exactly ``name``, else of the one whose name folds as it
    does (as ``operations.player_by_name``; never a deleted player's), locked with a
    ``dialect``'s row lock."""
    lock = "" if dialect is None else dialect.for_update
    row = yield from fetch_one(one(
        "SELECT * FROM players WHERE (name = ? OR name_key = ?) AND deleted IS NULL"
        f" ORDER BY CASE WHEN name = ? THEN 0 ELSE 1 END LIMIT 1{lock}",
        name, name_key(name), name))
    return row


def add_device(player_id: int, token_hash: bytes, label: str | None, now: float,
               address: str | None) -> Op[int]:
    """A new device of the player ``player_id``; returns its id."""
    yield change(
        "INSERT INTO devices (player_id, token_hash, label, created, last_seen, address)"
        " VALUES (?, ?, ?, ?, ?, ?)", player_id, token_hash, label, now, now, address)
    row = yield from fetch_one(one("SELECT id FROM devices WHERE token_hash = ?", token_hash))
    assert row is not None
    return int(row["id"])


def register(player: PlayerRecord, token_hash: bytes, address: str | None) -> Op[int]:
    """A new player with its first device; returns the device's id."""
    # players.token_hash is no longer read (see the schema): random bytes fill it.
    yield from operations.insert_player(player, secrets.token_bytes(32))
    row = yield from _player_row(player.name)
    assert row is not None
    return (yield from add_device(row["id"], token_hash, None, player.created, address))


def open_by_token(token_hash: bytes, name: str | None, now: float,
                  address: str | None) -> Op[Opened]:
    """The player and device of a token, its use noted; ``bad_token`` for a token that is
    no one's (or not ``name``'s), ``token_revoked`` for a device logged out."""
    device = yield from fetch_one(one(
        "SELECT id, player_id, revoked FROM devices WHERE token_hash = ?", token_hash))
    player = None
    if device is not None:
        player = yield from fetch_one(one("SELECT * FROM players WHERE id = ?",
                                          device["player_id"]))
    if player is None or (name is not None and name_key(player["name"]) != name_key(name)):
        raise StoreError("no player has this token", code="bad_token")
    assert device is not None
    if device["revoked"] is not None:
        raise StoreError(LOGGED_OUT, code="token_revoked")
    yield change("UPDATE devices SET last_seen = ?, address = ? WHERE id = ?",
                 now, address, device["id"])
    return Opened(player_from_row(player), int(device["id"]))


def _logged_in(player_id: int, device: int) -> Op[None]:
    """``token_revoked`` unless ``device`` is one of the player's and not logged out."""
    row = yield from fetch_one(one(
        "SELECT id FROM devices WHERE id = ? AND player_id = ? AND revoked IS NULL",
        device, player_id))
    if row is None:
        raise StoreError(LOGGED_OUT, code="token_revoked")


def holder(token_hash: bytes | None, device: int | None, address: str | None,
           now: float) -> Op[Holder]:
    """Who the token hashing to ``token_hash`` (or the device ``device``) is now, with the
    player's roles and the ban in force on the player or ``address``; ``bad_token`` for a
    token that is no one's, ``token_revoked`` for a device logged out. Nothing is written."""
    if token_hash is not None:
        found = yield from fetch_one(one(
            "SELECT id, player_id, revoked FROM devices WHERE token_hash = ?", token_hash))
    else:
        found = yield from fetch_one(one(
            "SELECT id, player_id, revoked FROM devices WHERE id = ?", device))
    row = None if found is None else (yield from fetch_one(one(
        "SELECT * FROM players WHERE id = ?", found["player_id"])))
    if found is None or row is None:
        raise StoreError("no player has this token", code="bad_token")
    if found["revoked"] is not None:
        raise StoreError(LOGGED_OUT, code="token_revoked")
    player = player_from_row(row)
    bans = [s for s in (yield from sanctions_of(player.name, address, now))
            if s.kind == "ban"]
    roles = yield from roles_of(player.name)
    ban = None if not bans else (bans[-1].expires, bans[-1].reason)
    return Holder(player, int(found["id"]), frozenset(roles), ban)


def password_of(name: str) -> Op[tuple[PlayerRecord, str | None] | None]:
    """The player called ``name`` and their password's hash (None: not protected)."""
    row = yield from _player_row(name)
    return None if row is None else (player_from_row(row), row["password"])


def revoke(dialect: Dialect, name: str, devices: Sequence[int] | None, keep: int | None,
           now: float) -> Op[list[int]]:
    """Log out ``name``'s ``devices`` (None: every one but ``keep``); returns those logged
    out now (a device already out, or not theirs, is left out)."""
    row = yield from _player_row(name, dialect)
    if row is None:
        raise StoreError(f"no player {name}", code="no_such_player")
    rows = yield from fetch_all(every(
        "SELECT id FROM devices WHERE player_id = ? AND revoked IS NULL ORDER BY id",
        row["id"]))
    if keep is not None and keep not in {r["id"] for r in rows}:
        raise StoreError(LOGGED_OUT, code="token_revoked")
    ids = [int(r["id"]) for r in rows if (devices is None and r["id"] != keep)
           or (devices is not None and r["id"] in devices)]
    for device in ids:
        yield change("UPDATE devices SET revoked = ? WHERE id = ?", now, device)
    return ids


def devices_of(name: str) -> Op[list[DeviceRecord]]:
    """``name``'s devices not logged out, oldest first."""
    player = yield from _player_row(name)
    if player is None:
        return []
    rows = yield from fetch_all(every(
        "SELECT * FROM devices WHERE player_id = ? AND revoked IS NULL ORDER BY id",
        player["id"]))
    return [_device(row) for row in rows]


def set_password(dialect: Dialect, name: str, password: str | None, codes: Sequence[bytes],
                 keep: int | None, now: float) -> Op[list[int]]:
    """Set ``name``'s password hash (None: no password) and replace their recovery codes by
    ``codes``; every device but ``keep`` is logged out. Returns the devices logged out."""
    row = yield from _player_row(name, dialect)
    if row is None:
        raise StoreError(f"no player {name}", code="no_such_player")
    if keep is not None:
        yield from _logged_in(row["id"], keep)
    yield change("UPDATE players SET password = ? WHERE id = ?", password, row["id"])
    yield change("DELETE FROM recovery_codes WHERE player_id = ?", row["id"])
    for code in codes:
        yield change("INSERT INTO recovery_codes (player_id, code_hash) VALUES (?, ?)",
                     row["id"], code)
    return (yield from revoke(dialect, name, None, keep, now))


def recover(dialect: Dialect, name: str, code: bytes, password: str, token_hash: bytes,
            label: str | None, now: float, address: str | None) -> Op[tuple[Opened, list[int]]]:
    """Spend ``name``'s recovery ``code``: the new ``password``, every device logged out, a
    new device; ``bad_recovery_code`` for a name without it, or a code used already."""
    row = yield from _player_row(name, dialect)
    used = 0
    if row is not None:
        used = yield from run_count(change(
            "UPDATE recovery_codes SET used = ? WHERE player_id = ? AND code_hash = ?"
            " AND used IS NULL", now, row["id"], code))
    if row is None or not used:
        raise StoreError("no such name and recovery code", code="bad_recovery_code")
    yield change("UPDATE players SET password = ? WHERE id = ?", password, row["id"])
    revoked = yield from revoke(dialect, name, None, None, now)
    device = yield from add_device(row["id"], token_hash, label, now, address)
    return Opened(player_from_row(row), device), revoked


def recovery_codes_left(name: str) -> Op[int]:
    """How many of ``name``'s recovery codes are unused."""
    player = yield from _player_row(name)
    if player is None:
        return 0
    row = yield from fetch_one(one(
        "SELECT COUNT(*) AS n FROM recovery_codes WHERE player_id = ? AND used IS NULL",
        player["id"]))
    return 0 if row is None else int(row["n"])


# -- the interface's methods over SQL ----------------------------------------------------------


class SQLAccounts(SQLRunner):
    """``AccountStore`` over SQL, mixed into ``SQLStore`` (which runs the operations)."""

    async def register(self, name: str, now: float, address: str | None = None) -> Issued:
        token = new_token()
        player = PlayerRecord(name=name, created=now)
        device = await self._write(register(player, hash_token(token), address))
        return Issued(player, device, token)

    async def open_session(self, token: str, name: str | None, now: float,
                           address: str | None = None) -> Opened:
        return await self._write(open_by_token(hash_token(token), name, now, address))

    async def holder(self, *, token: str | None = None, device: int | None = None,
                     address: str | None = None, now: float) -> Holder:
        return await self._read(holder(None if token is None else hash_token(token), device,
                                       address, now))

    async def password_of(self, name: str) -> tuple[PlayerRecord, str | None] | None:
        return await self._read(password_of(name))

    async def add_device(self, name: str, label: str | None, now: float,
                         address: str | None = None) -> Issued:
        token = new_token()

        def op() -> Op[tuple[PlayerRecord, int]]:
            row = yield from _player_row(name)
            if row is None:
                raise StoreError(f"no player {name}", code="no_such_player")
            device = yield from add_device(row["id"], hash_token(token), label, now, address)
            return player_from_row(row), device

        player, device = await self._write(op())
        return Issued(player, device, token)

    async def devices(self, name: str) -> list[DeviceRecord]:
        return await self._read(devices_of(name))

    async def revoke(self, name: str, devices: Sequence[int] | None, *, keep: int | None,
                     now: float) -> list[int]:
        return await self._write(revoke(self.dialect, name, devices, keep, now))

    async def set_password(self, name: str, password: str | None, codes: Sequence[bytes], *,
                           keep: int | None, now: float,
                           control: Callable[[list[int]], str] | None = None,
                           audit: AuditEntry | None = None) -> list[int]:
        dialect = self.dialect

        def op() -> Op[list[int]]:
            revoked = yield from set_password(dialect, name, password, codes, keep, now)
            if audit is not None:
                yield from append_audit(audit)
            if control is not None and revoked:
                yield from append_control(dialect, control(revoked), now)
            return revoked

        return await self._write(op())

    async def recover(self, name: str, code: bytes, password: str, label: str | None,
                      now: float, address: str | None = None) -> tuple[Issued, list[int]]:
        token = new_token()
        opened, revoked = await self._write(recover(
            self.dialect, name, code, password, hash_token(token), label, now, address))
        return Issued(opened.player, opened.device, token), revoked

    async def recovery_codes_left(self, name: str) -> int:
        return await self._read(recovery_codes_left(name))
