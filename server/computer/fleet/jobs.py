"""The engine fleet's wire, shared by its node side and its worker side: a job and its
answer as they travel through Redis, the key names, and the timings both sides keep (see
``server.computer.fleet`` for the keys and what holds)."""

from __future__ import annotations

import contextlib
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from engine.players import Decision
from server.computer.moves import ComputerError, ComputerJob
from server.errors import BusError
from server.redis_io.clients import connect

GROUP = "workers"
HEARTBEAT = 2.0  # seconds between a worker's heartbeats
ALIVE = 10.0  # seconds since its last heartbeat for a worker to count as alive
RECLAIM_GRACE = 0.5  # seconds past a job's time before another worker may claim it
POLL = 0.25  # seconds a worker waits for a new job before it looks for stale ones again
EXPIRES = 120.0  # seconds a job stays worth answering, past which it is dropped unplayed
STREAM_MAX = 10_000  # entries kept in a job or answer stream (approximate trim)
LEVELS = tuple(f"level{n}" for n in range(1, 9))
NO_WORKER = "no computer player is connected; the game goes on when one is"


class Job(msgspec.Struct, frozen=True):
    """A job on the wire: who asks, the search, and until when an answer is wanted."""

    id: str
    node: str
    variant: str
    moves: tuple[int, ...]
    spec: str
    seed: int
    time: float | None
    depth: int | None
    expires: float  # unix seconds

    def computer_job(self) -> ComputerJob:
        """The search this job asks for, as the pool takes it."""
        return ComputerJob(self.variant, self.moves, self.spec, self.seed, self.time, self.depth)


class JobAnswer(msgspec.Struct, frozen=True):
    """An answer on the wire: the job's id, the worker, and the decision or why there is none."""

    job: str
    worker: str
    decision: Decision | None = None
    error: str | None = None


encode = msgspec.json.encode
job_decoder = msgspec.json.Decoder(Job)
answer_decoder = msgspec.json.Decoder(JobAnswer)


async def open_redis(url: str, timeout: float = 5.0) -> aioredis.Redis:
    """``server.redis_io.clients.connect``, raising ``ComputerError`` (the computer players' error)
    instead."""
    try:
        return await connect(url, timeout)
    except BusError as error:
        raise ComputerError(str(error)) from None


class Keys:
    """The fleet's Redis key names under one prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.workers = f"{prefix}fleet:workers"

    def jobs(self, spec: str) -> str:
        return f"{self.prefix}fleet:jobs:{spec}"

    def answers(self, node: str) -> str:
        return f"{self.prefix}fleet:answers:{node}"

    def worker(self, worker: str) -> str:
        return f"{self.prefix}fleet:worker:{worker}"

    def cancel(self, job: str) -> str:
        return f"{self.prefix}fleet:cancel:{job}"


async def ensure_group(client: Any, stream: str) -> None:
    """Create ``stream``'s consumer group of workers unless it exists."""
    with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
        await client.xgroup_create(stream, GROUP, id="0", mkstream=True)


def as_text(value: Any) -> str:
    """A Redis reply's bytes as text."""
    return value.decode() if isinstance(value, bytes) else str(value)
