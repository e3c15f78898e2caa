"""A websocket client of the game protocol for load generators: one connection and a reader
task that routes what arrives, so that thousands of bots in one process cost little each.

A request gets a fresh ``id``; its reply (by ``ref``) resolves the future it was given. A
``move`` resolves whoever waits for that (game, ply) with the time it arrived; a game's
``end`` is noted. What a benchmark counts besides (errors, game states pushed unasked,
unexpected closes) it adds by overriding the hooks :meth:`Bot.error`, :meth:`Bot.game`,
:meth:`Bot.awaited_move` and :meth:`Bot.disconnected`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgspec
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

Reply = asyncio.Future[dict[str, Any]]
MoveSeen = Callable[[dict[str, Any], float], None]


class Bot:
    """One player (or spectator) on one connection at a time; :meth:`connect` again after a
    close reconnects as the same player (its token)."""

    wait = 15.0
    """Seconds :meth:`request` waits for a reply unless told."""

    def __init__(self, name: str, on_move: MoveSeen | None = None) -> None:
        self.name = name
        self.on_move = on_move  # called with every move that arrives, and its arrival time
        self.token: str | None = None
        self.ws: ClientConnection | None = None
        self.reader: asyncio.Task[None] | None = None
        self.replies: dict[str, Reply] = {}
        self.moves: dict[tuple[str, int], asyncio.Future[float]] = {}  # (game, ply) -> arrival
        self.ended: set[str] = set()
        self.closing = False
        self._ids = 0

    @property
    def closed(self) -> bool:
        return self.reader is None or self.reader.done()

    async def connect(self, url: str) -> dict[str, Any]:
        """Open the websocket and say hello (with the token once there is one); returns the
        welcome."""
        self.closing = False
        self.ws = await websockets.connect(url, ping_interval=None, max_size=None,
                                           compression=None, open_timeout=60)
        self.reader = asyncio.get_running_loop().create_task(self._read(self.ws))
        hello = {"token": self.token} if self.token else {"name": self.name}
        welcome = await self.request(60.0, t="hello", **hello)
        if welcome["t"] != "welcome":
            raise RuntimeError(f"hello refused: {welcome}")
        self.token = welcome["token"]
        return welcome

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                now = time.monotonic()
                message = _decode(raw)
                kind = message["t"]
                if kind == "move":
                    waiter = self.moves.pop((message["game"], message["ply"]), None)
                    if waiter is not None and not waiter.done():
                        self.awaited_move(message)
                        waiter.set_result(now)
                    if self.on_move is not None:
                        self.on_move(message, now)
                elif kind == "end":
                    self.ended.add(message["game"])
                else:
                    self._received(message, now)
        except (ConnectionClosed, OSError):
            pass
        finally:
            if not self.closing:
                self.disconnected(ws.close_code)
            waiting: list[asyncio.Future[Any]] = [*self.replies.values(), *self.moves.values()]
            for waiter in waiting:
                if not waiter.done():
                    waiter.cancel()

    def _received(self, message: dict[str, Any], now: float) -> None:
        kind = message["t"]
        if kind == "error":
            self.error(message["code"], now)
        ref = message.get("ref")
        reply = self.replies.pop(ref, None) if ref is not None else None
        if kind == "game":
            reply = self.game(message, reply, now)
        if reply is not None and not reply.done():
            reply.set_result(message)

    # -- hooks ---------------------------------------------------------------------------

    def error(self, code: str, now: float) -> None:
        """An ``error`` arrived (it also answers its request, if it has a ``ref``)."""

    def game(self, message: dict[str, Any], reply: Reply | None, now: float) -> Reply | None:
        """A game's state arrived, as the answer to ``reply`` or (None) pushed unasked;
        returns the future it answers."""
        return reply

    def awaited_move(self, message: dict[str, Any]) -> None:
        """A move someone waited for arrived (before the waiter is told)."""

    def disconnected(self, code: int | None) -> None:
        """The connection closed without :meth:`close` (``code``: its close code)."""

    # -- sending -------------------------------------------------------------------------

    def prepare(self, **message: Any) -> tuple[str, Reply]:
        """Give ``message`` a fresh id; returns its frame and the future of its reply (for a
        benchmark that times the write itself, with :meth:`write`)."""
        self._ids += 1
        message["id"] = ref = f"r{self._ids}"
        reply: Reply = asyncio.get_running_loop().create_future()
        self.replies[ref] = reply
        return _encode(message).decode(), reply

    async def write(self, frame: str) -> None:
        """Send a prepared frame now."""
        assert self.ws is not None
        await self.ws.send(frame)

    def send(self, **message: Any) -> Reply:
        """Send ``message`` without waiting for the write; returns the future of its reply,
        cancelled if the connection is closed (before or after)."""
        frame, reply = self.prepare(**message)
        if self.closed or self.ws is None:
            reply.cancel()
            return reply
        task = asyncio.ensure_future(self.ws.send(frame))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return reply

    async def request(self, timeout: float | None = None, **message: Any) -> dict[str, Any]:
        """Send ``message`` and wait for its reply (``timeout`` or :attr:`wait` seconds)."""
        return await asyncio.wait_for(self.send(**message),
                                      self.wait if timeout is None else timeout)

    async def close(self) -> None:
        self.closing = True
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await self.reader
