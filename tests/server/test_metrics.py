"""The event-loop lag probe: how late each wake-up is, and how much of that lateness was the
loop's own (code that held it) rather than the machine's (the thread runnable, waiting for a
CPU that other processes had). The run-queue reading is injected here, so the split is tested
without a busy machine; on Linux the real reading comes from /proc."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from server import exposition
from server.metrics import LAG_BUCKETS, LoopLagProbe, Metrics, runqueue_wait
from server.store.sqlite import SQLiteStore
from server.version import VERSION
from tests.server.servers import Server, play, start_private_game


def bucket_of(seconds: float) -> int:
    return next((i for i, bound in enumerate(LAG_BUCKETS) if seconds <= bound), len(LAG_BUCKETS))


async def one_sample(probe: LoopLagProbe, block: float) -> None:
    """Start the probe, hold the loop for ``block`` seconds in its first interval, and stop it
    after that sample is taken."""
    probe.start()
    await asyncio.sleep(0)  # the probe reads its start and goes to sleep
    deadline = time.perf_counter() + block
    while time.perf_counter() < deadline:
        pass  # the loop is held: the probe wakes up late
    while not probe.samples:
        await asyncio.sleep(0.001)
    probe.stop()


async def test_lag_of_a_held_loop_is_its_own() -> None:
    probe = LoopLagProbe(interval=0.001, waited=lambda: 0.0)  # no run-queue wait at all
    await one_sample(probe, 0.03)
    lag = probe.samples[0]
    assert lag >= 0.025
    assert probe.own_buckets == probe.buckets and probe.waited == 0.0
    assert probe.own_buckets[bucket_of(lag)] == 1


async def test_lag_spent_waiting_for_a_cpu_is_not_the_loop_s_own() -> None:
    readings = iter([0.0, 100.0])  # the thread waited for a CPU longer than the whole lag
    probe = LoopLagProbe(interval=0.001, waited=lambda: next(readings, 100.0))
    await one_sample(probe, 0.03)
    lag = probe.samples[0]
    assert probe.buckets[bucket_of(lag)] == 1 and bucket_of(lag) > 0
    assert probe.own_buckets[0] == 1  # nothing of it was the loop's own
    assert probe.waited == pytest.approx(lag)


async def test_without_the_kernel_s_figure_all_lag_counts_as_own() -> None:
    probe = LoopLagProbe(interval=0.001, waited=lambda: None)
    await one_sample(probe, 0.03)
    assert probe.own_buckets == probe.buckets


def test_metrics_render_both_histograms() -> None:
    text = Metrics().render()
    assert 'qubic_event_loop_lag_histogram_seconds_bucket{le="0.005"} 0' in text
    assert 'qubic_event_loop_own_lag_histogram_seconds_bucket{le="+Inf"} 0' in text


@pytest.mark.skipif(sys.platform != "linux", reason="run-queue wait is read from Linux's /proc")
def test_the_run_queue_wait_is_read_and_never_goes_back() -> None:
    first = runqueue_wait()
    assert first is not None and first >= 0
    second = runqueue_wait()
    assert second is not None and second >= first


async def test_the_store_s_commits_are_timed_into_metrics(tmp_path: Path) -> None:
    async with await SQLiteStore.open(tmp_path / "q.db") as store:
        for name in ("ann", "bob", "cat"):
            await store.create_player(name, 0.0)
        assert sum(store.commit_buckets) == store.commits >= 1 and store.commit_seconds > 0
        metrics = Metrics()
        metrics.histograms["store_commit_seconds"] = lambda: (store.commit_buckets,
                                                              store.commit_seconds)
        text = metrics.render()
    assert f'qubic_store_commit_seconds_bucket{{le="+Inf"}} {store.commits}' in text
    assert f"qubic_store_commit_seconds_count {store.commits}" in text


async def test_the_whole_exposition_parses_and_says_what_each_family_is(server: Server) -> None:
    """Read by prometheus-client's own parser after a game: every family has its help text and
    the right type, counters end in ``_total``, quantile series are summaries, and the build
    and the process are there."""
    ann, bob = await server.client("ann"), await server.client("bob")
    game = await start_private_game(server, ann, bob)
    await play(ann, game, "1a1", 0)
    await ann.send(t="move", game=game, cell="1a2", ply=1)
    await ann.error("not_your_turn")
    assert server.running is not None
    async with aiohttp.ClientSession() as session, session.get(
            server.running.http_url + "/metrics") as response:
        text = await response.text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, family in families.items():
        assert family.documentation and family.documentation != exposition.help_of("zz"), name
        bare = name.removeprefix("qubic_")
        assert family.documentation in (exposition.HELP.get(bare),
                                        exposition.HELP.get(bare + "_total"))
        if family.type == "counter":
            assert all(s.name.endswith("_total") for s in family.samples), name
        if any("quantile" in s.labels for s in family.samples):
            assert family.type == "summary", name
    assert families["qubic_moves"].type == "counter"
    assert families["qubic_connections"].type == "gauge"
    assert families["qubic_event_loop_lag_seconds"].type == "summary"
    assert families["qubic_store_commit_seconds"].type == "histogram"
    acks = families["qubic_move_ack_seconds"]  # issue 41: the server's part of a move
    assert acks.type == "histogram"
    assert next(s.value for s in acks.samples if s.name.endswith("_count")) == 2  # and refused
    errors = {s.labels["code"]: s.value for s in families["qubic_errors"].samples}
    assert errors["not_your_turn"] == 1 and errors["bad_cell"] == 0
    build = families["qubic_build_info"].samples[0]
    assert build.labels["version"] == VERSION and build.value == 1
    assert families["process_cpu_seconds"].samples[0].value > 0
    assert families["process_resident_memory_bytes"].samples[0].value > 1 << 20


def test_every_counter_is_exported_from_zero_at_the_start() -> None:
    """A fresh server's moves, games and connections are 0, not absent: a dashboard's rate
    is a rate from the first scrape (issue 39)."""
    families = {f.name: f for f in text_string_to_metric_families(Metrics().render())}
    for name in exposition.COUNTERS:
        family = families[f"qubic_{exposition.RENAMED.get(name, name)}"]
        assert family.type == "counter" and [s.value for s in family.samples] == [0], name
    root = Path(__file__).resolve().parents[2] / "server"
    raised = {m for path in root.rglob("*.py")
              for m in re.findall(r'metrics\.count\("([a-z_]+)"', path.read_text())}
    assert raised and raised <= set(exposition.COUNTERS)


def test_counters_read_from_their_owners_are_counters() -> None:
    metrics = Metrics()
    metrics.gauges["cluster_claims"] = lambda: 3
    metrics.gauges["ai_queue"] = lambda: 1
    families = {f.name: f for f in text_string_to_metric_families(metrics.render())}
    assert families["qubic_cluster_claims"].type == "counter"
    assert families["qubic_cluster_claims"].samples[0].name == "qubic_cluster_claims_total"
    assert families["qubic_ai_queue"].type == "gauge"
    assert "qubic_errors" not in families  # no codes known and none refused: no empty family


async def test_the_version_is_in_the_welcome_and_the_health(server: Server) -> None:
    ann = await server.client()
    welcome = await ann.hello("ann")
    assert welcome["server"] == f"qubic/{VERSION}" and VERSION != "0+unknown"
    assert server.running is not None
    async with aiohttp.ClientSession() as session, session.get(
            server.running.http_url + "/health") as response:
        assert (await response.json())["version"] == VERSION


async def test_metrics_apart_from_the_players_and_behind_a_token(tmp_path: Path) -> None:
    """``metrics_listen`` moves /metrics off the game's port (404 there, /health stays) to a
    listener of its own; ``metrics_token`` asks for the bearer token (401 without it)."""
    apart = Server(tmp_path / "q.db", metrics_listen="127.0.0.1:0", metrics_token="s3cret")
    running = await apart.start()
    try:
        assert running.ops_port is not None
        ops = f"http://127.0.0.1:{running.ops_port}"
        async with aiohttp.ClientSession() as session:
            async with session.get(running.http_url + "/metrics") as response:
                assert response.status == 404
            async with session.get(running.http_url + "/health") as response:
                assert response.status == 200
            async with session.get(ops + "/metrics") as response:
                assert response.status == 401
                assert (await response.json())["code"] == "not_authenticated"
            async with session.get(ops + "/metrics",
                                   headers={"Authorization": "Bearer wrong"}) as response:
                assert response.status == 401
            async with session.get(ops + "/metrics",
                                   headers={"Authorization": "Bearer s3cret"}) as response:
                assert response.status == 200
                assert "qubic_build_info" in await response.text()
    finally:
        await apart.stop()
