"""The transport's writer: the frames one loop turn queued for a client go out in one write,
each still one websocket text frame as aiohttp would have framed it; a slow reader's frames
wait in the session's bounded outbox; a closing session's frames go out before the close.

The transport here records what is written (it is asyncio's interface, no socket behind it);
the end-to-end tests run the same writer on real sockets with a strict websocket client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp import WSMsgType
from aiohttp._websocket.writer import WebSocketWriter

from server.http.app import WRITE_BUFFER_LIMIT, SocketWriter, frame_header
from server.metrics import Metrics
from server.node.session import CLOSE_TRY_AGAIN_LATER, Session
from server.protocol import Ack
from tests.eventually import eventually


class Recording(asyncio.WriteTransport):
    """A write transport that keeps each ``write`` and reports a buffer size it is told."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.buffered = 0
        self.aborted = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return self.aborted

    def abort(self) -> None:
        self.aborted = True


class Socket:
    """What the writer asks of aiohttp's websocket: whether it is closed, and to close it."""

    def __init__(self, answers: bool = True) -> None:
        self.closed = False
        self.close_code: int | None = None
        self.answers = answers  # whether the peer answers the close frame

    async def close(self, *, code: int = 1000, message: bytes = b"") -> bool:
        self.close_code = code
        if not self.answers:
            await asyncio.Event().wait()
        self.closed = True
        return True


def frames_in(data: bytes) -> list[dict[str, Any]]:
    """The text frames in ``data``, parsed as a client would."""
    out = []
    while data:
        assert data[0] == 0x81  # final text frame
        length, at = data[1], 2
        if length == 126:
            length, at = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, at = int.from_bytes(data[2:10], "big"), 10
        out.append(json.loads(data[at:at + length]))
        data = data[at + length:]
    return out


def writer_for(max_queue: int = 512) -> tuple[Session, SocketWriter, Recording, Socket]:
    transport, socket = Recording(), Socket()
    writer = SocketWriter(socket, transport)  # type: ignore[arg-type]
    return Session(max_queue=max_queue, outlet=writer), writer, transport, socket


@pytest.mark.parametrize("length", [0, 1, 125, 126, 65535, 65536, 70000])
async def test_the_header_is_the_one_aiohttp_writes(length: int) -> None:
    transport = Recording()
    aiohttp_writer = WebSocketWriter(None, transport)  # type: ignore[arg-type]
    payload = b"x" * length
    await aiohttp_writer.send_frame(payload, WSMsgType.TEXT)
    assert b"".join(transport.writes) == frame_header(length) + payload


async def test_a_turn_s_frames_go_out_in_one_write() -> None:
    session, _, transport, _ = writer_for()
    session.send(Ack(ref="r6"))
    session.send(Ack(ref="r7"))
    assert transport.writes == []  # written at the end of the turn, not at each send
    await asyncio.sleep(0)
    assert len(transport.writes) == 1
    assert [m["ref"] for m in frames_in(transport.writes[0])] == ["r6", "r7"]
    session.send(Ack(ref="r8"))  # a later turn: its own write
    await asyncio.sleep(0)
    assert len(transport.writes) == 2 and frames_in(transport.writes[1]) == [
        {"t": "ack", "ref": "r8"}]


async def test_a_slow_reader_s_frames_wait_in_the_bounded_outbox() -> None:
    session, _, transport, _ = writer_for(max_queue=3)
    transport.buffered = WRITE_BUFFER_LIMIT + 1  # the kernel has not taken the last writes
    for ref in ("a", "b", "c"):
        session.send(Ack(ref=ref))
    await asyncio.sleep(0)
    assert transport.writes == [] and session.queued_bytes > 0
    transport.buffered = 0  # it read: the next look writes them, in order, at once
    await eventually(lambda: transport.writes, "the queued frames written", every=0.01)
    assert [m["ref"] for w in transport.writes for m in frames_in(w)] == ["a", "b", "c"]
    transport.buffered = WRITE_BUFFER_LIMIT + 1
    for ref in ("d", "e", "f", "g"):  # one more than the outbox holds
        session.send(Ack(ref=ref))
    assert session.close_code == CLOSE_TRY_AGAIN_LATER and transport.aborted


async def test_a_closing_session_s_frames_go_out_before_the_close() -> None:
    session, writer, transport, socket = writer_for()
    session.send(Ack(ref="last"))
    session.close(1001, "shutting down")
    session.send(Ack(ref="too late"))
    await writer.close(session)
    assert [frames_in(w) for w in transport.writes] == [[{"t": "ack", "ref": "last"}]]
    assert socket.closed and socket.close_code == 1001 and not transport.aborted


@pytest.mark.parametrize("answers", [True, False])
async def test_a_goodbye_the_peer_does_not_answer_in_time_is_cut_short_and_counted(
    answers: bool,
) -> None:
    metrics = Metrics()
    transport, socket = Recording(), Socket(answers)
    writer = SocketWriter(socket, transport, 0.05, metrics)  # type: ignore[arg-type]
    session = Session(outlet=writer)
    session.close(1009, "frames are limited")
    await writer.close(session)
    assert socket.close_code == 1009  # the close frame was asked for either way
    assert metrics.counters["closes_cut_short"] == (0 if answers else 1)


async def test_short_and_long_frames_of_a_turn_are_framed_each_in_one_write() -> None:
    """Frames under 126 bytes take their header from a table, longer ones have it made:
    both in one write, each parsed whole."""
    session, _, transport, _ = writer_for()
    long_ref = "r" * 200
    for ref in ("a", long_ref, "b"):
        session.send(Ack(ref=ref))
    await asyncio.sleep(0)
    assert len(transport.writes) == 1
    assert [m["ref"] for m in frames_in(transport.writes[0])] == ["a", long_ref, "b"]


async def test_a_frame_past_the_outbox_s_bytes_closes_the_session_even_the_first() -> None:
    transport, socket = Recording(), Socket()
    writer = SocketWriter(socket, transport)  # type: ignore[arg-type]
    session = Session(max_queue_bytes=10, outlet=writer)
    session.send(Ack(ref="far too long for ten bytes"))
    assert session.close_code == CLOSE_TRY_AGAIN_LATER and transport.aborted
    assert session.queued_bytes == 0
