"""What a move costs the server's stack and its store before Qubic's rules: CPU per move's floor.

    .venv/bin/python bench/stack_floor.py --games 1000 --warmup 5 --duration 15 --store STORE

STORE is one of none, thread, thread-bare, handover, loop, loop-fsync, loop-normal.

A server process with what ``qubic serve`` runs on (aiohttp's websockets on uvloop, frames
written straight into the transport as ``server.http.app.SocketWriter`` does) and none of
Qubic's rules: a client's text frame in; out one frame to the mover (its ack and the move, one
write, as Qubic sends them) and one to the opponent (the move). With a store each move is
committed before it is relayed, as Qubic does, on a fresh SQLite file, in groups at most every
2 ms (the server's default commit interval), in one of these ways:

- ``thread``: Qubic's store (``SQLiteStore.record_move``: its writer thread, ``synchronous=FULL``);
- ``thread-bare``: a writer thread woken for each group as Qubic's is, running the same SQL with
  as little Python around it as can be (``ThreadWriter``), ``FULL``;
- ``handover``: that thread with no SQL: the cost of handing the moves over and back alone;
- ``loop``: the group's transaction run on the event loop's own thread, ``synchronous=FULL``
  (the fsync too: the loop waits for the disk);
- ``loop-fsync``: on the loop's thread with ``synchronous=NORMAL``, then a thread fsyncs the WAL
  and the group is relayed after it (as durable as ``FULL`` for every relayed move);
- ``loop-normal``: on the loop's thread with ``synchronous=NORMAL`` (survives ``kill -9``, not
  a power loss).

The ways but ``thread`` are prototypes that price the parts of the store (``ThreadWriter`` and
``LoopWriter`` below: no busy handling, checkpoints or errors); they are not the server's
store. Bots as in ``bench/load.py``: two connections a game, ``--rate`` moves a second a game
(one by default), in ``--procs`` generator processes. It reports the server process's CPU
seconds (user + system, /proc) over the window per move.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
from aiohttp import web
from harness.generators import add_run_options, split
from harness.procs import cpu_seconds, load_average, raise_fd_limit

from server.http.app import frame_header
from server.store.sqlite import RECORD_MOVE

ACK = b'{"type":"ack","ref":1}'
MOVE = (b'{"type":"move","game":"0123456789abcdef","ply":1,"cell":21,"notation":"2b2",'
        b'"side":"x","clocks":null,"version":3}')
INTERVAL = 0.002  # seconds between the starts of two commits, at least (the server's default)
STORES = ("none", "thread", "thread-bare", "handover", "loop", "loop-fsync", "loop-normal")
Group = list[tuple[str, int, asyncio.Future[None]]]  # (game, ply, its waiter) a move


def commit(conn: sqlite3.Connection, group: Group) -> None:
    """The group's moves in one transaction, each with the server's statement
    (``server.store.sqlite.RECORD_MOVE``)."""
    conn.execute("BEGIN IMMEDIATE")
    for game_id, ply, _ in group:
        conn.execute(RECORD_MOVE, (game_id, ply, ply % 64, None, None, time.time()))
    conn.execute("COMMIT")


class LoopWriter:
    """Group commit on the event loop's thread: the moves asked for within an interval of the
    last commit go in one transaction, then their futures are resolved (after a thread's
    fsync of the WAL with ``fsync_thread``)."""

    def __init__(self, path: Path, synchronous: str, fsync_thread: bool) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute(f"PRAGMA synchronous = {synchronous}")
        self.loop = asyncio.get_running_loop()
        self.pending: Group = []
        self.last = float("-inf")
        self.scheduled = False
        self.syncs: queue.SimpleQueue[Group] | None = None
        if fsync_thread:
            self.syncs = queue.SimpleQueue()
            wal = os.open(f"{path}-wal", os.O_RDONLY)
            threading.Thread(target=self._fsync, args=(wal,), daemon=True).start()

    def record(self, game_id: str, ply: int) -> asyncio.Future[None]:
        future = self.loop.create_future()
        self.pending.append((game_id, ply, future))
        if not self.scheduled:
            self.scheduled = True
            wait = self.last + INTERVAL - self.loop.time()
            if wait > 0:
                self.loop.call_later(wait, self._commit)
            else:
                self.loop.call_soon(self._commit)
        return future

    def _commit(self) -> None:
        self.scheduled = False
        self.last = self.loop.time()
        group, self.pending = self.pending, []
        commit(self.conn, group)
        if self.syncs is not None:
            self.syncs.put(group)
        else:
            _resolve(group)

    def _fsync(self, wal: int) -> None:
        assert self.syncs is not None
        while True:
            group = self.syncs.get()
            os.fdatasync(wal)
            self.loop.call_soon_threadsafe(_resolve, group)


class ThreadWriter:
    """Group commit on a writer thread, as ``SQLiteStore`` does it, with the least Python: the
    moves asked for in a turn of the loop go over in one queue item; the thread waits out the
    interval since its last commit, takes what has queued, commits it (``sql``) and hands the
    group back with one ``call_soon_threadsafe``."""

    def __init__(self, path: Path, sql: bool) -> None:
        self.sql = sql
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.loop = asyncio.get_running_loop()
        self.pending: Group = []
        self.queue: queue.SimpleQueue[Group] = queue.SimpleQueue()
        self.last = float("-inf")
        threading.Thread(target=self._run, daemon=True).start()

    def record(self, game_id: str, ply: int) -> asyncio.Future[None]:
        future = self.loop.create_future()
        self.pending.append((game_id, ply, future))
        if len(self.pending) == 1:
            self.loop.call_soon(self._hand_over)
        return future

    def _hand_over(self) -> None:
        group, self.pending = self.pending, []
        self.queue.put(group)

    def _run(self) -> None:
        while True:
            group = self.queue.get()
            wait = self.last + INTERVAL - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            while True:
                try:
                    group += self.queue.get_nowait()
                except queue.Empty:
                    break
            self.last = time.monotonic()
            if self.sql:
                commit(self.conn, group)
            self.loop.call_soon_threadsafe(_resolve, group)


def _resolve(group: Group) -> None:
    for _, _, future in group:
        future.set_result(None)


def serve(port_file: Path, games: int, store: str, directory: str) -> None:
    """The server process: pairs connections by ``?game=G&side=S`` and relays each frame."""
    import uvloop

    from server.game.records import MoveRecord, Seat
    from server.store.sqlite import SQLiteStore

    seats: dict[int, list[asyncio.Transport | None]] = {}
    move = frame_header(len(MOVE)) + MOVE
    ack_and_move = frame_header(len(ACK)) + ACK + move

    async def main() -> None:
        plies = [0] * games
        path = Path(directory) / "floor.db"
        sqlite_store = await SQLiteStore.open(path)  # the schema, and the games
        game_ids = [
            (await sqlite_store.create_game(variant="4x4x4", x=Seat("a"), o=Seat("b"),
                                            clock=None, rated=False, now=0.0)).id
            for _ in range(games)
        ]
        writer: LoopWriter | ThreadWriter | None = None
        if store in ("thread-bare", "handover"):
            await sqlite_store.close()
            writer = ThreadWriter(path, sql=store == "thread-bare")
        elif store.startswith("loop"):
            await sqlite_store.close()
            writer = LoopWriter(path, "FULL" if store == "loop" else "NORMAL",
                                fsync_thread=store == "loop-fsync")

        async def socket(request: web.Request) -> web.WebSocketResponse:
            game, side = int(request.query["game"]), int(request.query["side"])
            ws = web.WebSocketResponse(heartbeat=30.0, compress=False, decode_text=False)
            await ws.prepare(request)
            transport = request.transport
            assert transport is not None
            pair = seats.setdefault(game, [None, None])
            pair[side] = transport
            async for _ in ws:
                if store != "none":
                    plies[game] += 1
                    ply = plies[game]
                    if writer is not None:
                        await writer.record(game_ids[game], ply)
                    else:
                        await sqlite_store.record_move(
                            game_ids[game], MoveRecord(ply, ply % 64, None, None, time.time()))
                if transport.is_closing():  # the bot left while its move was committed
                    break
                transport.write(ack_and_move)
                other = pair[1 - side]
                if other is not None and not other.is_closing():
                    other.write(move)
            return ws

        app = web.Application()
        app.router.add_get("/ws", socket)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001
        port_file.write_text(str(port))
        await asyncio.Event().wait()

    raise_fd_limit()
    uvloop.run(main())


async def play(port: int, games: range, rate: float, seconds: float,
               done: multiprocessing.Queue) -> None:
    """Two connections a game; the side to move sends a frame every ``1 / rate`` seconds,
    taking turns."""
    raise_fd_limit()
    url = f"http://127.0.0.1:{port}/ws"
    moves = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        sockets = {}
        for game in games:
            for side in (0, 1):
                sockets[game, side] = await http.ws_connect(f"{url}?game={game}&side={side}")

        async def drain(ws: aiohttp.ClientWebSocketResponse) -> None:
            async for _ in ws:
                pass

        readers = [asyncio.create_task(drain(ws)) for ws in sockets.values()]
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def game_loop(game: int, offset: float) -> None:
            nonlocal moves
            side, turn = 0, 0
            while (due := start + (offset + turn) / rate) < start + seconds:
                await asyncio.sleep(max(0.0, due - loop.time()))
                await sockets[game, side].send_str('{"type":"move","cell":21,"ply":0}')
                moves += 1
                side, turn = 1 - side, turn + 1

        count = len(games)
        await asyncio.gather(*(game_loop(g, i / count) for i, g in enumerate(games)))
        for task in readers:
            task.cancel()
    done.put(moves)


def generator(port: int, games: range, rate: float, seconds: float,
              done: multiprocessing.Queue) -> None:
    asyncio.run(play(port, games, rate, seconds, done))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_options(parser, games=1000, warmup=5.0, duration=15.0)
    parser.add_argument("--store", choices=STORES, default="thread",
                        help="how a move is committed before it is relayed (default %(default)s)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.games, args.store, args.dir)
        return
    if (args.warmup + args.duration) * args.rate > 60:
        parser.error("at most 60 moves a game: a game's moves are plies of one 64-cell board")
    with tempfile.TemporaryDirectory(prefix="qubic-floor-") as tmp:
        port_file = Path(tmp) / "port"
        root = Path(__file__).resolve().parent.parent
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(port_file), "--games", str(args.games),
             "--store", args.store, "--dir", tmp],
            cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
        )
        workers: list[multiprocessing.Process] = []
        try:
            while not port_file.exists() or not port_file.read_text():
                if server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.05)
            port = int(port_file.read_text())
            print(f"load average before: {load_average()}")
            done: multiprocessing.Queue = multiprocessing.Queue()
            seconds = args.warmup + args.duration
            workers = [
                multiprocessing.Process(target=generator,
                                        args=(port, part, args.rate, seconds, done))
                for part in split(args.games, args.procs)
            ]
            for worker in workers:
                worker.start()
            time.sleep(args.warmup + 3.0)  # the generators connect first: a few seconds
            cpu0, at0 = cpu_seconds(server.pid), time.monotonic()
            time.sleep(args.duration - 3.0)
            cpu1, at1 = cpu_seconds(server.pid), time.monotonic()
            total = sum(done.get(timeout=60) for _ in workers)
            rate = total / seconds  # moves a second, as sent
            per_move = (cpu1 - cpu0) / (rate * (at1 - at0))
            print(f"games {args.games}, store {args.store}: {total} moves, {rate:.0f} a second")
            print(f"  CPU per move  {per_move * 1000:.3f} ms of the server process's CPU"
                  f" ({100 * (cpu1 - cpu0) / (at1 - at0):.0f}% of a core)")
            print(f"load average after: {load_average()}")
        finally:
            for worker in workers:
                worker.join(timeout=10)
                if worker.is_alive():
                    worker.kill()
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
