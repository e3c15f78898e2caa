"""engine.warm: after the warm-up, no computer player compiles anything inside a move.

numba compiles a kernel for each new type signature on its first call from Python (or loads
it from the on-disk cache). One the warm-up misses costs seconds (a cold cache) inside the
first move that needs it: the df-pn table lookup of a level-8 proof once took a move 7 s at
1 s a move. So a fresh interpreter warms up, plays every path a computer move can take, and
no kernel may have gained a signature meanwhile: first the server's warm-up (``warm_up()``)
and the lobby's levels, then the arena's (``sparring=True``) and every other player.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PLAY = r"""
import importlib, json
from numba.core.registry import CPUDispatcher

MODULES = ["engine.kernels.negamax", "engine.kernels.pvs", "engine.kernels.deepening",
           "engine.kernels.dfpn", "engine.kernels.solver", "engine.kernels.threats",
           "engine.solved.proof", "engine.players.traps", "engine.players.mcts",
           "engine.players.alphabeta"]

def signatures():
    found = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == name:
                found[f"{name}.{attr}"] = len(value.signatures)
    return found

from engine import Board
from engine.players import LEVELS, Limit, make_player
from engine.kernels.solver import Solver
from engine.players.traps import TrapFinder
from engine.warm import warm_up

OPENING = "1a1 1d4 1b1"
X_TO_MOVE = "1a1 1d4 1d1 4d4 4a4 4a1 4d1 2d4"  # ply 8: the master proves as X from here
LOST = "1a1 1d4 1d1 4d4 4a4 4a1 4d1 2d4 3d4"  # O lost: the master sets traps
WON = "3b3 4d1 3b2 2d1 2b2 2d3 3c3 4c1 1d4 2c1"  # X wins by continuous threats
played = 0

def play(specs):
    global played
    for spec in specs:
        for variant, moves, seconds in [("4x4x4", OPENING, 0.2), ("4x4x4", X_TO_MOVE, 0.5),
                                        ("4x4x4", "1a1 1d4", 0.2),  # X on the proof
                                        ("4x4x4", LOST, 0.5), ("4x4x4", WON, 0.2),
                                        ("3x3x3", "2b2", 0.1), ("4x4", "a1", 0.1),
                                        ("3x3", "b2", 0.1)]:
            board = Board.from_notation(variant, moves)
            make_player(spec, seed=1).decide(board, Limit(time=seconds))
            played += 1

warm_up()  # the server's: what the levels need
before = signatures()
play(LEVELS.values())
after = signatures()
levels = {k: [before[k], after[k]] for k in after if after[k] != before[k]}

warm_up(sparring=True)
before = signatures()
play(["mcts", "alphabeta", "bogenschutz", "rubinoff", "rubinoff:ab=off,depth=2,eval=absolute",
      "wood", "freeness", "random"])

board = Board.from_notation("4x4x4", WON)
solver = Solver(board.geometry, tt_bits=16)
proof = solver.prove(board, seconds=5.0)
assert proof.proved, "the suite's position is a proved win"
assert solver.status(board) is not None
solver.proved_child(board)
assert solver.winning_move(board) is not None
lost = Board.from_notation("4x4x4", LOST)
finder = TrapFinder(lost.geometry)
finder.choose(lost, lost.legal_moves[:3], {}, 1e18)

after = signatures()
print(json.dumps({"played": played, "kernels": len(before), "levels": levels,
                  "compiled": {k: [before[k], after[k]] for k in after if after[k] != before[k]}}))
"""


def test_no_computer_move_compiles_after_the_warm_up() -> None:
    done = subprocess.run([sys.executable, "-c", PLAY], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["played"] == 16 * 8  # the eight levels and eight other players, eight positions
    assert report["kernels"] >= 30  # the engine's kernels were all found
    assert report["levels"] == {}, report  # the server's warm-up is all the levels need
    assert report["compiled"] == {}, report
