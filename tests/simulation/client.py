"""A websocket client that follows docs/protocol.md to the letter, for the simulation.

It keeps, per game, the highest version it applied and applies a versioned event only at exactly
one more; on a gap it sends ``watch`` with ``since`` (one catch-up at a time per game), and after
two catch-ups that did not close the gap it loads the full game (the bound issue 36 asks of the
clients). It counts every frame it sends and why, so the checkers can tell a storm from a request.
What it sees that breaks the protocol's promises is handed to ``on_violation``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake

VERSIONED = {"move", "end", "offer", "presence", "chat", "takeback", "rematched", "chat_removed"}
TOLD = 12  # the last presence a game view keeps, for a finding's detail
CATCHUP_ROUNDS = 2  # catch-ups that leave a gap before the client loads the whole game


def said(reply: dict[str, Any] | None) -> str | None:
    """What a reply says in a word: its error code, else its type (None: no reply)."""
    return None if reply is None else reply.get("code") or reply["t"]


@dataclass
class GameView:
    """What one client holds of one game: built from ``game`` and applied events only."""

    variant: str
    moves: list[int]
    status: str
    you: str | None
    version: int
    online: dict[str, bool] = field(default_factory=dict)  # each seat's presence, as told
    spectators: int = 0  # how many watch, as told (``game``, then ``watching``)
    told: list[str] = field(default_factory=list)  # presence as it came: a finding shows it

    def note(self, what: str) -> None:
        self.told.append(what)
        del self.told[:-TOLD]

    @property
    def ply(self) -> int:
        return len(self.moves)

    def to_move(self) -> str:
        return "x" if self.ply % 2 == 0 else "o"


@dataclass
class Catchup:
    ref: str
    full: bool  # a watch without ``since``


@dataclass
class GapRecord:
    """A gap the client could not close with one catch-up."""

    game: str
    held: int
    wanted: int


@dataclass
class SimClient:
    """One socket of one simulated person (``label``: ``p3#2`` is player 3's second socket)."""

    label: str
    node: str
    on_violation: Callable[[str, str], None]
    documented_codes: frozenset[str]
    ws: ClientConnection | None = None
    uid: int | None = None  # the simulated player, once ``welcome`` came
    name: str | None = None
    token: str | None = None
    roles: tuple[str, ...] = ()
    views: dict[str, GameView] = field(default_factory=dict)
    gap_top: dict[str, int] = field(default_factory=dict)
    catchups: dict[str, Catchup] = field(default_factory=dict)
    failed_rounds: dict[str, int] = field(default_factory=dict)
    sent: int = 0
    sent_catchup: int = 0  # frames sent because of a gap (``watch`` with or without since)
    step_catchup: dict[str, int] = field(default_factory=dict)  # ... a game, this step
    received: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    # a tournament's new games as pushed (``game`` with ``tournament``), with when they came
    paired: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    lobby_games: dict[str, dict[str, Any]] | None = None  # after lobby_sub: the live games
    close_code: int | None = None
    expected_close: frozenset[int] = frozenset()  # codes a step said may close this socket
    last_frame_at: float = 0.0
    _waiters: dict[str, asyncio.Future[dict[str, Any] | None]] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    on_over: Callable[[str], None] | None = None  # told a game is over (the world remembers)

    # -- the socket ----------------------------------------------------------------------------

    @property
    def open(self) -> bool:
        return self.ws is not None and self.close_code is None

    async def connect(self, url: str, node: str) -> bool:
        """A new socket to ``url`` (the old one, if any, is closed first)."""
        await self.close()
        self.node = node
        self.close_code = None
        self.expected_close = frozenset()
        try:
            self.ws = await websockets.connect(url, max_size=None, open_timeout=10,
                                               close_timeout=2)
        except (OSError, InvalidHandshake, TimeoutError) as refused:
            self.on_violation("refusals.connect", f"{self.label}: cannot connect: {refused!r}")
            self.ws = None
            return False
        self._reader = asyncio.create_task(self._read(self.ws))
        return True

    async def close(self, abrupt: bool = False) -> None:
        """Close our end: a close frame, or (``abrupt``) the TCP connection dropped."""
        ws, self.ws = self.ws, None
        if ws is None:
            return
        if self.close_code is None:
            self.close_code = 1000
        if abrupt:
            ws.transport.abort()
        else:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 3)
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._reader, 3)
        self._fail_waiters()

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                self._on_frame(raw)
        except ConnectionClosed:
            pass
        finally:
            if self.ws is ws:
                code = ws.close_code if ws.close_code is not None else 1006
                self.close_code = code
                if code not in self.expected_close:
                    self.on_violation("refusals.close_as_documented",
                                      f"{self.label} closed by the server with {code} "
                                      f"({ws.close_reason!r}) after "
                                      f"{[e.get('code') for e in self.errors[-2:]]}")
                self._fail_waiters()

    def _fail_waiters(self) -> None:
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    # -- sending -------------------------------------------------------------------------------

    def next_id(self) -> str:
        return f"{self.label}.{next(self._ids)}"

    async def send(self, message: dict[str, Any]) -> None:
        if not self.open:
            return
        self.sent += 1
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(message))  # type: ignore[union-attr]

    async def send_raw(self, data: str | bytes) -> None:
        if not self.open:
            return
        self.sent += 1
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(data)  # type: ignore[union-attr]

    async def request(self, timeout: float = 8.0, **message: Any) -> dict[str, Any] | None:
        """Send and wait for the reply (the message whose ``ref`` is this request's id); None if
        the socket closed or nothing came in ``timeout``."""
        if not self.open:
            return None
        ref = self.next_id()
        message["id"] = ref
        waiter: asyncio.Future[dict[str, Any] | None] = (
            asyncio.get_running_loop().create_future())
        self._waiters[ref] = waiter
        await self.send(message)
        try:
            return await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return None
        finally:
            self._waiters.pop(ref, None)

    def _background(self, message: dict[str, Any]) -> None:
        task = asyncio.create_task(self.send(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- receiving -----------------------------------------------------------------------------

    def _on_frame(self, raw: str | bytes) -> None:
        self.last_frame_at = asyncio.get_running_loop().time()
        try:
            message = json.loads(raw)
        except ValueError:
            self.on_violation("refusals.json_frames", f"{self.label} got a frame that is not "
                                                      f"JSON: {raw[:80]!r}")
            return
        self.received.append(message)
        kind = message.get("t")
        if kind == "error":
            self.errors.append(message)
            code = message.get("code")
            if code not in self.documented_codes:
                self.on_violation("refusals.documented_code",
                                  f"{self.label} got undocumented code {code!r}: {message}")
            if code == "internal":
                self.on_violation("refusals.no_internal", f"{self.label}: {message}")
        elif kind == "welcome":
            self.name, self.token = message["name"], message["token"]
            self.roles = tuple(message.get("roles") or ())
        elif kind == "game":
            self._load(message)
            if message.get("tournament") is not None and message.get("ref") is None:
                self.paired.append((self.last_frame_at, message))
        elif kind == "lobby":
            self.lobby_games = {g["id"]: g for g in message["games"]}
        elif kind == "lobby_delta" and self.lobby_games is not None:
            for listed in message.get("games_added") or []:
                self.lobby_games[listed["id"]] = listed
            for gone in message.get("games_removed") or []:
                self.lobby_games.pop(gone, None)
        elif kind in VERSIONED and "version" in message and "game" in message:
            self._event(message)
        elif kind == "watching" and message.get("game") in self.views:
            self.views[message["game"]].spectators = message["count"]
        ref = message.get("ref")
        if ref is not None:
            self._answered(str(ref), message)

    def _answered(self, ref: str, message: dict[str, Any]) -> None:
        for game, catchup in list(self.catchups.items()):
            if catchup.ref == ref:
                del self.catchups[game]
                if message["t"] == "ack" and game in self.views:
                    self._after_catchup(game)
        waiter = self._waiters.get(ref)
        if waiter is not None and not waiter.done():
            waiter.set_result(message)

    def _load(self, message: dict[str, Any]) -> None:
        game = message["id"]
        seats = message.get("seats") or [{}, {}]
        self.views[game] = GameView(message["variant"], list(message["moves"]),
                                    message["status"], message.get("you"), message["version"],
                                    {"x": seats[0].get("online", True),
                                     "o": seats[1].get("online", True)},
                                    message.get("spectators", 0),
                                    self.views[game].told if game in self.views else [])
        self.views[game].note(f"game v{message['version']} x={seats[0].get('online')} "
                              f"o={seats[1].get('online')} ({message['status']})")
        if message["status"] == "over" and self.on_over is not None:
            self.on_over(game)
        if self.gap_top.get(game, -1) <= message["version"]:
            self.gap_top.pop(game, None)
            self.failed_rounds.pop(game, None)

    def _event(self, message: dict[str, Any]) -> None:
        game, version = message["game"], message["version"]
        view = self.views.get(game)
        if view is None:
            return  # not a game this socket follows
        if version <= view.version:
            if message["t"] == "presence":
                view.note(f"presence v{version} {message['side']}={message['online']} passed "
                          f"over (held v{view.version})")
            return  # a catch-up repeats what came live meanwhile
        if version > view.version + 1:
            self.gap_top[game] = max(self.gap_top.get(game, 0), version)
            if game not in self.catchups:
                self._catch_up(game, full=False)
            return
        self._apply(view, message)
        view.version = version
        if self.gap_top.get(game, -1) <= version:
            self.gap_top.pop(game, None)
            self.failed_rounds.pop(game, None)

    def _apply(self, view: GameView, message: dict[str, Any]) -> None:
        kind = message["t"]
        if kind == "move":
            if message["ply"] != view.ply + 1:
                self.on_violation("versions.events_agree",
                                  f"{self.label}: move of ply {message['ply']} at version "
                                  f"{message['version']} applied on ply {view.ply}")
            view.moves = view.moves[: message["ply"] - 1] + [message["cell"]]
        elif kind == "end":
            view.status = "over"
            if self.on_over is not None:
                self.on_over(message["game"])
        elif kind == "takeback":
            view.moves = view.moves[: message["ply"]]
        elif kind == "presence":
            view.online[message["side"]] = message["online"]
            view.note(f"presence v{message['version']} {message['side']}={message['online']}")

    def _after_catchup(self, game: str) -> None:
        """A catch-up ended with its ``ack``: did it close the gap?"""
        view = self.views[game]
        top = self.gap_top.get(game)
        if top is None or view.version >= top:
            return
        rounds = self.failed_rounds.get(game, 0) + 1
        self.failed_rounds[game] = rounds
        self.on_violation("versions.catchup_closes_gap",
                          f"{self.label}: watch {game} since {view.version} ended without "
                          f"version {view.version + 1} (the gap goes to {top}; round {rounds})")
        self._catch_up(game, full=rounds >= CATCHUP_ROUNDS)

    def _catch_up(self, game: str, full: bool) -> None:
        ref = self.next_id()
        self.catchups[game] = Catchup(ref, full)
        self.sent_catchup += 1
        self.step_catchup[game] = self.step_catchup.get(game, 0) + 1
        message: dict[str, Any] = {"t": "watch", "game": game, "id": ref}
        if not full:
            message["since"] = self.views[game].version
        self._background(message)

    def forget(self, game: str) -> None:
        """Stop following ``game`` (after ``unwatch``)."""
        self.views.pop(game, None)
        self.gap_top.pop(game, None)
        self.catchups.pop(game, None)
        self.failed_rounds.pop(game, None)

    def open_gaps(self) -> dict[str, tuple[int, int]]:
        """Games whose gap is still open: ``{game: (held, highest seen)}``."""
        return {game: (self.views[game].version, top) for game, top in self.gap_top.items()
                if game in self.views and self.views[game].version < top}

    def codes_since(self, start: int) -> list[str]:
        return [e.get("code", "") for e in self.errors[start:]]
