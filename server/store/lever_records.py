"""The host's levers in the database: roles, bans and mutes, the audit log, reports, the
control channel's rows, and a player's rename, deletion and export.

Written once as operations (``server.store.query``) for both SQL stores, like
``server.store.operations``. ``LeverStore`` is the part of ``SQLStore`` that runs them: one
write carries an action, its audit entry and its control row together (``apply``), so a
ban that is recorded is also logged and heard by every node, or none of the three happens.

A ban or mute names a player by id (it follows a rename) or, for a ban, an address or a
network (``203.0.113.0/24``); it is active while not lifted and not expired. A player's ban
also holds the addresses their devices were seen from lately (``ban_holding``). The control
table is a log every node polls (``server.node.control``); on PostgreSQL its writers take a
table lock so that ids become visible in their order and a poller never skips one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from server.errors import StoreError
from server.game.addresses import address_in, address_key, ban_network, is_loopback
from server.store.base import GAMES, check_new_name, game_from_row, name_key, tombstone_name
from server.store.operations import PLAYER_BY_NAME, by_name, player_row_by_name
from server.store.query import Dialect, Op, change, every, fetch_all, fetch_one, one, run_count
from server.store.runner import SQLRunner
from server.store.tournaments import withdraw_everywhere

T = TypeVar("T")

Role = Literal["admin", "moderator", "bot"]
ROLES: tuple[Role, ...] = ("admin", "moderator", "bot")
BOT: Role = "bot"
"""The bot role is the players row's ``bot`` flag (every read of a player carries it), not a
row of ``roles``; granting, revoking and listing it go through the same functions."""
SanctionKind = Literal["ban", "mute"]


@dataclass(frozen=True)
class Sanction:
    """A ban or a mute: of a player (``name``) or, for a ban, of an ``address``."""

    id: int
    kind: SanctionKind
    name: str | None
    address: str | None
    reason: str
    created: float
    expires: float | None  # None: until lifted
    by: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "name": self.name, "address": self.address,
                "reason": self.reason, "created": self.created, "expires": self.expires,
                "by": self.by}


@dataclass(frozen=True)
class AuditEntry:
    """One admin's or moderator's action: who, what, to whom, when, why."""

    actor: str
    action: str
    target: str | None
    reason: str | None
    at: float
    detail: str | None = None
    id: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "at": self.at, "actor": self.actor, "action": self.action,
                "target": self.target, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class Report:
    """A player's report of another, open until a moderator resolves it."""

    id: int
    at: float
    reporter: str
    reported: str
    game: str | None
    reason: str


def address_matches(banned: str, address: str) -> bool:
    """Whether ``address`` is ``banned`` (an address, or a network such as ``10.0.0.0/8``):
    an IPv6 address by its /64, an IPv4 address written as IPv6 (``::ffff:10.1.2.3``) as the
    IPv4 one (``server.game.addresses``)."""
    return address_in(banned, address)


def check_address(text: str) -> str:
    """``text`` as an address or network to ban, normalised (a lone IPv6 address as its
    /64); ``ValueError`` if it is none."""
    return ban_network(text)


# -- players ------------------------------------------------------------------------------


_PLAYER_ID = f"({PLAYER_BY_NAME.replace('SELECT *', 'SELECT id')})"
"""The id of the player called exactly ``name``, else of the one whose name folds as it does
(as ``operations.player_by_name`` finds a player; never a deleted one); its parameters are
``by_name(name)``."""


def player_row(name: str) -> Op[Any]:
    """The player's row (see ``_PLAYER_ID``); ``"no_such_player"`` if there is none."""
    row = yield from player_row_by_name(name)
    if row is None:
        raise StoreError(f"no player {name!r}", code="no_such_player")
    return row


def _refuse_while_playing(row: Any) -> Op[None]:
    game = yield from fetch_one(one(
        "SELECT id FROM games WHERE status = 'active' AND (x_player_id = ? OR o_player_id = ?)",
        row["id"], row["id"]))
    if game is not None:
        raise StoreError(f"{row['name']} is playing game {game['id']}: end it first "
                         f"(qubic admin end-game {game['id']} --result ...)",
                         code="not_allowed")


