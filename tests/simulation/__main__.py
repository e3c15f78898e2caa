"""Run or replay one simulation: ``python -m tests.simulation --seed 123 --steps 400 [--cluster]``.

Prints every step as it runs, then the violations and a summary; exits 1 when a checker not in
``KNOWN_BUGS`` failed (``--strict``: any checker)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from typing import Any

from .backends import Backend, Cluster, Embedded, cluster_services, pace_always
from .invariants import CHECKERS, ON_EVERY_FRAME, known
from .world import World, simulate


def report(world: World, quiet: bool = False) -> list[str]:
    """The lines that say what a run found."""
    lines = []
    failures = world.failures()
    mode = world.backend.mode
    seen_known = [v for v in world.violations if known(v.checker, mode)]
    if failures:
        lines.append(f"seed {world.seed}: {len(failures)} violations of checkers that must hold:")
        lines += [v.line() for v in failures[:40]]
    if seen_known and not quiet:
        lines.append(f"seed {world.seed}: {len(seen_known)} violations of known bugs "
                     "(KNOWN_BUGS):")
        seen: set[str] = set()
        for v in seen_known:
            if v.checker not in seen:
                seen.add(v.checker)
                lines.append(v.line() + f"   [{known(v.checker, mode)}]")
    lines.append("summary: " + json.dumps(world.summary()))
    never = sorted(set(CHECKERS) - set(world.checks) - ON_EVERY_FRAME)
    if never and not quiet:
        lines.append(f"checkers this run never reached: {', '.join(never)}")
    return lines


async def run_one(seed: int, steps: int, cluster: bool, echo: bool) -> World:
    log = print if echo else None
    if not cluster:
        return await simulate(Embedded(), seed, steps, log)
    async with cluster_services() as services:
        backend: Backend = Cluster(*await services.fresh())
        return await simulate(backend, seed, steps, log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.simulation", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--cluster", action="store_true", help="two nodes on Redis + PostgreSQL")
    parser.add_argument("--strict", action="store_true", help="known bugs fail the run too")
    parser.add_argument("--quiet", action="store_true", help="no step log, only the findings")
    parser.add_argument("--pace-always", action="store_true",
                        help="the embedded server's loop paces after every group, not only "
                             "under load (server.store.pacing.NAP_MIN = 1)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL)
    if args.pace_always:
        pace_always()
    world = asyncio.run(run_one(args.seed, args.steps, args.cluster, not args.quiet))
    for line in report(world):
        print(line)
    failed: list[Any] = world.violations if args.strict else world.failures()
    if failed:
        print(f"replay: python -m tests.simulation --seed {args.seed} --steps {args.steps}"
              + (" --cluster" if args.cluster else "")
              + (" --pace-always" if args.pace_always else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
