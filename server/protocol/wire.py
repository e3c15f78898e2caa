"""Encoding and decoding frames: one decoder per direction, validation errors mapped to codes."""

from __future__ import annotations

import logging
import re
import time
from typing import Any, TypeVar

import msgspec

from server.errors import ProtocolError, ServerError
from server.protocol.codes import MAX_FRAME_BYTES, ErrorCode
from server.protocol.events import Error, ServerMessage
from server.protocol.field_types import RequestId
from server.protocol.requests import ClientMessage

# -- encoding and decoding --------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_client_decoder = msgspec.json.Decoder(ClientMessage)
_server_decoder = msgspec.json.Decoder(ServerMessage)
_AT_PATH = re.compile(r" - at `\$((?:\.\w+|\[\d+\])*)`$")
_CODE_BY_FIELD = {
    "t": ErrorCode.UNKNOWN_TYPE,
    "name": ErrorCode.BAD_NAME,
    "token": ErrorCode.BAD_TOKEN,
    "text": ErrorCode.BAD_CHAT,
    "cell": ErrorCode.BAD_CELL,
    "level": ErrorCode.BAD_LEVEL,
    "computer_levels": ErrorCode.BAD_LEVEL,
    "variant": ErrorCode.BAD_VARIANT,
    "clock": ErrorCode.BAD_CLOCK,
    "password": ErrorCode.BAD_PASSWORD,
    "current": ErrorCode.BAD_PASSWORD,
}
M = TypeVar("M")


def encode(message: msgspec.Struct) -> bytes:
    """The JSON frame of a message."""
    return _encoder.encode(message)


def decode_client_message(data: bytes | str) -> ClientMessage:
    """The client request in one text frame; raises ``ProtocolError`` with a stable code."""
    return _decode(_client_decoder, data, MAX_FRAME_BYTES)


def decode_server_message(data: bytes | str) -> ServerMessage:
    """The server message in one frame (for clients and tests); raises ``ProtocolError``.
    No size limit here: ``MAX_FRAME_BYTES`` bounds what clients send, and the server's
    replies (a long game's review, a page of games) may be larger; a client bounds what it
    reads at its websocket."""
    return _decode(_server_decoder, data, None)


def _decode(decoder: msgspec.json.Decoder[M], data: bytes | str, limit: int | None) -> M:
    try:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        raw.decode()  # msgspec would raise UnicodeDecodeError itself, inside strings only
    except UnicodeError:
        raise ProtocolError("the frame is not valid UTF-8", ErrorCode.BAD_UTF8) from None
    if limit is not None and len(raw) > limit:
        raise ProtocolError(
            f"the frame has {len(raw)} bytes; at most {limit}",
            ErrorCode.FRAME_TOO_LARGE,
        )
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as error:
        refused = error.__cause__ if isinstance(error.__cause__, ProtocolError) else None
        refused = refused or _validation_error(str(error))
        refused.ref = readable_id(raw)
        raise refused from None
    except msgspec.DecodeError as error:
        raise ProtocolError(f"not JSON: {error}", ErrorCode.BAD_JSON) from None
    except RecursionError:  # msgspec's guard against deep nesting (no message nests so deep)
        raise ProtocolError("not JSON this server reads: nested too deep",
                            ErrorCode.BAD_JSON) from None


class _OnlyId(msgspec.Struct, gc=False):
    id: RequestId | None = None


def readable_id(raw: bytes | str) -> RequestId | None:
    """The request's ``id`` when the frame is an object whose ``id`` is valid, else None, so
    a refusal of an otherwise bad message still says which request it answers."""
    try:
        return msgspec.json.decode(raw, type=_OnlyId).id
    except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None


def _validation_error(text: str) -> ProtocolError:
    """A ProtocolError whose code names the offending field when it has its own code."""
    if text.startswith("Expected `object`"):
        return ProtocolError(f"a message is a JSON object: {text}", ErrorCode.BAD_MESSAGE)
    if text == "Object missing required field `t`" or text.endswith("- at `$.t`"):
        return ProtocolError(f"no such message type: {text}", ErrorCode.UNKNOWN_TYPE)
    match = _AT_PATH.search(text)
    for field in re.findall(r"\.(\w+)", match[1]) if match else []:
        if field in _CODE_BY_FIELD:
            return ProtocolError(f"bad `{field}`: {text}", _CODE_BY_FIELD[field])
    return ProtocolError(text, ErrorCode.BAD_MESSAGE)


PUBLIC_MESSAGES = {
    "store_unavailable": "The server cannot use its database just now; what it acknowledged is "
                         "kept. Try again in a moment.",
    "internal": "The server failed to answer that request; the game goes on. Try again.",
}
"""What a client is told for the refusals whose own text is for the host: it may name a path,
a host or SQL (``cannot write to the database /srv/...: disk full``). The host reads the
detail in the server's log."""

STORE_RETRY_IN = 5.0
"""Seconds a client is told to wait after ``store_unavailable`` (the readiness check tries a
write of its own as often as a balancer asks, so a store that can write again is soon found)."""

LOG_QUIET = 60.0
"""A refusal logged for the host is logged once (a warning) for a run of them, and again only
after this many seconds without one: one warning per outage, not one per refused move."""

_log = logging.getLogger("server.errors")
_quiet_until: dict[str, float] = {}


def error_message(error: ServerError, ref: RequestId | None = None) -> Error:
    """The ``error`` message reporting ``error`` (``retry_in`` is copied when it has one;
    ``store_unavailable`` always has one); a refusal whose text is for the host
    (``PUBLIC_MESSAGES``) is logged, a warning for the first of a run (``LOG_QUIET``), and
    the client gets words that name nothing of the server."""
    retry_in: Any = getattr(error, "retry_in", None)
    code = str(error.code)
    if retry_in is None and code == ErrorCode.STORE_UNAVAILABLE:
        retry_in = STORE_RETRY_IN
    message = PUBLIC_MESSAGES.get(code)
    if message is None:
        message = error.message
    else:
        now = time.monotonic()
        if now >= _quiet_until.get(code, 0.0):
            _log.warning("refused with %s: %s (more of these are logged at debug level until "
                         "%.0f s pass without one; /metrics counts them)", code, error.message,
                         LOG_QUIET)
        else:
            _log.debug("refused with %s: %s", code, error.message)
        _quiet_until[code] = now + LOG_QUIET
    return Error(code=code, message=message, ref=ref, retry_in=retry_in)


def with_ref(message: M, ref: RequestId | None) -> M:
    """A copy of a reply message echoing the request's ``id`` as its ``ref``."""
    return msgspec.structs.replace(message, ref=ref)  # type: ignore[type-var]
