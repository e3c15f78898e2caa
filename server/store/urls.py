"""What a ``--database`` string is, and how to show it without its password.

Kept apart from ``server.store.factory`` so a store can name its own URL without importing the
factory that opens it (``postgres`` → ``factory`` → ``postgres`` was a cycle).
"""

from __future__ import annotations

import os
import re

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(database: str | os.PathLike[str]) -> bool:
    return isinstance(database, str) and database.startswith(POSTGRES_SCHEMES)


def redact(url: str) -> str:
    """The URL with its password hidden, fit for a message or a log."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
