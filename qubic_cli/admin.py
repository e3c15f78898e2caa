"""``qubic admin``: the host's levers on the database, felt by every running server within a
second (docs/admin.md).

Each action is an ``AdminCommand`` in the table ``COMMANDS``: its name, help, arguments and an
async ``act(store, args)`` that returns what to print. Accounts' ``reset-password``
(``qubic_cli.admin_accounts``) brings its own parser and run (``add_reset_password``), which
``configure`` adds beside them. The database is ``--db`` (a
SQLite file or a postgresql:// URL), else ``$QUBIC_DATABASE_URL`` (or its ``_FILE``), else the
configuration file's ``database``, as for ``qubic serve`` and ``qubic db``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from qubic_cli import admin_accounts, admin_tournaments
from qubic_cli.common import actor, fail
from qubic_cli.settings import Setting, SettingsError, apply

NAME = "admin"
HELP = "the host's levers: roles, bans, mutes, kicks, announcements, players, the audit log"
DESCRIPTION = """\
The host's levers (docs/admin.md). Each works on the database (--db FILE|URL, as for
`qubic db`) and takes effect on every running server of it within a second; each is written
in the audit log (`qubic admin audit`).

examples:
  qubic admin grant ann moderator --db qubic.db
  qubic admin ban spammer --for 7d --reason "spam in chat" --db qubic.db
  qubic admin ban 203.0.113.0/24 --reason "a flood of new names"
  qubic admin announce "The server restarts at 18:00 UTC"
  qubic admin end-game Xb3kq9Zt1LmN --result draw --reason "stuck"
  qubic admin remove-chat Xb3kq9Zt1LmN 9 --reason "abuse"
