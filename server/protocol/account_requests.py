"""Client -> server: a player's password and devices, and the host's levers: reports from
anyone and the moderators' actions (docs/admin.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec

from server.errors import ProtocolError
from server.protocol.field_types import (
    DeviceId,
    DeviceLabel,
    GameId,
    Name,
    NewPassword,
    Password,
    RecoveryCode,
    Version,
    has_control_characters,
    text_fault,
)
from server.protocol.request_base import _Request

# -- passwords and devices --------------------------------------------------------------------


class _Secret(_Request):
    """A request that carries a password or a recovery code: its repr leaves them out, so no
    log line can hold one."""

    def __repr__(self) -> str:
        secret = {"password", "current", "recovery_code"}
        shown = ", ".join(f"{field}={'***' if field in secret else repr(getattr(self, field))}"
                          for field in self.__struct_fields__)
        return f"{type(self).__name__}({shown})"


class _SettingPassword(_Secret):
    """A request that sets a new ``password``: the password rule beyond its length holds. Each
    request declares ``password`` itself, where it stands among its fields."""

    if TYPE_CHECKING:
        password: str

    def __post_init__(self) -> None:
        _check_password(self.password)


class SetPassword(_SettingPassword, tag="set_password"):
    """Protect your name with ``password`` (or change it: then ``current`` is the one now set).
    The reply, ``password_set``, carries new recovery codes; every other device is logged
    out."""

    password: NewPassword
    current: Password | None = None


class Login(_Secret, tag="login"):
    """Open the session as ``name`` by its password, from any device: the reply is a
    ``welcome`` with a new token for this device (``device`` labels it in ``sessions``)."""

    name: Name
    password: Password
    device: DeviceLabel | None = None


class Recover(_SettingPassword, tag="recover"):
    """Lost the password: a recovery code (each works once) sets ``password`` and opens the
    session as ``login`` does; every other device is logged out."""

    name: Name
    recovery_code: RecoveryCode
    password: NewPassword
    device: DeviceLabel | None = None


class Sessions(_Request, tag="sessions"):
    """List your devices (each token given out): the reply is ``devices``."""


class Revoke(_Request, tag="revoke"):
    """Log a device out (``device``, an id from ``devices``) or every device but this one
    (``others``); the reply is ``devices`` again."""

    device: DeviceId | None = None
    others: bool = False

    def __post_init__(self) -> None:
        if (self.device is None) == (not self.others):
            raise ProtocolError("revoke needs either a `device` or `others: true`",
                                "bad_message")


def _check_password(password: str) -> None:
    """The password rule beyond its length: no control characters, not only spaces."""
    if has_control_characters(password) or not password.strip():
        raise ProtocolError("a password may not hold control characters or be only spaces",
                            "bad_password")


AccountRequest = SetPassword | Login | Recover | Sessions | Revoke
"""The requests about who a player is: passwords, devices and their tokens."""

# -- reports and moderation -------------------------------------------------------------------

Why = Annotated[str, msgspec.Meta(max_length=300)]
Minutes = Annotated[int, msgspec.Meta(ge=1, le=10 * 366 * 24 * 60)]


class _Moderation(_Request):
    """A request whose free text (``reason``) is checked like chat."""

    def __post_init__(self) -> None:
        reason = getattr(self, "reason", "")
        fault = text_fault(reason) if reason else None
        if fault is not None:
            raise ProtocolError(f"`reason` may not hold {fault}", "bad_message")


class ReportPlayer(_Moderation, tag="report"):
    """Report the player ``name`` to the moderators (about ``game``, if given)."""

    name: Name
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    game: GameId | None = None


class ListReports(_Moderation, tag="reports"):
    """Moderators: the open reports, oldest first (the reply is ``reports``)."""


class ResolveReport(_Moderation, tag="resolve_report"):
    """Moderators: close a report, having acted on it or not."""

    report: Annotated[int, msgspec.Meta(ge=1)]
    reason: Why = ""


class RemoveChat(_Moderation, tag="remove_chat"):
    """Moderators: take the chat line ``line`` (its ``chat``'s number) out of the game, on
    every screen."""

    game: GameId
    line: Version
    reason: Why = ""


class MutePlayer(_Moderation, tag="mute"):
    """Moderators: refuse the player's chat for ``minutes`` (none: until unmuted)."""

    name: Name
    minutes: Minutes | None = None
    reason: Why = ""


class UnmutePlayer(_Moderation, tag="unmute"):
    name: Name
    reason: Why = ""


class KickPlayer(_Moderation, tag="kick"):
    """Moderators: close the player's connections on every node (they may come back)."""

    name: Name
    reason: Why = ""


class BanPlayer(_Moderation, tag="ban"):
    """Moderators: close the player's connections and refuse them for ``minutes`` (none:
    until unbanned)."""

    name: Name
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    minutes: Minutes | None = None


class UnbanPlayer(_Moderation, tag="unban"):
    name: Name
    reason: Why = ""


ModerationRequest = (
    ReportPlayer | ListReports | ResolveReport | RemoveChat | MutePlayer | UnmutePlayer
    | KickPlayer | BanPlayer | UnbanPlayer
)  # fmt: skip
"""A report (any player) and the moderators' actions, carried out by ``server.node.moderation``."""
