"""Every store operation's SQL and the rules around it, written once as sans-I/O operations.

Each function returns an ``Op`` (``server.store.query``): it yields its queries and returns
what the ``Store`` method returns. Both stores run them, each in its own transaction: SQLite on
its writer thread inside a group commit (or its reader thread), PostgreSQL on a pooled
connection. A write first locks the game's row (``FOR UPDATE`` on PostgreSQL; SQLite's writer
holds the whole database), so the ply, the fencing token and the game's status it checks are the
latest committed; finishing a game locks its players in id order, so two games ending at once
with the same players cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.errors import StoreError
from server.game.records import GameRecord, GameStatus, MoveRecord, PlayerRecord
from server.store.base import (
    GAMES,
    PAGE_MAX,
    RATINGS_KEPT,
    PlayerGames,
    Row,
    check_fence,
    check_new_name,
    check_take_back,
    game_from_row,
    move_from_row,
    name_key,
    player_from_row,
)
from server.store.ending import end_game
from server.store.query import Dialect, Op, change, every, fetch_all, fetch_one, one, run_count

# Players.


def insert_player(player: PlayerRecord, token_hash: bytes) -> Op[None]:
    """Register ``player``; ``"name_taken"`` if a name equal to it but for case exists (a
    deleted player's too), ``"name_reserved"`` for a name kept for deleted players."""
    check_new_name(player.name)
    inserted = yield from run_count(change(
        "INSERT INTO players (name, name_key, token_hash, created, rating, rd, volatility)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name_key) DO NOTHING",
        player.name, name_key(player.name), token_hash, player.created,
        player.rating, player.rd, player.volatility,
    ))  # fmt: skip
    if not inserted:
        raise StoreError(f"the name {player.name!r} is taken", code="name_taken")


def player_by_token(token_hash: bytes, name: str | None) -> Op[PlayerRecord | None]:
    """The player one of whose devices not logged out has the token hashing to
    ``token_hash`` (and called ``name``, if given)."""
    row = yield from fetch_one(one(
        "SELECT players.* FROM devices JOIN players ON players.id = devices.player_id"
        " WHERE devices.token_hash = ? AND devices.revoked IS NULL", token_hash))
    if row is None or (name is not None and name_key(row["name"]) != name_key(name)):
        return None
    return player_from_row(row)


PLAYER_BY_NAME = ("SELECT * FROM players WHERE (name = ? OR name_key = ?) AND deleted IS NULL"
                  " ORDER BY CASE WHEN name = ? THEN 0 ELSE 1 END LIMIT 1")
"""The row of the player called exactly ``name``, else of the one whose name folds as it
does (in another case, with look-alike letters); never a deleted player's. Its parameters
are ``by_name(name)``."""


def by_name(name: str) -> tuple[str, str, str]:
    """``PLAYER_BY_NAME``'s parameters."""
    return name, name_key(name), name


def player_row_by_name(name: str) -> Op[Row | None]:
    """The row of the player called ``name`` (``PLAYER_BY_NAME``), or None."""
    row = yield from fetch_one(one(PLAYER_BY_NAME, *by_name(name)))
    return row


def player_by_name(name: str) -> Op[PlayerRecord | None]:
    """The player called exactly ``name``, else the one whose name folds as it does (in
    another case, with look-alike letters), or None; never a deleted player."""
    row = yield from player_row_by_name(name)
    return None if row is None else player_from_row(row)


def players_by_names(names: Sequence[str]) -> Op[dict[str, PlayerRecord | None]]:
    """``player_by_name`` of each name (once a name), on one snapshot."""
    found: dict[str, PlayerRecord | None] = {}
    for name in names:
        if name not in found:
            found[name] = yield from player_by_name(name)
    return found


def best_players(
    limit: int, min_rated_games: int, active_since: float | None
) -> Op[list[PlayerRecord]]:
    """The best ``limit`` players by rating with at least ``min_rated_games`` rated games
    (and, with ``active_since``, a rated game ended since then)."""
    active = "" if active_since is None else " AND last_rated >= ?"
    since = () if active_since is None else (active_since,)
    rows = yield from fetch_all(every(
        f"SELECT * FROM players WHERE rated_games >= ? AND deleted IS NULL{active}"
        " ORDER BY rating DESC, name_key LIMIT ?",
        min_rated_games, *since, limit,
    ))  # fmt: skip
    return [player_from_row(row) for row in rows]


def player_games(
    name: str, before: str | None, limit: int, viewer: str | None = None
) -> Op[PlayerGames | None]:
    """``Store.player_games``: the player, a page of their games with their moves (newest
    first, by when they started, then id) and their last rated games' ratings. A game goes
    by its players' ids, so a name that someone held before is none of its games. A game
    going on that is not listed (a private room's, the computer's) is shown only to the
    players in it: ``viewer`` is the name of who asks (None: anyone)."""
    row = yield from player_row_by_name(name)
    if row is None:
        return None
    player, me = player_from_row(row), int(row["id"])
    seen_by = -1  # no player's id: the ongoing unlisted games are nobody's to see
    if viewer is not None:
        seer = yield from player_row_by_name(viewer)
        seen_by = -1 if seer is None else int(seer["id"])
    mine = ("(games.x_player_id = ? OR games.o_player_id = ?) AND (games.status <> 'active'"
            " OR games.listed OR games.x_player_id = ? OR games.o_player_id = ?)")
    whose = (me, me, seen_by, seen_by)
    after: tuple[object, ...] = ()
    older = ""
    if before is not None:
        start = yield from fetch_one(one(
            f"SELECT created FROM games WHERE id = ? AND {mine}", before, *whose))
        if start is None:
            raise StoreError(f"{player.name} played no game {before}", code="no_such_game")
        older = " AND (games.created < ? OR (games.created = ? AND games.id < ?))"
        after = (start["created"], start["created"], before)
    limit = max(1, min(PAGE_MAX, limit))
    rows = yield from fetch_all(every(
        f"{GAMES} WHERE {mine}{older} ORDER BY games.created DESC, games.id DESC LIMIT ?",
        *whose, *after, limit + 1,
    ))  # fmt: skip
    more, rows = len(rows) > limit, rows[:limit]
    moves: dict[str, list[MoveRecord]] = {row["id"]: [] for row in rows}
    if rows:
        for move in (yield from fetch_all(every(
            f"SELECT * FROM moves WHERE game_id IN ({', '.join('?' * len(rows))})"
            " ORDER BY game_id, ply",
            *moves,
        ))):  # fmt: skip
            moves[move["game_id"]].append(move_from_row(move))
    rated = yield from fetch_all(every(
        "SELECT ended, x_player_id, x_rating, x_rating_change, o_rating, o_rating_change"
        " FROM games WHERE (x_player_id = ? OR o_player_id = ?) AND status = 'finished'"
        " AND x_rating_change IS NOT NULL ORDER BY ended DESC LIMIT ?",
        me, me, RATINGS_KEPT,
    ))  # fmt: skip
    ratings = []
    for row in reversed(rated):  # oldest first
        side = "x" if row["x_player_id"] == me else "o"
        ratings.append((row["ended"], row[f"{side}_rating"] + row[f"{side}_rating_change"]))
    return PlayerGames(
        player=player,
        games=tuple(game_from_row(row, moves[row["id"]]) for row in rows),
        more=more,
        ratings=tuple(ratings),
    )


# Games.


def insert_game(game: GameRecord) -> Op[None]:
    """Store a new game, its seats pointing at their players' ids (the names are kept as
    labels); a rated one needs both its players registered."""
    ids: list[int | None] = []
    for seat in (game.x, game.o):
        row = None if seat.player is None else (yield from player_row_by_name(seat.player))
        if row is None and game.rated:
            raise StoreError(
                f"{seat} is not a registered player and cannot play rated", code="not_allowed"
            )
        ids.append(None if row is None else int(row["id"]))
    inserted = yield from run_count(change(
        "INSERT INTO games (id, variant, clock_initial, clock_increment, rated,"
        " x_player, x_player_id, x_computer, o_player, o_player_id, o_computer, status,"
        " created, listed, tournament)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        game.id, game.variant, *(game.clock or (None, None)), game.rated,
        game.x.player, ids[0], game.x.computer_level, game.o.player, ids[1],
        game.o.computer_level, game.created, game.listed, game.tournament,
    ))  # fmt: skip
    if not inserted:
        raise StoreError(f"game {game.id} exists", code="internal")


def append_move(dialect: Dialect, game_id: str, move: MoveRecord, fence: int | None,
                moves: str = "moves") -> Op[None]:
    """Append a move to an active game after the last one, taking the fencing token; read
    from ``moves`` (``dialect.settled_moves`` once the game's journal rows are settled:
    server/store/journal.py), written to ``dialect.settled_moves``.
    (PostgreSQL does the same in one statement of its own: ``PostgresStore.record_move``.)"""
    row = yield from fetch_one(one(
        f"SELECT status, (SELECT MAX(ply) FROM {moves} WHERE game_id = ?) AS last_ply, fence"
        f" FROM games WHERE id = ?{dialect.for_update}",
        game_id, game_id,
    ))  # fmt: skip
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    yield from take_fence(game_id, row["fence"], fence)
    if row["status"] != GameStatus.ACTIVE:
        raise StoreError(f"game {game_id} is over", code="game_over")
    last_ply = row["last_ply"] or 0
    if move.ply != last_ply + 1:
        raise StoreError(
            f"game {game_id} expects ply {last_ply + 1}, not {move.ply}", code="stale_move"
        )
    yield change(
        f"INSERT INTO {dialect.settled_moves} VALUES (?, ?, ?, ?, ?, ?)",
        game_id, move.ply, move.cell, move.clock_x, move.clock_o, move.at,
    )  # fmt: skip


def take_back(dialect: Dialect, game_id: str, ply: int, fence: int | None) -> Op[None]:
    """Remove the moves after ``ply`` from an active game (its journal rows settled first:
    on SQLite, ``SQLiteStore.take_back``)."""
    yield from lock_active_game(dialect, game_id, fence)
    stored = yield from fetch_one(one(
        f"SELECT COUNT(*) AS moves FROM {dialect.settled_moves} WHERE game_id = ?", game_id))
    assert stored is not None
    check_take_back(game_id, int(stored["moves"]), ply)
    yield change(f"DELETE FROM {dialect.settled_moves} WHERE game_id = ? AND ply > ?",
                 game_id, ply)


def finish_game(
    dialect: Dialect,
    game_id: str,
    *,
    result: str,
    reason: str,
    now: float,
    winning_line: Sequence[int] | None,
    fence: int | None,
    move: MoveRecord | None = None,
    moves: str = "moves",
) -> Op[GameRecord]:
    """End an active game with ``result`` and write what ``end_game`` makes of it; with
    ``move``, the move that ended it first, in the same transaction: the last move, the end
    and the ratings are stored together or not at all (a crash or a lost connection between
    two transactions would leave a won board active, every later move refused). ``moves``:
    where its moves are read (``append_move``)."""
    if move is not None:
        yield from append_move(dialect, game_id, move, fence, moves)
    locked_game = yield from lock_active_game(dialect, game_id, fence)
    game = game_from_row(locked_game, ())
    seated = [locked_game[f"{side}_player_id"] for side in ("x", "o")]  # None: no player
    players: dict[int, PlayerRecord] = {}
    ids: dict[str, int] = {}  # a seated player's name (as the rows say) -> their id
    if any(seated):
        wanted = sorted({seat for seat in seated if seat is not None})
        locked = yield from fetch_all(every(
            f"SELECT * FROM players WHERE id IN ({', '.join('?' * len(wanted))})"
            f" ORDER BY id{dialect.for_update}",
            *wanted,
        ))  # fmt: skip
        players = {row["id"]: player_from_row(row) for row in locked}
        ids = {row["name"]: row["id"] for row in locked}
    x, o = (None if seat is None else players.get(seat) for seat in seated)
    end = end_game(
        game, x, o, result=result, reason=reason, now=now, winning_line=winning_line
    )
    ended = end.game
    line = None if ended.winning_line is None else " ".join(map(str, ended.winning_line))
    yield change(
        "UPDATE games SET status = ?, result = ?, reason = ?, winning_line = ?, ended = ?,"
        " x_rating = ?, o_rating = ?, x_rating_change = ?, o_rating_change = ? WHERE id = ?",
        ended.status.value, ended.result, ended.reason, line, ended.ended,
        ended.x_rating, ended.o_rating, ended.x_rating_change, ended.o_rating_change, game_id,
    )  # fmt: skip
    for player in end.players:
        yield change(
            "UPDATE players SET rating = ?, rd = ?, volatility = ?, games = ?,"
            " rated_games = ?, wins = ?, losses = ?, draws = ?, last_rated = ? WHERE id = ?",
            player.rating, player.rd, player.volatility, player.games, player.rated_games,
            player.wins, player.losses, player.draws, player.last_rated, ids[player.name],
        )  # fmt: skip
    return (yield from load_game(game_id, moves))


def abort_game(
    dialect: Dialect, game_id: str, *, reason: str, now: float, fence: int | None,
    moves: str = "moves",
) -> Op[GameRecord]:
    """Call an active game off: no result, no effect on anyone's record."""
    yield from lock_active_game(dialect, game_id, fence)
    yield change(
        "UPDATE games SET status = 'aborted', reason = ?, ended = ? WHERE id = ?",
        reason, now, game_id,
    )  # fmt: skip
    return (yield from load_game(game_id, moves))


def claim(dialect: Dialect, game_id: str, fence: int) -> Op[GameRecord]:
    """Raise the game's fencing token to ``fence`` and return the game as it stands."""
    yield from lock_game(dialect, game_id, fence)
    return (yield from load_game(game_id))


def find_game(game_id: str) -> Op[GameRecord | None]:
    """A game with its moves, or None."""
    try:
        return (yield from load_game(game_id))
    except StoreError:
        return None


def unfinished_games() -> Op[list[GameRecord]]:
    """Every active game with its moves, oldest first. Run it on one snapshot, so a move
    committed in between cannot show up without its game or the other way round."""
    moves: dict[str, list[MoveRecord]] = {}
    for row in (yield from fetch_all(every(
        "SELECT moves.* FROM moves JOIN games ON games.id = moves.game_id"
        " WHERE games.status = 'active' ORDER BY moves.game_id, moves.ply"
    ))):  # fmt: skip
        moves.setdefault(row["game_id"], []).append(move_from_row(row))
    rows = yield from fetch_all(
        every(f"{GAMES} WHERE games.status = 'active' ORDER BY games.created, games.id")
    )
    return [game_from_row(row, moves.get(row["id"], [])) for row in rows]


# The parts of the operations above.


def load_game(game_id: str, moves: str = "moves") -> Op[GameRecord]:
    """The game with its moves (read from ``moves``: ``Dialect.settled_moves`` once the
    game's journal rows are settled); ``"no_such_game"`` if there is none."""
    row = yield from fetch_one(one(f"{GAMES} WHERE games.id = ?", game_id))
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    rows = yield from fetch_all(
        every(f"SELECT * FROM {moves} WHERE game_id = ? ORDER BY ply", game_id)
    )
    return game_from_row(row, [move_from_row(move) for move in rows])


def take_fence(game_id: str, stored: int, fence: int | None) -> Op[None]:
    """Refuse a stale fencing token (``check_fence``); a newer one becomes the game's."""
    check_fence(game_id, stored, fence)
    if fence is not None and fence > stored:
        yield change("UPDATE games SET fence = ? WHERE id = ?", fence, game_id)


def lock_game(dialect: Dialect, game_id: str, fence: int | None) -> Op[Row]:
    """The game's row, locked until the transaction ends, with the fencing token taken."""
    row = yield from fetch_one(
        one(f"SELECT * FROM games WHERE id = ?{dialect.for_update}", game_id)
    )
    if row is None:
        raise StoreError(f"no game {game_id}", code="no_such_game")
    yield from take_fence(game_id, row["fence"], fence)
    return row


def lock_active_game(dialect: Dialect, game_id: str, fence: int | None) -> Op[Row]:
    """``lock_game``, refused with ``"game_over"`` unless the game is active."""
    row = yield from lock_game(dialect, game_id, fence)
    if row["status"] != GameStatus.ACTIVE:
        raise StoreError(f"game {game_id} is already {row['status']}", code="game_over")
    return row


def touch() -> Op[None]:
    """A write that changes nothing a player sees (the schema's newest row rewritten as it
    is): whether the database takes writes again, for ``Store.check``."""
    yield change("UPDATE qubic_schema SET version = version "
                 "WHERE version = (SELECT max(version) FROM qubic_schema)")
