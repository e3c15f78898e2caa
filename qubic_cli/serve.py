"""``qubic serve``: host a Qubic server (lobby, matchmaking, games, computer opponents)."""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
from dataclasses import dataclass
from typing import Any

from qubic_cli.common import fail, missing_extra, port_number, seconds
from qubic_cli.settings import Setting, SettingsError, named_alike, settle
from server.defaults import GRACE, LEASE_TTL
from server.http.loop import uvloop_installed

NAME = "serve"
HELP = "host a server: websocket protocol at /ws, HTTP API, health and metrics"
DESCRIPTION = """\
Host a Qubic server. Clients connect to ws://HOST:PORT/ws (see docs/protocol.md); the same port
serves GET /health (/health/live, /health/ready), /api/lobby, /api/games/{id},
/api/games/{id}.txt, /api/players/{name} and /api/leaderboard, and /metrics (Prometheus) unless
--metrics-listen moves it to an address of its own. Games and players live in one SQLite file, or in
PostgreSQL with --database postgresql://...; unfinished games resume when the server starts
again. SIGINT or SIGTERM shuts it down cleanly.
"""


@dataclass(frozen=True)
class FloodLimit:
    """An option that bounds one kind of flood (docs/security.md): a count N (0: no limit),
    or, for a ``rate``, N a second with bursts of 5 x N. ``what`` says in --help what N is;
    ``field`` is the ``ServerConfig`` field it sets."""

    flag: str
    field: str
    default: float
    what: str
    rate: bool = False

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        if self.rate:
            parser.add_argument(self.flag, type=float, default=self.default, metavar="N",
                                help=f"{self.what} (a burst of 5 x N; default {self.default:g})")
        else:
            parser.add_argument(self.flag, type=int, default=int(self.default), metavar="N",
                                help=f"{self.what} (default {self.default:g}; 0: no limit)")

    def value(self, args: argparse.Namespace) -> float:
        """The limit ``args`` set: a count of 0 or more, a rate of at least 0.1 a second."""
        given: float = getattr(args, self.dest)
        return max(0.1, given) if self.rate else max(0, given)


FLOOD_LIMITS = (
    FloodLimit("--max-connections-per-address", "max_connections_per_address", 64,
               "open websockets one client address may have"),
    FloodLimit("--new-players-per-hour", "new_players_per_address", 30,
               "new players one client address may make an hour"),
    FloodLimit("--password-attempts-per-address", "password_attempts_per_address", 30,
               "password attempts (login, recover) one client address may make at once; 12 "
               "times N come back an hour"),
    FloodLimit("--reports-per-hour", "reports_per_hour", 10,
               "reports one player may make: N at once, N back an hour"),
    FloodLimit("--solve-rate", "solve_rate", 2.0,
               "/api/solve questions a second one client address may ask", rate=True),
    FloodLimit("--puzzles-rate", "puzzles_rate", 5.0,
               "requests a second one client address may make to the puzzles' HTTP routes, "
               "/api/puzzles/* and /api/players/NAME/puzzles", rate=True),
    FloodLimit("--player-games-rate", "player_games_rate", 2.0,
               "/api/players/NAME/games pages a second one client address may ask", rate=True),
)

