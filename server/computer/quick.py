"""The computer's first moves while the compiled engine is still being prepared.

On a cold numba cache the pool's workers compile the kernels for most of a minute before
they take a job. Meanwhile ``ComputerPool.quick`` asks :class:`QuickPath`: one helper
process, started with ``NUMBA_DISABLE_JIT=1`` so that the engine's kernels run there as plain
Python and nothing is compiled, which answers a job with ``Player.quick`` (see
:meth:`engine.players.master.MasterPlayer.quick`): the move the level's player makes when it
comes from the proved strategy, the opening book, a careless move, or the whole of a shallow
search without threat search (levels 1-4), and no move at all where the level would search
against the clock; then the game waits for the compiled engine as before. The pool closes
the helper once its workers are ready.

The helper speaks over its stdin and stdout: each frame a 4-byte big-endian length and a
msgpack body, a ``ComputerJob`` in, a ``Decision`` or nil out. Like the pool's workers it
ignores SIGINT (from its first line: the server stops it) and dies with the process that
started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import struct
import sys
import warnings
from typing import BinaryIO

import msgspec

from engine.players import Decision
from server.computer.lifeline import die_with_parent
from server.computer.moves import ComputerJob

log = logging.getLogger(__name__)

TIMEOUT = 20.0  # seconds for one answer, the helper's start included, before it is given up
# the helper's command: SIGINT ignored before anything is imported, then main()
COMMAND = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
           "from server.computer.quick import main; main()")
_HEADER = struct.Struct(">I")
_encoder = msgspec.msgpack.Encoder()
_job_decoder = msgspec.msgpack.Decoder(ComputerJob)
_answer_decoder = msgspec.msgpack.Decoder(Decision | None)


class QuickPath:
    """The helper process of the module docstring, seen from the server: ``decide`` gives
    the level's move or None (also when the helper has failed: it is not asked again)."""

    def __init__(self, nice: int = 0) -> None:
        self.nice = nice
        self.answered = 0  # jobs it gave a move for
        self._process: asyncio.subprocess.Process | None = None
        self._stderr: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._broken = False

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def start(self) -> None:
        """Start the helper (it imports the engine in its own time; a job sent meanwhile
        waits for it)."""
        env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", COMMAND, str(self.nice), env=env,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as error:
            log.warning("no quick path for the first computer moves: %s", error)
            self._broken = True
            return
        self._stderr = asyncio.get_running_loop().create_task(self._log_stderr())
        if self._broken:  # closed while it started
            await self._stop()

    async def decide(self, job: ComputerJob) -> Decision | None:
        """``job``'s move from the helper, or None where it has none. Cancelling the caller
        leaves the exchange to finish, so the next job finds the helper in step."""
        if self._broken or self._process is None:
            return None
        return await asyncio.shield(self._exchange(job))

    async def _exchange(self, job: ComputerJob) -> Decision | None:
        async with self._lock:
            process = self._process
            if self._broken or process is None:
                return None
            assert process.stdin is not None and process.stdout is not None
            body = _encoder.encode(job)
            try:
                async with asyncio.timeout(TIMEOUT):
                    process.stdin.write(_HEADER.pack(len(body)) + body)
                    await process.stdin.drain()
                    (size,) = _HEADER.unpack(await process.stdout.readexactly(_HEADER.size))
                    decision = _answer_decoder.decode(await process.stdout.readexactly(size))
            except (TimeoutError, OSError, asyncio.IncompleteReadError,
                    msgspec.DecodeError) as error:
                log.warning("the quick path failed (%r); the computer waits for its engine",
                            error)
                self._broken = True
                await self._stop()
                return None
            if decision is not None:
                self.answered += 1
            return decision

    async def close(self) -> None:
        """Stop the helper (the compiled engine is ready, or the pool closes)."""
        self._broken = True
        async with self._lock:
            await self._stop()

    async def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        if self._stderr is not None:
            await asyncio.wait({self._stderr}, timeout=1.0)

    async def _log_stderr(self) -> None:
        process = self._process
        assert process is not None and process.stderr is not None
        while line := await process.stderr.readline():
            log.warning("quick path: %s", line.decode(errors="replace").rstrip())


# -- the helper process ----------------------------------------------------------------------


def serve(read: BinaryIO, write: BinaryIO) -> None:
    """Answer jobs from ``read`` on ``write`` until ``read`` ends."""
    from numba.core import config

    if not getattr(config, "DISABLE_JIT", False):  # never compile here: the workers' minute
        raise SystemExit("the quick path runs with NUMBA_DISABLE_JIT=1 only")
    # numpy's scalars warn where the compiled kernels' uint64 arithmetic wraps silently
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from engine.players import make_player
    from engine.rules.board import Board

    while header := read.read(_HEADER.size):
        (size,) = _HEADER.unpack(header)
        job = _job_decoder.decode(read.read(size))
        try:
            board = Board(job.variant, job.moves)
            decision = make_player(job.spec, seed=job.seed).quick(board)
        except Exception as error:  # noqa: BLE001  (a job it cannot answer waits for the pool)
            print(f"{job.spec} at {job.moves}: {error!r}", file=sys.stderr, flush=True)
            decision = None
        body = _encoder.encode(decision)
        write.write(_HEADER.pack(len(body)) + body)
        write.flush()


def main() -> None:
    die_with_parent()
    nice = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if nice:
        os.nice(nice)
    # the frames keep the real stdout; anything else printed goes to stderr
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)

