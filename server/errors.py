"""The server's exceptions.

    ServerError                       root of everything the server raises on purpose
     ├── ProtocolError (ValueError)   a frame or message that breaks the wire protocol
     ├── RoomError (ValueError)       a request a game room refuses (turn, seat, clock, ...)
     │    └── ClaimTooEarly           a claim before the grace period ran out (``retry_in``)
     ├── LimitReached                 too many frames, connections or new players (``retry_in``)
     ├── MatchmakingError (ValueError) a seek, pairing or private code that cannot be used
     └── StoreError (RuntimeError)    the database cannot be opened, read or written

Every refusal carries a stable ``code`` (see ``server.protocol.ErrorCode``) that goes to the
client in an ``error`` message.
"""

from __future__ import annotations


class ServerError(Exception):
    """Root of the server's exceptions; ``code`` is the stable error code sent to clients."""

    code: str = "internal"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self)


class ProtocolError(ServerError, ValueError):
    """A frame or message that breaks the wire protocol; ``ref`` is its request id, if the
    frame was readable enough to have one."""

    code = "bad_message"
    ref: str | int | None = None


class RoomError(ServerError, ValueError):
    """A request a game room refuses."""

    code = "not_allowed"


class MatchmakingError(ServerError, ValueError):
    """A seek, pairing or private code that cannot be used."""

    code = "not_allowed"


class StoreError(ServerError, RuntimeError):
    """The database cannot be opened, read or written."""

    code = "store_unavailable"


class ClaimTooEarly(RoomError):
    """A claim of victory before the opponent's grace period has run out."""

    code = "claim_too_early"

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class LimitReached(ServerError):
    """A limit on frames, connections or new players was reached; ``retry_in`` is the seconds
    until one more is allowed, or None when waiting alone does not help."""

    code = "rate_limited"

    def __init__(self, message: str, code: str | None = None,
                 retry_in: float | None = None) -> None:
        super().__init__(message, code)
        self.retry_in = retry_in


class BusError(ServerError, ConnectionError):
    """The bus cannot carry a message now (Redis unreachable) or has been closed."""

    code = "unavailable"  # ErrorCode.UNAVAILABLE, should a client be told