SETTINGS = (  # every option also from the environment and the file (qubic_cli/settings.py)
    *named_alike("host", "port"),
    Setting("db", "database", "QUBIC_DATABASE_URL", secret=True, location=True),
    *named_alike("computer_workers", "grace", "computer_nice", "computer_time",
                 former={"computer_workers": "ai_workers", "computer_nice": "ai_nice",
                         "computer_time": "ai_time"}),
    *named_alike(*(limit.dest for limit in FLOOD_LIMITS)),
    Setting("trusted_proxy", "trusted_proxies", "QUBIC_TRUSTED_PROXIES", many=True),
    *named_alike("abandon_after"),
    Setting("redis", "redis", "QUBIC_REDIS_URL", secret=True),
    *named_alike("node", "lease_ttl", "log_level", "log_format", "access_log", "drain_after",
                 "metrics_listen", "event_loop", "synchronous", "commit_interval",
                 "commit_max", "pacing"),
    Setting("metrics_token", "metrics_token", "QUBIC_METRICS_TOKEN", secret=True),
    Setting("reserved_name", "reserved_names", "QUBIC_RESERVED_NAMES", many=True),
    *named_alike("spectator_chat", "leaderboard_inactive_days"),
    *named_alike("bots_in_pairing"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="a TOML file of options (default: $QUBIC_CONFIG); flags win over "
                             "QUBIC_* environment variables, which win over the file "
                             "(docs/operations.md)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    parser.add_argument("--port", type=port_number, default=8765,
                        help="port (default 8765; 0: any)")
    parser.add_argument("--db", "--database", dest="db", default="qubic.db", metavar="DB",
                        help="a SQLite file (default ./qubic.db), or a PostgreSQL URL such as "
                             "postgresql://qubic@127.0.0.1/qubic (needs the cluster extra, "
                             "docs/operations.md, Install)")
    parser.add_argument("--computer-workers", "--ai-workers", type=int, default=None, metavar="N",
                        help="processes for computer players (default: cores - 1, at least 1)")
    parser.add_argument("--grace", type=seconds, default=GRACE, metavar="S",
                        help="seconds a dropped player keeps the seat before a claim (default 60)")
    parser.add_argument("--computer-nice", "--ai-nice", type=int, default=None, metavar="N",
                        help="run the computer players N steps below the server's CPU priority, so "
                             "searches never delay the games (0-19; default 10)")
    parser.add_argument("--computer-time", "--ai-time", type=seconds, default=1.0, metavar="S",
                        help="seconds the computer thinks per move at most (default 1)")
    for limit in FLOOD_LIMITS:
        limit.add_to(parser)
    parser.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                        help="a reverse proxy (address or network) whose X-Forwarded-For names "
                             "the client; repeat for several (default: none, the header is "
                             "ignored)")
    parser.add_argument("--abandon-after", type=seconds, default=600.0, metavar="S",
                        help="seconds a game with no human player in it waits before it is "
                             "ended (default 600)")
    parser.add_argument("--redis", default=None, metavar="URL",
                        help="computer moves go to `qubic worker`s on this Redis "
                             "(e.g. redis://127.0.0.1:6379/0) instead of local processes; "
                             "with a PostgreSQL --database the server is one node of a "
                             "cluster (docs/cluster.md)")
    parser.add_argument("--node", default=None, metavar="NAME",
                        help="this node's name in a cluster (default: host-pid-random)")
    parser.add_argument("--lease-ttl", type=seconds, default=LEASE_TTL, metavar="S",
                        help="seconds a cluster node's hold on a game lasts unless renewed: a "
                             "dead node's games are taken over about this much later "
                             "(default 3)")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"], help="logging detail")
    parser.add_argument("--log-format", default="text", choices=["text", "json"],
                        help="text lines, or one JSON object a line (time, level, logger, "
                             "message and fields such as the client's address)")
    parser.add_argument("--access-log", action="store_true",
                        help="log every HTTP request (the qubic.access logger)")
    parser.add_argument("--drain-after", type=float, default=0.0, metavar="S",
                        help="at SIGTERM or SIGINT, first tell every player the server restarts "
                             "in S seconds, start no new game, and stop S seconds later (a "
                             "second signal stops at once; default 0: stop at once)")
    parser.add_argument("--metrics-listen", metavar="HOST:PORT",
                        help="serve /metrics on this address instead of the game's port, "
                             "e.g. 127.0.0.1:9100")
    parser.add_argument("--event-loop", default="auto", choices=["auto", "uvloop", "asyncio"],
                        help="the event loop: uvloop (less CPU a move; docs/benchmarks.md) or "
                             "Python's own asyncio loop (default auto: uvloop where it is "
                             "installed)")
    parser.add_argument("--synchronous", default="full", choices=["full", "normal"],
                        help="SQLite only: full (default) syncs every commit to the disk, so an "
                             "acknowledged move survives a power loss; normal leaves the last "
                             "commits to the operating system: they survive the server being "
                             "killed or crashing, not a power loss (for slow storage, "
                             "such as an SD card)")
    parser.add_argument("--commit-interval", "--commit-window", dest="commit_interval",
                        type=float, default=20.0, metavar="MS",
                        help="group commit's window (SQLite and PostgreSQL): under load the "
                             "moves are "
                             "committed together at most every MS milliseconds (less CPU a "
                             "move, up to MS more latency before its ack); after a quiet spell "
                             "a move commits at once; 0: every turn of the loop's at once "
                             "(default 20)")
    parser.add_argument("--pacing", default="on", choices=["on", "off"],
                        help="SQLite only: under load (8 writes or more a group) the event loop "
                             "waits for each group's commit and naps until the next window "
                             "ends, reading the frames that came meanwhile at once: less CPU "
                             "a move, and what is not a move (a chat line, a lobby request) may "
                             "wait up to a window more; off: the loop wakes for every frame "
                             "(default on)")
    parser.add_argument("--commit-max", type=int, default=64, metavar="N",
                        help="group commit: a group of N writes is committed at once, without "
                             "waiting out the window (default 64)")
    parser.add_argument("--reserved-name", action="append", default=[], metavar="NAME",
                        help="a name new players may not take, beside admin, moderator, "
                             "computer, ... (compared folded: case and look-alike letters); "
                             "repeat for several")
    parser.add_argument("--spectator-chat", action=argparse.BooleanOptionalAction, default=True,
                        help="let spectators chat among themselves (default: on; players "
                             "never see it)")
    parser.add_argument("--bots-in-pairing", action=argparse.BooleanOptionalAction,
                        default=False,
                        help="let bot accounts post and accept seeks and join quick pairing "
                             "(default: off; a bot plays the challenges it accepts)")
    parser.add_argument("--leaderboard-inactive-days", type=float, default=90.0, metavar="D",
                        help="a player with no rated game for D days leaves the leaderboard "
                             "(default 90; 0: never)")
    parser.add_argument("--metrics-token", metavar="TOKEN",
                        help="/metrics asks for 'Authorization: Bearer TOKEN' (give it as "
                             "QUBIC_METRICS_TOKEN or QUBIC_METRICS_TOKEN_FILE, not here)")


