"""``eventually(check)``: the one way a test waits for a state it cannot be told of. It polls
``check`` until it returns something true and returns that; past the deadline the test fails
saying what never happened. The deadline is only a bound on a failure: no test asserts time."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

TIMEOUT = 60.0  # seconds, for a loaded machine; only a failing test waits it out
EVERY = 0.05  # seconds between two looks


async def eventually(
    check: Callable[[], T | Awaitable[T]],
    what: str = "",
    *,
    timeout: float = TIMEOUT,
    every: float = EVERY,
    pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
    detail: Callable[[], str] | None = None,
) -> T:
    """Call ``check()`` (awaiting it when it is a coroutine) until its result is true; return
    that result. After ``timeout`` seconds raise ``AssertionError`` naming ``what``, the last
    result and ``detail()``. ``pause`` lets the thing under test run between two looks (a
    Textual ``Pilot.pause``, say); ``asyncio.sleep`` by default."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result  # type: ignore[return-value]
        if loop.time() >= deadline:
            more = f"; {detail()}" if detail is not None else ""
            raise AssertionError(f"not within {timeout} s: {what or check}"
                                 f" (last: {result!r}){more}")
        await pause(every)
