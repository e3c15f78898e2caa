"""``qubic worker``: answer computer moves for the servers that share a Redis."""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from qubic_cli.common import add_log_arguments, fail, missing_extra
from qubic_cli.settings import Setting, SettingsError, mask, settle

NAME = "worker"
HELP = "search computer moves for Qubic servers, taking jobs from Redis"
DESCRIPTION = """\
Search computer moves for every `qubic serve --redis URL` that shares the same Redis: the
worker pulls jobs from Redis streams (it needs no open port), searches them in its own
processes and answers the node that asked. Run as many as you like, on any machine. It
compiles the engine before taking its first job and stops cleanly on Ctrl-C or SIGTERM
(a job it was searching is taken over by another worker).
"""


SETTINGS = (  # every option also from the environment and the file (qubic_cli/settings.py)
    Setting("redis", "redis", "QUBIC_REDIS_URL", secret=True),
    Setting("processes", "processes", "QUBIC_PROCESSES"),
    Setting("levels", "levels", "QUBIC_LEVELS"),
    Setting("nice", "nice", "QUBIC_NICE"),
    Setting("log_level", "log_level", "QUBIC_LOG_LEVEL"),
    Setting("log_format", "log_format", "QUBIC_LOG_FORMAT"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="a TOML file of options (default: $QUBIC_CONFIG; docs/operations.md)")
    parser.add_argument("--redis", default=None, metavar="URL",
                        help="the servers' Redis, e.g. redis://127.0.0.1:6379/0 (required: here, "
                             "as QUBIC_REDIS_URL or QUBIC_REDIS_URL_FILE, or in the file)")
    parser.add_argument("--processes", type=int, default=None, metavar="N",
                        help="searches at once (default: cores - 1, at least 1)")
    parser.add_argument("--levels", default="1-8", metavar="LIST",
                        help="the computer levels to play, e.g. 1-8, 7,8 or 1-3,8 (default 1-8)")
    parser.add_argument("--nice", type=int, default=None, metavar="N",
                        help="run the searches N steps below this process (0-19; default 10)")
    add_log_arguments(parser)


def server_config(args: argparse.Namespace) -> dict[str, Any]:
    """What ``args`` (already layered) ask of the worker; ``SettingsError`` says what is
    wrong (the name matches ``qubic_cli.serve``'s, for ``qubic config check``)."""
    if why := missing_extra("redis"):
        raise SettingsError(f"qubic worker needs the cluster extra: {why}")
    from server.computer.fleet.worker import parse_levels
    from server.computer.local import DEFAULT_NICE

    if not args.redis:
        raise SettingsError("--redis is required (or QUBIC_REDIS_URL, or redis in the file)")
    if args.processes is not None and args.processes < 1:
        raise SettingsError("--processes must be at least 1")
    nice = DEFAULT_NICE if args.nice is None else args.nice
    if not 0 <= nice <= 19:
        raise SettingsError("--nice must be 0-19")
    try:
        levels = parse_levels(args.levels)
    except ValueError as error:
        raise SettingsError(f"--levels: {error}") from None
    return {"redis": args.redis, "processes": args.processes, "nice": nice, "levels": levels}


def run(args: argparse.Namespace) -> int:
    from server.computer.moves import ComputerError

    try:
        config = settle(args, SETTINGS, NAME, server_config)
    except SettingsError as error:
        return fail(NAME, str(error))
    from server.computer.fleet.jobs import open_redis
    from server.computer.fleet.worker import FleetWorker
    from server.computer.local import ComputerPool

    nice, levels = config["nice"], config["levels"]

    async def main() -> None:
        client = await open_redis(args.redis)
        pool = ComputerPool(args.processes, nice=nice)
        worker = FleetWorker(client, pool, levels=levels)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(f"Qubic worker {worker.name}: {pool.workers} processes, levels {args.levels}, "
              f"Redis {mask(args.redis, True)}", flush=True)
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
