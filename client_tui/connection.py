"""The client's websocket session: connect, ``hello``, read, send, and reconnect with backoff.

``ServerLink.run`` is the whole network loop; the app runs it in one exclusive worker and
hears about everything through the ``on_event`` callback, as ``LinkEvent`` values:

    Connecting -> Connected(welcome) -> Received(message)* -> Dropped -> Connecting -> ...
    Connecting -> Unreachable            (the first connection failed: stop)
    Connecting -> Refused(code)          (hello refused: name taken, bad token, ...: stop)
    ... Received* -> Refused(token_revoked)  (this device was logged out: closed with 4001, stop)

After a drop the link reconnects by itself with exponential backoff and says ``hello`` with
the token it was given, so the same player comes back; catching up on games is the app's
part (``watch{game, since}`` on ``Connected``). No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

import websockets
from websockets.asyncio.client import ClientConnection, connect

from server.errors import ProtocolError
from server.protocol import (
    ClientMessage,
    Error,
    Hello,
    Login,
    Recover,
    ServerMessage,
    Welcome,
    decode_server_message,
    encode,
)

OPEN_TIMEOUT = 10.0  # seconds to open the websocket and be welcomed
CLOSE_REVOKED = 4001
"""The close code of a device logged out (``revoke``, a password change, a recovery:
docs/protocol.md): its token is dead, so reconnecting with it can only be refused."""
MAX_INCOMING_BYTES = 4 * 2**20
"""The largest frame the client reads from the server. The server's 8 KiB (``MAX_FRAME_BYTES``)
bounds what a client *sends*; the server's own replies are larger: a 64-ply game's review
(each move with its best moves and a line) comes to about 50 KB, a game with its 50 chat lines
about 100 KB, a page of 50 games with their moves about 20 KB, the lobby with 200 players and
its games more. 4 MiB holds every one of them many times over."""


# -- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Connecting:
    url: str
    attempt: int  # 1 for the first connection, then counts the tries of one reconnection


@dataclass(frozen=True)
class Connected:
    welcome: Welcome
    reconnected: bool  # True after a drop: the app should catch up on its games


@dataclass(frozen=True)
class Received:
    message: ServerMessage


@dataclass(frozen=True)
class Dropped:
    reason: str
    retry_in: float  # seconds until the next attempt
    first: bool = True  # False for a failed attempt to reconnect


@dataclass(frozen=True)
class Unreachable:
    reason: str  # the first connection failed; the link stops


@dataclass(frozen=True)
class Refused:
    code: str  # the server refused hello (``name_taken``, ``bad_token``, ...); the link stops
    message: str


LinkEvent = Connecting | Connected | Received | Dropped | Unreachable | Refused


class _HelloRefused(Exception):
    def __init__(self, error: Error) -> None:
        super().__init__(error.message)
        self.error = error


# -- backoff ---------------------------------------------------------------------------------


@dataclass
class Backoff:
    """Delays between reconnection attempts: doubling from ``first`` up to ``most``, jittered."""

    first: float = 0.5
    most: float = 10.0
    jitter: float = 0.2

    def delay(self, attempt: int) -> float:
        """The wait before reconnection attempt ``attempt`` (1, 2, ...)."""
        base = min(self.most, self.first * 2 ** max(0, attempt - 1))
        return base * (1 - self.jitter * random.random())


# -- the link --------------------------------------------------------------------------------


class ServerLink:
    """One player's session with one server, kept up across drops."""

    def __init__(
        self,
        url: str,
        on_event: Callable[[LinkEvent], None],
        *,
        name: str | None = None,
        token: str | None = None,
        backoff: Backoff | None = None,
        opening: Login | Recover | None = None,
    ) -> None:
        if name is None and token is None:
            raise ValueError("a link needs a name or a token")
        self.url = url
        self.name = name
        self.token = token
        self.opening = opening  # a login or recover to open the first session with (not hello)
        self._on_event = on_event
        self._backoff = backoff or Backoff()
        self._outbox: asyncio.Queue[ClientMessage] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        self._welcomed = False
        self._closing = False

    @property
    def connected(self) -> bool:
        """Whether the session is open (welcomed) right now."""
        return self._ws is not None and self._welcomed

    def send(self, message: ClientMessage) -> bool:
        """Queue ``message`` for the server; False (and dropped) while not connected."""
        if not self.connected:
            return False
        self._outbox.put_nowait(message)
        return True

    def drop(self) -> None:
        """Cut the connection as a network failure would (the link then reconnects)."""
        if self._ws is not None and self._ws.transport is not None:
            self._ws.transport.abort()

    async def close(self) -> None:
        """End the session for good."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()

    async def run(self) -> None:
        """Connect and serve until closed, refused, or the first connection fails."""
        ever_welcomed = False
        failures = 0  # failed attempts since the last welcome
        while not self._closing:
            self._emit(Connecting(self.url, failures + 1))
            try:
                await self._session(reconnected=ever_welcomed)
                reason = "the server closed the connection"
            except _HelloRefused as refused:
                self._emit(Refused(refused.error.code, refused.error.message))
                return
            except websockets.ConnectionClosed as error:
                if error.rcvd is not None and error.rcvd.code == CLOSE_REVOKED:
                    self._emit(Refused("token_revoked", error.rcvd.reason))
                    return
                reason = _describe(error)
            except (OSError, TimeoutError, websockets.WebSocketException) as error:
                reason = _describe(error)
            finally:
                if self._welcomed:
                    ever_welcomed = True
                    failures = 0
                self._ws = None
                self._welcomed = False
                self._outbox = asyncio.Queue()
            if self._closing:
                return
            if not ever_welcomed:
                self._emit(Unreachable(f"cannot reach {self.url}: {reason}"))
                return
            failures += 1
            wait = self._backoff.delay(failures)
            self._emit(Dropped(reason, wait, first=failures == 1))
            await asyncio.sleep(wait)

    async def _session(self, reconnected: bool) -> None:
        async with connect(
            self.url, open_timeout=OPEN_TIMEOUT, max_size=MAX_INCOMING_BYTES, proxy=None
        ) as ws:
            self._ws = ws
            welcome = await asyncio.wait_for(self._hello(ws), OPEN_TIMEOUT)
            self.token = welcome.token
            self.name = welcome.name
            self.opening = None  # from now on the new token
            self._welcomed = True
            self._emit(Connected(welcome, reconnected))
            writer = asyncio.create_task(self._write(ws))
            try:
                async for frame in ws:
                    message = _decode(frame)
                    if message is not None:
                        self._emit(Received(message))
            finally:
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer

    async def _hello(self, ws: ClientConnection) -> Welcome:
        hello: Hello | Login | Recover = (Hello(token=self.token) if self.token
                                          else Hello(name=self.name))
        if self.opening is not None:
            hello = self.opening
        await ws.send(encode(hello).decode())
        while True:
            message = _decode(await ws.recv())
            if isinstance(message, Welcome):
                return message
            if isinstance(message, Error):
                raise _HelloRefused(message)

    async def _write(self, ws: ClientConnection) -> None:
        while True:
            message = await self._outbox.get()
            await ws.send(encode(message).decode())

    def _emit(self, event: LinkEvent) -> None:
        self._on_event(event)


def _decode(frame: str | bytes) -> ServerMessage | None:
    """The server's message in ``frame``, or None for one this client does not read (a type
    from a newer server). Its size is bounded by the websocket (``MAX_INCOMING_BYTES``)."""
    try:
        return decode_server_message(frame)
    except ProtocolError:
        return None  # a message type from a newer server: ignore it


def _describe(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, websockets.InvalidStatus):
        return f"the server answered HTTP {error.response.status_code} (is the path /ws?)"
    if isinstance(error, websockets.InvalidURI):
        return f"not a websocket URL ({error})"
    if isinstance(error, websockets.ConnectionClosed):
        return "the connection was lost"
    return str(error) or type(error).__name__


# -- the leaderboard over HTTP ---------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardRow:
    name: str
    rating: int
    bot: bool = False  # a program plays the account


def http_base(ws_url: str) -> str:
    """The HTTP root of the server a websocket URL points at (``ws://h:p/ws`` -> ``http://h:p``)."""
    scheme, sep, rest = ws_url.partition("://")
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme)
    rest = rest.rstrip("/")
    if rest.endswith("/ws"):
        rest = rest[: -len("/ws")]
    return f"{scheme}{sep}{rest}"


def fetch_leaderboard(base: str, timeout: float = 5.0) -> list[LeaderboardRow]:
    """GET ``/api/leaderboard`` (blocking: run it in a thread)."""
    with urllib.request.urlopen(f"{base}/api/leaderboard", timeout=timeout) as response:
        data = json.loads(response.read().decode("utf-8"))
    return parse_leaderboard(data)


def parse_leaderboard(data: object) -> list[LeaderboardRow]:
    """The rows of a leaderboard answer: a list of players, or an object holding one."""
    if isinstance(data, dict):
        data = next((v for k, v in data.items() if isinstance(v, list)), [])
    rows = []
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            rating = entry.get("rating")
            rows.append(LeaderboardRow(entry["name"], round(rating) if rating else 0,
                                       entry.get("bot") is True))
    return rows


def server_url(text: str) -> str:
    """A server given loosely (``host:port``, ``http://host:port``) as its websocket URL."""
    text = text.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "ws", text
    scheme = {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme.lower())
    if scheme not in ("ws", "wss") or not rest or rest.startswith("/"):
        raise ValueError(f"{text!r} is not a server address: write ws://HOST:PORT/ws")
    if "/" not in rest:
        rest += "/ws"
    return f"{scheme}://{rest}"
