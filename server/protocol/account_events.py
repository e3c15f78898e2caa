"""Server -> client: a player's devices and password, and what moderators see and do (reports,
a chat line removed)."""

from __future__ import annotations

from server.protocol.event_base import _Event, _GameEvent, _Value
from server.protocol.field_types import RequestId


class DeviceInfo(_Value):
    """One device of yours: a token given out at a first hello, a ``login`` or a ``recover``
    (``label`` as the device named itself; ``address`` it was last used from; times are Unix
    seconds). ``current``: the device of this session."""

    id: int
    label: str | None
    created: float
    last_seen: float | None
    address: str | None
    current: bool = False


class PasswordSet(_Event, tag="password_set"):
    """Your name is protected by the password just set (reply to ``set_password``).
    ``recovery_codes`` are shown this once: each opens the account once with ``recover``.
    ``revoked``: how many other devices were logged out."""

    recovery_codes: list[str]
    revoked: int = 0
    ref: RequestId | None = None


class Devices(_Event, tag="devices"):
    """Your devices, oldest first (reply to ``sessions`` and ``revoke``; ``revoked``: how many
    the ``revoke`` logged out)."""

    devices: list[DeviceInfo]
    revoked: int = 0
    ref: RequestId | None = None


class ChatRemoved(_GameEvent, tag="chat_removed"):
    """A moderator took the chat line ``line`` out of the game: remove it (not versioned,
    as the ``chat`` it removes)."""

    line: int


class ReportInfo(_Value):
    """One open report: ``by`` reported ``name`` at Unix time ``at``."""

    id: int
    at: float
    by: str
    name: str
    game: str | None
    reason: str


class ReportQueue(_Event, tag="reports"):
    """The open reports, oldest first (reply to ``reports``, for moderators)."""

    reports: list[ReportInfo]
    ref: RequestId | None = None
