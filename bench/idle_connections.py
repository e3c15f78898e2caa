"""Hold N idle websocket connections to a real server and report its memory per connection.

    .venv/bin/python bench/idle_connections.py --connections 5000 --idle 25 --procs 2

The server runs as its own process (``python -m qubic_cli serve --port 0``, fresh SQLite file
in a temporary directory). ``--procs`` client processes open the connections (each says
``hello`` as a new player unless ``--anonymous``), hold them open and silent for ``--idle``
seconds (past one 20 s heartbeat, which the clients answer), check that a sample of them still
answers ``ping``, and close them all. Reported: the server's RSS before, with every connection
open and after they closed, the RSS delta per connection (target <= 30 KiB), the server's CPU
while they idle, and errors. Loopback only, bounded in count (<= 20,000) and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets
from harness.generators import split, wait_for_item
from harness.procs import load_average, raise_fd_limit, rss_kib
from harness.server import NO_LIMITS, ServerProcess
from websockets.asyncio.client import ClientConnection

MAX_CONNECTIONS = 20_000
CONNECTS_AT_ONCE = 64


async def hold(url: str, names: range, anonymous: bool, idle_started: Any, release: Any,
               ready: Any, out: Any) -> None:
    """One client process: open every connection, report, wait, check a sample, close."""
    raise_fd_limit()
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)
    errors: list[str] = []

    async def open_one(i: int) -> ClientConnection | None:
        async with gate:
            try:
                ws = await websockets.connect(url, max_size=None, compression=None,
                                              open_timeout=60)
                if not anonymous:
                    await ws.send(json.dumps({"t": "hello", "name": f"idle{i}"}))
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    if reply["t"] != "welcome":
                        errors.append(f"hello refused: {reply}")
                return ws
            except Exception as error:  # counted and reported
                errors.append(f"connect: {type(error).__name__}: {error}")
                return None

    opened = [ws for ws in await asyncio.gather(*(open_one(i) for i in names)) if ws]
    ready.put(len(opened))
    await asyncio.to_thread(idle_started.wait)
    await asyncio.to_thread(release.wait)
    sample = random.Random(0).sample(opened, min(50, len(opened)))
    for ws in sample:
        try:
            await ws.send(json.dumps({"t": "ping", "id": 1}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if reply["t"] != "pong":
                errors.append(f"ping answered with {reply}")
        except Exception as error:  # counted and reported
            errors.append(f"ping after idle: {type(error).__name__}: {error}")
    closed_early = sum(ws.close_code is not None for ws in opened)
    if closed_early:
        errors.append(f"{closed_early} connections closed while idle")
    await asyncio.gather(*(ws.close() for ws in opened), return_exceptions=True)
    out.put(errors)


def client_main(*args: Any) -> None:
    asyncio.run(hold(*args))


def run(args: argparse.Namespace) -> int:
    import multiprocessing

    raise_fd_limit(2 * args.connections + 1024)
    print(f"load average before: {load_average()}   (cores: {os.cpu_count()})", flush=True)
    with tempfile.TemporaryDirectory(prefix="qubic-idle-") as tmp:
        server = ServerProcess(Path(tmp) / "qubic.db", *NO_LIMITS, computer_workers=1)
        server.start()
        try:
            time.sleep(1.0)
            rss_before = rss_kib(server.pid)
            context = multiprocessing.get_context("spawn")
            ready, out = context.Queue(), context.Queue()
            idle_started, release = context.Event(), context.Event()
            workers = [
                context.Process(target=client_main, args=(
                    server.ws_url, names, args.anonymous, idle_started, release, ready, out),
                    daemon=True)
                for names in split(args.connections, args.procs)
            ]
            started = time.monotonic()
            for worker in workers:
                worker.start()
            opened = sum(wait_for_item(ready, workers, 300) for _ in workers)
            took = time.monotonic() - started
            idle_started.set()
            rss_open = rss_kib(server.pid)
            cpu_from, _ = server.cpu_seconds()
            time.sleep(args.idle)
            cpu_to, _ = server.cpu_seconds()
            rss_idle = rss_kib(server.pid)
            health = server.metrics()
            release.set()
            errors: list[str] = []
            for _ in workers:
                errors += wait_for_item(out, workers, 300, dead_ok=True)
            for worker in workers:
                worker.join(30)
            time.sleep(2.0)
            rss_after = rss_kib(server.pid)
        finally:
            server.close()

    per = (rss_idle - rss_before) / max(1, opened)
    print(f"{opened} idle connections ({'anonymous' if args.anonymous else 'after hello'}) "
          f"opened in {took:.1f} s by {args.procs} client process(es), held {args.idle:g} s")
    print(f"  server RSS       {rss_before / 1024:.0f} MiB before, {rss_open / 1024:.0f} MiB "
          f"all open, {rss_idle / 1024:.0f} MiB after the idle time, {rss_after / 1024:.0f} MiB "
          f"after they closed")
    print(f"  per connection   {per:.1f} KiB (RSS delta / connections; target <= 30 KiB)")
    print(f"  server CPU       {(cpu_to - cpu_from) / args.idle:.1%} of a core while idle "
          f"(heartbeats every 20 s)")
    print(f"  server figures   connections {health.get('qubic_connections', 0):.0f}, "
          f"players online {health.get('qubic_players_online', 0):.0f}")
    print(f"  errors           {len(errors)}" + "".join(f"\n    {e}" for e in errors[:10]))
    print(f"  load average     {load_average()}")
    return 0 if not errors and opened == args.connections else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--idle", type=float, default=25.0, help="seconds held (default 25)")
    parser.add_argument("--procs", type=int, default=2, help="client processes (default 2)")
    parser.add_argument("--anonymous", action="store_true", help="connect without hello")
    args = parser.parse_args(argv)
    if not 1 <= args.connections <= MAX_CONNECTIONS:
        parser.error(f"--connections: 1..{MAX_CONNECTIONS}")
    if not 0 < args.idle <= 600:
        parser.error("--idle: up to 600 s")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
