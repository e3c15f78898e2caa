"""The simulation's small run, part of the suite: a fixed seed on one embedded server and on a
two-node cluster (real Redis and PostgreSQL). A failure prints the seed, the violations and
the command that replays the run; checkers in ``KNOWN_BUGS`` are reported, not failed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from .__main__ import report
from .backends import Cluster, Embedded
from .client import SimClient
from .invariants import CHECKERS, KNOWN_BUGS, undocumented_codes
from .model import SimGame, SimPlayer
from .world import ROOT, STEPS, World, simulate

SEED = 36
EMBEDDED_STEPS = 90
CLUSTER_STEPS = 50


def fail_with(world: World, command: str) -> None:
    lines = report(world)
    print("\n".join(world.lines[-60:]))
    print("\n".join(lines))
    assert not world.failures(), "\n".join([*lines, f"replay: {command}"])


@pytest.mark.slow
async def test_a_small_run_on_one_server_keeps_every_invariant() -> None:
    world = await simulate(Embedded(), SEED, EMBEDDED_STEPS)
    assert world.checks, "nothing was checked"
    fail_with(world, f"python -m tests.simulation --seed {SEED} --steps {EMBEDDED_STEPS}")


@pytest.mark.slow
async def test_a_small_run_on_two_nodes_keeps_every_invariant(redis_url: str,
                                                              postgres_url: str) -> None:
    world = await simulate(Cluster(redis_url, postgres_url), SEED, CLUSTER_STEPS)
    assert world.checks, "nothing was checked"
    fail_with(world, f"python -m tests.simulation --seed {SEED} --steps {CLUSTER_STEPS} "
                     "--cluster")


def test_every_checker_and_known_bug_is_named_once() -> None:
    assert {name.partition("@")[0] for name in KNOWN_BUGS} <= set(CHECKERS)
    assert {name.partition("@")[2] for name in KNOWN_BUGS} <= {"", "embedded", "cluster"}
    assert all(name.count(".") == 1 for name in CHECKERS)
    source = "".join((Path(__file__).parent / name).read_text(encoding="utf-8")
                     for name in ("world.py", "client.py", "tournament_steps.py",
                                  "bot_steps.py"))
    unused = [name for name in CHECKERS if f'"{name}"' not in source]
    assert not unused, f"checkers nobody checks: {unused}"
    assert all(hasattr(World, f"step_{name}") for name, _ in STEPS)


def test_every_error_code_the_server_may_send_is_documented() -> None:
    assert not undocumented_codes(ROOT)


class Recorder:
    """What a ``SimClient`` would have sent, without a socket."""

    def __init__(self) -> None:
        self.violations: list[tuple[str, str]] = []

    def __call__(self, checker: str, detail: str) -> None:
        self.violations.append((checker, detail))


def frame(**message: Any) -> str:
    return json.dumps(message)


async def test_the_client_applies_only_the_next_version_and_bounds_its_catch_ups() -> None:
    """The versioning rule of docs/protocol.md as the simulated client follows it: a gap asks
    once with ``since``; a catch-up that leaves the gap is a violation and is asked once more;
    after two such the client loads the whole game."""
    seen = Recorder()
    client = SimClient("t#1", "s", seen, frozenset({"stale_move"}))
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    client.send = send  # type: ignore[method-assign]
    client._on_frame(frame(t="game", id="g", variant="4x4", moves=[], status="playing",
                           you="x", version=0))
    client._on_frame(frame(t="move", game="g", ply=1, cell=0, version=1))
    assert client.views["g"].moves == [0]
    client._on_frame(frame(t="chat", game="g", name="a", side="x", text="hi", version=3))
    await _drain()
    assert sent[-1] == {"t": "watch", "game": "g", "since": 1, "id": sent[-1]["id"]}
    client._on_frame(frame(t="chat", game="g", name="a", side="x", text="hi", version=3))
    client._on_frame(frame(t="ack", ref=sent[-1]["id"]))  # version 2 never came
    await _drain()
    assert [c for c, _ in seen.violations] == ["versions.catchup_closes_gap"]
    assert sent[-1]["since"] == 1
    client._on_frame(frame(t="ack", ref=sent[-1]["id"]))
    await _drain()
    assert "since" not in sent[-1], "after two rounds the whole game is asked for"
    client._on_frame(frame(t="game", id="g", variant="4x4", moves=[0], status="playing",
                           you="x", version=3, ref=sent[-1]["id"]))
    assert client.open_gaps() == {} and client.views["g"].version == 3
    assert client.sent_catchup == 3 and client.step_catchup == {"g": 3}


async def _drain() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


class _Quiet:
    """A backend for a world that only checks what its clients hold."""

    mode = "embedded"
    can_restart = False


def _seated_world() -> tuple[World, SimClient, SimClient]:
    """p1 on node a holds game g, where p2 sits o, as told online; p2's socket on b does not
    hold g yet (its frame still on the way)."""
    world = World(_Quiet(), 1)  # type: ignore[arg-type]
    world.games["g"] = SimGame("g", "4x4", 1, 2)
    clients = []
    for uid, node in ((1, "a"), (2, "b")):
        world.players[uid] = SimPlayer(uid, f"p{uid}", "token")
        client = SimClient(f"p{uid}#1", node, world.violation, frozenset())
        client.ws, client.uid, client.token = object(), uid, "token"  # type: ignore[assignment]
        client.last_frame_at = asyncio.get_running_loop().time()
        world.clients.append(client)
        clients.append(client)
    seats = [{"name": "p1", "online": True}, {"name": "p2", "online": True}]
    clients[0]._on_frame(frame(t="game", id="g", variant="4x4", moves=[], status="playing",
                               you="x", version=0, seats=seats))
    return world, clients[0], clients[1]


async def test_a_client_behind_is_looked_at_again_after_a_longer_quiet() -> None:
    """A frame late on a loaded machine (p2's socket told of the game after the first quiet)
    is not a violation; the checks are counted once, by the second look."""
    world, _, late = _seated_world()
    seats = [{"name": "p1", "online": True}, {"name": "p2", "online": True}]
    asyncio.get_running_loop().call_later(
        0.3, late._on_frame, frame(t="game", id="g", variant="4x4", moves=[],
                                   status="playing", you="o", version=0, seats=seats))
    await world.check_streams_settled()
    assert not world.violations, world.violations
    assert world.checks["presence.as_told"] == 2  # each client, each other seat, once
    assert any("a second look" in line for line in world.lines)


async def test_a_client_still_wrong_at_the_second_look_is_a_violation() -> None:
    world, _, _ = _seated_world()
    await world.check_streams_settled()
    assert [v.checker for v in world.violations] == ["presence.as_told"]
    assert world.checks["presence.as_told"] == 1