def server_config(args: argparse.Namespace) -> Any:
    """The ``ServerConfig`` that ``args`` (already layered) describe; ``SettingsError`` says
    what is wrong with them."""
    from server.http.app import ServerConfig

    if args.computer_workers is not None and args.computer_workers < 1:
        raise SettingsError("--computer-workers must be at least 1")
    if args.computer_nice is not None and not 0 <= args.computer_nice <= 19:
        raise SettingsError("--computer-nice must be 0-19")
    if args.redis is not None and (why := missing_extra("redis")):
        raise SettingsError(f"--redis needs the cluster extra: {why}")
    if args.node is not None and (":" in args.node or not args.node):
        raise SettingsError("--node must be a non-empty name without ':'")
    if args.event_loop == "uvloop" and not uvloop_installed():
        raise SettingsError("--event-loop uvloop: uvloop is not installed here (pip install "
                            "uvloop; it does not run on Windows)")
    if args.metrics_listen is not None:
        from server.http.ops import split_address

        try:
            split_address(args.metrics_listen)
        except ValueError as error:
            raise SettingsError(f"--metrics-listen: {error}") from None
    if args.leaderboard_inactive_days < 0:
        raise SettingsError("--leaderboard-inactive-days must be 0 or more")
    for name in args.reserved_name:
        if not name or len(name) > 24:
            raise SettingsError(f"--reserved-name {name!r} is not a name (1-24 characters)")
    for proxy in args.trusted_proxy:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise SettingsError(
                f"--trusted-proxy {proxy!r} is not an address or network") from None
    config = ServerConfig(
        host=args.host, port=args.port, db_path=args.db, computer_workers=args.computer_workers,
        grace=args.grace, computer_move_time=args.computer_time,
        trusted_proxies=tuple(args.trusted_proxy),
        abandon_after=args.abandon_after, redis_url=args.redis, node=args.node,
        lease_ttl=args.lease_ttl, access_log=args.access_log, metrics_listen=args.metrics_listen,
        drain_after=max(0.0, args.drain_after), metrics_token=args.metrics_token,
        event_loop=args.event_loop, synchronous=args.synchronous.upper(),
        commit_interval=max(0.0, args.commit_interval) / 1000,
        commit_max=max(1, args.commit_max), pacing=args.pacing == "on",
        reserved_names=tuple(args.reserved_name), spectator_chat=args.spectator_chat,
        leaderboard_inactive_days=args.leaderboard_inactive_days,
        bots_in_pairing=args.bots_in_pairing,
    )
    limits: dict[str, Any] = {limit.field: limit.value(args) for limit in FLOOD_LIMITS}
    config = dataclasses.replace(config, **limits)
    if args.computer_nice is not None:
        config = dataclasses.replace(config, computer_nice=args.computer_nice)
    return config


def run(args: argparse.Namespace) -> int:
    from server.computer.local import ComputerError
    from server.errors import BusError, StoreError
    from server.http.app import run as run_server

    try:
        config = settle(args, SETTINGS, NAME, server_config)
    except SettingsError as error:
        return fail(NAME, str(error))
    try:
        run_server(config)
    except (StoreError, ComputerError, BusError) as error:
        return fail(NAME, str(error))
    except OSError as error:
        return fail(NAME, f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
    return 0
