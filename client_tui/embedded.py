"""The offline mode's server, as the client sees it: what it needs of a started server, where its
database lives, and the key its tokens are kept under.

The server itself is the same code as ``qubic serve``; the command line (``qubic_cli.embedded``)
hands the client a function that starts it, so the client never imports the server's app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import platformdirs

from client_tui.tokens import APP_NAME


class EmbeddedServer(Protocol):
    """What the client needs of a started server."""

    @property
    def ws_url(self) -> str: ...

    @property
    def http_url(self) -> str: ...

    async def stop(self) -> None: ...


def default_db_path() -> Path:
    """``qubic.db`` in the user's data directory (e.g. ``~/.local/share/qubic``)."""
    return platformdirs.user_data_path(APP_NAME) / "qubic.db"


def server_key(db_path: Path) -> str:
    """The key under which tokens for the embedded server on ``db_path`` are remembered."""
    return f"embedded:{db_path.resolve()}"


StartLocal = Callable[[Path], Awaitable[EmbeddedServer]]
"""Starts the offline server with its database at the path given (``qubic_cli.embedded``)."""
