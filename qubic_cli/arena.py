"""``qubic arena``: a computer-vs-computer match with Rubinoff's table and an Elo estimate."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from engine import UnknownPlayer
from qubic_cli.common import add_limit_arguments, fail, players_help, variant_name

if TYPE_CHECKING:
    from engine.players.arena import ArenaGame, MatchResult, PlayerStats

NAME = "arena"
HELP = "computer vs computer: N games, alternating colours, wins and search statistics"
DESCRIPTION = """\
Play player A against player B for --games games, A playing X (first) in the even-numbered
games and B in the odd ones, and print Rubinoff's table: wins, draws and losses, average move
time, evaluations, nodes and branching factor (children per expanded interior node) per player,
with the Elo of A relative to B and its 95% interval.

examples:
  qubic arena --a rubinoff:eval=eval1 --b rubinoff:eval=eval2 --games 20
  qubic arena --a rubinoff:depth=2,ab=off --b rubinoff:depth=2 --json
  qubic arena --a bogenschutz --b random --games 100 --time 0.1 --variant 3x3x3
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = players_help()
    parser.add_argument("--a", required=True, metavar="SPEC",
                        help="player A, e.g. rubinoff:depth=3")
    parser.add_argument("--b", required=True, metavar="SPEC", help="player B, e.g. random")
    parser.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    parser.add_argument("--variant", type=variant_name, default="4x4x4",
                        help="board: 4x4x4 (default), 3x3x3, 5x5x5, 3x3, 4x4, ...")
    parser.add_argument("--seed", type=int, default=0,
                        help="match seed; every game's seeds derive from it (default 0)")
    add_limit_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--games-json", action="store_true",
                        help="with --json, also list every game's moves and seeds")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: only when stderr is a terminal)")


def run(args: argparse.Namespace) -> int:
    from engine.players import Limit
    from engine.players.arena import run_match
    from engine.warm import warm_up

    if args.games < 1:
        return fail(NAME, "--games must be at least 1")
    show = sys.stderr.isatty() if args.progress is None else args.progress
    limit = Limit(time=args.time, depth=args.depth)
    warm_up(sparring=True)  # compile or load every kernel now, not inside the first move's time
    try:
        with _progress(args.games, show) as on_game:
            result = run_match(args.a, args.b, args.games, args.variant, args.seed, limit,
                               on_game)
    except UnknownPlayer as error:
        return fail(NAME, f"unknown player spec: {error}")
    if args.json:
        print(json.dumps(result.to_json(with_games=args.games_json), indent=2))
    else:
        print("\n".join(format_table(result)))
    return 0


@contextmanager
def _progress(total: int, show: bool) -> Iterator[Callable[[ArenaGame, MatchResult], None]]:
    """A callback for each finished game that advances a rich progress bar on stderr."""
    if not show:
        yield lambda record, result: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("games", total=total)

        def advance(record: ArenaGame, result: MatchResult) -> None:
            bar.update(task, advance=1, description=(
                f"A {result.a.wins} B {result.b.wins} draws {result.draws}"))

        yield advance


def format_table(result: MatchResult) -> list[str]:
    """Rubinoff's table for a match: one row per player, then the Elo estimate."""
    header = (f"{'':2} {'player':<28} {'wins':>5} {'draws':>5} {'losses':>6} {'won as X':>8} "
              f"{'move time':>10} {'evals':>10} {'nodes':>11} {'b.f.':>6}")
    lines = [
        f"{result.games} games on {result.variant}, seed {result.seed}, "
        f"A has X in even-numbered games" + _limit_text(result),
        "",
        header,
        "-" * len(header),
        _row("A", result.a),
        _row("B", result.b),
        "",
        f"Elo of A relative to B: {result.elo().describe()}",
        "(move time: mean seconds per move; evals, nodes: mean per move; b.f.: mean per move "
        "of children per interior node)",
    ]
    return lines


def _limit_text(result: MatchResult) -> str:
    parts = []
    if result.limit.time is not None:
        parts.append(f"{result.limit.time:g} s per move")
    if result.limit.depth is not None:
        parts.append(f"depth {result.limit.depth}")
    return f"; limit {', '.join(parts)}" if parts else ""


def _row(label: str, stats: PlayerStats) -> str:
    branching = stats.average_branching
    return (f"{label:2} {stats.spec:<28} {stats.wins:>5} {stats.draws:>5} {stats.losses:>6} "
            f"{stats.wins_as_x:>8} {stats.average_seconds:>10.4f} "
            f"{stats.average_evaluations:>10.0f} {stats.average_nodes:>11.0f} "
            f"{'-' if branching is None else f'{branching:.2f}':>6}")
