"""The offline mode's server: the same code as ``qubic serve``, started inside the client.

It runs in the client's own asyncio loop (the computer players search in a process pool, so
the loop stays free), listens on 127.0.0.1 on a free port, and keeps its SQLite database in
the user's data directory, so ratings and unfinished games survive between sessions. ``qubic
play`` hands ``start_embedded`` to the client (``client_tui`` imports no server code but the
protocol).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from client_tui.embedded import EmbeddedServer
from server.defaults import GRACE


async def start_embedded(db_path: Path, **options: Any) -> EmbeddedServer:
    """Start the server on 127.0.0.1 (a free port) with its database at ``db_path``."""
    from server.http.app import ServerConfig, start_server  # the server's code loads only offline

    db_path.parent.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {"computer_workers": 1, "grace": GRACE} | options
    config = ServerConfig(host="127.0.0.1", port=0, db_path=str(db_path), **settings)
    server: EmbeddedServer = await start_server(config)
    return server
