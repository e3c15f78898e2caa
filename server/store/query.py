"""What the SQL stores share beneath their I/O: a query, an operation made of queries, and a
database's dialect.

An operation (``Op``) is a generator that yields ``Query`` objects and is sent each one's
answer; it returns its result. It does no I/O itself (sans-I/O, as in ``websockets``): the
SQLite store runs it on its writer or reader thread, the PostgreSQL store over asyncpg, so the
SQL and the rules around it are written once (``server.store.operations``) and each database
only executes. Queries are written with ``?`` placeholders; a dialect turns them into its own.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from server.store.base import Row

T = TypeVar("T")


@dataclass(frozen=True)
class Query:
    """One statement and what its caller wants back: the first row (``"one"``, None when
    there is none), every row (``"all"``), or how many rows it changed (``"count"``)."""

    sql: str
    params: tuple[Any, ...] = ()
    want: Literal["one", "all", "count"] = "count"


Op = Generator[Query, Any, T]
"""An operation on the database: yields queries, is sent their answers, returns a ``T``."""


def one(sql: str, *params: Any) -> Query:
    """A query for its first row (or None)."""
    return Query(sql, params, "one")


def every(sql: str, *params: Any) -> Query:
    """A query for all its rows."""
    return Query(sql, params, "all")


def change(sql: str, *params: Any) -> Query:
    """A statement whose answer is the number of rows it changed."""
    return Query(sql, params, "count")


def fetch_one(query: Query) -> Op[Row | None]:
    """The first row ``query`` returns, or None (a helper for operations' ``yield from``)."""
    row: Row | None = yield query
    return row


def fetch_all(query: Query) -> Op[list[Row]]:
    """Every row ``query`` returns."""
    rows: list[Row] = yield query
    return rows


def run_count(query: Query) -> Op[int]:
    """How many rows the statement changed."""
    count: int = yield query
    return count


@dataclass(frozen=True)
class Dialect:
    """Where the SQL of two databases differs: column types, row locks, placeholders, the way
    to list tables and to serialise migrations. Everything else is written once."""

    name: str
    real: str  # a double-precision float column
    blob: str
    boolean: str
    false: str  # the literal a boolean column defaults to
    big_integer: str
    row_id: str  # an automatic integer primary key
    timestamp_now: str  # a column that records when its row was written
    table_options: str  # after the moves table (SQLite stores it without a rowid)
    for_update: str  # appended to a SELECT whose rows the transaction writes next
    list_tables: str  # one row per table of ours, its name in the column "name"
    numbered_placeholders: bool  # $1, $2, ... instead of ?
    # the table a game's moves are written to, and read from once the game's journal rows
    # are settled (SQLite: ``move_rows``, under the view ``moves`` that adds the journal's
    # rows, server/store/journal.py; PostgreSQL: ``moves`` itself)
    settled_moves: str

    def sql(self, text: str) -> str:
        """``text`` with its ``?`` placeholders written as this database wants them."""
        return _numbered(text) if self.numbered_placeholders else text


@functools.lru_cache(maxsize=256)
def _numbered(text: str) -> str:
    """``?`` placeholders as ``$1``, ``$2``, ... (our SQL has no ``?`` in a string literal)."""
    count = 0

    def number(_: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"${count}"

    return re.sub(r"\?", number, text)


SQLITE = Dialect(
    name="sqlite",
    real="REAL",
    blob="BLOB",
    boolean="INTEGER",
    false="0",
    big_integer="INTEGER",
    row_id="INTEGER PRIMARY KEY",
    timestamp_now="TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP",
    table_options=" WITHOUT ROWID",
    for_update="",  # the writer holds the whole database (BEGIN IMMEDIATE)
    list_tables="SELECT name FROM sqlite_master WHERE type = 'table'",
    numbered_placeholders=False,
    settled_moves="move_rows",
)

POSTGRES = Dialect(
    name="postgresql",
    real="DOUBLE PRECISION",
    blob="BYTEA",
    boolean="BOOLEAN",
    false="FALSE",
    big_integer="BIGINT",
    row_id="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    timestamp_now="TIMESTAMPTZ NOT NULL DEFAULT now()",
    table_options="",
    for_update=" FOR UPDATE",
    list_tables="SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()",
    numbered_placeholders=True,
    settled_moves="moves",
)
