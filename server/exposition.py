"""The Prometheus text exposition of the server's figures: a HELP and a TYPE line for every
family, counters named ``..._total``, quantile series as summaries, histograms as histograms,
plus the process's own figures (CPU, memory, open files) and the build.

``server.metrics.Metrics`` keeps the figures; this module only writes them out. Every family
the server can export has its help text in ``HELP``: a test reads a live server's whole
exposition with prometheus-client's parser and finds each family there.
"""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Callable, Iterable, Sequence

HELP: dict[str, str] = {
    # counters (Metrics.count)
    "moves": "Moves played and acknowledged (stored before the acknowledgement).",
    "games_started": "Games started on this node.",
    "games_finished": "Games played to a result on this node.",
    "connections_accepted": "Websocket connections accepted.",
    "ai_moves": "Computer moves played.",
    "ai_stale_results": "Computer moves dropped because the game had moved on meanwhile.",
    "hints": "Hints given.",
    "takebacks": "Moves taken back.",
    "closes_cut_short": "Goodbyes that did not finish: the peer saw the connection drop.",
    "cluster_upkeep_failures": "Rounds of the cluster's upkeep that failed.",
    "address_limit_checks_failed_open":
        "Per-address checks answered by this node's own count alone (Redis unreachable).",
    "errors": "Requests refused, by error code (docs/protocol.md lists the codes).",
    "control_action_failures":
        "Control-channel actions this node could not read or carry out.",
    # counters read from their owners (see COUNTED)
    "ai_rebuilds": "Times the computer players' process pool was rebuilt after a worker died.",
    "fleet_jobs_failed": "Computer-move jobs the fleet could not answer.",
    "fleet_stale_answers": "Fleet answers that came after their game had moved on.",
    "cluster_claims": "Games this node took over (their owner gone, or handed over).",
    "cluster_games_handed_off": "Games this node handed to another at shutdown.",
    "cluster_leases_lost": "Game leases this node lost before it released them.",
    "cluster_requests_forwarded": "Game requests forwarded to the game's owner node.",
    "store_write_failures": "Writes the database refused for want of it (full, read-only, gone).",
    "loop_commit_waits": "Times the paced event loop waited for a group's commit (SQLite).",
    "loop_commit_wait_seconds": "Seconds the paced event loop waited for commits (SQLite).",
    "loop_naps": "Naps of the paced event loop until a commit window's end (SQLite).",
    "loop_nap_seconds": "Seconds the paced event loop napped (SQLite).",
    "control_actions": "Control-channel actions (the host's levers) carried out here, by kind.",
    # gauges
    "connections": "Websocket connections open now.",
    "players_online": "Players with at least one connection now.",
    "games": "Games held in memory, by state.",
    "ai_queue": "Computer-move jobs waiting for a worker.",
    "ai_busy": "Computer-move jobs being searched now.",
    "ai_workers": "Computer-player worker processes.",
    "ai_ready": "1 once the computer players are warmed up and answer, else 0.",
    "ai_latency_seconds_last": "Seconds the last computer move took, queue included.",
    "ai_latency_seconds": "Seconds computer moves took, queue included (recent moves).",
    "lobby_subscribers": "Connections following the lobby.",
    "lobby_holder": "1 while this node runs the cluster's lobby, else 0.",
    "lobby_requests_waiting": "Lobby requests sent to the holder and not yet answered.",
    "fleet_queue_depth": "Computer-move jobs waiting on the Redis stream.",
    "fleet_workers_alive": "qubic worker processes that answered recently.",
    "cluster_node": "1, labelled with this node's name.",
    "cluster_games_owned": "Games whose lease this node holds.",
    "cluster_bus_lag_seconds": "Seconds the last echo took through the Redis bus.",
    "cluster_nodes_dead": "Nodes this node has found dead and not seen since.",
    # summaries and histograms
    "event_loop_lag_seconds": "How late the event loop's timer fired (recent samples).",
    "event_loop_lag_histogram_seconds": "How late the event loop's timer fired.",
    "event_loop_own_lag_histogram_seconds":
        "How late the event loop's timer fired, less the time the machine kept it waiting"
        " and the paced loop's pauses.",
    "store_commit_seconds": "Seconds a database commit took.",
    "move_ack_seconds": "Seconds from a move's frame in to its ack queued for the socket.",
    "control_poll_seconds": "Seconds a look at the control table took, its actions included.",
    "gc_pause_seconds": "Garbage-collector pauses, by generation.",
    # the process and the build
    "build_info": "The running build: 1, labelled with its version and Python's.",
    "process_cpu_seconds_total": "CPU seconds this process has used (user and system).",
    "process_resident_memory_bytes": "Resident memory of this process.",
    "process_virtual_memory_bytes": "Virtual memory of this process.",
    "process_open_fds": "File descriptors this process has open.",
    "process_max_fds": "The most file descriptors this process may open.",
    "process_start_time_seconds": "When this process started, in seconds since the epoch.",
}

