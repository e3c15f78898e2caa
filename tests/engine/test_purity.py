"""The engine is pure: no event loop, no network, no database, none of the other packages."""

import ast
import subprocess
import sys
from pathlib import Path

import engine

FORBIDDEN = {"asyncio", "aiohttp", "textual", "websockets", "socket", "sqlite3", "server",
             "client_tui", "qubic_cli", "multiprocessing", "threading"}


def test_importing_the_engine_brings_no_event_loop_network_or_other_package() -> None:
    code = (
        "import sys, engine, engine.players, engine.players.arena, engine.players.exact_match,"
        " engine.kernels.negamax\n"
        "print(sorted({'asyncio', 'aiohttp', 'textual', 'websockets', 'server', 'client_tui',"
        " 'qubic_cli'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_no_engine_module_imports_io_or_the_other_packages() -> None:
    root = Path(engine.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []
