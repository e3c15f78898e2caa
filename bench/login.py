"""The cost of a login (issue 27): one password hash in ms, and logins per second on one core
against a running server.

    .venv/bin/python bench/login.py [--hashes 20] [--players 20] [--logins 200] [--concurrency 4]

- *hash*: ``server.passwords.hash_password`` (scrypt, n = 2^14, r = 8, p = 1) and
  ``verify_password`` timed here, ``--hashes`` times each: the median and the slowest.
- *logins*: a ``qubic serve`` process (the harness's, with the password-attempt limit per
  address off: every login here comes from one address) is pinned to one CPU, the first;
  this process runs on the others. ``--players`` players each protect their name with a
  password, then ``--logins`` logins (a new websocket each: ``login``, wait for ``welcome``,
  close) go round the names, ``--concurrency`` at a time (at most 10 per name, the limit per
  name). It prints the logins per second and the server's CPU per login (its process, from
  /proc), and the same for wrong passwords, which cost as much (a hash each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import websockets
from harness.server import NO_LIMITS, ServerProcess

from server.passwords import SCRYPT_N, SCRYPT_P, SCRYPT_R, hash_password, verify_password

PASSWORD = "correct horse battery"


def hash_costs(count: int) -> None:
    """Wall and CPU time of a hash and a check (on a busy machine the CPU time is the cost;
    the wall time adds the waits for a CPU)."""
    times: dict[str, list[tuple[float, float]]] = {"hash": [], "verify": []}
    stored = hash_password(PASSWORD)
    for _ in range(count):
        for what, run in (("hash", lambda: hash_password(PASSWORD)),
                          ("verify", lambda: verify_password("a wrong guess", stored))):
            wall, cpu = time.perf_counter(), time.thread_time()
            run()
            times[what].append((time.perf_counter() - wall, time.thread_time() - cpu))
    print(f"scrypt n={SCRYPT_N} r={SCRYPT_R} p={SCRYPT_P} ({128 * SCRYPT_R * SCRYPT_N >> 20} MiB)"
          f", {count} each:")
    for what, pairs in times.items():
        walls, cpus = [w for w, _ in pairs], [c for _, c in pairs]
        print(f"  {what:7} CPU median {statistics.median(cpus) * 1000:.1f} ms (slowest "
              f"{max(cpus) * 1000:.1f}); wall median {statistics.median(walls) * 1000:.1f} ms")


async def request(url: str, message: dict[str, object]) -> dict[str, object]:
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps(message))
        reply: dict[str, object] = json.loads(await ws.recv())
        return reply


async def protect(url: str, name: str) -> None:
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"t": "hello", "name": name}))
        assert json.loads(await ws.recv())["t"] == "welcome"
        await ws.send(json.dumps({"t": "set_password", "password": PASSWORD}))
        reply = json.loads(await ws.recv())
        assert reply["t"] == "password_set", reply


async def logins(url: str, names: list[str], count: int, concurrency: int,
                 password: str) -> tuple[float, dict[str, int]]:
    """``count`` logins round ``names``; the seconds they took and the replies by kind."""
    gate = asyncio.Semaphore(concurrency)
    replies: dict[str, int] = {}

    async def one(i: int) -> None:
        async with gate:
            reply = await request(url, {"t": "login", "name": names[i % len(names)],
                                        "password": password})
            kind = str(reply.get("code", reply["t"]))
            replies[kind] = replies.get(kind, 0) + 1

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(count)))
    return time.perf_counter() - began, replies


def pin(pid: int, cpus: set[int]) -> None:
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hashes", type=int, default=20)
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--logins", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    if args.logins > 10 * args.players:
        parser.error("at most 10 logins per player (the limit per name): add --players")
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    hash_costs(args.hashes)
    cpus = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="qubic-login-") as tmp:
        server = ServerProcess(Path(tmp) / "qubic.db", *NO_LIMITS,
                               "--password-attempts-per-address", "0").start()
        try:
            pin(server.pid, {cpus[0]})  # the server's event loop and its hashing threads
            if len(cpus) > 1:
                os.sched_setaffinity(0, set(cpus[1:]))
            names = [f"player{i}" for i in range(args.players)]

            async def setup() -> None:
                await asyncio.gather(*(protect(server.ws_url, name) for name in names))

            asyncio.run(setup())
            print(f"server pinned to CPU {cpus[0]}; {args.players} players with passwords; "
                  f"{args.logins // 2} logins each way, {args.concurrency} at a time:")
            half = args.logins // 2
            for label, password in (("right password", PASSWORD), ("wrong password", "nope")):
                cpu_from = server.cpu_seconds()[0]
                seconds, replies = asyncio.run(logins(server.ws_url, names, half,
                                                      args.concurrency, password))
                cpu = server.cpu_seconds()[0] - cpu_from
                print(f"  {label:15} {half / seconds:.1f} logins/s, server CPU "
                      f"{cpu / half * 1000:.1f} ms per login, so {half / cpu:.0f} logins/s "
                      f"for a core of its own ({replies})")
        finally:
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
