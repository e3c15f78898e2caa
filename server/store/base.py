"""The durable store's interface and its records: players, games and their moves.

``Store`` is what the app layer talks to; ``server.store.sql.SQLStore`` implements it once over
SQL, run on one SQLite file by ``server.store.sqlite.SQLiteStore`` and on PostgreSQL by
``server.store.postgres.PostgresStore`` (``server.store.factory.open_store`` picks one). Every
method is async and never blocks the event loop. A write returns only once it is committed,
so the server acknowledges a move after it is durable. Records are frozen dataclasses of plain
values; times are Unix seconds (``time.time()``), cells are engine cell indices.

A player is their row's id, and a name is a label: every record of a player (a game's seats,
reports, sanctions, roles, devices, puzzle rows) points at ``players.id`` and is shown with the
name the row has when it is read (``GAMES``). A rename changes that one row; a deleted
player's row stays as a tombstone (``server.store.lever_records.delete_player``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Generator, Sequence
from dataclasses import dataclass, fields
from typing import Any, NotRequired, Protocol, TypedDict, TypeVar, Unpack

from server.errors import StoreError
from server.game.names import fold_name
from server.game.records import GameRecord, GameStatus, MoveRecord, PlayerRecord, Seat, TimeControl
from server.store.account_records import AccountStore

T = TypeVar("T")


class Row(Protocol):
    """A database row read by column name: ``sqlite3.Row`` and ``asyncpg.Record`` both are."""

    def __getitem__(self, key: str) -> Any: ...


def player_from_row(row: Row) -> PlayerRecord:
    values = {field.name: row[field.name] for field in fields(PlayerRecord)}
    values["bot"] = bool(values["bot"])  # SQLite's booleans are integers
    return PlayerRecord(**values)


def move_from_row(row: Row) -> MoveRecord:
    return MoveRecord(row["ply"], row["cell"], row["clock_x"], row["clock_o"], row["at"])


_GAME_COLUMNS = (
    "id", "variant", "created", "result", "reason", "ended",
    "x_rating", "o_rating", "x_rating_change", "o_rating_change", "fence", "tournament",
)  # fmt: skip
"""The games columns that are GameRecord fields as they are."""


GAMES = (
    "SELECT games.*, x_named.name AS x_name, o_named.name AS o_name,"
    " x_named.bot AS x_bot, o_named.bot AS o_bot FROM games"
    " LEFT JOIN players x_named ON x_named.id = games.x_player_id"
    " LEFT JOIN players o_named ON o_named.id = games.o_player_id"
)
"""Every column of ``games``, and each seated player's name as it is now (``x_name``,
``o_name``) and whether they are a bot account (``x_bot``, ``o_bot``): a game points at
its players' ids, and shows them by their current names. The names written in the row
(``x_player``, ``o_player``) are the labels of seats no player holds any more (a guest's,
or a player deleted before tombstones), and of a row read without this join."""


def _seat_name(row: Row, side: str) -> str | None:
    try:
        current = row[f"{side}_name"]
    except (KeyError, IndexError):  # a row of ``games`` alone (locked: no join)
        current = None
    return current if current is not None else row[f"{side}_player"]


def _seat_bot(row: Row, side: str) -> bool:
    try:
        return bool(row[f"{side}_bot"])
    except (KeyError, IndexError):  # a row of ``games`` alone (locked: no join)
        return False


def game_from_row(row: Row, moves: Sequence[MoveRecord]) -> GameRecord:
    """A game from its row in the ``games`` table (the same columns in every store), read
    with ``GAMES`` so that its seats show their players' current names."""
    clock = None
    if row["clock_initial"] is not None:
        clock = TimeControl(row["clock_initial"], row["clock_increment"])
    line = row["winning_line"]
    return GameRecord(
        **{column: row[column] for column in _GAME_COLUMNS},
        clock=clock,
        rated=bool(row["rated"]),
        x=Seat(_seat_name(row, "x"), row["x_computer"], _seat_bot(row, "x")),
        o=Seat(_seat_name(row, "o"), row["o_computer"], _seat_bot(row, "o")),
        status=GameStatus(row["status"]),
        winning_line=None if line is None else tuple(map(int, line.split())),
        moves=tuple(moves),
        listed=bool(row["listed"]),
    )


def check_fence(game_id: str, stored: int, fence: int | None) -> None:
    """Refuse a write whose fencing token is older than one the game has already seen.

    ``fence`` None is a write from the one embedded server, which owns every game.
    """
    if fence is not None and fence < stored:
        raise StoreError(
            f"game {game_id} is owned under fencing token {stored}; {fence} is stale",
            code="fenced",
        )


