"""How long the very first start takes: the embedded server ``qubic play`` runs, from a new
process to the lobby, to the engine ready and to the computer's first move, on a cold numba
cache (nothing compiled: a fresh clone or a new version) and on a warm one.

    .venv/bin/python bench/first_start.py --runs 3

Each run is a new Python process (so imports count) that starts the embedded server exactly
as ``qubic play`` does (``client_tui.embedded.start_embedded``), connects with a websocket,
says ``hello`` and subscribes to the lobby, then asks for a computer game with the computer
moving first. A cold run points ``NUMBA_CACHE_DIR`` at a new empty directory; a warm run
reuses the directory a cold run filled. Reported: medians of the seconds from process start
to the lobby (target < 3 s, also cold), to the engine ready, and to the computer's first move.
Before the engine warmed in the background, the lobby came only after the engine was ready.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


async def _child(started: float, data_dir: str) -> dict[str, float]:
    """One first start, timed from ``started`` (the parent's clock just before the spawn)."""
    import websockets

    import client_tui.app  # noqa: F401  (the terminal client's imports, as qubic play pays them)
    from qubic_cli.embedded import start_embedded

    server = await start_embedded(Path(data_dir) / "qubic.db")
    try:
        async with websockets.connect(server.ws_url) as ws:
            await ws.send(json.dumps({"t": "hello", "name": "bench", "id": 1}))
            await ws.send(json.dumps({"t": "lobby_sub", "id": 2}))
            while json.loads(await ws.recv())["t"] != "lobby":
                pass
            lobby = time.time() - started
            await ws.send(json.dumps({"t": "play_ai", "level": 8, "colour": "o", "id": 3}))
            ready = None
            while True:
                message = json.loads(await ws.recv())
                if message["t"] == "engine" and message["state"] == "ready":
                    ready = time.time() - started
                if message["t"] == "move":
                    first_move = time.time() - started
                    break
    finally:
        await server.stop()
    return {"lobby": lobby, "engine_ready": ready if ready is not None else lobby,
            "first_move": first_move}


def run_once(cache_dir: Path) -> dict[str, float]:
    env = os.environ | {"NUMBA_CACHE_DIR": str(cache_dir)}
    with tempfile.TemporaryDirectory() as data:
        started = time.time()
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(started), data],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True,
        )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="cold and warm runs each")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child(float(args.child[0]), args.child[1]))))
        return
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as caches:
        for run in range(args.runs):
            cache = Path(caches) / f"cache{run}"
            cold.append(run_once(cache))  # an empty cache: everything compiles
            warm.append(run_once(cache))  # the cache the cold run filled
            print(f"run {run + 1}: cold {cold[-1]}, warm {warm[-1]}", flush=True)
    print("\n| cache | runs | to the lobby | engine ready | computer's first move |")
    print("|---|---|---|---|---|")
    for name, results in (("cold", cold), ("warm", warm)):
        med = {k: statistics.median(r[k] for r in results) for k in results[0]}
        print(f"| {name} | {len(results)} | {med['lobby']:.2f} s | {med['engine_ready']:.2f} s "
              f"| {med['first_move']:.2f} s |")


if __name__ == "__main__":
    main()