def rename_player(old: str, new: str) -> Op[str]:
    """Rename the player ``old`` (in any case) to ``new``: their row's name and nothing
    else, as every record of theirs points at their id (and shows the name it has now);
    the old name is free for anyone, and brings nothing with it. Returns the old name as it
    was written. Refused while they play a game, and for a name kept for deleted players."""
    row = yield from player_row(old)
    before = row["name"]
    yield from _refuse_while_playing(row)
    check_new_name(new)
    clash = yield from fetch_one(one(
        "SELECT id FROM players WHERE (name = ? OR name_key = ?) AND id <> ?",
        new, name_key(new), row["id"]))
    if clash is not None:
        raise StoreError(f"the name {new!r} is taken", code="name_taken")
    yield change("UPDATE players SET name = ?, name_key = ? WHERE id = ?",
                 new, name_key(new), row["id"])
    return str(before)


def delete_player(name: str, now: float | None = None) -> Op[str]:
    """Delete the player's account; returns the name their records show from now on
    (``deleted-<id>``). Refused while they play a game.

    Their row stays as a tombstone, so that their games, ratings, reports and sanctions stay
    attached to their id and to nobody else: named ``deleted-<id>`` (a name no one can
    register, its key taken by the row), with no password, no device, no recovery code and no
    role, its bans and mutes lifted, and ``deleted`` set; no look-up by name finds it, so no
    one can log in as it, and it is on no leaderboard."""
    row = yield from player_row(name)
    gone = tombstone_name(row["id"])
    yield from _refuse_while_playing(row)
    for table in ("roles", "recovery_codes", "devices"):
        yield change(f"DELETE FROM {table} WHERE player_id = ?", row["id"])
    when = time.time() if now is None else now
    yield from withdraw_everywhere(row["id"], when)
    yield change("UPDATE sanctions SET lifted = ? WHERE player_id = ? AND lifted IS NULL",
                 when, row["id"])
    yield change("UPDATE players SET name = ?, name_key = ?, password = NULL, deleted = ?"
                 " WHERE id = ?", gone, name_key(gone), when, row["id"])
    return gone


def export_player(name: str) -> Op[dict[str, Any]]:
    """Everything the database holds about the player, as plain JSON values."""
    row = yield from player_row(name)
    player = {key: row[key] for key in (
        "name", "created", "rating", "rd", "volatility", "games", "rated_games", "wins",
        "losses", "draws")}
    me, my_id = row["name"], row["id"]
    games = yield from fetch_all(every(
        f"{GAMES} WHERE games.x_player_id = ? OR games.o_player_id = ?"
        " ORDER BY games.created", my_id, my_id))
    moves: dict[str, list[int]] = {}
    for move in (yield from fetch_all(every(
            "SELECT moves.game_id, moves.cell FROM moves JOIN games ON games.id = moves.game_id"
            " WHERE games.x_player_id = ? OR games.o_player_id = ?"
            " ORDER BY moves.game_id, moves.ply", my_id, my_id))):
        moves.setdefault(move["game_id"], []).append(move["cell"])
    roles = yield from fetch_all(every(
        "SELECT role, granted, granted_by FROM roles WHERE player_id = ?", row["id"]))
    sanctions = yield from fetch_all(every(
        "SELECT * FROM sanctions WHERE player_id = ? ORDER BY id", row["id"]))
    reports = yield from fetch_all(every(
        f"{_REPORTS} WHERE reporter_id = ? OR reported_id = ? ORDER BY reports.id",
        my_id, my_id))
    # The audit log names who acted and on whom as they were called then: the entries under
    # this name since this player registered (not an earlier holder's).
    audit = yield from fetch_all(every(
        "SELECT * FROM audit WHERE (actor = ? OR target = ?) AND at >= ? ORDER BY id",
        me, me, row["created"]))
    devices = yield from fetch_all(every(
        "SELECT id, label, created, last_seen, address, revoked FROM devices"
        " WHERE player_id = ? ORDER BY id", row["id"]))
    return {
        "player": player,
        "games": [{
            "id": g["id"], "variant": g["variant"], "created": g["created"],
            "x": str(game_from_row(g, ()).x), "o": str(game_from_row(g, ()).o),
            "rated": bool(g["rated"]), "status": g["status"], "result": g["result"],
            "reason": g["reason"], "ended": g["ended"], "moves": moves.get(g["id"], []),
        } for g in games],
        "roles": [{"role": r["role"], "granted": r["granted"], "by": r["granted_by"]}
                  for r in roles]
        + ([{"role": BOT, "granted": None, "by": None}] if row["bot"] else []),
        "sanctions": [_sanction(s, me).as_dict() for s in sanctions],
        "reports": [{"id": r["id"], "at": r["at"], "reporter": _reporter(r),
                     "reported": _reported(r), "game": r["game"], "reason": r["reason"],
                     "resolved": r["resolved"]} for r in reports],
        "audit": [_audit(a).as_dict() for a in audit],
        "devices": [{key: d[key] for key in ("id", "label", "created", "last_seen", "address",
                                             "revoked")} for d in devices],
        "password_set": row["password"] is not None,
    }


