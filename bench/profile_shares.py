"""The server's CPU by part, from a py-spy profile taken during ``bench/load.py``.

    .venv/bin/py-spy record --pid <server> --duration 25 --rate 200 --format raw --threads \
        -o prof.txt
    .venv/bin/python bench/profile_shares.py prof.txt [more.txt ...]

py-spy counts threads that wait on a lock as busy (the store's reader thread, uvloop's
executor, multiprocessing's feeder), so only the two threads that work are counted: the event
loop's (``MainThread``) and the SQLite writer's (``qubic-store-writer``). A loop-thread sample
goes to the part of the innermost frame of ours (or aiohttp's) on its stack; one with none
below the loop's runner is the loop's own code: with uvloop its C (reading sockets, timers,
handles, and its waits in epoll, which py-spy cannot tell apart); with asyncio's own loop
the waits in epoll are a part of their own.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

PARTS = [  # (part, pattern on a frame), tried from the innermost frame outwards
    ("protocol: encode and decode (msgspec)", r"\(server/protocol/"),
    ("the room: rules, board, clocks", r"\(server/game/|\(engine/"),
    ("delivery over the local bus", r"\(server/node/(delivery|bus|local_bus)"),
    ("the lobby", r"\(server/node/lobby"),
    ("hub, routing, rooms, sessions", r"\(server/node/"),
    ("the store, on the loop's side", r"\(server/store/"),
    ("aiohttp: websocket frames and writes", r"\(aiohttp/"),
    ("asyncio's Python parts (futures, locks, tasks)",
     r"\(asyncio/(locks|tasks|futures|queues|timeouts)"),
    ("the http handler, heartbeat, metrics", r"\(server/(http|metrics)"),
]


def part_of(thread: str, frames: list[str]) -> str | None:
    if "store-writer" in thread:
        leaf = frames[-1]
        if "_commit_group" in leaf:
            return "writer thread: BEGIN / COMMIT (the fsync under it)"
        return "writer thread: the writes' SQL and the rest"
    if "MainThread" not in thread:
        return None
    if "(selectors.py" in frames[-1]:
        return "waiting in epoll (idle, but py-spy counts it)"
    if any("SocketWriter.flush" in frame for frame in frames):
        return "socket writes (each connection's frames of a loop turn)"
    for frame in reversed(frames):
        if "(server/http/loop.py" in frame or "(asyncio/runners.py" in frame:
            return "the event loop's own code (no frame of ours below it)"
        for part, pattern in PARTS:
            if re.search(pattern, frame):
                return part
    return "other"


def shares(path: str) -> tuple[int, Counter[str]]:
    parts: Counter[str] = Counter()
    total = 0
    with open(path) as lines:
        for line in lines:
            stack, _, count = line.rstrip().rpartition(" ")
            if not stack:
                continue
            thread, *frames = stack.split(";")
            part = part_of(thread, frames) if frames else None
            if part is not None:
                parts[part] += int(count)
                total += int(count)
    return total, parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="+", help="py-spy --format raw --threads files")
    for path in parser.parse_args().profiles:
        total, parts = shares(path)
        print(f"{path}: {total} samples of the loop thread and the writer thread")
        for part, count in parts.most_common():
            print(f"  {100 * count / max(total, 1):5.1f}%  {part}")


if __name__ == "__main__":
    main()
