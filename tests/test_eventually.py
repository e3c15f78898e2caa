"""``eventually``: it returns the first true result, awaits a coroutine check, lets the thing
under test run between looks, and fails naming what never happened."""

from __future__ import annotations

import asyncio

import pytest

from tests.eventually import eventually


async def test_it_returns_the_first_true_result_of_a_plain_check() -> None:
    looks: list[int] = []

    def check() -> int:
        looks.append(1)
        return len(looks) if len(looks) >= 3 else 0

    assert await eventually(check, every=0) == 3


async def test_it_awaits_a_coroutine_check_and_the_world_moves_between_looks() -> None:
    done = asyncio.Event()
    asyncio.get_running_loop().call_soon(done.set)

    async def check() -> str | None:
        return "set" if done.is_set() else None

    assert await eventually(check) == "set"


async def test_it_fails_saying_what_never_happened_and_the_last_result() -> None:
    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    with pytest.raises(AssertionError, match=r"the door opened \(last: \[\]\); shut"):
        await eventually(lambda: [], "the door opened", timeout=0, pause=pause,
                         detail=lambda: "shut")
    assert pauses == []  # past the deadline at the first look: no pause
