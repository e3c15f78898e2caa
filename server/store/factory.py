"""Open the store a ``--database`` names: a PostgreSQL URL, or else the path of a SQLite file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from server.errors import StoreError
from server.store.base import Store
from server.store.urls import POSTGRES_SCHEMES, is_postgres_url, redact

__all__ = ["POSTGRES_SCHEMES", "describe", "is_postgres_url", "open_store", "redact"]


def describe(database: str | os.PathLike[str]) -> str:
    """The database named for a host, with no password: ``SQLite /abs/path/qubic.db`` or
    ``PostgreSQL postgresql://qubic:***@db:5432/qubic`` (the start-up log, ``qubic db
    status``)."""
    if is_postgres_url(database):
        return f"PostgreSQL {redact(str(database))}"
    return f"SQLite {Path(database).resolve()}"


async def open_store(
    database: str | os.PathLike[str], *, synchronous: Literal["NORMAL", "FULL"] = "FULL",
    commit_interval: float | None = None, commit_max: int | None = None,
    pacing: bool = True,
) -> Store:
    """The PostgreSQL store for a ``postgresql://`` URL, else the SQLite store on that file.

    ``commit_interval`` (the group commit's window in seconds) and ``commit_max`` (writes
    that make a group full) apply to both (None: the store's default); ``synchronous`` and
    ``pacing`` (``server.store.pacing``) to SQLite only (PostgreSQL's durability is its own
    setting, and its commits are the loop's own work).
    Raises ``StoreError`` saying why if the database cannot be used.
    """
    grouping: dict[str, Any] = {}
    if commit_interval is not None:
        grouping["commit_interval"] = commit_interval
    if commit_max is not None:
        grouping["commit_max"] = commit_max
    if is_postgres_url(database):
        try:  # asyncpg comes with the cluster extra, and is imported only when used
            from server.store.postgres import PostgresStore
        except ModuleNotFoundError as missing:
            from server.version import install_extra

            raise StoreError(
                f"a PostgreSQL database needs {missing.name}: {install_extra()}"
            ) from None
        return await PostgresStore.open(str(database), **grouping)
    from server.store.sqlite import SQLiteStore

    return await SQLiteStore.open(database, synchronous=synchronous, pacing=pacing, **grouping)