def check_take_back(game_id: str, stored: int, ply: int) -> None:
    """Refuse a takeback to ``ply`` in a game with ``stored`` moves unless it is among them."""
    if not 0 <= ply <= stored:
        raise StoreError(f"game {game_id} has {stored} moves, not {ply}", code="stale_move")


def new_game_id() -> str:
    """An unguessable game id: 72 random bits in 12 URL-safe characters, never a ``-`` first
    (a command line would read ``qubic admin end-game -x3...`` as an option)."""
    while True:
        game_id = secrets.token_urlsafe(9)
        if not game_id.startswith("-"):
            return game_id


class NewGame(TypedDict):
    """The terms of a game about to start, as ``Store.create_game`` takes them.

    ``game_id``: a fresh one unless given; ``listed``: the lobby may show the game (a public
    game, not a private room's); ``tournament``: the tournament it belongs to.
    """

    variant: str
    x: Seat
    o: Seat
    clock: TimeControl | None
    rated: bool
    now: float
    game_id: NotRequired[str | None]
    listed: NotRequired[bool]
    tournament: NotRequired[str | None]


def new_game(**terms: Unpack[NewGame]) -> GameRecord:
    """A new active game's record, as every store's ``create_game`` starts it; a rated game
    against the computer is refused."""
    x, o, rated = terms["x"], terms["o"], terms["rated"]
    if rated and (x.is_computer or o.is_computer):
        raise StoreError("a game against the computer cannot be rated", code="not_allowed")
    return GameRecord(
        terms.get("game_id") or new_game_id(), terms["variant"], terms["clock"], rated, x, o,
        GameStatus.ACTIVE, terms["now"], listed=terms.get("listed", False),
        tournament=terms.get("tournament"),
    )


class GameEnding(TypedDict):
    """How a game ends, as ``Store.finish_game`` takes it: ``result`` (``1-0``, ``0-1`` or
    ``1/2-1/2``), ``reason``, when, and the winning line if there is one."""

    result: str
    reason: str
    now: float
    winning_line: NotRequired[Sequence[int] | None]


def new_token() -> str:
    """A player's secret token: 256 random bits in 43 URL-safe characters."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    """The form a token is stored in: its SHA-256 digest.

    A slow password hash (bcrypt, scrypt, argon2) protects low-entropy secrets that people
    choose. Our tokens are 256 random bits made by ``secrets``, so a stolen table cannot be
    brute-forced through any hash, and one fast SHA-256 keeps every login cheap.
    """
    return hashlib.sha256(token.encode()).digest()


def name_key(name: str) -> str:
    """The form in which names are unique: folded (``server.game.names.fold_name``), so a
    name that differs from another only in case or in look-alike letters is the same name.

    A player registered before look-alikes were folded may keep an older key when their name
    folds onto another's (see ``server.store.schema``): every look-up by name tries the exact
    name first, so both are still found."""
    return fold_name(name)


DELETED_NAME = re.compile(r"deleted[-_]?[0-9]+", re.IGNORECASE)
"""Names kept from new players and renames: a deleted player's row keeps ``deleted-<id>``
(``server.store.lever_records.delete_player``), and before tombstones their records were moved to
that name."""


def tombstone_name(player_id: int) -> str:
    """The name a deleted player's row keeps: nobody can register it or log in as it."""
    return f"deleted-{player_id}"


def check_new_name(name: str) -> None:
    """Refuse a name kept for deleted players (``name_reserved``) as a new player's or a
    rename's."""
    if DELETED_NAME.fullmatch(name) is not None:
        raise StoreError(f"the name {name!r} is reserved: choose another", code="name_reserved")


PAGE_MAX = 50  # games in one page of a player's history at most
RATINGS_KEPT = 50  # rated games whose ratings a player's history gives


@dataclass(frozen=True)
class PlayerGames:
    """One page of a player's games, newest first (``Store.player_games``): ``more`` says an
    older page follows (ask for it with the last game's id as ``before``); ``ratings`` are
    (when, rating after) of the player's last ``RATINGS_KEPT`` rated games, oldest first."""

    player: PlayerRecord
    games: tuple[GameRecord, ...]
    more: bool
    ratings: tuple[tuple[float, float], ...]


