"""bench/truth_offtree.py --against: the truth at a revision before the engine was split into
parts loads with its old imports mapped to today's modules, and a revision with no truth says
so instead of a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.truth_offtree import OLD_MODULES, engine_at
from engine.rules.board import Board
from engine.solved import proof
from engine.solved.strategy import x_proved

# A truth.py as one before 9e50a03 was: it imports the engine's modules by their old names.
OLD_TRUTH = """
from engine import proof
from engine.board import Board
from engine.strategy import x_proved

VARIANT = proof.VARIANT


def solve(board, budget_s=1.0):
    return x_proved(board)
"""


def commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_a_truth_from_before_the_split_loads_with_todays_modules(repo: Path) -> None:
    revision = commit(repo, {"engine/truth.py": OLD_TRUTH})
    module = engine_at(revision, repo)
    assert module.Board is Board
    assert module.VARIANT == proof.VARIANT
    assert module.x_proved is x_proved
    assert module.solve(Board("4x4x4")) is True  # the proof has X winning from the start


def test_a_revision_without_a_truth_is_told(repo: Path) -> None:
    revision = commit(repo, {"README": "no engine here\n"})
    with pytest.raises(SystemExit, match="neither engine/solved/truth.py nor engine/truth.py"):
        engine_at(revision, repo)


def test_a_truth_whose_names_today_lacks_is_told(repo: Path) -> None:
    revision = commit(repo, {"engine/truth.py": "from engine.strategy import gone\n"})
    with pytest.raises(SystemExit, match="does not load beside today's engine"):
        engine_at(revision, repo)


def test_every_old_name_is_a_module_today() -> None:
    import importlib

    for today in OLD_MODULES.values():
        importlib.import_module(today)
