"""The host's levers, each written once for ``qubic admin`` and for moderators' requests.

Every lever records what it does, logs it in the audit log (who, what, to whom, when, why)
and, when running servers must act on it, adds a control action (``server.node.control``),
in one transaction (``Store.apply``): a ban that is in the database has been logged and is
being carried out on every node within a second. ``actor`` is who pulls the lever: a
moderator's or admin's name, or ``cli:<user>`` for the command line.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from server.errors import ServerError, StoreError
from server.game.records import GameStatus
from server.node.control_actions import (
    Disconnect,
    DisconnectAddress,
    DropDevices,
    EndGame,
    Mute,
    RemoveChatLine,
    RolesChanged,
    Say,
    Unmute,
    encode_action,
)
from server.protocol.codes import ErrorCode
from server.store import lever_records as ops
from server.store.base import Store
from server.store.lever_records import AuditEntry, Report, Role, Sanction

RESULTS = {"x": "1-0", "o": "0-1", "draw": "1/2-1/2", "abort": "*"}
"""``end-game --result`` -> the game's result."""


def _until(expires: float | None) -> str:
    if expires is None:
        return ""
    return " until " + datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%d %H:%M UTC")


def ban_message(expires: float | None, reason: str) -> str:
    """What a banned player is told, when disconnected and at every hello after."""
    return f"you are banned{_until(expires)}: {reason}"


def held_message(expires: float | None) -> str:
    """What a new player, a login or a recovery from an address a player's ban holds is
    told: not the banned player's name or reason, which may be a stranger's."""
    return f"a ban holds your address{_until(expires)}: no new player or login from it"


async def refuse_held_address(store: Store, address: str) -> None:
    """``banned`` if a player's ban holds ``address`` (``server.store.lever_records.ban_holding``):
    asked before a new player, a ``login`` or a ``recover`` from it."""
    held = await store.query(ops.ban_holding(address, time.time()))
    if held is not None:
        raise ServerError(held_message(held.expires), ErrorCode.BANNED)


def mute_message(until: float | None, reason: str) -> str:
    return f"you are muted{_until(until)}" + (f": {reason}" if reason else "")


def _entry(actor: str, action: str, target: str | None, reason: str | None,
           detail: str | None = None) -> AuditEntry:
    return AuditEntry(actor, action, target, reason or None, time.time(), detail)


def _expires(seconds: float | None) -> float | None:
    return None if seconds is None else time.time() + seconds


async def _registered(store: Store, name: str) -> str:
    """``name`` as the player registered it (the running servers know them by it);
    ``no_such_player`` if nobody is called so."""
    return str((await store.query(ops.player_row(name)))["name"])


async def _devices(store: Store, name: str) -> tuple[int, ...]:
    """``name``'s devices: a rename or a deletion closes the connections they opened, not a
    newcomer's who takes the freed name before the nodes act (``Disconnect.devices``)."""
    return tuple(device.id for device in await store.devices(name))


async def grant(store: Store, actor: str, name: str, role: Role, reason: str = "") -> str:
    """Give ``name`` the role; returns their name as written."""
    registered = await _registered(store, name)
    done = await store.apply(ops.grant_role(name, role, time.time(), actor),
                             audit=_entry(actor, "grant", name, reason, role),
                             control=encode_action(RolesChanged(name=registered)))
    assert done is not None
    return done


async def revoke_role(store: Store, actor: str, name: str, role: Role, reason: str = ""
                      ) -> bool:
    """Take the role from ``name``; whether they had it. Their open connections stop reading
    the players' chats of games they watch at once, on every node."""
    registered = await _registered(store, name)
    return bool(await store.apply(ops.revoke_role(name, role),
                                  audit=_entry(actor, "revoke-role", name, reason, role),
                                  control=encode_action(RolesChanged(name=registered))))


async def become_bot(store: Store, name: str) -> str:
    """The player ``name`` makes their own account a bot (``POST /api/bot/account/upgrade``):
    refused with ``bot_refused`` once they have a rated game; logged as their own act."""
    registered = await _registered(store, name)
    done = await store.apply(ops.become_bot(name),
                             audit=_entry(registered, "grant", registered, "bot account upgrade",
                                          "bot"),
                             control=encode_action(RolesChanged(name=registered)))
    assert done is not None
    return done


