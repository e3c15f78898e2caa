"""What a move costs the server's stack and its store before Qubic's rules: CPU per move's floor.

    .venv/bin/python bench/stack_floor.py --games 1000 --warmup 5 --duration 15 --store STORE \
        [--stack STACK] [--commit-interval MS] [--commit-max N]

STORE is one of none, thread, thread-bare, handover, loop, loop-fsync, loop-normal; STACK one
of aiohttp (the default), websockets, picows.

A server process with a websocket stack on uvloop and none of Qubic's rules: a client's text
frame in; out one frame to the mover (its ack and the move, one write, as Qubic sends them)
and one to the opponent (the move). The stacks (``--stack``):

- ``aiohttp``: what ``qubic serve`` runs on, aiohttp's websockets, frames written straight
  into the transport as ``server.http.app.SocketWriter`` does;
- ``websockets``: the ``websockets`` library's asyncio server (``websockets.asyncio``), its
  own ``recv`` and ``send`` (the ack and the move two sends);
- ``picows``: picows's server (``pip install picows``, the ``bench`` extra), a listener called
  for each frame (no task per connection) and its ``send``.

With a store each move is committed before it is relayed, as Qubic does, on a fresh SQLite
file, in groups at most every ``--commit-interval`` ms (the server's default window) and of at
most ``--commit-max`` moves (``thread`` only; the prototypes group by the window alone), in one
of these ways:

- ``thread``: Qubic's store (``SQLiteStore.record_move``: its writer thread, ``synchronous=FULL``);
- ``thread-bare``: a writer thread woken for each turn's moves as Qubic's was before issue 41
  (the window waited out in the thread), running the same SQL with as little Python around it
  as can be (``ThreadWriter``), ``FULL``;
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
import contextlib
import multiprocessing
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from harness.generators import add_run_options, split
from harness.procs import cpu_seconds, load_average, raise_fd_limit

from server.game.records import MoveRecord, Seat
from server.http.app import frame_header
from server.store.journal import JOURNAL_MOVE
from server.store.sqlite import COMMIT_INTERVAL, COMMIT_MAX

ACK = b'{"type":"ack","ref":1}'
MOVE = (b'{"type":"move","game":"0123456789abcdef","ply":1,"cell":21,"notation":"2b2",'
        b'"side":"x","clocks":null,"version":3}')
STORES = ("none", "thread", "thread-bare", "handover", "loop", "loop-fsync", "loop-normal")
STACKS = ("aiohttp", "websockets", "picows")
MAX_FRAME = 8192  # bytes a client's frame may have (the server's MAX_FRAME_BYTES)
Group = list[tuple[str, int, asyncio.Future[None]]]  # (game, ply, its waiter) a move


def commit(conn: sqlite3.Connection, group: Group) -> None:
    """The group's moves in one transaction, each with the server's statement for a move of
    a game it knows (``server.store.journal.JOURNAL_MOVE``)."""
    conn.execute("BEGIN IMMEDIATE")
    for game_id, ply, _ in group:
        conn.execute(JOURNAL_MOVE, (game_id, ply, ply % 64, None, None, time.time()))
    conn.execute("COMMIT")


class LoopWriter:
    """Group commit on the event loop's thread: the moves asked for within an interval of the
    last commit go in one transaction, then their futures are resolved (after a thread's
    fsync of the WAL with ``fsync_thread``)."""

    def __init__(self, path: Path, synchronous: str, fsync_thread: bool,
                 interval: float) -> None:
        self.interval = interval
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
            wait = self.last + self.interval - self.loop.time()
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

    def __init__(self, path: Path, sql: bool, interval: float) -> None:
        self.sql, self.interval = sql, interval
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
            wait = self.last + self.interval - time.monotonic()
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


class Relay:
    """A move in, as each stack hands it over: committed (with a store), then the ack and the
    move to the mover and the move to the opponent, by a stack's own ``send``."""

    def __init__(self, games: int, store: str, game_ids: list[str],
                 writer: LoopWriter | ThreadWriter | None, sqlite_store: Any) -> None:
        self.plies = [0] * games
        self.store, self.game_ids = store, game_ids
        self.writer, self.sqlite_store = writer, sqlite_store

    def commit(self, game: int) -> Awaitable[None] | None:
        """The move's commit to wait for before it is relayed, or None with no store."""
        if self.store == "none":
            return None
        self.plies[game] += 1
        ply = self.plies[game]
        if self.writer is not None:
            return self.writer.record(self.game_ids[game], ply)
        return self.sqlite_store.record_move(
            self.game_ids[game], MoveRecord(ply, ply % 64, None, None, time.time()))


def serve(port_file: Path, games: int, store: str, directory: str, stack: str,
          interval: float, most: int) -> None:
    """The server process: pairs connections by ``?game=G&side=S`` and relays each frame."""
    import uvloop

    from server.store.sqlite import SQLiteStore

    async def main() -> None:
        path = Path(directory) / "floor.db"
        sqlite_store = await SQLiteStore.open(path, commit_interval=interval, commit_max=most)
        game_ids = [
            (await sqlite_store.create_game(variant="4x4x4", x=Seat("a"), o=Seat("b"),
                                            clock=None, rated=False, now=0.0)).id
            for _ in range(games)
        ]
        writer: LoopWriter | ThreadWriter | None = None
        if store in ("thread-bare", "handover"):
            await sqlite_store.close()
            writer = ThreadWriter(path, sql=store == "thread-bare", interval=interval)
        elif store.startswith("loop"):
            await sqlite_store.close()
            writer = LoopWriter(path, "FULL" if store == "loop" else "NORMAL",
                                fsync_thread=store == "loop-fsync", interval=interval)
        relay = Relay(games, store, game_ids, writer, sqlite_store)
        port = await STARTS[stack](relay)
        port_file.write_text(str(port))
        await asyncio.Event().wait()

    raise_fd_limit()
    uvloop.run(main())


