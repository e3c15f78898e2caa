"""Moderation as the hub sees it: who may come in, who may chat, and the requests of
reporters and moderators.

- ``admit``: at ``hello``, a banned player (by name, whatever the address) or address is
  refused with ``banned`` and the reason, and a new player too from an address a player's
  ban holds (``levers.refuse_held_address``); a mute in force is noted for ``check_chat``; the
  player's roles go into the welcome, and a moderator's or admin's session is marked
  ``moderator`` (a game it watches shows it the players' chat beside the spectators').
- ``check_chat``: a muted player's chat is refused with ``muted``.
- ``handle``: a ``report`` from anyone of anyone else (``not_allowed`` for oneself, a blank
  reason ``bad_message``; so many an hour per player, ``too_many_reports`` past that, counted
  for the whole cluster as the other limits are); the moderators' requests (remove a chat
  line, mute, kick, ban, their undoing, the reports' queue) from a moderator or admin only
  (``not_moderator``), never on oneself (``not_allowed``), and against another moderator or
  an admin, or a line one of them said, from an admin only (``not_moderator``, as lichess
  ranks them). ``remove_chat`` goes to the node holding the game, which alone knows who said the
  line: it checks the rank there (``server.node.chat_removal``), takes the line out, audits,
  then acks; of a game that does not exist ``no_such_game``, of a line the game does not have
  ``not_allowed``, and neither is audited. Each pulls a lever of
  ``server.node.levers``, which the control channel carries to every node.
"""

from __future__ import annotations

import time
from typing import assert_never

from server.errors import LimitReached, ServerError
from server.node import levers
from server.node.accounts import refuse_banned
from server.node.address_limits import AddressCounts
from server.node.control import MODERATORS, Control
from server.node.routing import Router
from server.node.session import Session
from server.protocol import (
    Ack,
    BanPlayer,
    ErrorCode,
    KickPlayer,
    ListReports,
    ModerationRequest,
    MutePlayer,
    RemoveChat,
    ReportInfo,
    ReportPlayer,
    ReportQueue,
    ResolveReport,
    UnbanPlayer,
    UnmutePlayer,
)
from server.store.base import Store, name_key
from server.store.lever_records import sanctions_of

QUEUE_SHOWN = 100  # open reports in one ``reports`` reply, the oldest first


class Moderation:
    """The hub's part for bans, mutes, reports and moderators' requests."""

    def __init__(self, control: Control, limits: AddressCounts, router: Router) -> None:
        self.control = control
        self.limits = limits
        self.router = router  # a remove_chat goes to the game's holder

    @property
    def store(self) -> Store:
        return self.control.rooms.store

    async def admit(self, session: Session, name: str | None) -> list[str]:
        """Refuse a banned player or address (``banned``); note a mute; returns the roles
        of ``name`` (None: a new player, checked by address only)."""
        now = time.time()
        if name is None:  # a new player: not from an address a player's ban holds either
            await levers.refuse_held_address(self.store, session.peer)
        found = await self.store.query(sanctions_of(name, session.peer, now))
        refuse_banned(found)
        if name is None:
            return []
        mutes = [s for s in found if s.kind == "mute"]
        if mutes:
            self.control.note_mute(name, mutes[-1].expires, mutes[-1].reason)
        else:  # the database holds none: one kept here under the name was another player's
            self.control.forget_mute(name)  # (renamed or deleted, before the node heard)
        roles = await levers.roles_of(self.store, name)
        session.moderator = not roles.isdisjoint(MODERATORS)  # reads both chats of a game
        return sorted(roles)

    def check_chat(self, session: Session) -> None:
        """Refuse the chat of a muted player (``muted``)."""
        if session.name is None:
            return
        muted = self.control.muted(session.name, time.time())
        if muted is not None:
            raise ServerError(levers.mute_message(muted.until, muted.reason), ErrorCode.MUTED)

    async def handle(self, session: Session, message: ModerationRequest) -> None:
        """Carry out a report or a moderator's request; refusals are ``ServerError``."""
        name = session.name
        assert name is not None
        store = self.store
        if isinstance(message, ReportPlayer):
            if name_key(message.name) == name_key(name):
                raise ServerError("you cannot report yourself", ErrorCode.NOT_ALLOWED)
            if not message.reason.strip():
                raise ServerError("say why you report them", ErrorCode.BAD_MESSAGE)
            wait = await self.limits.add_report(name, self.control.rooms.now())
            if wait is not None:
                raise LimitReached("you have reported a lot lately: wait a while",
                                   ErrorCode.TOO_MANY_REPORTS, wait)
            await levers.report(store, name, message.name, message.reason, message.game)
            session.send(Ack(ref=message.id))
            return
        roles = await levers.roles_of(store, name)
        if not roles & MODERATORS:
            raise ServerError("only a moderator may do that", ErrorCode.NOT_MODERATOR)
        if isinstance(message, RemoveChat):  # its holder knows the line's author, and acks
            await self.router.remove_chat(session, message)
            return
        target = getattr(message, "name", None)
        if target is not None and name_key(target) == name_key(name):
            raise ServerError("you cannot do that to yourself", ErrorCode.NOT_ALLOWED)
        if target is not None and "admin" not in roles \
                and await levers.roles_of(store, target) & MODERATORS:
            raise ServerError("only an admin may act on a moderator or an admin",
                              ErrorCode.NOT_MODERATOR)
        match message:
            case ListReports():
                queue = await levers.reports(store, QUEUE_SHOWN)
                session.send(ReportQueue(reports=[
                    ReportInfo(id=r.id, at=r.at, by=r.reporter, name=r.reported, game=r.game,
                               reason=r.reason) for r in queue], ref=message.id))
                return
            case ResolveReport():
                await levers.resolve_report(store, name, message.report, message.reason)
            case RemoveChat():
                raise AssertionError("carried out by the game's holder, above")
            case MutePlayer():
                await levers.mute(store, name, message.name, message.reason,
                                  _seconds(message.minutes))
            case UnmutePlayer():
                await levers.unmute(store, name, message.name, message.reason)
            case KickPlayer():
                await levers.kick(store, name, message.name, message.reason)
            case BanPlayer():
                await levers.ban(store, name, name=message.name, reason=message.reason,
                                 seconds=_seconds(message.minutes))
            case UnbanPlayer():
                await levers.unban(store, name, name=message.name, reason=message.reason)
            case ReportPlayer():
                raise AssertionError("handled above")
            case _:
                assert_never(message)
        session.send(Ack(ref=message.id))


def _seconds(minutes: int | None) -> float | None:
    return None if minutes is None else minutes * 60.0
