"""The server's life and its helpers': it listens while the engine warms up (and says so to
a computer game's players), its computer workers ignore Ctrl-C, and nothing it started outlives it,
even when it is killed with SIGKILL."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import urllib.request
from pathlib import Path

import pytest

from bench.harness import ServerProcess, descendants
from server.computer.local import ComputerPool
from server.http.app import ServerConfig, start_server
from tests.eventually import eventually
from tests.server.computer.engine_gate import gated_warm_up
from tests.server.servers import Client, connect


async def test_the_server_works_while_the_engine_warms_and_tells_the_computers_opponent(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    pool = ComputerPool(1, warm_up=functools.partial(gated_warm_up, str(gate)))
    running = await start_server(
        ServerConfig(port=0, db_path=str(tmp_path / "q.db"), computer_move_time=0.1), pool=pool
    )
    try:
        import websockets

        ann = Client(await websockets.connect(running.ws_url))
        await ann.hello("ann")
        await ann.request(t="lobby_sub")  # the lobby works with the engine still cold
        assert not running.pool.ready
        await ann.send(t="play_ai", level=1, colour="o")  # the computer moves first
        game = (await ann.expect("game"))["id"]
        preparing = await ann.expect("engine", game=game, state="preparing")
        assert 0 <= preparing["progress"] < 1 and "first start" in preparing["message"]
        assert not running.pool.ready and not [m for m in ann.seen if m["t"] == "move"]

        gate.touch()
        ready = await ann.expect("engine", game=game, state="ready")
        assert ready["progress"] == 1.0
        await ann.expect("ai_thinking", game=game, ply=0)
        move = await ann.expect("move", game=game, ply=1)
        assert move["side"] == "x"
        assert running.pool.ready
        await ann.ws.close()
    finally:
        gate.touch()
        await running.stop()


def _health(server: ServerProcess) -> dict[str, object]:
    url = server.ws_url.replace("ws://", "http://").removesuffix("/ws") + "/health"
    with urllib.request.urlopen(url, timeout=10) as reply:
        health: dict[str, object] = json.load(reply)
        return health


async def _until_engine_ready(server: ServerProcess) -> None:
    async def ready() -> bool:
        return bool((await asyncio.to_thread(_health, server))["ai_ready"])

    await eventually(ready, "the engine is ready", every=0.1)


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def _until_gone(pids: list[int], seconds: float = 30.0) -> list[int]:
    for _ in range(int(seconds * 10)):
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return []
        await asyncio.sleep(0.1)
    return left


async def test_no_process_of_a_server_killed_with_sigkill_survives_it(
    tmp_path: Path, processes: list[ServerProcess]  # noqa: F811
) -> None:
    server = ServerProcess(tmp_path / "q.db").start()
    processes.append(server)
    await _until_engine_ready(server)
    helpers = descendants(server.pid)
    assert len(helpers) >= 3  # the resource tracker, the fork server, a worker
    assert server.computer_workers()
    server.kill()
    left = await _until_gone(helpers)
    for pid in left:  # leave nothing behind for the next test, then fail
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"still running after the server died: {left}"


def sigint_pending(pid: int) -> bool:
    """A SIGINT sent to ``pid`` not yet handed to it (ignored, handled or fatal, it is no
    longer pending once the kernel has dealt with it)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    bit = 1 << (signal.SIGINT - 1)
    return any(int(line.split()[1], 16) & bit for line in status.splitlines()
               if line.startswith(("SigPnd:", "ShdPnd:")))


async def _ctrl_c(server: ServerProcess) -> str:
    """Press ^C: a terminal sends SIGINT to the whole foreground process group, the server
    and its helpers (in no set order); returns the server's log once it has exited."""
    helpers = descendants(server.pid)
    for pid in helpers:  # the helpers first, so that what they do is seen before they stop
        os.kill(pid, signal.SIGINT)
    await eventually(lambda: not any(map(sigint_pending, helpers)),
                     "every helper has been handed its SIGINT")
    os.kill(server.pid, signal.SIGINT)
    assert server.process is not None
    code = await asyncio.to_thread(server.process.wait, 60)
    log = server.log.read_text()
    assert code == 0, log
    assert await _until_gone(helpers) == []
    return log


async def test_ctrl_c_stops_an_idle_server_and_its_workers_without_a_traceback(
    tmp_path: Path, processes: list[ServerProcess]  # noqa: F811
) -> None:
    server = ServerProcess(tmp_path / "q.db").start()
    processes.append(server)
    await _until_engine_ready(server)
    log = await _ctrl_c(server)
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log


async def test_ctrl_c_while_the_workers_compile_on_a_cold_cache(
    tmp_path: Path, processes: list[ServerProcess], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))  # nothing compiled yet
    server = ServerProcess(tmp_path / "q.db").start()
    processes.append(server)
    assert (await asyncio.to_thread(_health, server))["ai_ready"] is False
    eve = await connect(server, "eve")
    # level 6: no quick move (plain Python answers levels 1-5), so the game waits for the engine
    await eve.send(t="play_ai", level=6, colour="o")
    game = (await eve.expect("game"))["id"]

    async def compiling() -> bool:  # the engine's progress, as its players are told it
        told = await eve.expect("engine", game=game, state="preparing", timeout=120)
        return 0 < told["progress"] < 1

    await eventually(compiling, "the worker has compiled part of the engine, not all")
    await eve.ws.close()
    assert (await asyncio.to_thread(_health, server))["ai_ready"] is False
    log = await _ctrl_c(server)
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