class Store(AccountStore, Protocol):
    """The server's durable state. Open it once at start; ``close()`` it at shutdown.
    Its accounts' side (devices, passwords, recovery codes) is ``AccountStore``."""

    async def create_player(self, name: str, now: float) -> tuple[PlayerRecord, str]:
        """Register ``name``; returns the player and the plain token, which is never stored.

        Raises ``StoreError`` with code ``"name_taken"`` if the name differs from an existing
        one only in case.
        """
        ...

    async def authenticate(self, token: str, name: str | None = None) -> PlayerRecord | None:
        """The player holding ``token`` (and called ``name``, if given), or None."""
        ...

    async def get_player(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case, or None (never a deleted player)."""
        ...

    async def get_players(self, names: Sequence[str]) -> dict[str, PlayerRecord | None]:
        """``get_player`` of each of ``names`` in one read (a game's two seats), by the name
        asked for."""
        ...

    async def leaderboard(
        self, limit: int = 50, min_rated_games: int = 0, active_since: float | None = None
    ) -> list[PlayerRecord]:
        """The best ``limit`` players by rating with at least ``min_rated_games`` rated games
        (and, with ``active_since``, a rated game ended since then)."""
        ...

    async def player_games(
        self, name: str, before: str | None = None, limit: int = 20,
        viewer: str | None = None,
    ) -> PlayerGames | None:
        """The player called ``name`` and a page of their games with their moves, newest
        first: ``limit`` (at most ``PAGE_MAX``) games started before the game ``before``
        (from the newest without it). A game is theirs by their id, never by a name they
        once had or someone had before them. A game going on that is not listed (a private
        room's, the computer's) is in the page only when ``viewer`` (the name of who asks;
        None: anyone) plays in it. None if there is no such player; ``StoreError``
        ``"no_such_game"`` if ``before`` is not one of the games in their pages."""
        ...

    async def create_game(self, **terms: Unpack[NewGame]) -> GameRecord:
        """Start a game on these terms. A rated game needs two players."""
        ...

    async def record_move(
        self, game_id: str, move: MoveRecord, *, fence: int | None = None
    ) -> None:
        """Append a move to an active game; returns once the move is committed.

        The ply must follow the last one recorded (else ``StoreError`` code ``"stale_move"``)
        and the game be active (else ``"game_over"``). A cluster node passes its lease's
        fencing token as ``fence``: a token older than the game has seen is refused (code
        ``"fenced"``), a newer one becomes the game's. Finishing and aborting take it too.
        """
        ...

    async def take_back(self, game_id: str, ply: int, *, fence: int | None = None) -> None:
        """Remove the moves after ``ply`` from an active game (a takeback); returns once that
        is committed. Errors as for ``record_move``: ``"no_such_game"``, ``"game_over"``,
        ``"fenced"``, and ``"stale_move"`` when the game has fewer than ``ply`` moves."""
        ...

    async def finish_game(
        self, game_id: str, *, fence: int | None = None, move: MoveRecord | None = None,
        **ending: Unpack[GameEnding],
    ) -> GameRecord:
        """End a game with a result, updating both players' records and, if rated, ratings.

        All in one transaction; returns the finished game with its rating changes. With
        ``move`` (the move that ended the game), the move is appended first in the same
        transaction, checked as ``record_move`` checks it: the last move, the end and the
        ratings are stored together or not at all.
        """
        ...

    async def abort_game(
        self, game_id: str, *, reason: str, now: float, fence: int | None = None
    ) -> GameRecord:
        """Call a game off with no result and no effect on anyone's record."""
        ...

    async def claim(self, game_id: str, *, fence: int) -> GameRecord:
        """Take the game over for a cluster node holding its lease under token ``fence``:
        raise the game's fencing token to ``fence`` (an older holder's writes are refused from
        now on) and return the game as it stands, in one transaction. Raises ``StoreError``
        ``"no_such_game"``, or ``"fenced"`` if a newer token has been seen."""
        ...

    async def get_game(self, game_id: str) -> GameRecord | None:
        """A game with its moves, or None."""
        ...

    async def unfinished_games(self) -> list[GameRecord]:
        """Every active game with its moves, to resume them after a restart."""
        ...

    async def get_review(self, game_id: str) -> tuple[str, float] | None:
        """A finished game's stored review (its JSON) and when it was computed, or None."""
        ...

    async def save_review(self, game_id: str, review: str, computed: float) -> None:
        """Keep a game's review (JSON, ``server.node.reviews``); one already kept stays."""
        ...

    write_failures: int
    """Writes the database refused for want of it (full, read-only, gone), for /metrics."""

    async def check(self) -> str | None:
        """None when the database answers and the last write did not fail for want of it;
        otherwise why not, in words that name no path or host (``/health/ready``)."""
        ...

    async def flush(self) -> None:
        """Wait until every write queued so far is committed."""
        ...

    async def close(self) -> None:
        """Commit pending writes and release the database; later calls raise ``StoreError``."""
        ...

    async def apply(
        self, op: Generator[Any, Any, T] | None = None, *, audit: Any = None,
        control: str | None = None,
    ) -> T | None:
        """The host's levers (``server.store.lever_records``): run the write ``op`` (an ``Op``),
        log ``audit`` (an ``AuditEntry``) and add the control action ``control``, in one
        transaction; returns ``op``'s result."""
        ...

    async def query(self, op: Generator[Any, Any, T]) -> T:
        """Run the read ``op`` of ``server.store.lever_records``."""
        ...