def where(path: str) -> tuple[int, int]:
    """(game, side) from a path ``/ws?game=G&side=S``."""
    query = dict(part.split("=", 1) for part in path.partition("?")[2].split("&"))
    return int(query["game"]), int(query["side"])


async def start_aiohttp(relay: Relay) -> int:
    """aiohttp's websockets as ``qubic serve`` uses them: frames written into the transport."""
    seats: dict[int, list[asyncio.Transport | None]] = {}
    move = frame_header(len(MOVE)) + MOVE
    ack_and_move = frame_header(len(ACK)) + ACK + move

    async def socket(request: web.Request) -> web.WebSocketResponse:
        game, side = int(request.query["game"]), int(request.query["side"])
        ws = web.WebSocketResponse(heartbeat=30.0, compress=False, decode_text=False)
        await ws.prepare(request)
        transport = request.transport
        assert transport is not None
        pair = seats.setdefault(game, [None, None])
        pair[side] = transport
        async for _ in ws:
            if (committed := relay.commit(game)) is not None:
                await committed
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
    return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001


async def start_websockets(relay: Relay) -> int:
    """The ``websockets`` library's asyncio server, its own ``recv`` and ``send``."""
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.exceptions import ConnectionClosed

    seats: dict[int, list[ServerConnection | None]] = {}
    ack, move = ACK.decode(), MOVE.decode()

    async def handler(ws: ServerConnection) -> None:
        game, side = where(ws.request.path if ws.request is not None else "")
        pair = seats.setdefault(game, [None, None])
        pair[side] = ws
        try:
            while True:
                await ws.recv(decode=False)
                if (committed := relay.commit(game)) is not None:
                    await committed
                await ws.send(ack)
                await ws.send(move)
                other = pair[1 - side]
                if other is not None:
                    with contextlib.suppress(ConnectionClosed):
                        await other.send(move)
        except ConnectionClosed:
            pass

    server = await serve(handler, "127.0.0.1", 0, compression=None, ping_interval=30.0,
                         max_size=MAX_FRAME)
    return server.sockets[0].getsockname()[1]


async def start_picows(relay: Relay) -> int:
    """picows's server: a listener called for each frame, its ``send`` (no task a frame with
    no store; with one, the relay waits on the commit's future)."""
    from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_create_server

    seats: dict[int, list[WSTransport | None]] = {}

    class Player(WSListener):
        def __init__(self, game: int, side: int) -> None:
            self.game, self.side = game, side
            self.transport: WSTransport | None = None

        def on_ws_connected(self, transport: WSTransport) -> None:
            self.transport = transport
            seats.setdefault(self.game, [None, None])[self.side] = transport

        def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
            kind = frame.msg_type
            if kind == WSMsgType.TEXT:
                committed = relay.commit(self.game)
                if committed is None:
                    self.relay()
                else:
                    asyncio.ensure_future(committed).add_done_callback(self.relayed)
            elif kind == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()

        def relayed(self, _: object) -> None:
            self.relay()

        def relay(self) -> None:
            transport = self.transport
            if transport is None or transport.is_disconnected:
                return
            transport.send(WSMsgType.TEXT, ACK)
            transport.send(WSMsgType.TEXT, MOVE)
            other = seats[self.game][1 - self.side]
            if other is not None and not other.is_disconnected:
                other.send(WSMsgType.TEXT, MOVE)

    def listener(request: Any) -> Player:
        game, side = where(request.path.decode())
        return Player(game, side)

    server = await ws_create_server(listener, "127.0.0.1", 0, max_frame_size=MAX_FRAME,
                                    enable_auto_ping=True, auto_ping_idle_timeout=30.0)
    return server.sockets[0].getsockname()[1]


STARTS: dict[str, Callable[[Relay], Awaitable[int]]] = {
    "aiohttp": start_aiohttp, "websockets": start_websockets, "picows": start_picows,
}


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
    parser.add_argument("--stack", choices=STACKS, default="aiohttp",
                        help="the websocket server (default %(default)s)")
    parser.add_argument("--commit-interval", type=float, default=COMMIT_INTERVAL * 1000,
                        metavar="MS", help="group commit's window (default %(default)g, the "
                        "server's)")
    parser.add_argument("--commit-max", type=int, default=COMMIT_MAX, metavar="N",
                        help="moves that fill a group at once, for the thread store (default "
                             "%(default)s, the server's)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.games, args.store, args.dir, args.stack,
              args.commit_interval / 1000, args.commit_max)
        return
    if (args.warmup + args.duration) * args.rate > 60:
        parser.error("at most 60 moves a game: a game's moves are plies of one 64-cell board")
    with tempfile.TemporaryDirectory(prefix="qubic-floor-") as tmp:
        port_file = Path(tmp) / "port"
        root = Path(__file__).resolve().parent.parent
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(port_file), "--games", str(args.games),
             "--store", args.store, "--dir", tmp, "--stack", args.stack,
             "--commit-interval", str(args.commit_interval),
             "--commit-max", str(args.commit_max)],
            cwd=root, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])},
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
            print(f"games {args.games}, stack {args.stack}, store {args.store}, window "
                  f"{args.commit_interval:g} ms, max {args.commit_max}: {total} moves, "
                  f"{rate:.0f} a second")
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
