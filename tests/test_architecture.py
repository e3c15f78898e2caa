"""The layers of the code base, read from its imports (every import, lazy and TYPE_CHECKING ones,
relative ones and ``importlib.import_module`` of a literal name included): which package may
build on which, no import cycle, and the embedded server apart from the cluster. DESIGN.md draws
the same picture; this test is what keeps it true. Each rule is a function of the graph, and
each is shown to catch a small graph that breaks it."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "server", "client_tui", "client_web", "qubic_cli")

# server's parts, lowest first: a part may import its own modules and those of lower ranks.
LAYERS: dict[str, int] = {
    "server.errors": 0, "server.metrics": 0, "server.exposition": 0, "server.tasks": 0,
    "server.defaults": 0, "server.version": 0,
    "server.protocol": 1,
    "server.game": 2,
    "server.store": 3, "server.computer": 3, "server.redis_io": 3, "server.passwords": 3,
    "server.node": 4,
    "server.cluster": 5,
    "server.http": 6,
}
# parts of one rank that may build on each other: the engine fleet talks to Redis; the
# metrics are written out by the exposition.
SIDEWAYS = {("server.computer", "server.redis_io"), ("server.metrics", "server.exposition")}
# engine's parts, lowest first, by the same rule: the rules, the search kernels, what is proved,
# the players, the puzzles (docs/engine.md, "Where each part lives"); engine.warm compiles
# every part's kernels, so it sits above them all.
ENGINE_LAYERS: dict[str, int] = {
    "engine.errors": 0, "engine.levels": 0,
    "engine.rules": 1,
    "engine.kernels": 2,
    "engine.solved": 3,
    "engine.players": 4,
    "engine.puzzles": 5,
    "engine.warm": 6,
}
# what the embedded server (SQLite, the in-process bus, the local pool) must never load.
CLUSTER_ONLY = ("server.cluster", "server.redis_io", "server.computer.fleet",
                "server.store.postgres")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module the code ``source`` of ``module`` imports, at any depth of its code:
    ``import a.b``, ``from a import b`` (a, and a.b in case b is a module), the relative
    ``from . import b`` and ``from .a import b`` resolved against ``module``'s package, and
    ``importlib.import_module("a.b")`` (or ``import_module``) called with a literal."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            name = node.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.add(name.value)
    return found


def _is_import_module(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module"
            and isinstance(func.value, ast.Name) and func.value.id == "importlib") or (
        isinstance(func, ast.Name) and func.id == "import_module")


def graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports."""
    files = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py")]
    modules = {module_name(p): p for p in files}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imported in imports_of(path.read_text(), name, path.name == "__init__.py"):
            if imported in modules and imported != name:
                edges[name].add(imported)
    return {name: edges[name] for name in modules}


def part(module: str, layers: dict[str, int] = LAYERS) -> str | None:
    for prefix in sorted(layers, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return prefix
    return None


def loose_modules(graph: dict[str, set[str]]) -> list[str]:
    """The server's modules that belong to no part."""
    return sorted(m for m in graph if m.startswith("server.") and part(m) is None)


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int] = LAYERS) -> list[str]:
    """Imports of a higher part, or of another part of the same rank not in SIDEWAYS."""
    wrong = []
    for module, imported in graph.items():
        mine = part(module, layers)
        if mine is None:
            continue
        for target in imported:
            theirs = part(target, layers)
            if theirs is None or theirs == mine:
                continue
            if layers[theirs] > layers[mine] or (
                    layers[theirs] == layers[mine] and (mine, theirs) not in SIDEWAYS):
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


DISTANCES = {  # package -> what of the project it may import
    "engine": ("engine",),
    "client_tui": ("client_tui", "engine", "server.protocol", "server.errors"),
    "server": ("server", "engine", "client_web"),
}


def distance_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Imports a package makes past what DISTANCES allows it."""
    return sorted(f"{module} -> {target}" for module, imported in graph.items()
                  for package, allowed in DISTANCES.items() if module.split(".")[0] == package
                  for target in imported if not target.startswith(allowed))


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` closes, as the path that closes it."""
    on_path: list[str] = []
    state: dict[str, int] = {}  # 1: being walked, 2: done
    found: list[list[str]] = []

    def walk(module: str) -> None:
        state[module] = 1
        on_path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                found.append(on_path[on_path.index(target):] + [target])
            elif target not in state:
                walk(target)
        on_path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def cluster_reached(graph: dict[str, set[str]], entry: str) -> list[str]:
    """The cluster-only modules that ``entry`` loads, directly or through others."""
    return sorted(m for m in reachable(graph, entry) if m.startswith(CLUSTER_ONLY))


# -- the code base ---------------------------------------------------------------------------

GRAPH = graph()
EMBEDDED = ["server.node.hub", "server.store.sqlite", "server.computer.local"]


def test_every_server_module_belongs_to_a_part() -> None:
    assert loose_modules(GRAPH) == []


def test_no_part_imports_a_higher_one() -> None:
    assert upward_imports(GRAPH) == []


