"""How long a quick ``qubic`` command takes from the shell, and what its imports cost: the
median wall time of ``qubic admin audit`` on a small SQLite database (a process each run, as a
host runs it), and the heaviest top-level imports of one run (``python -X importtime``).

    python bench/cli_start.py [--runs 9] [--command "admin audit"]

Issue 39 measured 2.2 s a call on a host's machine; docs/benchmarks.md, *The admin CLI*, keeps
the figures."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness.stats import percentile  # noqa: E402


async def _database(path: Path) -> None:
    from server.store.sqlite import SQLiteStore

    store = await SQLiteStore.open(path)
    try:
        await store.create_player("ann", 0.0)
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--command", default="admin audit")
    args = parser.parse_args()
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "q.db"
        asyncio.run(_database(db))
        command = [sys.executable, "-m", "qubic_cli", *shlex.split(args.command), "--db", str(db)]
        took = []
        for _ in range(args.runs):
            began = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            took.append(time.perf_counter() - began)
        imports = subprocess.run([sys.executable, "-X", "importtime", *command[1:]], env=env,
                                 check=True, capture_output=True, text=True).stderr
    print(f"qubic {args.command}: median {percentile(took, 0.5):.3f} s over {args.runs} runs "
          f"(min {min(took):.3f}, max {max(took):.3f})")
    top = []
    for line in imports.splitlines():
        parts = line.split("|")
        top_level = len(parts) == 3 and parts[2].startswith(" ") and parts[2][1:2] != " "
        if top_level and parts[1].strip().isdigit():
            top.append((int(parts[1]), parts[2].strip()))
    for micros, module in sorted(top, reverse=True)[:6]:
        print(f"  import {module}: {micros / 1e3:.0f} ms (with what it imports)")


if __name__ == "__main__":
    main()
