"""``qubic prove``: the machine-checked proof that X wins 4x4x4 Qubic (see
engine/solved/proof.py)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
from pathlib import Path

from engine import Board, IllegalMove, NotationError
from qubic_cli.common import fail

NAME = "prove"
HELP = "prove that X wins 4x4x4: Patashnik's strategy, every O reply followed"
DESCRIPTION = """\
From the empty board (or --subtree), X plays the strategy of Patashnik's proof: win if it can,
else block O's three, else the move of Patashnik's dictionary (engine/data/qubic.dictionary,
credit: Oren Patashnik 1977, Ken Thompson 1978), else a forced win found by the threat-space
search (df-pn where that finds none). Every legal O reply is followed, up to symmetry, until
each line ends in X's win. Exits 0 only if every line is proved; else lists every gap.

--verify replays the shipped completed dictionary (engine/data/qubic.strategy.xz), or the one
--strategy names, without any search; a file that cannot be read, or a stored move that is not
legal, is reported as a gap at its position. --save writes the strategy a full proof found there.

examples:
  qubic prove --verify
  qubic prove --verify --strategy copy.strategy.xz
  qubic prove --subtree "1a1 4d4 4a1 1a4"
  qubic prove --processes 2 --save
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--processes", type=int, default=1, metavar="N",
                        help="worker processes, each proving whole subtrees (default 1)")
    parser.add_argument("--subtree", default="", metavar='"1a1 ..."',
                        help="prove from the position after these moves, X to move "
                             "(default: the empty board)")
    parser.add_argument("--verify", action="store_true",
                        help="replay the shipped completed dictionary, no search")
    parser.add_argument("--strategy", type=Path, default=None, metavar="FILE",
                        help="the completed dictionary to replay or start from "
                             "(default: the shipped one)")
    parser.add_argument("--save", action="store_true",
                        help="write the strategy found to engine/data/qubic.strategy.xz "
                             "(only from the empty board, and only if every line is proved)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")


def run(args: argparse.Namespace) -> int:
    from engine.solved import proof
    from engine.solved.strategy import strategy_path

    try:
        board = Board.from_notation(proof.VARIANT, args.subtree)
    except (NotationError, IllegalMove) as error:
        return fail(NAME, f"bad --subtree: {error}")
    if board.turn != 0 or board.outcome() is not None:
        return fail(NAME, "--subtree must leave X to move in a game still on")
    if args.processes < 1:
        return fail(NAME, "--processes must be at least 1")
    if args.save and (args.verify or board.ply):
        return fail(NAME, "--save needs a full proof: from the empty board, without --verify")
    if args.processes > 1:
        context = multiprocessing.get_context("spawn")
        with context.Pool(args.processes) as pool:
            tally, strategy = proof.prove_parallel(board.moves, imap=pool.imap_unordered,
                                                   verify=args.verify,
                                                   strategy_file=args.strategy)
    else:
        tally, strategy = proof.prove(board.moves, verify=args.verify,
                                      strategy_file=args.strategy)
    saved = None
    if args.save and not tally.gaps:
        path = strategy.save(strategy_path())
        saved = {"path": str(path), "entries": len(strategy), "bytes": path.stat().st_size}
    data = proof.report(tally, strategy, start=args.subtree, verify=args.verify)
    if saved:
        data["saved"] = saved
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(proof.format_report(data)))
    return 0 if not tally.gaps else 1
