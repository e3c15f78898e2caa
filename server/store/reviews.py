"""The store's operations on game reviews: one row per finished game, its review as JSON.

Written once for both databases as sans-I/O operations (``server.store.query``), as
``server.store.operations`` is; ``SQLStore.get_review`` and ``save_review`` run them.
"""

from __future__ import annotations

from server.store.query import Op, change, fetch_one, one


def find_review(game_id: str) -> Op[tuple[str, float] | None]:
    """The stored review of a game (its JSON and when it was computed), or None."""
    row = yield from fetch_one(one(
        "SELECT review, computed FROM reviews WHERE game_id = ?", game_id))
    return None if row is None else (str(row["review"]), float(row["computed"]))


def insert_review(game_id: str, review: str, computed: float) -> Op[None]:
    """Keep a game's review; the first one written stays (two nodes may compute it)."""
    yield change(
        "INSERT INTO reviews (game_id, review, computed) VALUES (?, ?, ?)"
        " ON CONFLICT (game_id) DO NOTHING", game_id, review, computed)
