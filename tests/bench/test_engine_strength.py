"""bench/research/engine_strength.py tally: A's results in recorded games per opponent and side,
with the Wilson interval the figures are reported with; held: where X let its win go."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.research.engine_strength import slips, tally, wilson, x_held

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("wins, games, low, high", [
    (32, 48, 0.5254, 0.7832),  # the 32 of 48
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (36, 48, 0.6122, 0.8508),  # 75%: the goal
])
def test_the_wilson_interval(wins: int, games: int, low: float, high: float) -> None:
    assert wilson(wins, games) == pytest.approx((low, high), abs=1e-4)


def line(b: str, a_is_x: bool, winner: str | None, seed: int = 901) -> dict[str, object]:
    return {"a": "master", "b": b, "seconds": 1.0, "seed": seed, "index": 1,
            "a_is_x": a_is_x, "winner": winner, "moves": "1a1"}


def test_the_tally_per_opponent_and_side_then_all() -> None:
    lines = [line("outside:ab", False, "a"), line("outside:ab", False, "b"),
             line("outside:mcts", False, None), line("outside:mcts", False, "a"),
             line("outside:mcts", True, "a")]
    assert tally(lines) == [("outside:ab", "O", 1, 0, 1), ("outside:mcts", "O", 1, 1, 0),
                            ("outside:mcts", "X", 1, 0, 0), ("all", "O", 2, 1, 1),
                            ("all", "X", 1, 0, 0)]


def test_the_tally_command_reads_records(tmp_path: Path) -> None:
    record = tmp_path / "o.jsonl"
    record.write_text("".join(json.dumps(line("outside:ab", False, winner, seed)) + "\n"
                              for winner, seed in [("a", 901), ("a", 902), ("b", 902)]))
    done = subprocess.run([sys.executable, "bench/research/engine_strength.py", "tally",
                           str(record)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 games, match seeds 901, 902" in done.stdout
    assert "| outside:ab | O | 3 | 2 | 0 | 1 | 67% | 21%-94% |" in done.stdout


# X plays the proof's strategy; O's 2b1 makes a three (2b1 2b2 2b3) whose block, 2b4, is the
# strategy's move at ply 7
BEFORE_THE_SLIP = ["1a1", "2b2", "4a1", "2b3", "1a4", "2b1"]


def test_held_marks_the_proofs_positions_and_xs_slip() -> None:
    """After the strategy's moves the proof's tables hold X's win (P, no search); X's 4d4
    instead of the block leaves O a line to complete, which df-pn disproves at once (-); the
    game's end (O's 2b4) is left out."""
    marks = x_held([*BEFORE_THE_SLIP, "4d4", "2b4"], seconds=5.0)
    assert marks == ["P"] * 6 + ["-"]
    assert slips(marks) == [(7, None)]
    assert x_held([*BEFORE_THE_SLIP, "2b4"], seconds=5.0) == ["P"] * 7  # the block holds it


@pytest.mark.parametrize("marks, found", [
    ("PPWW", []),
    ("P-?W", [(2, 4)]),  # O's ply 4 gave the win back
    ("P?-", [(3, None)]),
    ("P-W-?-P", [(2, 3), (4, 7)]),
    ("??", []),  # nothing proved either way: no slip shown
])
def test_slips_pair_xs_slip_with_os_gift(marks: str, found: list[tuple[int, int | None]]) -> None:
    assert slips(list(marks)) == found
