"""``qubic bot --engine CMD`` (issue 43, item 3): a tiny engine, a Python program started as a
subprocess that answers the first free cell, plays whole games over the bot API against
another bot, through the bridge run as the command and in-process; the bridge follows its
streams again when the server drops them."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest_asyncio

from qubic_cli.bot import Bridge, engine_millis
from qubic_cli.bot_client import BotClient, LineEngine
from tests.eventually import eventually
from tests.server.http.test_bot_api import bot_account
from tests.server.node.test_levers import admin
from tests.server.servers import Server

FIRST_FREE = """
import sys
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    taken = set(words[3:])
    print(next(c + r for r in "1234" for c in "abcd" if c + r not in taken), flush=True)
"""
ENGINE = f"{shlex.quote(sys.executable)} -c {shlex.quote(FIRST_FREE)}"


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """A started server (as tests/server/conftest.py's)."""
    started = Server(tmp_path / "qubic.db")
    await started.start()
    yield started
    await started.stop()


def told(process: subprocess.Popen[bytes]) -> str:
    """What the bridge's process said, once it is stopped."""
    process.send_signal(signal.SIGINT)
    try:
        output, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output.decode()


async def game_of(server: Server, game_id: str) -> dict[str, Any]:
    assert server.running is not None
    async with aiohttp.ClientSession() as http, http.get(
            f"{server.running.http_url}/api/games/{game_id}") as reply:
        answer: dict[str, Any] = await reply.json()
        return answer


async def test_the_line_engine_answers_positions() -> None:
    engine = LineEngine(ENGINE)
    try:
        assert await engine.ask("4x4", 100, "") == "a1"
        assert await engine.ask("4x4", 100, "a1 b1") == "c1"
    finally:
        await engine.close()
    assert engine_millis({"x_time": None}, "x", None) == 1000
    assert engine_millis({"o_time": 60_000}, "o", {"initial": 60, "increment": 2}) == 5000
    assert engine_millis({"o_time": 100}, "o", {"initial": 60, "increment": 2}) == 50


async def test_two_bridged_engines_play_a_whole_game(server: Server, tmp_path: Path) -> None:
    """``deep`` runs as ``qubic bot`` (a process, its token in the environment); ``blue``
    runs in-process. ``blue`` challenges ``deep``, which accepts; the engines play it out."""
    deep, blue = await bot_account(server, "deep"), await bot_account(server, "blue")
    assert server.running is not None and deep.token and blue.token
    await deep.ws.close()  # online from here on through its bridge alone
    url = server.running.http_url
    command = [sys.executable, "-m", "qubic_cli", "bot", "--engine", ENGINE, "--server", url,
               "--variants", "4x4,4x4x4"]
    environment = {**os.environ, "QUBIC_BOT_TOKEN": deep.token,
                   "PYTHONPATH": str(Path(__file__).parents[2])}
    process = subprocess.Popen(command, env=environment, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    engine = LineEngine(ENGINE)
    try:
        async with aiohttp.ClientSession() as http:
            client = BotClient(url, blue.token, http)
            bridge = Bridge(client, engine, {"4x4"}, accept_rated=False)
            serving = asyncio.get_running_loop().create_task(bridge.serve())
            try:
                async def online() -> bool:
                    lobby = await blue.request(t="lobby_sub")
                    return {"deep", "blue"} <= {p["name"] for p in lobby["players"]}

                await eventually(online, timeout=60)
                sent = await client.challenge("deep", variant="4x4", colour="x")
                assert sent["challenge"]["to"] == "deep"

                async def finished() -> bool:
                    return bool(bridge.played)

                await eventually(finished, timeout=60, detail=lambda: told(process))
                game = await game_of(server, bridge.played[0])
                assert (game["x"], game["o"], game["status"]) == ("blue", "deep", "over")
                # first free cell for both: x takes a1 c1 a2 c2 ..., o b1 d1 b2 ...: the
                # board fills row by row and x completes the column a on its seventh move
                assert game["notation"].split()[:4] == ["a1", "b1", "c1", "d1"]
                assert game["result"] == "1-0" and game["reason"] == "line"
            finally:
                serving.cancel()
                await asyncio.gather(serving, return_exceptions=True)
                await bridge.close()
    finally:
        await engine.close()
        output = told(process)
    assert process.returncode == 0, output


async def test_the_bridge_follows_its_streams_again_when_they_drop(server: Server) -> None:
    """A kick closes the bot's streams (every connection of it); the bridge opens them again
    and accepts the next challenge."""
    robo = await bot_account(server)
    ann = await server.client("ann")
    assert server.running is not None and robo.token
    engine = LineEngine(ENGINE)
    async with aiohttp.ClientSession() as http:
        bridge = Bridge(BotClient(server.running.http_url, robo.token, http), engine,
                        {"4x4"}, accept_rated=False)
        serving = asyncio.get_running_loop().create_task(bridge.serve())
        try:
            async def online() -> bool:
                lobby = await ann.request(t="lobby_sub")
                return "robo" in {p["name"] for p in lobby["players"]}

            await eventually(online, timeout=30)
            assert (await admin(server, "kick", "robo", "--reason", "test"))[0] == 0
            await robo.error("kicked")
            await eventually(online, timeout=30)  # back
            await ann.send(t="challenge", name="robo", variant="4x4x4")  # not its variant
            assert (await ann.expect("challenge_gone"))["reason"] == "declined"
            await ann.send(t="challenge", name="robo", variant="4x4", colour="o")
            game = await ann.expect("game")
            assert [seat["name"] for seat in game["seats"]] == ["robo", "ann"]
            assert (await ann.expect("move", game=game["id"], ply=1))["notation"] == "a1"
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
            await bridge.close()
            await engine.close()