"""

SETTINGS = (Setting("db", "database", "QUBIC_DATABASE_URL", secret=True),)

Act = Callable[[Any, argparse.Namespace], Awaitable[Any]]


@dataclass(frozen=True)
class AdminCommand:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    act: Act


_DURATION = re.compile(r"\A(\d+(?:\.\d+)?)([smhdw]?)\Z")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration(text: str) -> float:
    """An argparse type: ``90s``, ``30m``, ``12h``, ``7d``, ``2w`` (a bare number: seconds)."""
    found = _DURATION.match(text.strip().lower())
    if found is None or float(found[1]) <= 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration such as 30m, 12h, 7d or 2w")
    return float(found[1]) * _UNIT[found[2]]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _name(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the player's name (in any case)")


def _reason(required: bool = False) -> Callable[[argparse.ArgumentParser], None]:
    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--reason", required=required, default="", metavar="TEXT",
                            help="why (written in the audit log" +
                                 (", and told to the player)" if required else ")"))
    return add


def _both(*parts: Callable[[argparse.ArgumentParser], None]
          ) -> Callable[[argparse.ArgumentParser], None]:
    def add(parser: argparse.ArgumentParser) -> None:
        for part in parts:
            part(parser)
    return add


def _for(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--for", dest="seconds", type=duration, metavar="DURATION",
                        help="how long: 30m, 12h, 7d, 2w (default: until lifted)")


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME|ADDRESS",
                        help="a player's name, or an address or network (203.0.113.7, "
                             "2001:db8::/48)")


def _is_address(text: str) -> bool:
    from server.store.lever_records import check_address

    try:
        check_address(text)
    except ValueError:
        return False
    return True


# -- the commands ---------------------------------------------------------------------------


def _role(parser: argparse.ArgumentParser) -> None:
    _name(parser)
    parser.add_argument("role", choices=["admin", "moderator", "bot"])
    _reason()(parser)


async def _grant(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return {"granted": args.role,
            "to": await levers.grant(store, actor(), args.name, args.role, args.reason)}


async def _revoke_role(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    had = await levers.revoke_role(store, actor(), args.name, args.role, args.reason)
    return {"revoked": args.role if had else None, "from": args.name}


async def _ban(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    where = {"address": args.name} if _is_address(args.name) else {"name": args.name}
    sanction = await levers.ban(store, actor(), reason=args.reason, seconds=args.seconds,
                                **where)
    return {"banned": sanction.as_dict()}


async def _unban(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    where = {"address": args.name} if _is_address(args.name) else {"name": args.name}
    return {"bans lifted": await levers.unban(store, actor(), reason=args.reason, **where)}


async def _mute(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    sanction = await levers.mute(store, actor(), args.name, args.reason, args.seconds)
    return {"muted": sanction.as_dict()}


async def _unmute(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return {"mutes lifted": await levers.unmute(store, actor(), args.name, args.reason)}


async def _kick(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    await levers.kick(store, actor(), args.name, args.reason)
    return {"kicked": args.name}


def _text(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", help="what every connected player is told")
    _reason()(parser)


async def _announce(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    if not args.text.strip():
        raise ValueError("an announcement needs words")
    await levers.announce(store, actor(), args.text, args.reason)
    return {"announced": args.text}


def _game(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="ID", help="the game's id")
    parser.add_argument("--result", required=True, choices=["x", "o", "draw", "abort"],
                        help="x or o wins, a draw, or abort (no result, no rating change)")
    _reason()(parser)


async def _end_game(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    how = await levers.end_game(store, actor(), args.game, levers.RESULTS[args.result],
                                args.reason)
    return {"game": args.game, "result": levers.RESULTS[args.result], "how": how}


def _chat_line(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="ID", help="the game's id")
    parser.add_argument("line", type=int, metavar="LINE",
                        help="the chat line's number (the chat event's line)")
    _reason()(parser)


async def _remove_chat(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    await levers.remove_chat(store, actor(), args.game, args.line, args.reason)
    return {"game": args.game, "line": args.line,
            "how": "the server holding the game takes it out within a second"}


def _rename(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", help="the player's name now")
    parser.add_argument("new", help="their new name")
    _reason()(parser)


async def _do_rename(store: Any, args: argparse.Namespace) -> Any:
    import msgspec

    from server.node import levers
    from server.protocol.field_types import Name

    try:
        msgspec.convert(args.new, Name)
    except msgspec.ValidationError:
        raise ValueError(f"{args.new!r} is not a name: 1-24 letters, digits, _ or -") from None
    before = await levers.rename(store, actor(), args.old, args.new, args.reason)
    return {"renamed": before, "to": args.new}


async def _export(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return await levers.export_player(store, args.name)


async def _delete(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return {"deleted": args.name,
            "games now under": await levers.delete_player(store, actor(), args.name,
                                                          args.reason)}


def _audit_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=50, help="entries shown (default 50)")
    parser.add_argument("--before", type=int, metavar="ID", help="entries older than this id")


async def _audit(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return [e.as_dict() for e in await levers.audit(store, args.limit, args.before)]


async def _sanctions(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return [s.as_dict() for s in await levers.sanctions(store)]


async def _reports(store: Any, args: argparse.Namespace) -> Any:
    from server.node import levers

    return [vars(r) for r in await levers.reports(store)]


COMMANDS: dict[str, AdminCommand] = {command.name: command for command in (
    AdminCommand("grant", "give a player the role admin, moderator or bot", _role, _grant),
    AdminCommand("revoke", "take a role from a player (as revoke-role)", _role, _revoke_role),
    AdminCommand("revoke-role", "take a role from a player", _role, _revoke_role),
    AdminCommand("ban", "close a player's or an address's connections and refuse them",
                 _both(_target, _for, _reason(required=True)), _ban),
    AdminCommand("unban", "lift the bans of a player or an address",
                 _both(_target, _reason()), _unban),
    AdminCommand("mute", "refuse a player's chat", _both(_name, _for, _reason()), _mute),
    AdminCommand("unmute", "let a muted player chat again", _both(_name, _reason()), _unmute),
    AdminCommand("kick", "close a player's connections on every server (they may come back)",
                 _both(_name, _reason()), _kick),
    AdminCommand("announce", "say something to every connected player", _text, _announce),
    AdminCommand("end-game", "end a game with a result of the host's choosing", _game, _end_game),
    AdminCommand("remove-chat", "take a chat line out of a game going on (either chat)",
                 _chat_line, _remove_chat),
    AdminCommand("rename", "rename a player: their records follow them; the old name is free "
                 "and brings nothing to whoever takes it", _rename, _do_rename),
    AdminCommand("export-player", "everything the database holds about a player, as JSON",
                 _name, _export),
    AdminCommand("delete-player", "delete a player's account: their games and reports stay "
                 "with a tombstone, deleted-<id>, that nobody can take or log in as",
                 _both(_name, _reason()), _delete),
    AdminCommand("audit", "the audit log: every admin's and moderator's action, newest first",
                 _audit_args, _audit),
    AdminCommand("sanctions", "the bans and mutes in force, newest first", _no_arguments,
                 _sanctions),
    AdminCommand("reports", "the players' open reports, oldest first", _no_arguments, _reports),
    AdminCommand("tournament", "tournaments: create, list, show, cancel",
                 admin_tournaments.configure, admin_tournaments.tournament),
)}
"""Every ``qubic admin`` action but ``reset-password`` (``admin_accounts``'s own parser)."""


# -- the command ----------------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", "--database", dest="db", default="qubic.db", metavar="DB",
                        help="a SQLite file (default ./qubic.db) or a postgresql:// URL")
    common.add_argument("--config", metavar="FILE", help="a TOML file, as for qubic serve")
    common.add_argument("--json", action="store_true", help="print the outcome as JSON")
    actions = parser.add_subparsers(dest="action", metavar="action", required=True)
    for command in COMMANDS.values():
        sub = actions.add_parser(command.name, help=command.help, description=command.help,
                                 parents=[common])
        command.configure(sub)
        sub.set_defaults(admin=command, admin_parser=sub)
    admin_accounts.add_reset_password(actions)  # its own parser and run


