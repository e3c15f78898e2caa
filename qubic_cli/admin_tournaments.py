"""``qubic admin tournament create|list|show|cancel``: the host schedules tournaments on the
database; every running server of it picks a new one up within seconds (docs/tournaments.md).
Creating and cancelling are written in the audit log."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from typing import Any

from qubic_cli.common import actor


def start_time(text: str, now: float | None = None) -> float:
    """An argparse type: ``+MIN`` (minutes from now) or an ISO date and time (UTC unless it
    says otherwise): Unix seconds."""
    now = time.time() if now is None else now
    text = text.strip()
    try:
        if text.startswith("+"):
            return now + 60 * float(text[1:])
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither +MINUTES nor an ISO time such as 2026-12-01T18:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _start_times(text: str) -> list[float]:
    """An argparse type: times as ``start_time`` reads them, separated by commas."""
    return [start_time(part) for part in text.split(",") if part.strip()]


def configure(parser: argparse.ArgumentParser) -> None:
    """``tournament``'s own actions; each takes the common options again after it."""
    what = parser.add_subparsers(dest="what", metavar="what", required=True)

    def common(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument("--db", "--database", dest="db", default="qubic.db", metavar="DB",
                         help="a SQLite file (default ./qubic.db) or a postgresql:// URL")
        sub.add_argument("--config", metavar="FILE", help="a TOML file, as for qubic serve")
        sub.add_argument("--json", action="store_true", help="print the outcome as JSON")
        return sub

    create = common(what.add_parser("create", help="schedule a tournament"))
    create.add_argument("--name", required=True, help="its name, 1-60 characters")
    create.add_argument("--kind", choices=("arena", "swiss"), default="arena")
    create.add_argument("--start", type=start_time, default="+0", metavar="ISO|+MIN",
                        help="when: an ISO time (UTC unless it says) or +minutes from now")
    create.add_argument("--minutes", type=int, help="an arena's length (default 60)")
    create.add_argument("--rounds", type=int, help="a Swiss's rounds (default 5)")
    create.add_argument("--clock", default="3+2", help="minutes each + seconds a move")
    create.add_argument("--variant", default="4x4x4", choices=("4x4x4", "3x3x3", "4x4"))
    create.add_argument("--rated", action="store_true", help="its games change ratings")
    create.add_argument("--round-interval", type=float, metavar="SECONDS",
                        help="a Swiss: each round starts at the latest SECONDS after the one "
                             "before started, its games still going on or not (default: 5 s "
                             "after its last game ends)")
    create.add_argument("--round-times", type=_start_times, default=[], metavar="ISO|+MIN,...",
                        help="a Swiss: the times rounds 2, 3, ... start at the latest")
    create.add_argument("--computer", dest="computers", type=int, action="append",
                        default=[], metavar="LEVEL",
                        help="enter a computer player of LEVEL 1-8 (again for more)")
    create.add_argument("--reason", default="", metavar="TEXT", help="why, for the audit log")
    common(what.add_parser("list", help="those coming, going on and finished in 24 h"))
    show = common(what.add_parser("show", help="one tournament: standings and games"))
    show.add_argument("id")
    cancel = common(what.add_parser("cancel", help="end a tournament now (its games "
                                                    "going on are played out, not counted)"))
    cancel.add_argument("id")
    cancel.add_argument("--reason", default="", metavar="TEXT", help="why, for the audit log")


async def tournament(store: Any, args: argparse.Namespace) -> Any:
    import msgspec

    from server.errors import StoreError
    from server.node.tournament_view import Standings, tournament_info
    from server.node.tournaments import tournament_record
    from server.protocol import TournamentCreate
    from server.store import tournaments as ops
    from server.store.lever_records import AuditEntry

    if args.what == "list":
        found = await store.query(ops.list_tournaments(time.time()))
        return [msgspec.to_builtins(tournament_info(t, t.players)) for t in found]
    if args.what == "show":
        data = await store.query(ops.tournament_data(args.id))
        if data is None:
            raise StoreError(f"no tournament {args.id}", code="no_such_tournament")
        shown = msgspec.to_builtins(Standings.from_data(data).state())
        return {key: value for key, value in shown.items() if key not in ("t", "ref")}
    if args.what == "cancel":
        now = time.time()

        def cancel() -> Any:  # refused inside the write, so nothing is audited
            if not (yield from ops.finish_tournament(args.id, now)):
                raise StoreError(f"no tournament {args.id} going on", code="no_such_tournament")

        await store.apply(cancel(), audit=AuditEntry(actor(), "tournament-cancel", args.id,
                                                     args.reason or None, now))
        return {"cancelled": args.id}
    arena = args.kind == "arena"
    fields = {"name": args.name, "kind": args.kind, "starts_at": args.start,
              "clock": args.clock, "variant": args.variant, "rated": args.rated,
              "computer_levels": args.computers,
              **({"round_interval": args.round_interval}
                 if args.round_interval is not None else {}),
              **({"round_times": args.round_times} if args.round_times else {}),
              ("minutes" if arena else "rounds"): _given(args.minutes, 60) if arena
              else _given(args.rounds, 5)}
    try:
        message = msgspec.convert({"t": "tournament_create", **fields}, TournamentCreate)
    except msgspec.ValidationError as error:
        raise ValueError(str(error.__cause__ or error)) from None
    tournament = tournament_record(message, actor(), time.time())
    await store.apply(ops.insert_tournament(tournament, list(message.computer_levels)),
                      audit=AuditEntry(actor(), "tournament-create", tournament.id,
                                       args.reason or None, tournament.created,
                                       detail=f"{tournament.kind} {tournament.name!r}"))
    return msgspec.to_builtins(tournament_info(tournament, len(message.computer_levels)))


def _given(value: int | None, default: int) -> int:
    return default if value is None else value
