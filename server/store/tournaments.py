"""Tournaments in the database: the tournament, its players and its games, written once as
operations (``server.store.query``) for both SQL stores, run through ``Store.apply`` (writes)
and ``Store.query`` (reads). The tables are ``server.store.tournament_schema``'s.

Everything the director (``server.node.tournaments``) needs to rebuild a tournament is here, so
that any node can take it over: the players with the rating each joined with, whether they
withdrew, when a node last saw them connected (``seen``), and each game in the order it ended
with its result and how many moves it had. A player is their id; the name shown is the one
they have now. A computer the host entered has no player row: its ``label`` names it.

``always`` (a column kept for older rows' sake) marks a player who joined over HTTP (no
connection of theirs carried the join). It no longer makes them paired while away: a bot is
seen, as anyone is, while a connection of theirs (its event stream) is open on a node, which
finds them among who has joined (``still_joined``).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Literal

from server.errors import StoreError
from server.store.base import Row
from server.store.operations import player_row_by_name
from server.store.query import Op, change, every, fetch_all, fetch_one, one, run_count

Kind = Literal["arena", "swiss"]
Status = Literal["created", "started", "finished"]
MAX_PLAYERS = 1000
LISTED_FOR = 24 * 3600.0  # seconds a finished tournament stays in the list
LISTED_AT_MOST = 100


@dataclass(frozen=True)
class TournamentRecord:
    """A tournament's row: an arena runs ``minutes`` from ``starts_at`` (``ends_at`` is set
    then), a Swiss plays ``rounds`` (``round``: the one being played, 0 before the first)."""

    id: str
    name: str
    kind: Kind
    status: Status
    starts_at: float
    ends_at: float | None
    minutes: int | None
    rounds: int | None
    round: int
    clock: tuple[int, int]  # seconds each, seconds a move
    variant: str
    rated: bool
    created: float
    created_by: str
    finished: float | None = None
    players: int = 0
    round_interval: float | None = None  # a Swiss round due this long after the last began
    round_times: tuple[float, ...] = ()  # or at these times: rounds 2, 3, ...
    round_started: float | None = None  # (read by lists) when the round being played began

    def round_due(self, number: int, previous_started: float) -> float | None:
        """When Swiss round ``number`` (2 or more) is due by the clock, its predecessor
        having started at ``previous_started``: its set time, else the interval after, else
        None (only when the one before has ended)."""
        if 2 <= number <= len(self.round_times) + 1:
            return self.round_times[number - 2]
        if self.round_interval is not None:
            return previous_started + self.round_interval
        return None

    @property
    def clock_text(self) -> str:
        """The clock as people write it: ``"3+2"``."""
        return f"{self.clock[0] // 60}+{self.clock[1]}"


@dataclass(frozen=True)
class EntryRecord:
    """A player of a tournament: ``name`` as shown now; ``computer`` the level of a computer
    the host entered; ``seen`` when a node last saw a connection of theirs (a websocket or
    a bot's stream); ``always`` a player who joined over HTTP (the module docstring: it
    counts for nothing in the pairing); ``bot`` the player's account is a bot (read with
    their name)."""

    id: int
    name: str
    computer: int | None
    rating: int
    joined: float
    withdrawn: float | None
    seen: float | None
    always: bool
    bot: bool = False


@dataclass(frozen=True)
class TournamentGameRecord:
    """A game of a tournament (``game_id`` None and ``o`` None: a Swiss's bye), its players
    by entry id, its ``result`` (``1-0``, ``0-1``, ``1/2-1/2``, ``*`` an abort) once it ended,
    and how many moves it had then."""

    id: int
    game_id: str | None
    round: int | None
    x: int
    o: int | None
    result: str | None
    plies: int | None
    started: float
    ended: float | None


@dataclass(frozen=True)
class TournamentData:
    """A tournament with its players and its games (in the order they were started)."""

    tournament: TournamentRecord
    entries: list[EntryRecord]
    games: list[TournamentGameRecord]


def new_tournament_id() -> str:
    return "T" + secrets.token_urlsafe(6).replace("-", "_")


def parse_clock(text: str) -> tuple[int, int]:
    """``"3+2"`` as ``(180, 2)``: seconds each and seconds a move."""
    minutes, _, increment = text.partition("+")
    return int(minutes) * 60, int(increment)


def _tournament(row: Row, players: int = 0,
                round_started: float | None = None) -> TournamentRecord:
    return TournamentRecord(
        id=row["id"], name=row["name"], kind=row["kind"], status=row["status"],
        starts_at=row["starts_at"], ends_at=row["ends_at"], minutes=row["minutes"],
        rounds=row["rounds"], round=row["round"],
        clock=(int(row["clock_initial"]), int(row["clock_increment"])),
        variant=row["variant"], rated=bool(row["rated"]), created=row["created"],
        created_by=row["created_by"], finished=row["finished"], players=players,
        round_interval=row["round_interval"],
        round_times=tuple(json.loads(row["round_times"])) if row["round_times"] else (),
        round_started=round_started,
    )


_ENTRIES = ("SELECT tp.*, players.name AS player_name, players.bot AS player_bot"
            " FROM tournament_players tp"
            " LEFT JOIN players ON players.id = tp.player_id WHERE tp.tournament_id = ?"
            " ORDER BY tp.id")


def _entry(row: Row) -> EntryRecord:
    return EntryRecord(
        id=int(row["id"]), name=row["player_name"] or row["label"], computer=row["computer"],
        rating=int(row["rating"]), joined=row["joined"], withdrawn=row["withdrawn"],
        seen=row["seen"], always=bool(row["always"]), bot=bool(row["player_bot"]),
    )


def _game(row: Row) -> TournamentGameRecord:
    return TournamentGameRecord(
        id=int(row["id"]), game_id=row["game_id"], round=row["round"], x=int(row["x_entry"]),
        o=None if row["o_entry"] is None else int(row["o_entry"]), result=row["result"],
        plies=row["plies"], started=row["started"], ended=row["ended"],
    )


def computer_labels(levels: list[int]) -> list[str]:
    """The names computers entered at ``levels`` play under: ``computer-3``, a second of a
    level ``computer-3-2``."""
    labels: list[str] = []
    seen: dict[int, int] = {}
    for level in levels:
        seen[level] = seen.get(level, 0) + 1
        labels.append(f"computer-{level}" + (f"-{seen[level]}" if seen[level] > 1 else ""))
    return labels


# -- writes -------------------------------------------------------------------------------


def insert_tournament(tournament: TournamentRecord, computers: list[int]) -> Op[None]:
    """Schedule ``tournament`` with the computers entered at ``computers``' levels (each
    rated 1500)."""
    yield change(
        "INSERT INTO tournaments (id, name, kind, status, starts_at, ends_at, minutes, rounds,"
        " round, clock_initial, clock_increment, variant, rated, created, created_by,"
        " round_interval, round_times)"
        " VALUES (?, ?, ?, 'created', ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
        tournament.id, tournament.name, tournament.kind, tournament.starts_at, tournament.ends_at,
        tournament.minutes, tournament.rounds, *tournament.clock, tournament.variant,
        tournament.rated, tournament.created, tournament.created_by, tournament.round_interval,
        json.dumps(list(tournament.round_times)) if tournament.round_times else None)
    for level, label in zip(computers, computer_labels(computers), strict=True):
        yield change(
            "INSERT INTO tournament_players (tournament_id, computer, label, rating, joined)"
            " VALUES (?, ?, ?, 1500, ?)", tournament.id, level, label, tournament.created)


def _open_tournament(tournament_id: str) -> Op[Row]:
    row = yield from fetch_one(one("SELECT * FROM tournaments WHERE id = ?", tournament_id))
    if row is None:
        raise StoreError(f"no tournament {tournament_id}", code="no_such_tournament")
    if row["status"] == "finished":
        raise StoreError("the tournament is over", code="tournament_over")
    return row


def join_tournament(tournament_id: str, name: str, now: float, always: bool = False,
                    connected: bool = True) -> Op[None]:
    """``name`` enters the tournament, or comes back to it (withdrawn no more); ``always``:
    over HTTP (a bot). ``connected``: a connection of theirs is open (seen now; else when a
    node last saw them, never for a newcomer). A Swiss is joined before its first round
    only."""
    seen = now if connected else None
    tournament = yield from _open_tournament(tournament_id)
    player = yield from player_row_by_name(name)
    if player is None:
        raise StoreError(f"no player {name!r}", code="no_such_player")
    back = yield from run_count(change(
        "UPDATE tournament_players SET withdrawn = NULL, seen = COALESCE(?, seen), always = ?"
        " WHERE tournament_id = ? AND player_id = ?", seen, always, tournament_id, player["id"]))
    if back:
        return
    if tournament["kind"] == "swiss" and tournament["round"] > 0:
        raise StoreError("the Swiss has started: it is joined before its first round",
                         code="tournament_started")
    count = yield from fetch_one(one(
        "SELECT COUNT(*) AS n FROM tournament_players WHERE tournament_id = ?", tournament_id))
    if count is not None and count["n"] >= MAX_PLAYERS:
        raise StoreError(f"the tournament has {MAX_PLAYERS} players", code="tournament_full")
    yield change(
        "INSERT INTO tournament_players (tournament_id, player_id, label, rating, joined, seen,"
        " always) VALUES (?, ?, ?, ?, ?, ?, ?)", tournament_id, player["id"], player["name"],
        round(player["rating"]), now, seen, always)


def withdraw(tournament_id: str, name: str, now: float) -> Op[None]:
    """``name`` leaves the tournament: not paired again; their results stay."""
    yield from _open_tournament(tournament_id)
    player = yield from player_row_by_name(name)
    if player is None:
        raise StoreError(f"no player {name!r}", code="no_such_player")
    yield change("UPDATE tournament_players SET withdrawn = ? WHERE tournament_id = ?"
                 " AND player_id = ? AND withdrawn IS NULL", now, tournament_id, player["id"])


def withdraw_everywhere(player_id: int, now: float) -> Op[None]:
    """The player leaves every tournament not finished (a ban, a deletion): not paired again;
    their results stay."""
    yield change("UPDATE tournament_players SET withdrawn = ? WHERE player_id = ?"
                 " AND withdrawn IS NULL AND tournament_id IN"
                 " (SELECT id FROM tournaments WHERE status <> 'finished')", now, player_id)


SEEN_AT_ONCE = 500  # names a statement marks seen (the databases' limits on parameters)


def mark_seen(tournament_id: str, names: list[str], now: float) -> Op[None]:
    """The players ``names`` (who joined) are connected to a node now: one statement for up
    to ``SEEN_AT_ONCE`` of them (it was one a player, every few seconds)."""
    for start in range(0, len(names), SEEN_AT_ONCE):
        part = names[start:start + SEEN_AT_ONCE]
        yield change(
            "UPDATE tournament_players SET seen = ? WHERE tournament_id = ? AND player_id IN"
            f" (SELECT id FROM players WHERE name IN ({', '.join('?' * len(part))}))",
            now, tournament_id, *part)


def start_tournament(tournament_id: str, ends_at: float | None) -> Op[None]:
    yield change("UPDATE tournaments SET status = 'started', ends_at = ? WHERE id = ?"
                 " AND status = 'created'", ends_at, tournament_id)


def set_round(tournament_id: str, number: int) -> Op[None]:
    yield change("UPDATE tournaments SET round = ? WHERE id = ?", number, tournament_id)


def finish_tournament(tournament_id: str, now: float) -> Op[bool]:
    """The tournament is over (its standings are its games'); False if it was already."""
    done = yield from run_count(change(
        "UPDATE tournaments SET status = 'finished', finished = ?,"
        " ends_at = COALESCE(ends_at, ?) WHERE id = ? AND status <> 'finished'",
        now, now, tournament_id))
    return bool(done)


def add_game(tournament_id: str, game_id: str | None, round_number: int | None, x: int,
             o: int | None, now: float) -> Op[None]:
    """A game of the tournament has started between the entries ``x`` and ``o`` (``game_id``
    and ``o`` None: a bye, ended as it is given)."""
    bye = game_id is None
    yield change(
        "INSERT INTO tournament_games (tournament_id, game_id, round, x_entry, o_entry,"
        " result, plies, started, ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        tournament_id, game_id, round_number, x, o, "1-0" if bye else None, 0 if bye else None,
        now, now if bye else None)


def any_ended(tournament_id: str) -> Op[bool]:
    """Whether a game of the tournament has ended that ``record_ended`` has not copied (a
    read, so the director's round writes only when there is something to record)."""
    row = yield from fetch_one(one(
        "SELECT tg.id FROM tournament_games tg JOIN games ON games.id = tg.game_id"
        " WHERE tg.tournament_id = ? AND tg.ended IS NULL AND games.status <> 'active'"
        " LIMIT 1", tournament_id))
    return row is not None


def record_ended(tournament_id: str, now: float) -> Op[list[TournamentGameRecord]]:
    """Every game of the tournament that has ended in the games table but not yet here: its
    result and length copied over, in the order they ended. Returns them."""
    rows = yield from fetch_all(every(
        "SELECT tg.id, games.status, games.result, games.ended,"
        " (SELECT COUNT(*) FROM moves WHERE moves.game_id = games.id) AS plies"
        " FROM tournament_games tg JOIN games ON games.id = tg.game_id"
        " WHERE tg.tournament_id = ? AND tg.ended IS NULL AND games.status <> 'active'"
        " ORDER BY games.ended, tg.id", tournament_id))
    if not rows:
        return []
    for row in rows:
        result = row["result"] if row["status"] == "finished" else "*"
        yield change("UPDATE tournament_games SET result = ?, plies = ?, ended = ?"
                     " WHERE id = ? AND ended IS NULL", result, row["plies"],
                     row["ended"] or now, row["id"])
    ended = yield from fetch_all(every(
        "SELECT * FROM tournament_games WHERE tournament_id = ? AND id IN"
        f" ({', '.join('?' for _ in rows)}) ORDER BY ended, id",
        tournament_id, *(row["id"] for row in rows)))
    return [_game(row) for row in ended]


# -- reads --------------------------------------------------------------------------------


def tournament_data(tournament_id: str, games: bool = True) -> Op[TournamentData | None]:
    """The tournament with its players and (unless not ``games``) its games, or None."""
    row = yield from fetch_one(one("SELECT * FROM tournaments WHERE id = ?", tournament_id))
    if row is None:
        return None
    entries = yield from fetch_all(every(_ENTRIES, tournament_id))
    played = [] if not games else (yield from fetch_all(every(
        "SELECT * FROM tournament_games WHERE tournament_id = ? ORDER BY id", tournament_id)))
    return TournamentData(_tournament(row, len(entries)), [_entry(e) for e in entries],
                          [_game(g) for g in played])


def list_tournaments(now: float) -> Op[list[TournamentRecord]]:
    """Those not finished, soonest first, then those finished in the last ``LISTED_FOR``
    seconds, newest first (at most ``LISTED_AT_MOST``)."""
    rows = yield from fetch_all(every(
        "SELECT t.*, (SELECT COUNT(*) FROM tournament_players tp"
        " WHERE tp.tournament_id = t.id) AS players, (SELECT MIN(tg.started) FROM"
        " tournament_games tg WHERE tg.tournament_id = t.id AND tg.round = t.round)"
        " AS round_started FROM tournaments t"
        " WHERE t.status <> 'finished' OR t.finished >= ?"
        " ORDER BY CASE WHEN t.status = 'finished' THEN 1 ELSE 0 END, CASE WHEN"
        " t.status = 'finished' THEN -t.finished ELSE t.starts_at END, t.id LIMIT ?",
        now - LISTED_FOR, LISTED_AT_MOST))
    return [_tournament(row, int(row["players"]), row["round_started"]) for row in rows]


def unfinished_tournaments() -> Op[list[str]]:
    """The ids of the tournaments not finished (a director holds each)."""
    rows = yield from fetch_all(every(
        "SELECT id FROM tournaments WHERE status <> 'finished' ORDER BY starts_at, id"))
    return [row["id"] for row in rows]


def tournaments_of(name: str) -> Op[list[str]]:
    """The tournaments not finished that ``name`` joined and has not left."""
    rows = yield from fetch_all(every(
        "SELECT t.id FROM tournaments t JOIN tournament_players tp ON tp.tournament_id = t.id"
        " JOIN players ON players.id = tp.player_id WHERE players.name = ?"
        " AND tp.withdrawn IS NULL AND t.status <> 'finished'", name))
    return [row["id"] for row in rows]


def still_joined(tournament_ids: list[str]) -> Op[dict[str, list[str]]]:
    """The players of each of ``tournament_ids`` who have not left, by tournament: every node
    notes those of them connected to it, wherever they joined (``TournamentsService``)."""
    if not tournament_ids:
        return {}
    rows = yield from fetch_all(every(
        "SELECT tp.tournament_id, players.name FROM tournament_players tp"
        " JOIN players ON players.id = tp.player_id WHERE tp.withdrawn IS NULL"
        f" AND tp.tournament_id IN ({', '.join('?' for _ in tournament_ids)})"
        " ORDER BY tp.id", *tournament_ids))
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["tournament_id"], []).append(row["name"])
    return found
