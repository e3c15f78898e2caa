"""SQLite's move journal: a move in play is appended, and settled into its game's place later.

A move is one row of ``move_rows``, keyed by its game and ply (a table without a rowid). Under
load a commit holds a move of each of twenty games or so, and each lands on a leaf page of its
own, written whole to the WAL at the commit and again at the checkpoint; and each move's check
(the game active, the move its next ply) read the game's row and its last ply. That was most
of the writer thread's work a move (docs/benchmarks.md, *The move journal*).

So the writer appends a move of a game in play to ``move_journal``, a rowid table: a group's
moves share a page or two. The journal is settled into ``move_rows`` every ``SETTLE_EVERY``
seconds, sorted by game and ply (a game's moves of those seconds then share a page), at the
store's opening and closing, and a game's own rows when it ends, is called off or a move is
taken back (by their row ids, which the writer keeps; by the game's id when it may not know
them all). The view ``moves`` reads both tables, so every reader sees every committed move;
the writer reads a game's moves from ``move_rows`` alone once it has settled them.

The check is kept by the writer in memory (``MoveJournal.next_ply``) for the games it knows:
those it created, and those whose move it checked in SQL (``operations.append_move``). A game
that ends, is called off or taken back is checked in SQL again at its next move, and the
writer forgets all it knew when another connection has committed since its last transaction
(``PRAGMA data_version``: a tool on the same file) and when a transaction of its failed.
Every move is committed in the transaction that acknowledges it, as before: the journal is
part of the database, under the same WAL and the same ``synchronous``.

Only the writer thread touches a ``MoveJournal`` (one connection, one thread: no lock).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from server.game.records import MoveRecord

T = TypeVar("T")

SETTLE_EVERY = 5.0  # seconds between two settlings of the whole journal (under load)

COLUMNS = "game_id, ply, cell, clock_x, clock_o, at"
JOURNAL_MOVE = f"INSERT INTO move_journal ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"


class MoveJournal:
    """The writer thread's journal of moves, and the check it keeps for the games it knows."""

    def __init__(self, conn: sqlite3.Connection, settle_every: float = SETTLE_EVERY) -> None:
        self.conn = conn
        self.settle_every = settle_every
        self.next_ply: dict[str, int] = {}  # a game known active -> the ply its next move has
        self.rows: dict[str, list[int]] = {}  # a game -> its journal rows written here (seq)
        self.complete = False  # ``rows`` names every journal row (else a game's go by its id)
        self.settled_at = time.monotonic()
        self._version: int | None = None  # PRAGMA data_version at the last transaction

    # -- a transaction -----------------------------------------------------------------------

    def begin(self) -> None:
        """At a transaction's start (the write lock held): if another connection committed
        since the last one, what this writer knew may be stale: forget it."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            if self._version is not None:
                self.forget()
            self._version = version

    def forget(self) -> None:
        """Know nothing: each game's next move is checked in SQL, each game's journal rows are
        found by its id, until the whole journal is settled again."""
        self.next_ply.clear()
        self.rows.clear()
        self.complete = False

    # -- the writes ----------------------------------------------------------------------------

    def started(self, game_id: str) -> None:
        """A game this writer created: active, its first move next."""
        self.next_ply[game_id] = 1

    def append(self, game_id: str, move: MoveRecord) -> bool:
        """Journal ``move`` if it is the next ply of a game known active; False: not known,
        check it in SQL (then ``checked``)."""
        if self.next_ply.get(game_id) != move.ply:
            return False
        seq = self.conn.execute(
            JOURNAL_MOVE, (game_id, move.ply, move.cell, move.clock_x, move.clock_o, move.at)
        ).lastrowid
        assert seq is not None
        self.rows.setdefault(game_id, []).append(seq)
        self.next_ply[game_id] = move.ply + 1
        return True

    def checked(self, game_id: str, ply: int) -> None:
        """A move of ``game_id`` at ``ply`` checked and written in SQL: the game is known."""
        self.next_ply[game_id] = ply + 1

    def settled(self, game_id: str, write: Callable[[], T]) -> T:
        """Run ``write`` (the game's end, its call-off, a take-back, a fenced move) once the
        game's journal rows are in ``move_rows``; its next move is checked in SQL again. A
        failure takes the settling back with the write: forget, to be sure."""
        try:
            self.settle_game(game_id)
            return write()
        except BaseException:
            self.forget()
            raise
        finally:
            self.next_ply.pop(game_id, None)

    def settle_game(self, game_id: str) -> None:
        """Move the game's journal rows to ``move_rows``, in the caller's transaction."""
        rows = self.rows.pop(game_id, None)
        if not self.complete:  # rows this writer does not know of may be there: by the id
            self._move("WHERE game_id = ?", (game_id,))
        elif rows:
            self._move(f"WHERE seq IN ({', '.join('?' * len(rows))})", rows)

    def _move(self, where: str, params: Sequence[object] = (), order: str = "ply") -> None:
        """Move the journal's rows ``where`` to ``move_rows`` (inserted in ``order``)."""
        self.conn.execute(f"INSERT INTO move_rows SELECT {COLUMNS} FROM move_journal {where}"
                          f" ORDER BY {order}", params)
        self.conn.execute(f"DELETE FROM move_journal {where}", params)

    # -- the whole journal ---------------------------------------------------------------------

    def due(self, now: float) -> bool:
        """Whether the whole journal is to be settled now (``SETTLE_EVERY`` has passed, and
        it may hold rows)."""
        return now - self.settled_at >= self.settle_every and (bool(self.rows)
                                                               or not self.complete)

    def settle_all(self) -> None:
        """Move every journal row to ``move_rows``, sorted by game and ply, in a transaction
        of its own (taken back, and the error raised, if it fails)."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            self.begin()
            self._move("", order="game_id, ply")
            conn.execute("COMMIT")
        except sqlite3.Error:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        self.rows.clear()
        self.complete = True
        self.settled_at = time.monotonic()