async def roles_of(store: Store, name: str) -> set[str]:
    return await store.query(ops.roles_of(name))


async def ban(store: Store, actor: str, *, name: str | None = None,
              address: str | None = None, reason: str, seconds: float | None = None
              ) -> Sanction:
    """Ban the player ``name`` or ``address`` (an address or a network): their connections
    close on every node and every hello of theirs is refused (``banned``)."""
    if address is not None:
        address = ops.check_address(address)
    if name is not None:
        name = await _registered(store, name)
    expires = _expires(seconds)
    op = ops.add_sanction("ban", name=name, address=address, reason=reason,
                          now=time.time(), expires=expires, by=actor)
    message = ban_message(expires, reason)
    action = (Disconnect(name=name, code="banned", reason=message) if name is not None
              else DisconnectAddress(address=str(address), reason=message))
    sanction = await store.apply(op, audit=_entry(actor, "ban", name or address, reason,
                                                  _detail(seconds)),
                                 control=encode_action(action))
    assert sanction is not None
    return sanction


async def unban(store: Store, actor: str, *, name: str | None = None,
                address: str | None = None, reason: str = "") -> int:
    """Lift the bans of ``name`` or ``address``; how many were lifted."""
    if address is not None:
        address = ops.check_address(address)
    return int(await store.apply(
        ops.lift_sanctions("ban", time.time(), name=name, address=address),
        audit=_entry(actor, "unban", name or address, reason)) or 0)


async def mute(store: Store, actor: str, name: str, reason: str = "",
               seconds: float | None = None) -> Sanction:
    """Refuse ``name``'s chat (``muted``) on every node, for ``seconds`` or until unmuted."""
    name = await _registered(store, name)
    expires = _expires(seconds)
    sanction = await store.apply(
        ops.add_sanction("mute", name=name, reason=reason, now=time.time(), expires=expires,
                         by=actor),
        audit=_entry(actor, "mute", name, reason, _detail(seconds)),
        control=encode_action(Mute(name=name, until=expires, reason=reason)))
    assert sanction is not None
    return sanction


async def unmute(store: Store, actor: str, name: str, reason: str = "") -> int:
    name = await _registered(store, name)
    return int(await store.apply(
        ops.lift_sanctions("mute", time.time(), name=name),
        audit=_entry(actor, "unmute", name, reason),
        control=encode_action(Unmute(name=name))) or 0)


async def kick(store: Store, actor: str, name: str, reason: str = "") -> None:
    """Close ``name``'s connections on every node (they may connect again)."""
    name = await _registered(store, name)
    await store.apply(ops.player_row(name), audit=_entry(actor, "kick", name, reason),
                      control=encode_action(Disconnect(
                          name=name, code="kicked",
                          reason="a moderator closed your connection"
                                 + (f": {reason}" if reason else ""))))


async def announce(store: Store, actor: str, text: str, reason: str = "") -> None:
    """Say ``text`` to every connection on every node."""
    await store.apply(audit=_entry(actor, "announce", None, reason, text),
                      control=encode_action(Say(text=text)))


async def remove_chat(store: Store, actor: str, game: str, line: int, reason: str = "",
                      admin: bool = True) -> None:
    """Take the chat line numbered ``line`` out of ``game`` (its node does; when the actor is not an
    ``admin``, not a line another moderator or an admin said). A game the store does not have
    is refused (``no_such_game``)."""
    if await store.get_game(game) is None:
        raise StoreError(f"no game {game}", code="no_such_game")
    await store.apply(audit=_chat_removed(actor, game, line, reason),
                      control=encode_action(RemoveChatLine(game=game, line=line,
                                                           admin=admin, by=actor)))


async def log_chat_removed(store: Store, actor: str, game: str, line: int,
                           reason: str = "") -> None:
    """Log in the audit log that ``actor`` took the line ``line`` out of ``game`` (its holder
    has: ``server.node.chat_removal``)."""
    await store.apply(audit=_chat_removed(actor, game, line, reason))


def _chat_removed(actor: str, game: str, line: int, reason: str) -> AuditEntry:
    return _entry(actor, "remove-chat", game, reason, f"line {line}")


