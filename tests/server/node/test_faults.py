"""Faults, with real processes: the server killed with SIGKILL mid-game and started again on
its database, a computer worker killed mid-search, and a client that stops reading.

A database that cannot be opened (locked, read-only, corrupt) is in test_serve_cli.py.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from bench.harness import ServerProcess
from engine import Board
from tests.eventually import eventually
from tests.server.servers import Client, Server, connect, play, start_private_game


async def play_cell(client: Client, game: str, cell: int, ply: int) -> dict[str, Any]:
    """``play`` with a cell index: move and wait for the acknowledgement."""
    ref = await client.send(t="move", game=game, cell=cell, ply=ply)
    return await client.expect("ack", ref=ref)


def moves_of(client: Client, game: str) -> list[int]:
    """The cells of the game's ``move`` events this client has received, in ply order."""
    events = [m for m in client.seen if m["t"] == "move" and m["game"] == game]
    assert [m["ply"] for m in events] == list(range(1, len(events) + 1))
    return [m["cell"] for m in events]


# -- the server killed with SIGKILL ------------------------------------------------------------


async def test_kill_9_mid_game_then_restart_resumes_every_game_where_it_was(
    tmp_path: Path, processes: list[ServerProcess]
) -> None:
    db = tmp_path / "q.db"
    first = ServerProcess(db).start()
    processes.append(first)
    ann, bob, cat, dan, eve = [await connect(first, n) for n in ("ann", "bob", "cat", "dan", "eve")]
    one = await start_private_game(None, ann, bob)  # type: ignore[arg-type]
    for ply, cell in enumerate(["1a1", "4d4", "2b2", "3c3"]):
        await play(ann if ply % 2 == 0 else bob, one, cell, ply)
    two = await start_private_game(None, cat, dan, clock={"initial": 300, "increment": 2})  # type: ignore[arg-type]
    for ply, cell in enumerate(["2a2", "3a3"]):
        await play(cat if ply % 2 == 0 else dan, two, cell, ply)
    three = (await eve.request(t="play_ai", level=1, colour="x"))["id"]
    await play(eve, three, "1a1", 0)
    answer = (await eve.expect("move", game=three, ply=2))["cell"]  # the computer's
    await play(eve, three, "1b1" if answer != 1 else "1c1", 2)
    await bob.expect("move", game=one, ply=4)
    await dan.expect("move", game=two, ply=2)
    seen = {one: moves_of(bob, one), two: moves_of(dan, two)}
    eve_seen = [m["cell"] for m in eve.seen if m["t"] == "move" and m["game"] == three]
    tokens = {c.name: c.token for c in (ann, bob, cat, dan, eve)}

    first.kill()

    second = ServerProcess(db).start()
    processes.append(second)
    ann, bob, cat, dan, eve = [await connect(second, token=tokens[n])
                               for n in ("ann", "bob", "cat", "dan", "eve")]
    for client, game in ((ann, one), (bob, one), (cat, two), (dan, two)):
        welcome = next(m for m in client.seen if m["t"] == "welcome")
        assert welcome["games"] == [game]
        state = await client.request(t="watch", game=game)
        assert state["t"] == "game" and state["status"] == "playing"
        assert state["moves"] == seen[game], (game, state["moves"], seen[game])
    clocks = (await cat.request(t="watch", game=two))["clocks"]
    assert clocks["x"] > 290_000 and clocks["o"] > 290_000  # the downtime cost nobody anything
    # the games go on from where they were
    await play(ann, one, "1b1", 4)
    assert (await bob.expect("move", game=one, ply=5))["notation"] == "1b1"
    await play(cat, two, "4a4", 2)
    assert (await dan.expect("move", game=two, ply=3))["notation"] == "4a4"
    # the computer game too: its acknowledged moves are there, and the computer answers
    state = await eve.request(t="watch", game=three)
    assert state["moves"][: len(eve_seen)] == eve_seen and len(eve_seen) >= 3
    moves = state["moves"]
    if len(moves) == 3:
        moves = [*moves, (await eve.expect("move", game=three, ply=4))["cell"]]
    board = Board("4x4x4", moves)
    if board.outcome() is None:
        await play_cell(eve, three, board.legal_moves[0], 4)
    second.stop()


