"""The server's event loop: uvloop where it is installed, else Python's own.

uvloop (libuv under asyncio's interface, the usual choice under aiohttp) spends less CPU a
move than the standard loop (docs/benchmarks.md, "CPU per move"); everything the server does
works on both, and the tests run the server on each (tests/server/http/test_event_loop.py).
``--event-loop asyncio`` keeps the standard one, e.g. to rule the loop out of a bug.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def loop_name() -> str:
    """"uvloop" or "asyncio": the loop running now (``/health`` says it)."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.startswith("uvloop") else "asyncio"


def run(main: Callable[[], Coroutine[Any, Any, None]], event_loop: str = "auto") -> str:
    """Run ``main()`` to its end on the loop ``event_loop`` names ("uvloop", "asyncio", or
    "auto": uvloop if installed); returns the loop's name."""
    if event_loop == "uvloop" or (event_loop == "auto" and uvloop_installed()):
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
        return "uvloop"
    asyncio.run(main())
    return "asyncio"