def run(args: argparse.Namespace) -> int:
    from server.errors import StoreError

    if getattr(args, "action_run", None) is not None:  # reset-password's own run
        return int(args.action_run(args))

    try:
        apply(args.admin_parser, SETTINGS, "serve", args, args.argv, others=True)
    except SettingsError as error:
        return fail(NAME, str(error))
    try:
        outcome = asyncio.run(_act(args.admin, args))
    except (StoreError, ValueError) as error:
        return fail(f"{NAME} {args.action}", str(error))
    _print(outcome, args.json or args.action == "export-player")
    return 0


async def _act(command: AdminCommand, args: argparse.Namespace) -> Any:
    from server.store.factory import open_store

    store = await open_store(args.db)
    try:
        return await command.act(store, args)
    finally:
        await store.close()


TIMES = ("at", "created", "expires", "starts_at", "ends_at")
"""The fields that are Unix seconds: printed as UTC dates unless --json."""


def readable(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with its times as a person reads them (``2026-11-29 02:03:05 UTC``)."""
    from datetime import UTC, datetime

    return {key: datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            if key in TIMES and isinstance(value, int | float) else value
            for key, value in entry.items()}


def _print(outcome: Any, as_json: bool) -> None:
    """JSON as it is (times in Unix seconds) with --json; else a line a field, or for a list
    (the audit log, sanctions, reports) a line an entry, times as dates."""
    if as_json:
        print(json.dumps(outcome, indent=2))
        return
    if isinstance(outcome, list):
        for entry in outcome:
            fields = readable(entry) if isinstance(entry, dict) else {"": entry}
            print("  ".join(f"{key}: {value}" for key, value in fields.items()
                            if value not in (None, "")))
        return
    for key, value in readable(outcome).items():
        if isinstance(value, dict):
            value = json.dumps(readable(value))
        elif isinstance(value, list):
            value = json.dumps(value)
        print(f"{key}: {value}")
