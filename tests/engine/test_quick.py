"""``Player.quick``: in a process where numba compiles nothing (``NUMBA_DISABLE_JIT=1``, as the
server's quick path runs it), the move ``decide`` makes with the compiled kernels, or None.

The quick path plays a newcomer's first moves while a cold cache compiles (most of a minute),
so it must never pass a weaker move off as the level's: every move it gives is compared here
with the compiled player's at a move's usual time, and it must answer the first moves of
levels 1-5 (a search of one or two plies: level 3 is the clients' default), the proved
strategy's first move (level 8 as X) and the book's replies (levels 7 and 8 as O, after a
corner or a centre cell).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Board
from engine.players import LEVELS, Limit, make_player

ROOT = Path(__file__).resolve().parents[2]

# the empty board, two first moves of each symmetry class of cells, and a few later plies
OPENINGS = ["", "1a1", "2b2", "1b1", "3c2", "1a1 2b2", "2b2 3c3 1a1", "1d1 2b3 3c2 4a4"]

QUICK = r"""
import json, sys
import engine.kernels.pvs
from engine import Board
from engine.players import LEVELS, make_player

jit = type(engine.kernels.pvs.pvs).__name__ != "function"  # a plain function: no numba
out = {}
for moves in json.loads(sys.argv[1]):
    for level in LEVELS:
        board = Board.from_notation("4x4x4", moves)
        decision = make_player(f"level{level}", seed=11 + board.ply).quick(board)
        out[f"{level}/{moves}"] = None if decision is None else decision.move
print(json.dumps({"jit": jit, "moves": out}))
"""


@pytest.fixture(scope="module")
def quick_moves() -> dict[str, int | None]:
    env = os.environ | {"NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-c", QUICK, json.dumps(OPENINGS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["jit"] is False  # the kernels really ran as plain Python
    moves: dict[str, int | None] = report["moves"]
    return moves


def test_every_quick_move_is_the_compiled_players_move(quick_moves: dict[str, int | None]) -> None:
    compared = 0
    for key, move in quick_moves.items():
        if move is None:
            continue
        level, moves = key.split("/")
        board = Board.from_notation("4x4x4", moves)
        compiled = make_player(f"level{level}", seed=11 + board.ply).decide(board, Limit(time=1.0))
        assert move == compiled.move, key
        compared += 1
    assert compared >= 40


def test_the_quick_path_answers_the_first_moves_of_the_default_levels(
    quick_moves: dict[str, int | None],
) -> None:
    for moves in OPENINGS:
        for level in (1, 2, 3, 4, 5):  # the terminal's and the web's default level is 3
            assert quick_moves[f"{level}/{moves}"] is not None, (level, moves)
    assert quick_moves["8/"] is not None  # X's first move: the proved strategy
    for first in ("1a1", "2b2"):  # O's reply: the opening book
        assert quick_moves[f"7/{first}"] is not None
        assert quick_moves[f"8/{first}"] is not None


def test_where_the_master_searches_against_the_clock_there_is_no_quick_move() -> None:
    # level 8 off the proof and the book searches until its time is up: no quick move (the
    # compiled process here has the kernels, so the question is only which path is taken)
    board = Board.from_notation("4x4x4", "1a1 1d4 1b1")
    assert make_player(LEVELS[8]).quick(board) is None
    # level 5 with a threat to make at the root: its root threat search is the clock's
    board = Board.from_notation("4x4x4", "1a1 4d4 1b1 4c4")
    assert make_player(LEVELS[5]).quick(board) is None
    # level 6 searches three plies: more than the quick path tries
    assert make_player(LEVELS[6]).quick(Board("4x4x4")) is None