@pytest.mark.parametrize("synchronous", ["full", "normal"])
async def test_no_acknowledged_move_is_lost_to_kill_9_under_load(
    tmp_path: Path, processes: list[ServerProcess], synchronous: str
) -> None:
    """With SQLite's either setting (``--synchronous``): ``normal`` leaves the last commits to
    the operating system, which keeps them when only the server dies."""
    db = tmp_path / "q.db"
    server = ServerProcess(db, "--synchronous", synchronous).start()
    processes.append(server)
    acked: list[tuple[str, int, int]] = []
    stop = asyncio.Event()

    async def pair(i: int) -> None:
        x, o = await connect(server, f"x{i}"), await connect(server, f"o{i}")
        rng = random.Random(i)
        game = await start_private_game(None, x, o)  # type: ignore[arg-type]
        board = Board("4x4x4")
        while not stop.is_set() and board.outcome() is None:
            cell = rng.choice(board.legal_moves)
            mover = x if board.ply % 2 == 0 else o
            try:
                await play_cell(mover, game, cell, board.ply)
            except (websockets.ConnectionClosed, TimeoutError):
                return
            board.push(cell)
            acked.append((game, board.ply, cell))
            await asyncio.sleep(0.12)  # within the rate limit

    tasks = [asyncio.create_task(pair(i)) for i in range(8)]
    await eventually(lambda: len(acked) >= 60, "60 moves acknowledged")
    server.kill()  # while moves are in flight
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert len(acked) >= 60
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    stored = set(conn.execute("SELECT game_id, ply, cell FROM moves"))
    conn.close()
    assert [move for move in acked if move not in stored] == []


# -- a computer worker killed ----------------------------------------------------------------------


async def test_an_ai_worker_killed_mid_search_is_replaced_and_the_computer_still_moves(
    tmp_path: Path, processes: list[ServerProcess]
) -> None:
    server = ServerProcess(tmp_path / "q.db", "--computer-time", "3").start()
    processes.append(server)
    eve = await connect(server, "eve")
    # The computer plays O: as X it plays the proof's moves at once, and O's book answers
    # X's first move, so its second move (after X's edge opening) is searched, up to 3 s.
    game = (await eve.request(t="play_ai", level=8, colour="x"))["id"]
    await play_cell(eve, game, 1, 0)  # 1b1
    first = await eve.expect("move", game=game, ply=2, timeout=90)
    board = Board("4x4x4", [1, first["cell"]])
    await play_cell(eve, game, next(c for c in (42, 21, 22, 37) if c in board.legal_moves), 2)
    await eve.expect("ai_thinking", game=game, ply=3)
    await eventually(lambda: server.metrics().get("qubic_ai_busy") == 1,
                     "the search is under way (a worker is busy)")
    workers = server.computer_workers()
    assert workers, "no computer worker found under the server process"
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    reply = await eve.expect("move", game=game, ply=4, timeout=90)
    assert reply["side"] == "o"
    replacements = server.computer_workers()
    assert replacements and not set(replacements) & set(workers)
    board = Board("4x4x4", moves_of(eve, game))
    await play_cell(eve, game, board.legal_moves[0], 4)
    await eve.expect("move", game=game, ply=6, timeout=90)
    server.stop()


# -- a client that stops reading -----------------------------------------------------------------


async def test_a_client_that_stops_reading_is_dropped_and_stalls_nobody(tmp_path: Path) -> None:
    # A rate limit of 100 frames/s (not 10) only makes the stuck client fill the kernel's
    # socket buffers (megabytes) in seconds rather than a minute.
    server = Server(tmp_path / "q.db", rate=100.0, burst=100)
    await server.start()
    try:
        await stops_reading(server)
    finally:
        await server.stop()