async def end_game(store: Store, actor: str, game: str, result: str, reason: str = "",
                   wait: float = 3.0) -> str:
    """End an active game with ``result`` (``RESULTS``' values). The server holding it
    ends it (its players see the end at once); if none has within ``wait`` seconds (no
    server runs, or none holds it), it is ended in the database here. Returns which."""
    record = await store.get_game(game)
    if record is None:
        raise StoreError(f"no game {game}", code="no_such_game")
    if record.status is not GameStatus.ACTIVE:
        raise StoreError(f"game {game} is already {record.status}", code="game_over")
    await store.apply(audit=_entry(actor, "end-game", game, reason, result),
                      control=encode_action(EndGame(game=game, result=result)))
    for _ in range(max(1, int(wait / 0.1))):
        await asyncio.sleep(0.1)
        record = await store.get_game(game)
        if record is not None and record.status is not GameStatus.ACTIVE:
            return "ended by the server holding it"
    try:
        if result == "*":
            await store.abort_game(game, reason="host", now=time.time())
        else:
            await store.finish_game(game, result=result, reason="host", now=time.time())
    except StoreError as error:
        if error.code != "game_over":
            raise
        return "ended by the server holding it"
    return "ended in the database (no running server held it)"


async def rename(store: Store, actor: str, old: str, new: str, reason: str = "") -> str:
    """Rename a player (not while they play): one row changes, as every record of theirs
    points at their id; the old name is free and brings nothing to whoever takes it. Their
    connections close, and their token brings them back under the new name. Returns the old
    name as written."""
    old = await _registered(store, old)
    before = await store.apply(
        ops.rename_player(old, new), audit=_entry(actor, "rename", old, reason, new),
        control=encode_action(Disconnect(
            name=old, code="kicked", reason=f"the host renamed you {new}: connect again",
            devices=await _devices(store, old), renamed=new)))
    assert before is not None
    return before


async def delete_player(store: Store, actor: str, name: str, reason: str = "") -> str:
    """Delete a player's account (not while they play): their row stays as a tombstone
    named as returned (``deleted-<id>``), which keeps their games, ratings and reports
    and which nobody can register, log in as or find by name
    (``server.store.lever_records.delete_player``)."""
    name = await _registered(store, name)
    gone = await store.apply(
        ops.delete_player(name), audit=_entry(actor, "delete-player", name, reason),
        control=encode_action(Disconnect(name=name, code="kicked",
                                         reason="the host deleted your account",
                                         devices=await _devices(store, name))))
    assert gone is not None
    return gone


async def reset_password(store: Store, actor: str, name: str, password: str,
                         reason: str | None = None) -> list[int]:
    """Set ``name``'s password to the hash ``password`` (``qubic admin reset-password``):
    their recovery codes are deleted and every device logged out, its connections closed on
    every node (``token_revoked``, 4001) by the control action written in the same
    transaction. Returns the devices logged out."""
    name = await _registered(store, name)
    return await store.set_password(
        name, password, [], keep=None, now=time.time(),
        control=lambda revoked: encode_action(DropDevices(name=name, devices=revoked)),
        audit=_entry(actor, "reset-password", name, reason))


async def export_player(store: Store, name: str) -> dict[str, Any]:
    return await store.query(ops.export_player(name))


async def audit(store: Store, limit: int = 50, before: int | None = None) -> list[AuditEntry]:
    return await store.query(ops.audit_log(limit, before))


async def sanctions(store: Store) -> list[Sanction]:
    return await store.query(ops.active_sanctions(time.time()))


async def report(store: Store, reporter: str, name: str, reason: str,
                 game: str | None = None) -> int:
    """File ``reporter``'s report of ``name`` for the moderators' queue."""
    report_id = await store.apply(ops.add_report(reporter, name, game, reason, time.time()))
    assert report_id is not None
    return report_id


async def reports(store: Store, limit: int = 100) -> list[Report]:
    return await store.query(ops.open_reports(limit))


async def resolve_report(store: Store, actor: str, report_id: int, reason: str = "") -> Report:
    done = await store.apply(
        ops.resolve_report(report_id, time.time(), actor),
        audit=_entry(actor, "resolve-report", str(report_id), reason))
    assert done is not None
    return done


def _detail(seconds: float | None) -> str | None:
    return None if seconds is None else f"for {seconds:g} s"
