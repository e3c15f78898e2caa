"""The simulation's large run (issue 36), outside CI: many seeds, thousands of steps, embedded
and on a two-node cluster.

    flock /tmp/qubic-heavy.lock .venv/bin/python bench/simulate.py --seeds 1-20 --steps 300
    flock /tmp/qubic-heavy.lock .venv/bin/python bench/simulate.py --seeds 1-10 --cluster

Each seed is one run of ``tests/simulation`` (docs/simulation.md) on a fresh server (the cluster
runs share one Redis and one PostgreSQL server, a new database each). Printed: a line a seed
(steps, players, sockets, games, acknowledged moves, checks, violations by checker, seconds),
then the totals and, for every checker that failed, the first seed and step where it did with
the command that replays it. Exit 1 when a checker outside ``KNOWN_BUGS`` failed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.simulation.backends import (  # noqa: E402
    Cluster,
    Embedded,
    cluster_services,
    pace_always,
)
from tests.simulation.invariants import (  # noqa: E402
    CHECKERS,
    KNOWN_BUGS,
    ON_EVERY_FRAME,
    Violation,
    known,
)
from tests.simulation.world import World, simulate  # noqa: E402


def seeds_of(text: str) -> list[int]:
    """``1-20`` or ``3,7,9`` or a mix."""
    out: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        out += list(range(int(first), int(last or first) + 1))
    return out


async def run(seeds: list[int], steps: int, cluster: bool) -> list[World]:
    worlds = []
    if not cluster:
        for seed in seeds:
            worlds.append(await simulate(Embedded(), seed, steps))
            print(line(worlds[-1]), flush=True)
        return worlds
    async with cluster_services() as services:
        for seed in seeds:
            worlds.append(await simulate(Cluster(*await services.fresh()), seed, steps))
            print(line(worlds[-1]), flush=True)
    return worlds


def line(world: World) -> str:
    s = world.summary()
    found = ", ".join(f"{k} {v}" for k, v in sorted(s["violations"].items())) or "none"
    return (f"seed {s['seed']:>4}: {s['steps']} steps, {s['players']} players, "
            f"{s['sockets']} sockets, {s['games']} games, {s['acked_moves']} moves acked, "
            f"{s['checks']} checks of {s['checkers']} checkers, "
            f"{getattr(world, 'elapsed', 0):.0f} s; violations: {found}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1-10", help="e.g. 1-20 or 3,7,9")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--pace-always", action="store_true",
                        help="the SQLite server's loop paces after every group "
                             "(python -m tests.simulation --pace-always)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    if args.pace_always:
        pace_always()
    seeds = seeds_of(args.seeds)
    began = time.monotonic()
    mode = " --cluster" if args.cluster else ""
    replay = mode + (" --pace-always" if args.pace_always else "")
    worlds = asyncio.run(run(seeds, args.steps, args.cluster))
    first: dict[str, tuple[int, Violation]] = {}
    counts: dict[str, int] = {}
    for world in worlds:
        for v in world.violations:
            counts[v.checker] = counts.get(v.checker, 0) + 1
            if v.checker not in first or v.step < first[v.checker][1].step:
                first[v.checker] = (world.seed, v)
    checkers_run = set().union(*(w.checks for w in worlds))
    print(f"\n{len(worlds)} seeds, {sum(w.step for w in worlds)} steps, "
          f"{sum(len(w.clients) for w in worlds)} sockets, "
          f"{sum(len(w.players) for w in worlds)} players, "
          f"{sum(len(w.acked) for w in worlds)} moves acked, "
          f"{sum(sum(w.checks.values()) for w in worlds)} checks of {len(checkers_run)} "
          f"checkers, {time.monotonic() - began:.0f} s ({mode.strip() or 'embedded'})")
    for checker in sorted(first):
        seed, v = first[checker]
        why = known(checker, mode.strip("- ") or "embedded")
        tag = f"known: {why}" if why else "NEW"
        print(f"  {checker}: {counts[checker]} violations ({tag}); first at seed {seed} step "
              f"{v.step}: {v.detail}\n    replay: python -m tests.simulation --seed {seed} "
              f"--steps {v.step}{replay}")
    never = sorted(set(CHECKERS) - checkers_run - ON_EVERY_FRAME)
    if never:
        print(f"  checkers never run: {', '.join(never)}")
    quiet = sorted({n.partition("@")[0] for n in KNOWN_BUGS} & checkers_run - set(first))
    if quiet:
        print(f"  known bugs checked and never seen: {', '.join(quiet)}")
    return 1 if any(not known(c, mode.strip("- ") or "embedded") for c in first) else 0


if __name__ == "__main__":
    sys.exit(main())
