"""A small client of the bot API (docs/bots.md) and of an engine speaking the line protocol.

``BotClient`` reads the two NDJSON streams (an event a dict; keep-alive lines skipped; a
stream silent for ``SILENT`` seconds counts as dropped) and posts the bot's requests with its
bearer token. ``LineEngine`` runs an outside program once and asks it for moves:

    position <variant> <millis> <cell> <cell> ...   (to the program: the moves so far)
    <cell>                                          (from the program: its move, e.g. 2b3)

the protocol of ``bench/harness/line_engine.py``; ``quit`` ends it.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

SILENT = 30.0  # seconds without a line (the server sends one every 6 s) before a stream is dropped


class ApiRefused(Exception):
    """The server refused a request: its HTTP status and error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


class BotClient:
    """The bot API of the server at ``url`` (``http://host:port``) with ``token``."""

    def __init__(self, url: str, token: str, http: aiohttp.ClientSession) -> None:
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}
        self.http = http

    async def stream(self, path: str) -> AsyncIterator[dict[str, Any]]:
        """The events of the stream at ``path`` until it ends (raises on a refusal, and
        ``TimeoutError`` on a stream silent past ``SILENT``)."""
        async with self.http.get(self.url + path, headers=self.headers,
                                 timeout=aiohttp.ClientTimeout(total=None)) as reply:
            if reply.status != 200:
                raise await _refused(reply)
            while True:
                line = await asyncio.wait_for(reply.content.readline(), SILENT)
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)

    def events(self) -> AsyncIterator[dict[str, Any]]:
        return self.stream("/api/stream/event")

    def game(self, game_id: str) -> AsyncIterator[dict[str, Any]]:
        return self.stream(f"/api/bot/game/stream/{game_id}")

    async def post(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Post to ``path``; its answer, or ``ApiRefused``."""
        async with self.http.post(self.url + path, headers=self.headers,
                                  data=None if body is None else json.dumps(body),
                                  timeout=aiohttp.ClientTimeout(total=30)) as reply:
            if reply.status != 200:
                raise await _refused(reply)
            answer: dict[str, Any] = await reply.json()
            return answer

    async def move(self, game_id: str, cell: str, ply: int) -> None:
        await self.post(f"/api/bot/game/{game_id}/move/{cell}?ply={ply}")

    async def accept(self, challenge_id: str) -> dict[str, Any]:
        return await self.post(f"/api/challenge/{challenge_id}/accept")

    async def decline(self, challenge_id: str) -> dict[str, Any]:
        return await self.post(f"/api/challenge/{challenge_id}/decline")

    async def challenge(self, name: str, **terms: Any) -> dict[str, Any]:
        return await self.post(f"/api/challenge/{name}", terms)


async def _refused(reply: aiohttp.ClientResponse) -> ApiRefused:
    try:
        body = await reply.json(content_type=None)
    except (ValueError, aiohttp.ContentTypeError):
        body = {}
    if not isinstance(body, dict):
        body = {}
    return ApiRefused(reply.status, str(body.get("code", "")), str(body.get("message", "")))


class EngineFailed(Exception):
    """The engine said nothing (it exited) or could not be started."""


class LineEngine:
    """The program ``command`` (a shell-quoted command line), started on the first question
    and again if it exits; one question at a time."""

    def __init__(self, command: str) -> None:
        self.command = command
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def _program(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *shlex.split(self.command), stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE)
            except OSError as error:
                raise EngineFailed(f"cannot start {self.command!r}: {error}") from None
        return self._process

    async def ask(self, variant: str, millis: int, moves: str) -> str:
        """The engine's move in ``variant`` after ``moves`` (notation, space-separated),
        thinking about ``millis`` milliseconds."""
        async with self._lock:
            program = await self._program()
            assert program.stdin is not None and program.stdout is not None
            line = f"position {variant} {millis} {moves}".rstrip() + "\n"
            try:
                program.stdin.write(line.encode())
                await program.stdin.drain()
                answer = (await program.stdout.readline()).decode().strip()
            except (ConnectionError, BrokenPipeError):
                answer = ""
            if not answer:
                raise EngineFailed(f"{self.command!r} said nothing (exit code "
                                   f"{program.returncode})")
            return answer.split()[0]

    async def close(self) -> None:
        """Say ``quit`` and wait a moment for the program to end; then end it."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        assert process.stdin is not None
        try:
            process.stdin.write(b"quit\n")
            process.stdin.close()
            await asyncio.wait_for(process.wait(), 5)
        except (ConnectionError, TimeoutError):
            process.kill()
            await process.wait()
