"""How to run a server: every setting ``start_server`` reads, with its default.

``qubic serve`` fills it from flags, the environment and a file (``qubic_cli/settings.py``);
tests and benchmarks build it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.computer.local import DEFAULT_NICE
from server.defaults import GRACE, LEASE_TTL
from server.node.session import DEFAULT_MAX_QUEUE, DEFAULT_MAX_QUEUE_BYTES
from server.protocol import HEARTBEAT_SECONDS, RATE_LIMIT_BURST, RATE_LIMIT_PER_SECOND

CLOSE_WAIT = 2.0  # seconds a closing connection may take to say goodbye


@dataclass(frozen=True)
class ServerConfig:
    """How to run a server: where it listens, its database, workers and limits."""

    host: str = "127.0.0.1"
    port: int = 8765
    db_path: str = "qubic.db"  # a SQLite file, or a postgresql:// URL (server/store/factory.py)
    computer_workers: int | None = None  # default: cores - 1, at least 1
    computer_nice: int = DEFAULT_NICE  # the computer players run this many steps lower (0-19)
    grace: float = GRACE
    computer_move_time: float = 1.0
    heartbeat: float = HEARTBEAT_SECONDS
    rate: float = RATE_LIMIT_PER_SECOND
    burst: int = RATE_LIMIT_BURST
    max_queue: int = DEFAULT_MAX_QUEUE
    max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES
    close_wait: float = CLOSE_WAIT  # seconds a closing connection may take to say goodbye
    synchronous: str = "FULL"
    commit_interval: float | None = None  # group commit's window, s (None: the default)
    commit_max: int | None = None  # writes that fill a group at once (None: the default)
    pacing: bool = True  # SQLite: under load the loop keeps the window's time (store/pacing.py)
    max_connections_per_address: int = 0  # open websockets per client address; 0: no limit
    new_players_per_address: int = 0  # new players an address may make an hour; 0: no limit
    password_attempts_per_address: int = 30  # at once (12 times that an hour); 0: no limit
    trusted_proxies: tuple[str, ...] = ()  # addresses or networks whose X-Forwarded-For counts
    abandon_after: float = 600.0  # seconds a game with no human in it waits before it ends
    redis_url: str | None = None  # computer moves go to `qubic worker`s on this Redis
    # With redis_url and a PostgreSQL database the server is a node of a cluster
    # (server/cluster/cluster_node.py): its name (default host-pid-random) and its game
    # leases' time.
    node: str | None = None
    lease_ttl: float = LEASE_TTL
    access_log: bool = False  # a line per HTTP request on the qubic.access logger
    metrics_listen: str | None = None  # "HOST:PORT": /metrics there, not on the game's port
    metrics_token: str | None = None  # /metrics asks for "Authorization: Bearer <token>"
    drain_after: float = 0.0  # at SIGTERM: tell the players, start no game, stop this late
    solve_rate: float = 2.0  # /api/solve questions a second per client address (burst 5x)
    puzzles_rate: float = 5.0  # /api/puzzles/* requests a second per client address (burst 5x)
    player_games_rate: float = 2.0  # /api/players/{name}/games a second per address (burst 5x)
    reports_per_hour: int = 10  # reports a player may make at once, that many back an hour
    event_loop: str = "auto"  # "uvloop", "asyncio", or "auto": uvloop where it is installed
    reserved_names: tuple[str, ...] = ()  # refused to new players beside the built-in ones
    spectator_chat: bool = True  # spectators may chat among themselves
    leaderboard_inactive_days: float = 90.0  # days without a rated game off the board; 0: never
    bots_in_pairing: bool = False  # bot accounts may seek and pair (default: challenges only)
    extra: dict[str, Any] = field(default_factory=dict)
