"""The pool's quick path: while the workers compile a cold cache, a plain-Python helper answers
the moves a level makes without a compiled kernel, then the compiled engine takes over.

The gated tests hold the workers' warm-up at a gate (tests/server/engine_gate.py), so which
path answered is known without any clock: the quick path's answers are counted in
``quick_moves``, the workers' in ``jobs_done``. The last test is the real thing: a server
process on an empty ``NUMBA_CACHE_DIR``, whose worker is still compiling when the computer's
first move (level 3, the clients' default, as X) arrives.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

from engine import Board
from engine.warm import cached
from server.computer.decide import decide_move
from server.computer.local import ComputerJob, ComputerPool
from server.node.computer_turns import seed
from tests.eventually import eventually
from tests.server.computer.engine_gate import gated_warm_up

ROOT = Path(__file__).resolve().parents[3]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def test_the_quick_path_answers_while_the_workers_compile_then_hands_over(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    pool = ComputerPool(1, warm_up=functools.partial(gated_warm_up, str(gate)), quick=True)
    await pool.start(wait=False)
    try:
        first = ComputerJob("4x4x4", (), "level3", seed=5, time=1.0)
        decision = await pool.quick(first)
        assert decision is not None and not pool.ready
        assert decision.move == decide_move(first).move  # the level's own move (compiled here)
        reply = ComputerJob("4x4x4", (decision.move, 21), "level3", seed=6, time=1.0)
        second = await pool.quick(reply)
        assert second is not None and second.move in Board("4x4x4", reply.moves).legal_moves
        assert pool.quick_moves == 2 and pool.jobs_done == 0

        # level 6 searches three plies against the clock: no quick move, the game waits
        assert await pool.quick(ComputerJob("4x4x4", (), "level6", seed=5)) is None
        assert pool.quick_moves == 2

        assert pool._quick is not None
        helper = pool._quick.pid
        assert helper is not None and _alive(helper)
        gate.touch()
        await pool.wait_ready()
        # ready: the helper is gone and every move is the workers'
        await eventually(lambda: not _alive(helper), "the quick path's helper is gone")
        assert await pool.quick(reply) is None
        assert (await pool.decide(reply)).move == second.move
        assert pool.jobs_done == 1 and pool.quick_moves == 2
    finally:
        gate.touch()
        await pool.close()


async def test_a_warm_cache_starts_no_quick_path(tmp_path: Path) -> None:
    assert cached()  # the session warmed the kernels (tests/conftest.py)
    gate = tmp_path / "gate"
    pool = ComputerPool(1, warm_up=functools.partial(gated_warm_up, str(gate)))
    await pool.start(wait=False)
    try:
        assert pool._quick is None
        assert await pool.quick(ComputerJob("4x4x4", (), "level3")) is None
    finally:
        gate.touch()
        await pool.close()


async def test_a_pool_that_waits_for_its_workers_starts_no_quick_path() -> None:
    pool = ComputerPool(1, quick=True)
    await pool.start(wait=True)  # qubic worker's way: nothing is asked before it is ready
    try:
        assert pool._quick is None and pool.ready
    finally:
        await pool.close()


COLD_SERVER = r"""
import asyncio, json, sys
import websockets
from engine.warm import cached
from server.http.app import ServerConfig, start_server

async def main():
    assert not cached()  # an empty NUMBA_CACHE_DIR
    running = await start_server(ServerConfig(port=0, db_path=sys.argv[1], computer_workers=1))
    try:
        async with websockets.connect(running.ws_url) as ws:
            await ws.send(json.dumps({"t": "hello", "name": "newcomer", "id": 1}))
            await ws.send(json.dumps({"t": "play_ai", "level": 3, "colour": "o", "id": 2}))
            seen = []
            while True:
                message = json.loads(await ws.recv())
                seen.append(message["t"])
                if message["t"] == "game":
                    game = message["id"]
                if message["t"] == "move":
                    break
        print(json.dumps({"seen": seen, "game": game, "move": message["cell"],
                          "ready": running.pool.ready,
                          "quick_moves": running.pool.quick_moves,
                          "jobs_done": running.pool.jobs_done}))
    finally:
        await running.stop()

asyncio.run(main())
"""


def test_on_a_cold_cache_the_first_move_comes_from_the_quick_path(tmp_path: Path) -> None:
    cache = tmp_path / "numba"
    cache.mkdir()
    env = os.environ | {"NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", COLD_SERVER, str(tmp_path / "q.db")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # the worker was still compiling: the move is the quick path's, and no "preparing" line
    assert report["quick_moves"] == 1 and report["jobs_done"] == 0 and not report["ready"]
    assert "engine" not in report["seen"]
    # the move level 3 makes in that game (its seed is the game's), by the compiled engine here
    job = ComputerJob("4x4x4", (), "level3", seed=seed(report["game"]))
    assert report["move"] == decide_move(job).move
