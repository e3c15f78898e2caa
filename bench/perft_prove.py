"""The proof's speed: one measurement a process, in CPU seconds, with the counts that must agree.

    PYTHONPATH=TREE .venv/bin/python bench/perft_prove.py subtree|dfpn|verify [--moves "1a1 ..."]

``subtree``: ``qubic prove --subtree`` (default ``1a1 4d4 4a1 1a4 1d4 1b1``, whose first
position needs the proof's costliest df-pn call); ``dfpn``: that call alone
(``Solver(tt_bits=20, sym_plies=0).winning_move``, as the proof makes it); ``verify``:
``qubic prove --verify`` from the empty board (or ``--moves``). The kernels are compiled or
loaded and the shipped files read before the clock starts, so the figure is the work alone
(``time.process_time``: other jobs on the machine do not count). ``PYTHONPATH`` picks the
tree measured (this script imports only the engine's public functions, which an older tree
has too), so that old and new can be run one after the other, each run under the shared lock
(docs/benchmarks.md, "Engine speed"). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

from engine.kernels.solver import Solver
from engine.rules.board import Board
from engine.rules.geometry import variant
from engine.rules.notation import parse_moves
from engine.solved import proof
from engine.solved.strategy import shipped_strategy

SUBTREE = "1a1 4d4 4a1 1a4 1d4 1b1"
G = variant("4x4x4")


def warm_up() -> None:
    """Compile or load every kernel the three measurements run, and read the shipped files."""
    deep = parse_moves("1a1 4d4 4a1 1a4 1d4 1b1 1c1 2b2 3b3 2c3 2a1 3a1 3c1 2b1 2b3 1b3 1d1 "
                       "1b2 1b4 3b2 4b2 3c3 3d4 4c3 1c3 4c1 4a4 2c2 3b1 2c1 2c4 3b4 1d2 1d3 "
                       "1c4 1c2", G)
    proof.prove(deep)
    Solver(G, tt_bits=10, sym_plies=0).prove(Board(G, [*parse_moves(SUBTREE, G), 5]), 0,
                                             nodes=10)
    shipped_strategy()
    proof.prove(parse_moves("1a1 4d4 4a1 1a4 1d1 1b1", G), verify=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("subtree", "dfpn", "verify"))
    parser.add_argument("--moves", default=None)
    args = parser.parse_args()
    warm_up()
    out: dict[str, object] = {"what": args.what}
    if args.what == "dfpn":
        moves = parse_moves(args.moves or SUBTREE, G)
        solver = Solver(G, tt_bits=20, sym_plies=0)
        started = time.process_time()
        move = solver.winning_move(Board(G, moves), attacker=0, nodes=proof.DFPN_NODES)
        out["cpu"] = round(time.process_time() - started, 3)
        out["move"] = move
    else:
        verify = args.what == "verify"
        moves = parse_moves(args.moves if args.moves is not None
                            else "" if verify else SUBTREE, G)
        started = time.process_time()
        tally, strategy = proof.prove(moves, verify=verify)
        out["cpu"] = round(time.process_time() - started, 3)
        data = proof.report(tally, strategy, verify=verify)
        out.update({key: value for key, value in data.items()
                    if key not in ("seconds", "dfpn_positions", "start", "mode")})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
