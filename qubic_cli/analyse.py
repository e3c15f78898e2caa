"""``qubic analyse``: a player's move and evaluation for a position given as a move list."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from engine import Board, IllegalMove, NotationError, Outcome, Termination, UnknownPlayer
from engine.rules.board import SIDE_NAMES
from engine.rules.notation import format_moves
from qubic_cli.common import add_limit_arguments, fail, players_help, seconds, variant_name

if TYPE_CHECKING:
    from engine.solved.truth import Verdict

# The player asked when --player is not given; switch it to the strongest registered player.
DEFAULT_PLAYER = "bogenschutz"

NAME = "analyse"
HELP = "the engine's move and evaluation for a position"
DESCRIPTION = """\
Show the move a computer player chooses for the side to move after --moves, with its score,
search depth, nodes, principal variation and any forced win or loss it proved, and the truth
of the position (engine/solved/truth.py): win, loss, draw or unknown for the side to move and after
each move, from the proof of 4x4x4 where it covers the position, else from a proof search
within --solve-time seconds.

examples:
  qubic analyse --moves "1a1 4d4 1b1 4c4 1c1"
  qubic analyse --moves "1a1 2b2" --player rubinoff:eval=eval1,depth=4 --json
  qubic analyse --variant 3x3 --moves "b2 a1" --player wood

An illegal or unparsable move list, a finished game or an unknown player exits with code 2.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = players_help()
    parser.add_argument("--variant", type=variant_name, default="4x4x4",
                        help="board: 4x4x4 (default), 3x3x3, 5x5x5, 3x3, 4x4, ...")
    parser.add_argument("--moves", default="", metavar='"1a1 2b2 ..."',
                        help="the moves so far, separated by spaces (default: the empty board)")
    parser.add_argument("--player", default=DEFAULT_PLAYER, metavar="NAME[:OPTS]",
                        help=f"player spec, e.g. rubinoff:eval=eval2,depth=3 "
                             f"(default: {DEFAULT_PLAYER})")
    add_limit_arguments(parser)
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for the random choice among equal moves (default 0)")
    parser.add_argument("--solve-time", type=seconds, default=1.0, metavar="S",
                        help="seconds for the proof of who wins (the 'truth': win, loss, draw "
                             "or unknown for the side to move, and for each move; default 1)")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")


def describe_outcome(board: Board, outcome: Outcome) -> str:
    """One line saying how a finished game ended, the winning line in notation."""
    if outcome.termination is Termination.LINE:
        assert outcome.winner is not None and outcome.line is not None
        line = format_moves(outcome.line, board.geometry)
        return f"the game is over: {SIDE_NAMES[outcome.winner]} has won on the line {line}"
    if outcome.termination is Termination.FULL:
        return "the game is over: drawn, the board is full"
    return "the game is over: a dead draw, neither side can complete a line any more"


def describe_truth(truth: Verdict, exact: bool = False) -> str:
    """The verdict for the side to move in words, e.g. ``win in at most 13 plies (book)``;
    ``exact`` where the plies are those of best play (the small boards' tables)."""
    if truth.verdict == "unknown":
        return "unknown (not proved within the solver's time)"
    bound = "exactly" if exact else "at most"
    unit = "ply" if truth.plies == 1 else "plies"
    plies = "" if truth.plies is None else f" in {bound} {truth.plies} {unit}"
    return f"{truth.verdict}{plies} ({truth.proved_by})"


def run(args: argparse.Namespace) -> int:
    from engine.players import Limit, make_player
    from engine.solved.small_boards import TABLED
    from engine.solved.truth import solve
    from engine.warm import warm_up

    try:
        board = Board.from_notation(args.variant, args.moves)
    except (NotationError, IllegalMove) as error:
        return fail(NAME, f"bad move list: {error}")
    outcome = board.outcome()
    if outcome is not None:
        return fail(NAME, describe_outcome(board, outcome))
    try:
        player = make_player(args.player, seed=args.seed)
    except UnknownPlayer as error:
        return fail(NAME, f"unknown player spec: {error}")
    warm_up(sparring=True)  # every kernel first, so the time and nodes/s are the search's
    decision = player.decide(board, Limit(time=args.time, depth=args.depth))
    data = decision.to_json(board)
    rate = decision.nodes / decision.elapsed if decision.elapsed > 0 else None
    data.update(player=player.spec, variant=board.geometry.name, ply=board.ply,
                side=SIDE_NAMES[board.turn], nodes_per_second=rate)
    truth = solve(board, budget_s=args.solve_time)
    data["truth"] = truth.to_json(board.geometry)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(board)
    print()
    print(f"{data['side']} to move after {board.ply} moves; {player.spec} on {data['variant']}")
    forced = decision.forced
    score = "-" if decision.score is None else str(decision.score)
    if forced is not None:
        score += f"  ({forced.result} in {forced.plies} plies)"
    rows = [
        ("move", f"{data['move']} (cell {decision.move})"),
        ("score", score),
        ("depth", str(decision.depth)),
        ("nodes", f"{decision.nodes:,}" + (f" ({rate:,.0f} nodes/s)" if rate else "")),
        ("evaluations", f"{decision.evaluations:,}"),
        ("branching", "-" if decision.branching is None else f"{decision.branching:.2f}"),
        ("pv", " ".join(data["pv"]) or "-"),
        ("truth", describe_truth(truth, board.geometry.name in TABLED)),
        ("time", f"{decision.elapsed:.3f} s"),
    ]
    for label, value in rows:
        print(f"{label:<12} {value}")
    return 0
