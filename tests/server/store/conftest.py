"""The store tests' own fixtures (``database`` and ``store``, on SQLite and PostgreSQL, are
tests/server/conftest.py's)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.store.base import Store
from server.store.factory import open_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Where a SQLite database goes."""
    return tmp_path / "qubic.db"


@pytest.fixture
async def other_node(database: str, store: Store) -> AsyncIterator[Store]:
    """A second store on the same database, as a second server node would open it."""
    opened = await open_store(database)
    try:
        yield opened
    finally:
        await opened.close()
