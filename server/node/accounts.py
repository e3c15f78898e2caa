"""Account requests: protecting a name with a password, logging in from another device,
listing and revoking devices, recovering with a one-time code.

Every answer that checks a secret takes as long whether or not the name exists or has a
password (a dummy hash when there is none), and a refusal says ``bad_credentials`` or
``bad_recovery_code`` either way, so nobody learns whether a name is protected. Password
attempts are counted per name and per address in the hub's ``AddressCounts`` (in Redis on a
cluster) before any hashing, so a flood of guesses is refused cheaply with ``retry_in``.

A device revoked here is closed by ``drop`` (``Hub._drop_everywhere``: on this node at once,
on the others through the control channel, ``server.node.control``); its token is refused at
the next hello on any node, as every hello reads the store.

``identify`` is the one place that decides who a credential is now: a token (every HTTP route
that takes one, ``server.http.tokens.holder``) or a session's device (every account
request here). It reads the store each time: a device logged out is ``token_revoked``, a
player or address banned is ``banned``, and the roles are those held now. An account request
from a session whose device was logged out or whose player was banned meanwhile (before the
control channel closed it) is refused so, and the session is closed as the lever would have
(4001 for ``token_revoked``, 1008 for ``banned``); the writes (``revoke``, ``set_password``)
check the device again in their own transaction, so two devices cannot log each other out.

A banned player's ``login`` and ``recover`` are refused with ``banned`` before the password or
the code is looked at: the same answer whatever was typed, nothing spent, nothing changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection
from typing import assert_never

from server.errors import LimitReached, ServerError, StoreError
from server.game.records import PlayerRecord
from server.node.address_limits import AddressCounts
from server.node.levers import ban_message, refuse_held_address
from server.node.session import CLOSE_POLICY, CLOSE_REVOKED, Session
from server.passwords import (
    PasswordHasher,
    hash_recovery_code,
    new_recovery_codes,
    password_problem,
)
from server.protocol import (
    AccountRequest,
    DeviceInfo,
    Devices,
    ErrorCode,
    Login,
    PasswordSet,
    Recover,
    RequestId,
    Revoke,
    Sessions,
    SetPassword,
    error_message,
)
from server.store.account_records import Holder
from server.store.base import Store, name_key
from server.store.lever_records import Sanction, sanctions_of

log = logging.getLogger(__name__)

Welcome = Callable[[Session, PlayerRecord, str, int, RequestId | None], Awaitable[None]]
"""Open ``session`` as the player with this token and device, replying ``welcome``."""
Drop = Callable[[str, Collection[int]], int]
"""Close the sessions of these devices of the player here; how many were closed."""


async def identify(store: Store, *, token: str | None = None, device: int | None = None,
                   address: str | None = None) -> Holder:
    """Who ``token`` (or the session's ``device``) is now, asked from ``address``: the player,
    the device and the roles they hold now. ``ServerError`` ``bad_token`` if no player has
    it, ``token_revoked`` if it was logged out, ``banned`` (with the reason) if the player or
    the address is banned."""
    try:
        held = await store.holder(token=token, device=device, address=address, now=time.time())
    except StoreError as error:
        if error.code in (ErrorCode.BAD_TOKEN, ErrorCode.TOKEN_REVOKED):
            raise ServerError(error.message, error.code) from None
        raise
    if held.ban is not None:
        raise ServerError(ban_message(*held.ban), ErrorCode.BANNED)
    return held


def refuse_banned(sanctions: list[Sanction]) -> None:
    """``banned`` (with its reason) if one of ``sanctions`` in force is a ban."""
    for sanction in sanctions:
        if sanction.kind == "ban":
            raise ServerError(ban_message(sanction.expires, sanction.reason), ErrorCode.BANNED)


class Accounts:
    """The account requests of the sessions here (``AccountRequest``)."""

    def __init__(self, store: Store, limits: AddressCounts,
                 welcome: Welcome, drop: Drop, hasher: PasswordHasher | None = None) -> None:
        self._store = store
        self.limits = limits
        self.welcome = welcome
        self.drop = drop
        self.hasher = hasher or PasswordHasher()

    async def handle(self, session: Session, message: AccountRequest) -> None:
        if isinstance(message, Login | Recover) and session.player is not None:
            raise ServerError("this connection has said hello",
                              ErrorCode.ALREADY_AUTHENTICATED)
        try:
            await self._handle(session, message)
        except ServerError as error:
            if session.player is None or error.code not in (ErrorCode.TOKEN_REVOKED,
                                                            ErrorCode.BANNED):
                raise
            # the session's own credential no longer holds: it is told so and closed, as the
            # lever's control action would have closed it
            session.send(error_message(error, message.id))
            revoked = error.code == ErrorCode.TOKEN_REVOKED
            session.close(CLOSE_REVOKED if revoked else CLOSE_POLICY, str(error.code))

    async def _handle(self, session: Session, message: AccountRequest) -> None:
        if session.player is not None:  # the session's device and player, as they are now
            await identify(self._store, device=session.device, address=session.peer)
        if isinstance(message, Login):
            await self._login(session, message)
        elif isinstance(message, Recover):
            await self._recover(session, message)
        elif isinstance(message, SetPassword):
            await self._set_password(session, message)
        elif isinstance(message, Sessions):
            await self._devices(session, message.id)
        elif isinstance(message, Revoke):
            await self._revoke(session, message)
        else:
            assert_never(message)

    def close(self) -> None:
        self.hasher.close()

    # -- the requests ----------------------------------------------------------------------

    async def _login(self, session: Session, message: Login) -> None:
        await refuse_held_address(self._store, session.peer)  # a new device: not from there
        await self._attempt(session, message.name)
        await self._not_banned(session, message.name)
        found = await self._store.password_of(message.name)
        if not await self.hasher.verify(message.password, None if found is None else found[1]):
            raise ServerError("wrong name or password", ErrorCode.BAD_CREDENTIALS)
        assert found is not None
        issued = await self._store.add_device(found[0].name, message.device, time.time(),
                                                session.peer)
        log.info("login of %s from %s", issued.player.name, session.peer,
                 extra={"player": issued.player.name, "address": session.peer})
        await self.welcome(session, issued.player, issued.token, issued.device, message.id)

    async def _recover(self, session: Session, message: Recover) -> None:
        self._check_rule(message.password, message.name)
        await refuse_held_address(self._store, session.peer)  # a new device: not from there
        await self._attempt(session, message.name)
        await self._not_banned(session, message.name)
        password = await self.hasher.hash(message.password)  # before the check: as slow
        issued, revoked = await self._store.recover(
            message.name, hash_recovery_code(message.recovery_code), password, message.device,
            time.time(), session.peer)
        self.drop(issued.player.name, revoked)
        log.info("%s recovered with a code from %s; %d devices logged out",
                 issued.player.name, session.peer, len(revoked),
                 extra={"player": issued.player.name, "address": session.peer})
        await self.welcome(session, issued.player, issued.token, issued.device, message.id)

    async def _set_password(self, session: Session, message: SetPassword) -> None:
        assert session.player is not None
        name = session.player.name
        self._check_rule(message.password, name)
        found = await self._store.password_of(name)
        if found is not None and found[1] is not None:  # a change: the password now, first
            await self._attempt(session, name)
            if message.current is None or not await self.hasher.verify(message.current,
                                                                        found[1]):
                raise ServerError("that is not your password now (give it as `current`)",
                                  ErrorCode.BAD_CREDENTIALS)
        password = await self.hasher.hash(message.password)
        codes = new_recovery_codes()
        revoked = await self._store.set_password(
            name, password, [hash_recovery_code(code) for code in codes],
            keep=session.device, now=time.time())
        log.info("%s set a password; %d other devices logged out", name, len(revoked),
                 extra={"player": name, "address": session.peer})
        session.send(PasswordSet(recovery_codes=codes, revoked=len(revoked), ref=message.id))
        self.drop(name, revoked)

    async def _devices(self, session: Session, ref: RequestId | None,
                       revoked: int = 0) -> None:
        assert session.player is not None
        devices = await self._store.devices(session.player.name)
        session.send(Devices(devices=[
            DeviceInfo(id=d.id, label=d.label, created=d.created, last_seen=d.last_seen,
                       address=d.address, current=d.id == session.device)
            for d in devices], revoked=revoked, ref=ref))

    async def _revoke(self, session: Session, message: Revoke) -> None:
        assert session.player is not None
        name = session.player.name
        wanted = None if message.device is None else [message.device]
        revoked = await self._store.revoke(name, wanted, keep=session.device,
                                             now=time.time())
        if wanted is not None and not revoked:
            raise ServerError("you have no such device", ErrorCode.NO_SUCH_DEVICE)
        await self._devices(session, message.id, len(revoked))
        self.drop(name, revoked)

    # -- checks ----------------------------------------------------------------------------

    async def _attempt(self, session: Session, name: str) -> None:
        """Count a password attempt on ``name`` from the session's address, or refuse it."""
        wait = await self.limits.add_login_attempt(session.peer, name_key(name),
                                                   time.monotonic())
        if wait is not None:
            raise LimitReached("too many password attempts: wait before trying again",
                               ErrorCode.TOO_MANY_ATTEMPTS, wait)

    async def _not_banned(self, session: Session, name: str) -> None:
        """``banned`` if the player called ``name`` or the session's address is banned,
        whatever password or code came with it (so the answer tells nothing about them)."""
        refuse_banned(await self._store.query(sanctions_of(name, session.peer, time.time())))

    @staticmethod
    def _check_rule(password: str, name: str) -> None:
        problem = password_problem(password, name)
        if problem is not None:
            raise ServerError(problem, ErrorCode.BAD_PASSWORD)
