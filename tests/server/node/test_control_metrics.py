"""The control channel on ``/metrics`` (server/node/control.py): the actions carried out, by
kind, the ones that failed, and how long each poll of the control table took, read with
prometheus-client's parser from a real server after real levers are pulled."""

from __future__ import annotations

from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from server.node.control import KINDS
from tests.eventually import eventually
from tests.server.node.test_levers import admin, connected_moderator
from tests.server.servers import Server


async def families(server: Server) -> dict[str, Any]:
    assert server.running is not None
    async with aiohttp.ClientSession() as http, http.get(
            server.running.http_url + "/metrics") as reply:
        text = await reply.text()
    return {f.name: f for f in text_string_to_metric_families(text)}


def actions(found: dict[str, Any]) -> dict[str, float]:
    family = found["qubic_control_actions"]
    assert family.type == "counter"
    return {s.labels["kind"]: s.value for s in family.samples}


def polls(found: dict[str, Any]) -> float:
    family = found["qubic_control_poll_seconds"]
    assert family.type == "histogram"
    return next(s.value for s in family.samples if s.name.endswith("_count"))


async def test_actions_by_kind_failures_and_the_polls_duration_are_on_metrics(
    server: Server,
) -> None:
    before = await families(server)
    assert actions(before) == dict.fromkeys(KINDS, 0)  # every kind there from the start
    assert before["qubic_control_action_failures"].samples[0].value == 0
    bob = await server.client("bob")
    mod = await connected_moderator(server)
    assert (await admin(server, "announce", "restarting soon"))[0] == 0
    await bob.expect("announce")
    assert (await mod.request(t="mute", name="bob", reason="shouting"))["t"] == "ack"
    assert server.running is not None
    await server.running.store.apply(control='{"do": "no_such_action"}')  # from a newer node

    async def failure_counted() -> dict[str, Any] | None:
        found = await families(server)
        return found if found["qubic_control_action_failures"].samples[0].value == 1 else None

    found = await eventually(failure_counted, "the control poll carried the actions out")
    counted = actions(found)
    # the grant that made marta a moderator told every node her roles changed
    assert (counted["announce"], counted["mute"], counted["roles"]) == (1, 1, 1)
    assert sum(counted.values()) == 3
    assert found["qubic_control_action_failures"].samples[0].value == 1
    assert polls(found) > polls(before)
    total = next(s.value for s in found["qubic_control_poll_seconds"].samples
                 if s.name.endswith("_sum"))
    assert total > 0
