"""The release files, built as a release is (``python -m build``: the sdist, then the wheel from
the sdist), under the distribution name that is ours (``qubic-game``: the index's ``qubic`` is
another project); the wheel, installed alone in a fresh venv with the cluster extra (as
deploy/Dockerfile installs it), serves the web client and plays the computer, away from this
checkout (issue 28 item 7, issue 39). Slow (it installs every dependency into the new venv,
from pip's cache when it has them); CI runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def run(*command: str, cwd: Path, timeout: float = 600) -> str:
    """``command``'s output; nothing of this checkout on its path (a PYTHONPATH would show
    pip an installed Qubic, and it would install nothing)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_the_wheel_alone_serves_the_web_client_and_plays(tmp_path: Path) -> None:
    import asyncio

    import websockets

    source = tmp_path / "src"  # a copy of what git tracks: the build leaves its build/ there
    source.mkdir()
    files = run("git", "ls-files", "-z", cwd=ROOT).split("\0")
    with open(tmp_path / "src.tar", "wb") as archive:
        subprocess.run(["tar", "-cf", "-", "--null", "-T", "-"], cwd=ROOT, check=True,
                       input="\0".join(f for f in files if f).encode(), stdout=archive)
    run("tar", "-xf", str(tmp_path / "src.tar"), cwd=source)
    run(sys.executable, "-m", "venv", str(tmp_path / "venv"), cwd=tmp_path)
    python = tmp_path / "venv" / "bin" / "python"
    run(str(python), "-m", "pip", "install", "--quiet", "build>=1.2", cwd=tmp_path)
    run(str(python), "-m", "build", "--outdir", str(tmp_path / "dist"), str(source),
        cwd=tmp_path)
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert sdist.name == f"qubic_game-{VERSION}.tar.gz"
    assert wheel.name == f"qubic_game-{VERSION}-py3-none-any.whl"
    with tarfile.open(sdist) as archive:  # the wheel was built from it: it holds everything
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "engine/data/qubic.strategy.xz",
            "client_web/static/index.html", "client_tui/app.tcss",
            # a whole release: what a host installs beside the wheel (docs/operations.md)
            "deploy/qubic.service", "deploy/compose.yaml", "docs/operations.md"} <= names
    assert not any(name.startswith("deploy/secrets/") and name != "deploy/secrets/README"
                   for name in names)
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"qubic_game-{VERSION}.dist-info/METADATA").decode()
    assert "\nName: qubic-game\n" in metadata
    assert "Requires-Dist: redis" in metadata and "extra == \"cluster\"" in metadata
    run(str(python), "-m", "pip", "install", "--quiet", f"{wheel}[cluster]", cwd=tmp_path)
    shown = run(str(tmp_path / "venv" / "bin" / "qubic"), "--version", cwd=tmp_path)
    assert shown.strip() == f"qubic {VERSION}"
    where = run(str(python), "-c", "import engine, server, client_web; print(engine.__file__)",
                cwd=tmp_path)
    assert "site-packages" in where and str(ROOT) not in where  # not this checkout
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUBIC_", "PYTHON"))}
    server = subprocess.Popen(
        [str(tmp_path / "venv" / "bin" / "qubic"), "serve", "--port", "0",
         "--computer-workers", "1", "--db", str(tmp_path / "q.db")], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"(http://\S+?)\s", line)
        assert found, line + (server.stderr.read() if server.stderr else "")
        base = found.group(1)
        with urllib.request.urlopen(base + "/", timeout=30) as response:
            page = response.read().decode()
        assert response.status == 200 and "<title>Qubic</title>" in page
        script = re.search(r'src="(/static/[^"]+/js/main\.js)"', page)
        assert script
        with urllib.request.urlopen(base + script.group(1), timeout=30) as response:
            assert response.status == 200 and b"import" in response.read()

        async def play() -> list[str]:
            async with websockets.connect(base.replace("http", "ws") + "/ws") as ws:
                async def send(**message: object) -> None:
                    await ws.send(json.dumps(message))

                await send(t="hello", name="wheel", id=1)
                await send(t="play_ai", level=1, colour="x", id=2)
                seen: list[str] = []
                game = None
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 240))
                    seen.append(message["t"])
                    if message["t"] == "game" and game is None:
                        game = message["id"]
                        await send(t="move", game=game, cell="1a1", ply=0, id=3)
                    if message["t"] == "move" and message["side"] == "o":
                        return seen

        seen = asyncio.run(play())
        assert "welcome" in seen and "game" in seen  # and the computer answered the move
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
