"""``qubic db``: a server's database: status, backup, restore, and the move to PostgreSQL."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from qubic_cli.common import fail
from qubic_cli.settings import Setting, SettingsError, apply

NAME = "db"
HELP = "the server's database: status, backup, restore, migrate to PostgreSQL"
DESCRIPTION = """\
Look after a server's database (docs/operations.md, "Backups"). The database is --db (a SQLite
file or a postgresql:// URL), else $QUBIC_DATABASE_URL (or its _FILE), else the configuration
file's `database`, as for `qubic serve`.

  status                   schema version, players, games by status, moves, size
  backup --out FILE        a consistent copy while the server runs (SQLite's online backup;
                           pg_dump's custom format for PostgreSQL)
  restore FILE [--force]   put a backup in place (stop the server first; --force replaces
                           an existing SQLite file)
  migrate --to URL         copy a SQLite server's players, games and moves (and roles, bans,
                           mutes, audit log, reports) into an empty PostgreSQL database, in
                           one transaction; the URL may instead be in $QUBIC_MIGRATE_TO or
                           the file $QUBIC_MIGRATE_TO_FILE names (no password on the command
                           line)

examples:
  qubic db status --db qubic.db
  qubic db backup --db qubic.db --out qubic-2026-11-26.db
  QUBIC_DATABASE_URL_FILE=/run/secrets/db qubic db backup --out qubic.dump
  qubic db migrate --db qubic.db --to postgresql://qubic@127.0.0.1/qubic
  QUBIC_MIGRATE_TO_FILE=/run/secrets/new-db qubic db migrate --db qubic.db
"""

SETTINGS = (Setting("db", "database", "QUBIC_DATABASE_URL", secret=True),
            # The PostgreSQL URL to migrate to, password included: from the environment or a
            # file (QUBIC_MIGRATE_TO_FILE) as well as the command line, where `ps` shows it.
            Setting("to", "migrate_to", "QUBIC_MIGRATE_TO", secret=True))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["status", "backup", "restore", "migrate"])
    parser.add_argument("file", nargs="?", help="restore: the backup to put in place")
    parser.add_argument("--db", "--database", dest="db", default="qubic.db", metavar="DB",
                        help="a SQLite file (default ./qubic.db) or a postgresql:// URL")
    parser.add_argument("--config", metavar="FILE", help="a TOML file, as for qubic serve")
    parser.add_argument("--out", metavar="FILE", help="backup: the file to write")
    parser.add_argument("--to", metavar="URL",
                        help="migrate: the PostgreSQL database (empty); or $QUBIC_MIGRATE_TO, "
                             "$QUBIC_MIGRATE_TO_FILE")
    parser.add_argument("--force", action="store_true",
                        help="restore: replace an existing SQLite file")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def run(args: argparse.Namespace) -> int:
    from server.errors import StoreError

    try:
        apply(args.parser, SETTINGS, "serve", args, args.argv, others=True)  # serve's file
    except SettingsError as error:
        return fail(NAME, str(error))
    try:
        began = time.perf_counter()
        outcome = asyncio.run(_act(args))
        outcome["seconds"] = round(time.perf_counter() - began, 3)
    except (StoreError, ValueError) as error:
        return fail(NAME, str(error))
    if args.json:
        print(json.dumps(outcome, indent=2))
    else:
        for key, value in outcome.items():
            print(f"{key}: {value}")
    return 0


async def _act(args: argparse.Namespace) -> dict[str, object]:
    from server.store import tools
    from server.store.factory import is_postgres_url

    database, postgres = args.db, is_postgres_url(args.db)
    if args.action == "status":
        return (await tools.status(database)).as_dict()
    if args.action == "backup":
        if not args.out:
            raise ValueError("backup needs --out FILE")
        if postgres:
            tools.pg_backup(database, args.out)
            return {"backup": args.out, "bytes": Path(args.out).stat().st_size}
        return {"backup": args.out, **tools.sqlite_backup(database, args.out).as_dict()}
    if args.action == "restore":
        if not args.file:
            raise ValueError("restore needs the backup's file")
        if postgres:
            tools.pg_restore(args.file, database)
            return (await tools.status(database)).as_dict()
        return tools.sqlite_restore(args.file, database, force=args.force).as_dict()
    if not args.to or not is_postgres_url(args.to):
        raise ValueError("migrate needs --to postgresql://... (or QUBIC_MIGRATE_TO, "
                         "QUBIC_MIGRATE_TO_FILE)")
    if postgres:
        raise ValueError("migrate copies a SQLite database (--db FILE) into PostgreSQL")
    copied = await tools.copy_to_postgres(database, args.to)
    return {"copied": copied, **(await tools.status(args.to)).as_dict()}
