"""The SQLite store's writer thread alone: its CPU a move under the load's flood of moves.

    .venv/bin/python bench/store_writer.py [--games 1000] [--rate 1000] [--seconds 8]
        [--commit-interval MS] [--synchronous FULL|NORMAL]

``SQLiteStore`` on a fresh file in a temporary directory, driven in this process, with no
sockets and none of the rooms' rules: ``--rate`` moves a second (one task a move, as the rooms
make, each awaiting its commit) on random games of ``--games``, each game ended
(``finish_game`` with its last move) at ply 60 and replaced by a new one (``create_game``), as
``bench/load.py``'s games end and start. After two seconds of warm-up it reads the writer
thread's CPU (``pthread_getcpuclockid``: user and system) over ``--seconds`` and divides it by
the moves committed meanwhile. Without the server's event loop beside it, the writer waits
less for the interpreter's lock than in ``qubic serve``, so its figure is lower than
``bench/load.py``'s "by thread" (docs/benchmarks.md, *CPU per move*); it tells apart what the
store's own choices cost: the window, ``synchronous``, the statements.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import uvloop

from server.game.records import MoveRecord, Seat
from server.store.sqlite import SQLiteStore

LAST_PLY = 60  # a game ends with this move (bench/load.py's random games end at 30-64)
WARMUP = 2.0  # seconds before the measured window


async def drive(args: argparse.Namespace, path: Path) -> tuple[float, int]:
    """The writer's CPU seconds and the moves committed over the window."""
    store = await SQLiteStore.open(path, commit_interval=args.commit_interval / 1000,
                                   synchronous=args.synchronous)
    try:
        for name in ("x", "o"):
            await store.create_player(name, time.time())

        async def new_game() -> str:
            game = await store.create_game(variant="4x4x4", x=Seat("x"), o=Seat("o"),
                                           clock=None, rated=False, now=time.time())
            return game.id

        plies = {await new_game(): 0 for _ in range(args.games)}
        writer = store._writer.ident  # noqa: SLF001  (the thread measured)
        assert writer is not None
        clock = time.pthread_getcpuclockid(writer)
        busy: set[str] = set()  # games with a move in flight (a room's lock)
        committed = 0

        async def move(game: str) -> None:
            nonlocal committed
            busy.add(game)
            plies[game] += 1
            ply = plies[game]
            record = MoveRecord(ply, ply % 64, None, None, time.time())
            try:
                if ply < LAST_PLY:
                    await store.record_move(game, record)
                else:
                    await store.finish_game(game, result="1-0", reason="line",
                                            now=time.time(), move=record)
                    del plies[game]
                    plies[await new_game()] = 0
                committed += 1
            finally:
                busy.discard(game)

        loop = asyncio.get_running_loop()
        tasks: set[asyncio.Task[None]] = set()
        start = loop.time()
        window: tuple[float, int] | None = None
        sent = 0
        while (now := loop.time()) < start + WARMUP + args.seconds:
            if window is None and now >= start + WARMUP:
                window = time.clock_gettime(clock), committed
            sent += 1
            await asyncio.sleep(max(0.0, start + sent / args.rate - loop.time()))
            game = random.choice(list(plies))
            if game in busy:
                continue
            task = loop.create_task(move(game))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        assert window is not None
        cpu, moves = time.clock_gettime(clock) - window[0], committed - window[1]
        await asyncio.gather(*tasks)
        return cpu, moves
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=1000.0, help="moves a second")
    parser.add_argument("--seconds", type=float, default=8.0, help="the measured window")
    parser.add_argument("--commit-interval", type=float, default=None, metavar="MS",
                        help="the store's window (default: the server's)")
    parser.add_argument("--synchronous", default="FULL", choices=["FULL", "NORMAL"])
    args = parser.parse_args()
    if args.commit_interval is None:
        from server.store.grouping import COMMIT_INTERVAL
        args.commit_interval = COMMIT_INTERVAL * 1000
    with tempfile.TemporaryDirectory(prefix="qubic-writer-") as tmp:
        cpu, moves = uvloop.run(drive(args, Path(tmp) / "qubic.db"))
    print(f"games {args.games}, {args.rate:g} moves/s, window {args.commit_interval:g} ms, "
          f"synchronous {args.synchronous}: the writer thread {cpu / moves * 1e3:.4f} ms of "
          f"CPU a move ({moves} moves in {args.seconds:g} s)")


if __name__ == "__main__":
    main()