# -- roles --------------------------------------------------------------------------------


def grant_role(name: str, role: Role, now: float, by: str) -> Op[str]:
    """Give the player ``role`` (again: nothing changes); returns their name as written."""
    row = yield from player_row(name)
    if role == BOT:
        yield change("UPDATE players SET bot = ? WHERE id = ?", True, row["id"])
    else:
        yield change("INSERT INTO roles (player_id, role, granted, granted_by)"
                     " VALUES (?, ?, ?, ?) ON CONFLICT (player_id, role) DO NOTHING",
                     row["id"], role, now, by)
    return str(row["name"])


def revoke_role(name: str, role: Role) -> Op[bool]:
    """Take ``role`` from the player; whether they had it."""
    row = yield from player_row(name)
    if role == BOT:
        gone = yield from run_count(change(
            "UPDATE players SET bot = ? WHERE id = ? AND bot", False, row["id"]))
    else:
        gone = yield from run_count(change(
            "DELETE FROM roles WHERE player_id = ? AND role = ?", row["id"], role))
    return gone > 0


def become_bot(name: str) -> Op[str]:
    """The player turns their own account into a bot (lichess's account upgrade): only an
    account with no rated game (``"bot_refused"``), since a bot's rating is never a
    person's. Returns their name as written."""
    row = yield from player_row(name)
    if row["rated_games"]:
        raise StoreError(f"{row['name']} has played rated games: only a new account can "
                         "become a bot", code="bot_refused")
    yield change("UPDATE players SET bot = ? WHERE id = ?", True, row["id"])
    return str(row["name"])


def roles_of(name: str) -> Op[set[str]]:
    """The roles of the player called ``name`` (none if there is no such player)."""
    rows = yield from fetch_all(every(
        f"SELECT role FROM roles WHERE player_id = {_PLAYER_ID}", *by_name(name)))
    bot = yield from fetch_one(one(
        f"SELECT bot FROM players WHERE id = {_PLAYER_ID}", *by_name(name)))
    return {row["role"] for row in rows} | ({BOT} if bot is not None and bot["bot"] else set())


# -- bans and mutes -----------------------------------------------------------------------


def _sanction(row: Any, name: str | None) -> Sanction:
    return Sanction(row["id"], row["kind"], name, row["address"], row["reason"],
                    row["created"], row["expires"], row["by_name"])


