"""Where an operation meets a database: ``SQLRunner``, the two hooks that run an ``Op``
(``server.store.query``, which does no I/O itself)."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from server.store.query import Dialect, Op

T = TypeVar("T")


class SQLRunner:
    """The hooks that ``SQLiteStore`` and ``PostgresStore`` implement, declared once for every
    part of ``SQLStore`` (its accounts, its levers) that runs operations through them."""

    dialect: ClassVar[Dialect]

    async def _write(self, op: Op[T], *, along: bool = False) -> T:
        """Run ``op`` in a transaction of its own (or a savepoint of a group) and commit it;
        returns its result once committed. Errors of the database become ``StoreError``.
        ``along``: a write as frequent as the moves under load (a game's start or end), which
        may join the moves' group waiting for the window (SQLite) rather than commit alone."""
        raise NotImplementedError

    async def _read(self, op: Op[T], *, snapshot: bool = False) -> T:
        """Run ``op``, which only reads; ``snapshot``: all its queries see one snapshot."""
        raise NotImplementedError
