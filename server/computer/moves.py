"""What the hub asks for a computer move, whoever answers it: the job, the interface and its
error.

The hub (``server.node``) sees only :class:`ComputerMoves`; the local process pool
(``server.computer.local.ComputerPool``) and the engine fleet on Redis
(``server.computer.fleet.node.Fleet``) implement it, and either raises :class:`ComputerError`
when it cannot answer. Kept apart from both so the interface names neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from engine.players import Decision
from server.errors import ServerError
from server.protocol import EngineState


class ComputerError(ServerError, RuntimeError):
    """The pool could not produce a move (workers keep dying, or the pool is closed)."""

    code = "ai_unavailable"


@dataclass(frozen=True)
class ComputerJob:
    """One move to find: the position as a variant and its moves, and who plays it."""

    variant: str
    moves: tuple[int, ...]
    spec: str
    seed: int = 0
    time: float | None = 1.0
    depth: int | None = None


class ComputerMoves(Protocol):
    """Where the hub gets the computer's moves: the local ``ComputerPool``, or the engine fleet of
    ``server.computer.fleet`` (``qubic worker``s on Redis)."""

    workers: int  # processes that search
    jobs_done: int
    jobs_failed: int
    last_latency: float
    latencies: list[float]  # recent job latencies in seconds, newest last
    waiting_state: EngineState  # the "engine" message's state while not ready
    waiting_message: str  # and its words

    @property
    def ready(self) -> bool: ...
    @property
    def progress(self) -> float: ...
    @property
    def queued(self) -> int: ...
    @property
    def busy(self) -> int: ...
    async def start(self, *, wait: bool = True) -> None: ...
    async def wait_ready(self) -> None: ...
    async def decide(self, job: ComputerJob) -> Decision: ...
    async def quick(self, job: ComputerJob) -> Decision | None:
        """While not ``ready``: ``job``'s move if it can be had without the compiled engine
        (the local pool's quick path, ``server.computer.quick``), else None."""
        ...
    async def close(self) -> None: ...
    def figures(self) -> dict[str, float]:
        """Figures of its own for /metrics, by gauge name."""
        ...