def test_every_engine_module_belongs_to_a_part() -> None:
    assert sorted(m for m in GRAPH if m.startswith("engine.")
                  and part(m, ENGINE_LAYERS) is None) == []


def test_no_engine_part_imports_a_higher_one() -> None:
    assert upward_imports(GRAPH, ENGINE_LAYERS) == []


def test_the_packages_keep_their_distance() -> None:
    assert distance_breaches(GRAPH) == []


def test_there_is_no_import_cycle() -> None:
    assert cycles_in(GRAPH) == []


@pytest.mark.parametrize("entry", EMBEDDED)
def test_the_embedded_servers_parts_never_reach_the_cluster(entry: str) -> None:
    assert entry in GRAPH
    assert cluster_reached(GRAPH, entry) == []


def test_the_graph_is_the_code_base_s() -> None:
    """Not vacuous: the graph holds the modules and the edges the code has."""
    assert "server.node.rooms" in GRAPH["server.node.hub"]
    assert "server.protocol" in GRAPH["server.http.app"] or any(
        m.startswith("server.protocol.") for m in GRAPH["server.http.app"])
    assert all(module.split(".")[0] in PACKAGES for module in GRAPH)


# -- each rule catches a graph that breaks it ------------------------------------------------


def test_relative_imports_and_literal_import_module_calls_are_read() -> None:
    source = """
from . import rooms
from .delivery import Delivery
from .. import errors
from ..game.room import GameRoom
import importlib
from importlib import import_module

def later():
    importlib.import_module("server.cluster.bus")
    import_module("server.redis_io")
    importlib.import_module(name_from_elsewhere)
"""
    found = imports_of(source, "server.node.hub")
    assert {"server.node", "server.node.rooms", "server.node.delivery",
            "server.node.delivery.Delivery", "server.errors", "server.game.room",
            "server.game.room.GameRoom",
            "server.cluster.bus", "server.redis_io"} <= found
    assert imports_of("from . import wire\nfrom .codes import X\n", "server.protocol",
                      is_package=True) >= {"server.protocol.wire", "server.protocol.codes"}


def test_a_module_outside_every_part_is_caught() -> None:
    assert loose_modules({"server.node.hub": set(), "server.gadgets": set()}) == [
        "server.gadgets"]


def test_an_upward_import_is_caught() -> None:
    broken = {"server.game.room": {"server.node.rooms"}, "server.node.rooms": set()}
    assert upward_imports(broken) == ["server.game.room -> server.node.rooms"]
    sideways = {"server.store.sqlite": {"server.passwords"}}
    assert upward_imports(sideways) == ["server.store.sqlite -> server.passwords"]
    assert upward_imports({"server.node.rooms": {"server.game.room"}}) == []
    engine = {"engine.kernels.pvs": {"engine.solved.strategy", "engine.rules.board"},
              "engine.players.master": {"engine.kernels.pvs"}}
    assert upward_imports(engine, ENGINE_LAYERS) == [
        "engine.kernels.pvs -> engine.solved.strategy"]


def test_a_package_past_its_distance_is_caught() -> None:
    broken = {"engine.rules.board": {"server.protocol"}, "client_tui.app": {"server.node.hub"}}
    assert distance_breaches(broken) == ["client_tui.app -> server.node.hub",
                                         "engine.rules.board -> server.protocol"]


def test_a_cycle_is_caught() -> None:
    assert cycles_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles_in({"a": {"a"}}) == [["a", "a"]]
    assert cycles_in({"a": {"b"}, "b": set()}) == []


def test_the_node_reaching_the_cluster_is_caught() -> None:
    broken = {"server.node.hub": {"server.node.rooms"}, "server.node.rooms": {"server.cluster.bus"},
              "server.cluster.bus": {"server.redis_io.clients"}, "server.redis_io.clients": set()}
    assert cluster_reached(broken, "server.node.hub") == ["server.cluster.bus",
                                                          "server.redis_io.clients"]


# node classes the cluster may extend: shared plumbing, not behaviour changed by overriding
SHARED_BASES = {"TopicTable"}


def node_classes_extended(source: str) -> list[str]:
    """The classes in ``source`` that subclass a class imported from ``server.node`` (the
    cluster composes the node's parts behind the node's interfaces instead)."""
    tree = ast.parse(source)
    from_node = {alias.asname or alias.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module
                 and node.module.startswith("server.node") for alias in node.names}
    return [f"{node.name}({base.id})" for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) for base in node.bases
            if isinstance(base, ast.Name) and base.id in from_node - SHARED_BASES]


def test_the_cluster_composes_the_node_and_never_subclasses_it() -> None:
    wrong = [f"{path.name}: {found}" for path in (ROOT / "server" / "cluster").rglob("*.py")
             for found in node_classes_extended(path.read_text())]
    assert wrong == []
    broken = "from server.node.routing import Router\nclass ClusterRouter(Router): pass\n"
    assert node_classes_extended(broken) == ["ClusterRouter(Router)"]