async def stops_reading(server: Server) -> None:
    assert server.running is not None
    hub = server.running.hub
    ann, bob = await server.client("ann"), await server.client("bob")
    busy = await start_private_game(server, ann, bob)
    sam = await server.client("sam")
    await sam.request(t="watch", game=busy)
    # a game whose full state is big to a spectator: 50 lines of the spectators' chat of 300
    # characters (said faster than a player may: the chat rate is lifted here)
    hub.limits.chat_lines = (0, 0.0)
    for _ in range(50):
        await sam.send(t="chat", game=busy, text="y" * 300)
    await sam.expect("chat", game=busy, line=50)
    sam.inbox.clear()
    # The stuck client: a tiny receive buffer, and a websocket library told to stop reading
    # from the socket once one message waits unread; it never calls recv(). It asks for the
    # big game's state 90 times a second, within the rate limit.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((server.running.host, server.running.port))
    stuck = await websockets.connect(server.running.ws_url, sock=sock, max_queue=1,
                                     close_timeout=0.5)
    await stuck.send('{"t": "hello", "name": "stuck"}')
    session = await eventually(lambda: next((s for s in hub.sessions if s.name == "stuck"),
                                            None), "the stuck client said hello")

    async def ask() -> None:
        while not session.closed:
            try:
                await stuck.send(f'{{"t": "watch", "game": "{busy}"}}')
            except websockets.ConnectionClosed:
                return
            await asyncio.sleep(0.011)

    asking = asyncio.create_task(ask())
    # meanwhile two others play game after game, watched by a third who reads
    cat, dan, eve = [await server.client(n) for n in ("cat", "dan", "eve")]
    rng = random.Random(7)
    played: dict[str, int] = {}
    deadline = time.monotonic() + 120
    while not session.closed:
        game = await start_private_game(server, cat, dan)
        await eve.request(t="watch", game=game)
        board = Board("4x4x4")
        while not session.closed and board.outcome() is None:
            assert time.monotonic() < deadline, "the stuck client was never dropped"
            cell = rng.choice(board.legal_moves)
            await play_cell(cat if board.ply % 2 == 0 else dan, game, cell, board.ply)
            board.push(cell)
            await asyncio.sleep(0.15)
        played[game] = board.ply
        if board.outcome() is None:
            await cat.request(t="resign", game=game)
    await asking
    assert session.close_code == 1013  # try again later: a slow consumer
    assert session not in hub.sessions
    await eve.quiet()
    for game, plies in played.items():  # the watcher got every move of every game
        moves = [m["ply"] for m in eve.seen if m["t"] == "move" and m["game"] == game]
        assert moves == list(range(1, plies + 1))
    assert (await ann.request(t="ping"))["t"] == "pong"
    await stuck.close()


# -- a server that runs for months -----------------------------------------------------------


async def test_finished_games_leave_nothing_behind_in_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import server.node.upkeep

    monkeypatch.setattr(server.node.upkeep, "FINISHED_KEPT", 0.1)
    running = Server(tmp_path / "q.db", rate=1e6, burst=1_000_000)
    await running.start()
    try:
        assert running.running is not None
        hub = running.running.hub
        ann, bob, cat = [await running.client(n) for n in ("ann", "bob", "cat")]
        games = []
        for _ in range(30):
            game = await start_private_game(running, ann, bob)
            await cat.request(t="watch", game=game)
            await play(ann, game, "1a1", 0)
            await bob.request(t="resign", game=game)
            games.append(game)
        rooms, lobby = hub.rooms, hub.lobby

        def leftovers() -> dict[str, int]:
            return {
                "rooms": len(hub.rooms.held), "locks": len(rooms.locks),
                "audience": len(hub.delivery.audience),
                "finished": len(rooms.upkeep.finished),
                "rematched": len(rooms.upkeep.rematched),
                "timers": len(rooms.upkeep.flag_timers),
                "ai": len(rooms.upkeep.computer.tasks), "openers": len(rooms.openers),
                "listed": len(lobby.core.games.listed),
                "unlisted": len(lobby.core.games.unlisted),
                "published": len(rooms.publisher.published),
                "subscriptions": len(hub.delivery._subscriptions),
                "open in sessions": sum(len(s.rooms) for s in hub.sessions),
            }

        def nothing_left() -> bool:
            return not any(leftovers().values())

        await eventually(nothing_left, "the finished games forgotten",
                         detail=lambda: repr(leftovers()))
        await cat.request(t="watch", game=games[0])  # an old game, reloaded from the store
        await eventually(nothing_left, "the old game forgotten again",
                         detail=lambda: repr(leftovers()))
    finally:
        await running.stop()
