"""``qubic worker``: answer computer moves for the servers that share a Redis."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from qubic_cli.common import fail

NAME = "worker"
HELP = "search computer moves for Qubic servers, taking jobs from Redis"
DESCRIPTION = """\
Search computer moves for every `qubic serve --redis URL` that shares the same Redis: the
worker pulls jobs from Redis streams (it needs no open port), searches them in its own
processes and answers the node that asked. Run as many as you like, on any machine. It
compiles the engine before taking its first job and stops cleanly on Ctrl-C or SIGTERM
(a job it was searching is taken over by another worker).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis", required=True, metavar="URL",
                        help="the servers' Redis, e.g. redis://127.0.0.1:6379/0")
    parser.add_argument("--processes", type=int, default=None, metavar="N",
                        help="searches at once (default: cores - 1, at least 1)")
    parser.add_argument("--levels", default="1-8", metavar="LIST",
                        help="the computer levels to play, e.g. 1-8, 7,8 or 1-3,8 (default 1-8)")
    parser.add_argument("--nice", type=int, default=None, metavar="N",
                        help="run the searches N steps below this process (0-19; default 10)")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"])


def run(args: argparse.Namespace) -> int:
    from server.engine_pool.computer_moves import ComputerError
    from server.engine_pool.fleet.jobs import open_redis
    from server.engine_pool.fleet.worker import FleetWorker, parse_levels
    from server.engine_pool.local import DEFAULT_NICE, ComputerPool

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.processes is not None and args.processes < 1:
        return fail(NAME, "--processes must be at least 1")
    nice = DEFAULT_NICE if args.nice is None else args.nice
    if not 0 <= nice <= 19:
        return fail(NAME, "--nice must be 0-19")
    try:
        levels = parse_levels(args.levels)
    except ValueError as error:
        return fail(NAME, f"--levels: {error}")

    async def main() -> None:
        client = await open_redis(args.redis)
        pool = ComputerPool(args.processes, nice=nice)
        worker = FleetWorker(client, pool, levels=levels)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"Qubic worker {worker.name}: {pool.workers} processes, levels {args.levels}, "
              f"Redis {args.redis}", flush=True)
        try:
            await worker.run(stop)
        finally:
            await pool.close()
            await client.aclose()

    try:
        asyncio.run(main())
    except ComputerError as error:
        return fail(NAME, str(error))
    return 0
