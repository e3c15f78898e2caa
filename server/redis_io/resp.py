"""A lean connection to Redis for the bus's hot path: RESP2 over asyncio, parsed by hiredis.

The bus publishes batches and reads its subscriptions' pushes here, every complete reply handled
in the loop turn its bytes arrive in, without a task a message as redis-py's client makes
(docs/benchmarks.md, "Bus costs"); everything else stays on redis-py. A ``RespConnection`` either
sends commands (``send``: one write, a future of their replies) or, after ``subscribe_mode``,
hands every reply to a handler."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, cast

from redis.asyncio.connection import SSLConnection, parse_url

try:
    import hiredis
except ImportError:  # the cluster extra brings it; the embedded server never talks to Redis
    hiredis = None  # type: ignore[assignment]

Push = Callable[[Any], None]
"""Called with each reply on a subscribed connection (a list such as
``[b"message", channel, data]``)."""


class RespReplyError(Exception):
    """Redis answered a command with an error (``-ERR ...``, ``-NOAUTH ...``)."""


def pack(*args: bytes | str) -> bytes:
    """One command in RESP: an array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg.encode() if isinstance(arg, str) else arg
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def is_error(reply: Any) -> bool:
    """Whether a reply is Redis's error (``-ERR ...``)."""
    return isinstance(reply, hiredis.ReplyError)


class _Pending:
    """The replies still to come for one ``send``."""

    __slots__ = ("future", "replies", "count")

    def __init__(self, future: asyncio.Future[list[Any]], count: int) -> None:
        self.future = future
        self.replies: list[Any] = []
        self.count = count


class RespConnection(asyncio.Protocol):
    """One connection to Redis; open one with ``await open_connection(url, timeout)``."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._parser = hiredis.Reader()
        self._pending: deque[_Pending] = deque()
        self._push: Push | None = None
        self._transport: asyncio.Transport | None = None
        self.lost: asyncio.Future[Exception] = self._loop.create_future()
        self.last_heard = self._loop.time()  # when bytes last came from Redis

    @property
    def is_open(self) -> bool:
        return self._transport is not None and not self.lost.done()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, though not always a subclass of asyncio's (uvloop's is not).
        self._transport = cast(asyncio.Transport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)

    def data_received(self, data: bytes) -> None:
        self.last_heard = self._loop.time()
        self._parser.feed(data)
        try:
            while (reply := self._parser.gets()) is not False and not self.lost.done():
                if self._push is not None:
                    self._push(reply)
                else:
                    self._answer(reply)
        except hiredis.ProtocolError as exc:
            self._fail(ConnectionError(f"Redis sent something that is not RESP: {exc}"))

    def _answer(self, reply: Any) -> None:
        if not self._pending:
            self._fail(ConnectionError("Redis sent a reply that nothing asked for"))
            return
        pending = self._pending[0]
        pending.replies.append(reply)
        if len(pending.replies) < pending.count:
            return
        self._pending.popleft()
        if pending.future.done():  # its caller was cancelled
            return
        error = next((r for r in pending.replies if is_error(r)), None)
        if error is not None:
            pending.future.set_exception(RespReplyError(str(error)))
        else:
            pending.future.set_result(pending.replies)

    def connection_lost(self, exc: Exception | None) -> None:
        error = ConnectionError(f"lost the connection to Redis: {exc}" if exc is not None
                                else "Redis closed the connection")
        while self._pending:
            future = self._pending.popleft().future
            if not future.done():
                future.set_exception(error)
        if not self.lost.done():
            self.lost.set_result(error)

    def _fail(self, error: Exception) -> None:
        if not self.lost.done():
            self.lost.set_result(error)
        if self._transport is not None:
            self._transport.abort()  # connection_lost fails whatever waits

    def send(self, commands: Sequence[Sequence[bytes | str]]) -> asyncio.Future[list[Any]]:
        """Write ``commands`` in one write; the future gets their replies in order, or
        ``RespReplyError`` if Redis refused any, or ``ConnectionError`` if the connection
        is lost first."""
        if not self.is_open or self._push is not None:
            raise ConnectionError("the connection to Redis is closed")
        assert self._transport is not None
        future: asyncio.Future[list[Any]] = self._loop.create_future()
        self._pending.append(_Pending(future, len(commands)))
        self._transport.write(b"".join(pack(*command) for command in commands))
        return future

    def subscribe_mode(self, push: Push) -> None:
        """From now on every reply goes to ``push``; write commands with ``write``."""
        self._push = push

    def write(self, *args: bytes | str) -> None:
        """Write one command without waiting for its reply (its answer is a push)."""
        if not self.is_open:
            raise ConnectionError("the connection to Redis is closed")
        assert self._transport is not None
        self._transport.write(pack(*args))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def abort(self, why: str) -> None:
        """Give the connection up at once (a Redis that stopped answering: a close would
        wait to flush what it cannot take); whatever waits on it fails with ``why``."""
        self._fail(ConnectionError(why))


async def open_connection(url: str, timeout: float) -> RespConnection:
    """Connect to Redis at ``url`` (``redis://[user:password@]host[:port][/db]``,
    ``rediss://`` for TLS, ``unix:///path``), authenticated, within ``timeout`` seconds;
    raises ``ConnectionError``, ``OSError``, ``TimeoutError`` or ``RespReplyError``."""
    if hiredis is None:
        from server.version import install_extra

        raise ConnectionError(f"talking to Redis needs hiredis: {install_extra()}")
    options = parse_url(url)
    loop = asyncio.get_running_loop()

    async def connect() -> RespConnection:
        if "path" in options:
            _, protocol = await loop.create_unix_connection(RespConnection, options["path"])
        else:
            host = options.get("host", "localhost")
            context = None
            if options.get("connection_class") is SSLConnection:
                context = ssl.create_default_context()
            _, protocol = await loop.create_connection(
                RespConnection, host, options.get("port", 6379), ssl=context)
        password = options.get("password")
        if password is not None:
            username = options.get("username")
            auth = ("AUTH", password) if username is None else ("AUTH", username, password)
            try:
                await protocol.send([auth])
            except BaseException:
                protocol.close()
                raise
        return protocol

    return await asyncio.wait_for(connect(), timeout)
