"""``qubic admin reset-password NAME``: a host resets a player's password on the database.

``add_reset_password(actions)`` adds the action to ``qubic admin``'s subparsers (called by
``qubic_cli.admin.configure``) and ``reset_password(args)`` does the work.

The new password is made here (``secrets``) and printed once for the host to pass on: a
secret is never taken on the command line, where other users could read it in the process
list. Every device of the player is logged out and the recovery codes are deleted; the
player logs in with the printed password and sets one of their own, which gives new codes.
Their open connections are closed on every running server within a second (``token_revoked``,
4001: the control action is written with the new password), and the audit log records it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets

from qubic_cli.common import actor, fail
from qubic_cli.settings import Setting, SettingsError, apply

NAME = "admin"
SETTINGS = (Setting("db", "database", "QUBIC_DATABASE_URL", secret=True),)


def add_reset_password(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``reset-password`` to ``qubic admin``'s actions; its ``run`` is ``reset_password``."""
    parser: argparse.ArgumentParser = actions.add_parser(
        "reset-password", help="a new random password for a player, printed once",
        description="A new random password for the player NAME, printed once (a secret is "
                    "never taken on the command line); every device of theirs is logged out "
                    "and their recovery codes are deleted. They log in with it and set their "
                    "own password, which gives them new codes.")
    parser.add_argument("name", help="the player")
    parser.add_argument("--db", "--database", dest="db", default="qubic.db", metavar="DB",
                        help="a SQLite file (default ./qubic.db) or a postgresql:// URL")
    parser.add_argument("--config", metavar="FILE", help="a TOML file, as for qubic serve")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument("--reason", metavar="TEXT", help="why, for the audit log")
    parser.set_defaults(action_run=reset_password, action_parser=parser)
    return parser


def reset_password(args: argparse.Namespace) -> int:
    """Reset ``args.name``'s password on ``args.db``; prints it. 0, or 1 with no such player."""
    from server.errors import StoreError

    try:
        apply(args.action_parser, SETTINGS, "serve", args, args.argv, others=True)
    except SettingsError as error:
        return fail(NAME, str(error))
    password = "-".join(secrets.token_urlsafe(6) for _ in range(3))
    try:
        outcome = asyncio.run(_reset(args.db, args.name, password, args.reason))
    except StoreError as error:
        return fail(NAME, str(error))
    if outcome is None:
        print(f"qubic {NAME}: no player is called {args.name!r}")
        return 1
    if args.json:
        print(json.dumps(outcome, indent=2))
    else:
        print(f"The password of {outcome['name']} is now: {password}\n"
              f"{outcome['devices_logged_out']} devices logged out; recovery codes deleted. "
              "Pass the password on: they log in with it and set their own.")
    return 0


async def _reset(database: str, name: str, password: str,
                 reason: str | None) -> dict[str, object] | None:
    from server.node import levers
    from server.passwords import hash_password
    from server.store.factory import open_store

    store = await open_store(database)
    try:
        player = await store.get_player(name)
        if player is None:
            return None
        revoked = await levers.reset_password(store, actor(), player.name,
                                              await asyncio.to_thread(hash_password, password),
                                              reason)
        return {"name": player.name, "password": password, "devices_logged_out": len(revoked)}
    finally:
        await store.close()
