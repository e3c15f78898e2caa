"""ruff and mypy pass, so the README's test command (CI's ``.ci/run``) runs them: each with
pyproject.toml's settings, as a subprocess of this Python (the test extra pins both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=240)


def test_ruff_finds_nothing() -> None:
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_finds_nothing() -> None:
    """pyproject's ``files``: every product package and bench/; an unused ignore is an error."""
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
