"""Processes as Linux shows them in /proc: CPU seconds and memory of a process or of its whole
tree, its children and descendants, the machine's load; and the open-files limit a process
holding thousands of sockets needs."""

from __future__ import annotations

import contextlib
import os
import resource
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def raise_fd_limit(wanted: int = 1 << 16) -> int:
    """Raise this process's soft limit on open files as far as allowed; returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state is [0], ppid [1]);
    raises OSError once the process is gone."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def cpu_seconds(pid: int, gone: float | None = None) -> float:
    """User + system CPU seconds of process ``pid`` so far; ``gone`` if it has exited (or
    OSError when ``gone`` is None)."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        if gone is None:
            raise
        return gone
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def tree_cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds of process ``pid``, and of every process below it (a server's computer workers);
    NaN for both once ``pid`` is gone."""
    own = cpu_seconds(pid, gone=float("nan"))
    if own != own:
        return own, own
    return own, sum(cpu_seconds(child, gone=0.0) for child in descendants(pid))


def rss_kib(pid: int) -> int:
    """Resident set size of process ``pid`` in KiB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError):
                if int(_stat_fields(int(entry.name))[1]) == pid:
                    out.append(int(entry.name))
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``: e.g. a server's resource tracker, fork server and workers
    (the workers are children of the fork server)."""
    found: list[int] = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def machine_seconds() -> tuple[float, float]:
    """CPU seconds busy and idle on the whole machine so far (every core)."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / CLOCK_TICKS, idle / CLOCK_TICKS


def load_average() -> str:
    """The machine's load average over 1, 5 and 15 minutes, as /proc/loadavg writes it."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
