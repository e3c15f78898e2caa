"""A database on a small filesystem that fills up during play (issue 28, "faults an operator
meets"): the move that cannot be stored is refused with ``store_unavailable`` in words that
name no path, ``/health/ready`` turns 503, nothing acknowledged is lost, and once there is
room again the server is ready and the game goes on. A real tmpfs of 2 MiB, mounted for the
test (root only: the test says why it skips otherwise)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from engine import Board, format_cell
from server.protocol import PUBLIC_MESSAGES
from server.protocol.wire import STORE_RETRY_IN
from tests.server.servers import Client, Server, start_private_game


@contextlib.contextmanager
def small_disk(where: Path, size: str = "2m") -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Take every free byte of ``disk`` with a file; returns it."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(descriptor, b"\0" * 4096)
    finally:
        os.close(descriptor)
    return filler


async def ready(server: Server) -> int:
    assert server.running is not None
    async with aiohttp.ClientSession() as session, session.get(
            server.running.http_url + "/health/ready") as response:
        return response.status


async def test_a_full_disk_refuses_the_move_and_loses_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        server = Server(disk / "q.db")
        await server.start()
        try:
            ann, bob = await server.client("ann"), await server.client("bob")
            game = await start_private_game(server, ann, bob)
            board = Board("4x4x4")
            players = [ann, bob]
            filler = fill(disk)
            refused: dict[str, Any] | None = None
            acknowledged: list[int] = []
            for _ in range(40):  # until a move cannot be stored
                mover: Client = players[board.ply % 2]
                cell = next(c for c in board.legal_moves if _safe(board, c))
                reply = await mover.request(t="move", game=game, cell=format_cell(
                    cell, board.geometry), ply=board.ply)
                if reply["t"] == "error":
                    refused = reply
                    break
                assert reply["t"] == "ack", reply
                board.push(cell)
                acknowledged.append(cell)
            assert refused is not None, "the disk never filled"
            assert refused["code"] == "store_unavailable"
            assert refused["message"] == PUBLIC_MESSAGES["store_unavailable"]
            assert str(disk) not in refused["message"]
            assert refused["retry_in"] == STORE_RETRY_IN  # when to try again (issue 39)
            assert await ready(server) == 503
            filler.unlink()  # room again
            assert await ready(server) == 200
            mover = players[board.ply % 2]
            cell = next(c for c in board.legal_moves if _safe(board, c))
            reply = await mover.request(t="move", game=game,
                                        cell=format_cell(cell, board.geometry), ply=board.ply)
            assert reply["t"] == "ack", reply  # the game goes on from where it was
            acknowledged.append(cell)
            assert server.running is not None
            record = await server.running.store.get_game(game)
            assert record is not None and [m.cell for m in record.moves] == acknowledged
        finally:
            await server.stop()


def _safe(board: Board, cell: int) -> bool:
    """Whether playing ``cell`` leaves the game going (the test plays on, never to a win)."""
    board.push(cell)
    try:
        return board.outcome() is None
    finally:
        board.pop()
