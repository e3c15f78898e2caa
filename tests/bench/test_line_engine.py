"""bench/harness/line_engine.py: a program outside the project plays through the position-line
protocol, and a wrong answer is told, not played."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.harness.line_engine import LinePlayer
from engine.players import Limit, make_player
from engine.players.arena import play_game
from engine.rules.board import Board

# The lowest free cell, in notation: a program as small as the protocol allows.
FIRST_FREE = """
import sys
cells = [f"{l}{c}{r}" for l in "1234" for r in "1234" for c in "abcd"]
for line in sys.stdin:
    words = line.split()
    if words[0] == "quit":
        break
    taken = set(words[3:])
    print(next(cell for cell in cells if cell not in taken), flush=True)
"""


def program(tmp_path: Path, text: str) -> str:
    path = tmp_path / "engine.py"
    path.write_text(text)
    return f"{sys.executable} {path}"


def test_an_outside_program_plays_a_whole_game(tmp_path: Path) -> None:
    outside = LinePlayer(program(tmp_path, FIRST_FREE), "first-free")
    try:
        board, moves = play_game(outside, make_player("wood", 1), limit=Limit(time=0.05))
    finally:
        outside.close()
    assert board.outcome() is not None
    assert moves[0].cell == 0 and outside.spec == "outside:first-free"
    assert outside._process is None  # closed: the program was told to quit


def test_an_illegal_answer_is_an_error_naming_the_position(tmp_path: Path) -> None:
    outside = LinePlayer(program(tmp_path, FIRST_FREE.replace("not in taken", "in cells")),
                         "stubborn")
    try:
        with pytest.raises(RuntimeError, match="stubborn played 1a1, illegal after 1a1"):
            outside.decide(Board.from_notation("4x4x4", "1a1 4d4"), Limit(time=0.05))
    finally:
        outside.close()
