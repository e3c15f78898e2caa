"""The accounts' records and the store's interface for them (part of ``Store``), apart from
their SQL (``server.store.accounts``) so that ``server.store.base`` can name them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.game.records import PlayerRecord


@dataclass(frozen=True)
class DeviceRecord:
    """One token given out: ``label`` as the device named itself, ``address`` it was last
    used from, times in Unix seconds; ``revoked`` is when it was logged out, or None."""

    id: int
    label: str | None
    created: float
    last_seen: float | None
    address: str | None
    revoked: float | None = None


@dataclass(frozen=True)
class Opened:
    """A session opened by a token: the player, and the device the token is."""

    player: PlayerRecord
    device: int


@dataclass(frozen=True)
class Issued(Opened):
    """A token given out: the session it opens (the player, the new device) and the plain
    token (never stored)."""

    token: str


@dataclass(frozen=True)
class Holder:
    """Who a credential (a token, or a session's device) is, as the store finds it now: the
    player, the device, the player's roles, and the ban in force on the player or on the
    address asked about (its expiry, None: none; and its reason), or None."""

    player: PlayerRecord
    device: int
    roles: frozenset[str]
    ban: tuple[float | None, str] | None = None


class AccountStore(Protocol):
    """What the server asks the store about accounts (part of ``Store``)."""

    async def register(self, name: str, now: float, address: str | None = None) -> Issued:
        """A new player called ``name`` with its first device (``name_taken`` as
        ``create_player``)."""
        ...

    async def open_session(self, token: str, name: str | None, now: float,
                           address: str | None = None) -> Opened:
        """The player and device of ``token``, its use noted; ``StoreError`` ``bad_token``
        or ``token_revoked``."""
        ...

    async def holder(self, *, token: str | None = None, device: int | None = None,
                     address: str | None = None, now: float) -> Holder:
        """Who the ``token`` (or the ``device``, by its id) is now: ``StoreError``
        ``bad_token`` if no player has it, ``token_revoked`` if it was logged out; with the
        player's roles and the ban in force on them or on ``address``, if any."""
        ...

    async def password_of(self, name: str) -> tuple[PlayerRecord, str | None] | None:
        """The player called ``name`` and their password hash, or None if there is none."""
        ...

    async def add_device(self, name: str, label: str | None, now: float,
                         address: str | None = None) -> Issued:
        """A new device and token for the player ``name``."""
        ...

    async def devices(self, name: str) -> list[DeviceRecord]:
        """``name``'s devices not logged out, oldest first."""
        ...

    async def revoke(self, name: str, devices: Sequence[int] | None, *, keep: int | None,
                     now: float) -> list[int]:
        """Log out ``devices`` of ``name`` (None: all but ``keep``); returns those logged out.
        With ``keep``, that device must still be logged in (``token_revoked``): a session
        logged out cannot log out the others."""
        ...

    async def set_password(self, name: str, password: str | None, codes: Sequence[bytes], *,
                           keep: int | None, now: float,
                           control: Callable[[list[int]], str] | None = None,
                           audit: Any = None) -> list[int]:
        """Set the password hash and recovery codes; log out every device but ``keep`` (which
        must still be logged in: ``token_revoked``). In the same transaction, ``audit`` (an
        ``AuditEntry``) is logged and ``control(logged_out)``, the action that closes their
        connections on every node, is added (``server.node.control``)."""
        ...

    async def recover(self, name: str, code: bytes, password: str, label: str | None,
                      now: float, address: str | None = None) -> tuple[Issued, list[int]]:
        """Spend a recovery code: new password, every device out, a new device."""
        ...

    async def recovery_codes_left(self, name: str) -> int:
        """How many of ``name``'s recovery codes are unused."""
        ...