COUNTERS = ("moves", "games_started", "games_finished", "connections", "ai_moves",
            "ai_stale_results", "hints", "takebacks", "closes_cut_short",
            "cluster_upkeep_failures", "address_limit_checks_failed_open",
            "control_action_failures")
"""Every counter the server raises with ``Metrics.count``: exported at 0 from the start, so a
rate over a fresh server's first minutes is a rate and not "No data"."""

COUNTED = frozenset({"ai_rebuilds", "fleet_jobs_failed", "fleet_stale_answers",
                     "cluster_claims", "cluster_games_handed_off", "cluster_leases_lost",
                     "cluster_requests_forwarded", "store_write_failures", "control_actions",
                     "loop_commit_waits", "loop_commit_wait_seconds", "loop_naps",
                     "loop_nap_seconds"})
"""Figures registered as gauges that only ever grow: exported as counters (``_total``)."""

RENAMED = {"connections": "connections_accepted"}
"""Counters whose name is a gauge's too: ``connections`` counts the connections accepted
(``qubic_connections_accepted_total``), the gauge ``qubic_connections`` those open now."""

_START = time.time()


def help_of(family: str) -> str:
    return HELP.get(family, family.replace("_", " ").capitalize() + ".")


def header(lines: list[str], family: str, kind: str, help_key: str | None = None) -> None:
    lines.append(f"# HELP qubic_{family} {help_of(help_key or family)}")
    lines.append(f"# TYPE qubic_{family} {kind}")


def render_counters(lines: list[str], counters: Iterable[tuple[str, int]]) -> None:
    for name, value in sorted(counters):
        name = RENAMED.get(name, name)
        header(lines, f"{name}_total", "counter", name)
        lines.append(f"qubic_{name}_total {value}")


def render_errors(lines: list[str], errors: Iterable[tuple[str, int]],
                  known: Sequence[str]) -> None:
    """Every code refused so far, and every ``known`` one at 0, so the series exist."""
    counts = dict.fromkeys(known, 0) | dict(errors)
    if not counts:
        return
    header(lines, "errors_total", "counter", "errors")
    for code, value in sorted(counts.items()):
        lines.append(f'qubic_errors_total{{code="{code}"}} {value}')


def render_gauges(lines: list[str], gauges: dict[str, Callable[[], float]]) -> None:
    """Gauges by family; a family with ``quantile`` labels is a summary, one in ``COUNTED`` a
    counter."""
    families: dict[str, list[tuple[str, float]]] = {}
    for name, read in sorted(gauges.items()):
        family, brace, labels = name.partition("{")
        families.setdefault(family, []).append((brace + labels, read()))
    for family, samples in families.items():
        if family in COUNTED:
            header(lines, f"{family}_total", "counter", family)
            lines += [f"qubic_{family}_total{labels} {value:g}" for labels, value in samples]
            continue
        kind = "summary" if all("quantile=" in labels for labels, _ in samples) else "gauge"
        header(lines, family, kind)
        lines += [f"qubic_{family}{labels} {value:g}" for labels, value in samples]


def render_histogram(lines: list[str], name: str, bounds: Sequence[float],
                     counts: Sequence[int], total: float) -> None:
    header(lines, name, "histogram")
    cumulative = 0
    for bound, count in zip([*bounds, "+Inf"], counts, strict=True):
        cumulative += count
        lines.append(f'qubic_{name}_bucket{{le="{bound}"}} {cumulative}')
    lines.append(f"qubic_{name}_sum {total:.6f}")
    lines.append(f"qubic_{name}_count {cumulative}")


def render_process(lines: list[str], version: str) -> None:
    """The build, and this process's CPU, memory and files (from /proc where there is one),
    under the names every Prometheus client library gives them (``process_...``)."""
    header(lines, "build_info", "gauge")
    lines.append(f'qubic_build_info{{version="{version}",'
                 f'python="{platform.python_version()}"}} 1')
    usage = resource.getrusage(resource.RUSAGE_SELF)
    figures: list[tuple[str, str, float]] = [
        ("process_cpu_seconds_total", "counter", usage.ru_utime + usage.ru_stime),
        ("process_start_time_seconds", "gauge", _START),
    ]
    try:
        with open("/proc/self/statm") as statm:
            pages = [int(part) for part in statm.read().split()[:2]]
        page = os.sysconf("SC_PAGE_SIZE")
        figures += [("process_virtual_memory_bytes", "gauge", pages[0] * page),
                    ("process_resident_memory_bytes", "gauge", pages[1] * page),
                    ("process_open_fds", "gauge", len(os.listdir("/proc/self/fd")))]
    except (OSError, ValueError):  # no /proc: the peak resident size is what there is
        figures.append(("process_resident_memory_bytes", "gauge", usage.ru_maxrss * 1024))
    figures.append(("process_max_fds", "gauge", resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    for name, kind, value in figures:
        lines.append(f"# HELP {name} {help_of(name)}")
        lines.append(f"# TYPE {name} {kind}")
        lines.append(f"{name} {value:g}")
