"""The computer's first move on a cold numba cache, as a newcomer meets it: from a fresh clone.

    .venv/bin/python bench/first_move.py --runs 3 [--ref HEAD] [--level N]

For each run and each colour the computer can play: ``git clone`` this repository (at
``--ref``) into a new temporary directory, point ``NUMBA_CACHE_DIR`` at a new empty
directory (so neither the clone's nor anyone's ``__pycache__`` holds a compiled kernel), and
in a new Python process that imports the clone's code start the embedded server as
``qubic play`` does (``qubic_cli.embedded.start_embedded``), then connect with a websocket,
say ``hello`` and ask for a game against the computer at the terminal client's default level
(``client_tui.settings.GameOptions().level``). Timed: with the computer as X, from the
``game`` message (the game's start) to the computer's first ``move``; with the computer as O,
from sending the player's first move (``2b2``, the cell a newcomer's cursor starts near) to
the computer's reply. The interpreter and its packages are this one's (``sys.executable``):
what is fresh is the source, its bytecode and numba's cache. Reported: the median of the
runs per colour, whether the move came from the quick path (``ComputerPool.quick_moves``;
None for a ref without it) and whether an ``engine`` "preparing" line was shown first.

Each run's server stops right after the move (its worker, still compiling, is killed), so a
run costs a few seconds of CPU with the quick path, and the whole compile without it. Run it
under the shared lock: ``flock /tmp/qubic-heavy.lock .venv/bin/python bench/first_move.py``.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLAYER_FIRST = "2b2"  # the player's first move when the computer plays O


async def _child(data_dir: str, computer: str, level: int | None) -> dict[str, Any]:
    """One game's first computer move against a new embedded server (run in the clone)."""
    import websockets

    import client_tui.app  # noqa: F401  (the terminal client's imports, as qubic play pays them)
    from client_tui.settings import GameOptions
    from qubic_cli.embedded import start_embedded

    level = level or GameOptions().level
    server: Any = await start_embedded(Path(data_dir) / "qubic.db")  # a RunningServer
    preparing = False
    try:
        async with websockets.connect(server.ws_url) as ws:
            await ws.send(json.dumps({"t": "hello", "name": "newcomer", "id": 1}))
            colour = "o" if computer == "x" else "x"
            await ws.send(json.dumps({"t": "play_ai", "level": level, "colour": colour,
                                      "id": 2}))
            while True:
                message = json.loads(await ws.recv())
                if message["t"] == "game":
                    game = message["id"]
                    started = time.perf_counter()
                    break
            if computer == "o":
                await ws.send(json.dumps({"t": "move", "game": game, "cell": PLAYER_FIRST,
                                          "ply": 0, "id": 3}))
                started = time.perf_counter()
            wanted_side = computer
            while True:
                message = json.loads(await ws.recv())
                if message["t"] == "engine" and message["state"] == "preparing":
                    preparing = True
                if message["t"] == "move" and message["side"] == wanted_side:
                    seconds = time.perf_counter() - started
                    cell = message["notation"]
                    break
        quick = getattr(server.pool, "quick_moves", None)
        ready = bool(server.pool.ready)
    finally:
        await server.stop()
    return {"seconds": seconds, "cell": cell, "quick": quick, "preparing": preparing,
            "engine_ready": ready, "level": level}


def run_once(ref: str, computer: str, level: int | None) -> dict[str, Any]:
    """A fresh clone, an empty numba cache, a new process: one first computer move."""
    with tempfile.TemporaryDirectory(prefix="qubic-first-move-") as scratch:
        clone, cache, data = (Path(scratch) / name for name in ("clone", "numba", "data"))
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)],
                       check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", ref], check=True)
        cache.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "QUBIC_"))}
        env |= {"NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(clone),
                "XDG_DATA_HOME": str(data)}
        # this script (a ref from before it existed can be measured too), the clone's code
        argv = [sys.executable, __file__, "--child", str(data), computer]
        if level:
            argv += ["--level", str(level)]
        out = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True,
                             timeout=900)
        if out.returncode != 0:
            raise SystemExit(f"the run failed:\n{out.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per colour (median)")
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--level", type=int, help="the computer's level (default: the "
                        "terminal client's default)")
    parser.add_argument("--colours", default="x,o", help="the computer's colours (x,o)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child(args.child[0], args.child[1], args.level))))
        return
    ref = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.ref],
                         check=True, capture_output=True, text=True).stdout.strip()
    print(f"ref {ref}, load average before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for computer in args.colours.split(","):
        results = []
        for run in range(args.runs):
            results.append(run_once(ref, computer, args.level))
            print(f"computer {computer.upper()}, run {run + 1}: {results[-1]}", flush=True)
        seconds = [r["seconds"] for r in results]
        quick = {str(r["quick"] if r["quick"] is None else bool(r["quick"])) for r in results}
        rows.append(f"| {computer.upper()} | {results[0]['level']} | {len(results)} | "
                    f"**{statistics.median(seconds):.2f} s** ({min(seconds):.2f}-"
                    f"{max(seconds):.2f}) | {'/'.join(sorted(quick))} | "
                    f"{'yes' if any(r['preparing'] for r in results) else 'no'} |")
    print(f"\nref {ref}, load average after: {os.getloadavg()[0]:.2f}")
    print("| computer | level | runs | first computer move (median, range) | quick path "
          "| \"preparing\" shown |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
