"""The layers of the code base, read from its imports (every import, lazy and TYPE_CHECKING ones
included): which package may build on which, no import cycle, and the embedded server apart from
the cluster. DESIGN.md draws the same picture; this test is what keeps it true."""

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
    "server.store": 3, "server.engine_pool": 3, "server.redis_io": 3, "server.accounts": 3,
    "server.node": 4,
    "server.cluster": 5,
    "server.http": 6,
}
# parts of one rank that may build on each other: the engine fleet talks to Redis; the
# metrics are written out by the exposition.
SIDEWAYS = {("server.engine_pool", "server.redis_io"), ("server.metrics", "server.exposition")}
# what the embedded server (SQLite, the in-process bus, the local pool) must never load.
CLUSTER_ONLY = ("server.cluster", "server.redis_io", "server.engine_pool.fleet",
                "server.store.postgres")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports."""
    files = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py")]
    modules = {module_name(p): p for p in files}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imported in imports_of(path):
            if imported in modules and imported != name:
                edges[name].add(imported)
    return {name: edges[name] for name in modules}


def part(module: str) -> str | None:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return prefix
    return None


GRAPH = graph()


def test_every_server_module_belongs_to_a_part() -> None:
    loose = [m for m in GRAPH if m.startswith("server.") and part(m) is None]
    assert loose == []


def test_no_part_imports_a_higher_one() -> None:
    wrong = []
    for module, imported in GRAPH.items():
        mine = part(module)
        if mine is None:
            continue
        for target in imported:
            theirs = part(target)
            if theirs is None or theirs == mine:
                continue
            if LAYERS[theirs] > LAYERS[mine] or (
                    LAYERS[theirs] == LAYERS[mine] and (mine, theirs) not in SIDEWAYS):
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_the_packages_keep_their_distance() -> None:
    rules = {  # package -> what of the project it may import
        "engine": ("engine",),
        "client_tui": ("client_tui", "engine", "server.protocol", "server.errors"),
        "server": ("server", "engine", "client_web"),
    }
    wrong = [f"{module} -> {target}" for module, imported in GRAPH.items()
             for package, allowed in rules.items() if module.split(".")[0] == package
             for target in imported if not target.startswith(allowed)]
    assert wrong == []


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` closes, as the path that closes it."""
    on_path: list[str] = []
    state: dict[str, int] = {}  # 1: being walked, 2: done
    found: list[list[str]] = []

    def walk(module: str) -> None:
        state[module] = 1
        on_path.append(module)
        for target in sorted(graph[module]):
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


def test_there_is_no_import_cycle() -> None:
    assert cycles_in(GRAPH) == []


def reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(GRAPH.get(module, ()))
    return seen


@pytest.mark.parametrize("entry", ["server.node.hub", "server.store.sqlite",
                                   "server.engine_pool.local"])
def test_the_embedded_servers_parts_never_reach_the_cluster(entry: str) -> None:
    assert sorted(m for m in reachable(entry) if m.startswith(CLUSTER_ONLY)) == []


def test_a_rule_that_is_broken_is_caught() -> None:
    """The checks above see a lower part importing a higher one (they are not vacuous)."""
    assert part("server.node.hub") == "server.node"
    assert "server.node.rooms" in GRAPH["server.node.hub"]
    assert LAYERS[part("server.http.app")] > LAYERS[part("server.node.hub")]  # type: ignore[index]
    assert cycles_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles_in({"a": {"b"}, "b": set()}) == []


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
