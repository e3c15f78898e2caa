"""Password guesses from one address at a set rate, as an attacker would send them: each
connection stays under the per-connection frame limit (10 a second), so the server's answer is
its password-attempt limit, not a close for flooding. Used by ``bench/load.py
--bad-logins`` (does the attack slow other players' moves?) and ``bench/login.py``."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from multiprocessing.queues import Queue

import websockets

PER_CONNECTION = 5.0  # attempts a second on one connection (the frame limit is 10)


async def guess(url: str, rate: float, seconds: float, names: int = 50) -> Counter[str]:
    """``rate`` wrong-password logins a second for ``seconds``, spread over enough connections
    and over ``names`` names; the replies by code (``welcome`` would be a bug)."""
    connections = max(1, int(rate / PER_CONNECTION + 0.999))
    replies: Counter[str] = Counter()
    deadline = time.monotonic() + seconds

    async def one(index: int) -> None:
        pause = connections / rate
        sent = 0
        async with websockets.connect(url, max_size=None) as ws:
            next_at = time.monotonic() + index * pause / connections
            while next_at < deadline:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                await ws.send(json.dumps({"t": "login", "name": f"victim{sent % names}",
                                          "password": f"guess {index} {sent}"}))
                sent += 1
                reply = json.loads(await ws.recv())
                replies[reply.get("code", reply["t"])] += 1
                next_at += pause

    results = await asyncio.gather(*(one(i) for i in range(connections)),
                                   return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            replies[f"failed: {type(result).__name__}"] += 1
    return replies


def attack_main(url: str, rate: float, start: float, seconds: float,
                out: Queue[dict[str, int]]) -> None:
    """A process's body: wait until ``start`` (monotonic), guess for ``seconds``, put the
    replies (a dict) on ``out``."""
    time.sleep(max(0.0, start - time.monotonic()))
    replies = asyncio.run(guess(url, rate, seconds))
    out.put(dict(replies))