def add_sanction(
    kind: SanctionKind, *, name: str | None = None, address: str | None = None, reason: str,
    now: float, expires: float | None, by: str,
) -> Op[Sanction]:
    """Ban or mute the player ``name``, or ban ``address`` (an address or a network)."""
    player_id = None
    if name is not None:
        row = yield from player_row(name)
        player_id, name = row["id"], row["name"]
    row = yield from fetch_one(one(
        "INSERT INTO sanctions (kind, player_id, address, reason, created, expires, by_name)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        kind, player_id, address, reason, now, expires, by))
    assert row is not None
    if kind == "ban" and player_id is not None:  # as on lichess: out of their tournaments
        yield from withdraw_everywhere(player_id, now)
    return Sanction(row["id"], kind, name, address, reason, now, expires, by)


def lift_sanctions(
    kind: SanctionKind, now: float, *, name: str | None = None, address: str | None = None,
) -> Op[int]:
    """Lift every active ``kind`` of the player ``name`` or of ``address``; how many."""
    if name is not None:
        row = yield from player_row(name)
        lifted = yield from run_count(change(
            "UPDATE sanctions SET lifted = ? WHERE kind = ? AND player_id = ?"
            " AND lifted IS NULL", now, kind, row["id"]))
    else:  # as the ban wrote it, or as an older one did (a lone IPv6 address: its /64 now)
        rows = yield from fetch_all(every(
            "SELECT id, address FROM sanctions WHERE kind = ? AND address IS NOT NULL"
            " AND lifted IS NULL", kind))
        lifted = 0
        for row in rows:
            if address is not None and _same_network(row["address"], address):
                lifted += yield from run_count(change(
                    "UPDATE sanctions SET lifted = ? WHERE id = ?", now, row["id"]))
    return lifted


def _same_network(banned: str, address: str) -> bool:
    try:
        return ban_network(banned) == ban_network(address)
    except ValueError:
        return banned == address


def sanctions_of(name: str | None, address: str | None, now: float) -> Op[list[Sanction]]:
    """The active bans and mutes of the player ``name`` and the active bans of ``address``
    (an address ban of a network it is in, too)."""
    found: list[Sanction] = []
    if name is not None:
        rows = yield from fetch_all(every(
            "SELECT sanctions.*, players.name FROM sanctions JOIN players"
            f" ON players.id = sanctions.player_id WHERE players.id = {_PLAYER_ID}"
            " AND lifted IS NULL AND (expires IS NULL OR expires > ?) ORDER BY sanctions.id",
            *by_name(name), now))
        found += [_sanction(row, row["name"]) for row in rows]
    if address is not None:
        rows = yield from fetch_all(every(
            "SELECT * FROM sanctions WHERE address IS NOT NULL AND lifted IS NULL"
            " AND (expires IS NULL OR expires > ?) ORDER BY id", now))
        found += [_sanction(row, None) for row in rows
                  if address_matches(row["address"], address)]
    return found


BAN_HOLDS_SEEN = 7 * 86400.0
"""A player's ban holds the addresses their devices were seen from in this many seconds
before it, and since (``ban_holding``)."""


def ban_holding(address: str, now: float, seen: float = BAN_HOLDS_SEEN) -> Op[Sanction | None]:
    """The ban in force of a player one of whose devices was last seen from ``address`` (an
    IPv6 address: its /64) in the ``seen`` seconds before the ban or since, if any: no new
    player, ``login`` or ``recover`` comes from there while it lasts, so a banned player
    cannot come back at once under another name or on a new device. A device keeps the last
    address it was seen from, so an address the player left long before the ban is free.
    The host's own addresses (loopback) are never held: a proxy on the host that was not
    declared trusted would make every player's address that one."""
    if is_loopback(address):
        return None
    rows = yield from fetch_all(every(
        "SELECT sanctions.*, players.name, devices.address AS seen FROM sanctions"
        " JOIN players ON players.id = sanctions.player_id"
        " JOIN devices ON devices.player_id = sanctions.player_id"
        " WHERE sanctions.kind = 'ban' AND sanctions.lifted IS NULL"
        " AND (sanctions.expires IS NULL OR sanctions.expires > ?)"
        " AND devices.address IS NOT NULL"
        " AND COALESCE(devices.last_seen, devices.created) >= sanctions.created - ?"
        " ORDER BY sanctions.id", now, seen))
    key = address_key(address)
    for row in rows:
        if address_key(row["seen"]) == key:
            return _sanction(row, row["name"])
    return None


def active_sanctions(now: float) -> Op[list[Sanction]]:
    """Every active ban and mute, newest first (``qubic admin sanctions``)."""
    rows = yield from fetch_all(every(
        "SELECT sanctions.*, players.name FROM sanctions LEFT JOIN players"
        " ON players.id = sanctions.player_id WHERE lifted IS NULL"
        " AND (expires IS NULL OR expires > ?) ORDER BY sanctions.id DESC", now))
    return [_sanction(row, row["name"]) for row in rows]


# -- the audit log ------------------------------------------------------------------------


def _audit(row: Any) -> AuditEntry:
    return AuditEntry(row["actor"], row["action"], row["target"], row["reason"], row["at"],
                      row["detail"], row["id"])


def append_audit(entry: AuditEntry) -> Op[None]:
    yield change("INSERT INTO audit (at, actor, action, target, reason, detail)"
                 " VALUES (?, ?, ?, ?, ?, ?)", entry.at, entry.actor, entry.action,
                 entry.target, entry.reason, entry.detail)


def audit_log(limit: int, before: int | None = None) -> Op[list[AuditEntry]]:
    """The newest ``limit`` entries (older than id ``before``, if given), newest first."""
    rows = yield from fetch_all(every(
        "SELECT * FROM audit WHERE id < ? ORDER BY id DESC LIMIT ?",
        before if before is not None else 2**62, limit))
    return [_audit(row) for row in rows]


# -- reports ------------------------------------------------------------------------------


_REPORTS = (
    "SELECT reports.*, by_player.name AS reporter_name, about.name AS reported_name"
    " FROM reports LEFT JOIN players by_player ON by_player.id = reports.reporter_id"
    " LEFT JOIN players about ON about.id = reports.reported_id"
)
"""A report's row with its two players' names as they are now: a report points at their ids
(``reporter`` and ``reported`` are the names written when it was filed, shown only where no
player holds the report any more)."""


def _reporter(row: Any) -> str:
    return str(row["reporter_name"] or row["reporter"])


def _reported(row: Any) -> str:
    return str(row["reported_name"] or row["reported"])


def _report(row: Any) -> Report:
    return Report(row["id"], row["at"], _reporter(row), _reported(row), row["game"],
                  row["reason"])


def add_report(reporter: str, reported: str, game: str | None, reason: str, now: float
               ) -> Op[int]:
    """File ``reporter``'s report of ``reported`` (by their ids); returns its id."""
    about = yield from player_row(reported)
    by = yield from player_row_by_name(reporter)
    added = yield from fetch_one(one(
        "INSERT INTO reports (at, reporter, reporter_id, reported, reported_id, game, reason)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        now, reporter if by is None else by["name"], None if by is None else by["id"],
        about["name"], about["id"], game, reason))
    assert added is not None
    return int(added["id"])


def open_reports(limit: int) -> Op[list[Report]]:
    """The oldest ``limit`` reports not yet resolved."""
    rows = yield from fetch_all(every(
        f"{_REPORTS} WHERE resolved IS NULL ORDER BY reports.id LIMIT ?", limit))
    return [_report(r) for r in rows]


def resolve_report(report: int, now: float, by: str) -> Op[Report]:
    """Close the report; ``"no_such_report"`` unless it is open."""
    row = yield from fetch_one(one(
        f"{_REPORTS} WHERE reports.id = ? AND resolved IS NULL", report))
    if row is None:
        raise StoreError(f"no open report {report}", code="no_such_report")
    yield change("UPDATE reports SET resolved = ?, resolved_by = ? WHERE id = ?",
                 now, by, report)
    return _report(row)


# -- the control channel ------------------------------------------------------------------


def append_control(dialect: Dialect, action: str, now: float) -> Op[int]:
    """Add an action (JSON) for every node to carry out; returns its id."""
    if dialect.name == "postgresql":  # ids visible in their order: see the module docstring
        yield change("LOCK TABLE control IN SHARE ROW EXCLUSIVE MODE")
    row = yield from fetch_one(one(
        "INSERT INTO control (at, action) VALUES (?, ?) RETURNING id", now, action))
    assert row is not None
    return int(row["id"])


def control_since(last: int) -> Op[list[tuple[int, str]]]:
    """The actions after id ``last``, oldest first."""
    rows = yield from fetch_all(every(
        "SELECT id, action FROM control WHERE id > ? ORDER BY id", last))
    return [(int(row["id"]), str(row["action"])) for row in rows]


def last_control() -> Op[int]:
    """The newest action's id (0: none): a node starting up acts on what comes after."""
    row = yield from fetch_one(one("SELECT COALESCE(MAX(id), 0) AS last FROM control"))
    assert row is not None
    return int(row["last"])


def prune_control(before: float) -> Op[int]:
    """Forget the actions written before ``before`` (the newest always stays, so that ids
    never start again from 1 on SQLite); how many went."""
    return (yield from run_count(change(
        "DELETE FROM control WHERE at < ? AND id < (SELECT MAX(id) FROM control)", before)))


# -- the store's side ---------------------------------------------------------------------


class LeverStore(SQLRunner):
    """What ``SQLStore`` runs for the levers: any operation above, with an audit entry and a
    control action written in the same transaction."""

    async def apply(
        self, op: Op[T] | None = None, *, audit: AuditEntry | None = None,
        control: str | None = None,
    ) -> T | None:
        """Run ``op`` (a write above), then log ``audit`` and add ``control`` (an encoded
        ``server.node.control`` action), all in one transaction; returns ``op``'s result."""
        dialect = self.dialect

        def together() -> Op[T | None]:
            result = None if op is None else (yield from op)
            if audit is not None:
                yield from append_audit(audit)
            if control is not None:
                yield from append_control(dialect, control, time.time())
            return result

        return await self._write(together())

    async def query(self, op: Op[T]) -> T:
        """Run ``op``, which only reads."""
        return await self._read(op)
