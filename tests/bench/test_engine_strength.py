"""bench/research/engine_strength.py tally: A's results in recorded games per opponent and side,
with the Wilson interval the figures are reported with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.research.engine_strength import tally, wilson

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
