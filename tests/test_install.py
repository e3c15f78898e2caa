"""The README's first line installs only the main dependencies: what `qubic play` and
`qubic serve` load must not need a package that only an extra (cluster, test) brings."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOADS = """
import asyncio, sys, tempfile
class Extras:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} comes only with an extra")
sys.meta_path.insert(0, Extras())
import client_tui.app, client_tui.embedded, qubic_cli.main, qubic_cli.embedded, server.http.app
from server.store.factory import open_store
async def main():
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(tmp + "/q.db")
        await store.close()
asyncio.run(main())
for command in ("play", "serve", "worker", "arena", "analyse"):
    try:
        qubic_cli.main.main([command, "--help"])
    except SystemExit as exit:
        assert exit.code == 0, command
print("loaded")
"""


def _module(requirement: str) -> str:
    return re.split(r"[<>=\[; ]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def test_the_default_commands_need_no_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    main = {_module(r) for r in project["dependencies"]}
    extras = {_module(r) for reqs in project["optional-dependencies"].values() for r in reqs}
    blocked = sorted(extras - main - {"qubic"})
    assert "asyncpg" in blocked  # the cluster extra's driver, loaded only for postgresql://
    assert "redis" in blocked  # the cluster's client: the embedded server never loads it
    out = subprocess.run(
        [sys.executable, "-c", f"BLOCKED = {blocked!r}\n{LOADS}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("loaded")


def test_a_cluster_command_without_the_extra_says_what_to_install() -> None:
    code = """
import sys
class Extras:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "redis":
            raise ImportError("redis comes only with an extra")
sys.meta_path.insert(0, Extras())
import qubic_cli.main
sys.exit(qubic_cli.main.main(["serve", "--redis", "redis://127.0.0.1:9", "--port", "0"]))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stderr
    assert "pip install 'qubic_game-" in out.stderr and "[cluster]'" in out.stderr
    assert "'qubic[" not in out.stderr  # the index's `qubic` is another project
