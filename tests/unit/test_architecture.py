"""The dependency arrows point inward: the core is pure, the package never imports workers."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "rookhaven"
CORE = PACKAGE / "core"
# What the pure core may import from outside itself.
CORE_MAY_IMPORT = {"rookhaven.models", "rookhaven.errors"}
CORE_FORBIDDEN_MODULES = {"os", "sys", "time", "datetime", "random", "logging", "socket",
                          "subprocess", "pathlib", "io", "redis", "celery", "mcp", "threading",
                          "asyncio", "secrets", "uuid", "tempfile", "shutil",
                          # an installed stemmer's version would decide terms (ADR 0011)
                          "Stemmer", "snowballstemmer"}
# The one place a compiled stemmer may be used, after it proved to be the vendored release;
# a lock (no clock, no I/O) for threads appending to one scorer's union pool; and the stamp
# of numba's kernel cache, which reads the core's own sources once a process (ADR 0046).
CORE_ALLOWED = {("rookhaven/core/snowball/__init__.py", "Stemmer"),
                ("rookhaven/core/providers/unions.py", "threading"),
                ("rookhaven/core/compiled.py", "pathlib")}


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, relative imports resolved, at any depth of the file."""
    module = _module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield from _imports_of(node, module, path)


def test_the_core_imports_only_itself_models_errors_and_pure_libraries() -> None:
    offending = []
    for path in sorted(CORE.rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if name.startswith("rookhaven.") and not (
                    name.startswith("rookhaven.core") or name in CORE_MAY_IMPORT):
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
            if top in CORE_FORBIDDEN_MODULES and (
                    str(path.relative_to(ROOT)), top) not in CORE_ALLOWED:
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offending, "\n".join(offending)


# The transparency package is as pure as the core, but for its two edges: the one that
# holds the signing key and the one that writes the mirror's files.
TRANSPARENCY = PACKAGE / "transparency"
TRANSPARENCY_EDGES = {TRANSPARENCY / "checkpoints.py", TRANSPARENCY / "mirror.py"}
TRANSPARENCY_MAY_IMPORT = {"rookhaven.core.canonical", "rookhaven.errors"}


def _pure_transparency() -> list[Path]:
    return [p for p in sorted(TRANSPARENCY.rglob("*.py")) if p not in TRANSPARENCY_EDGES]


def test_the_transparency_code_is_pure_and_the_core_never_needs_it() -> None:
    assert _pure_transparency(), "the transparency package moved: update this test"
    offending = []
    for path in _pure_transparency():
        for name in _imports(path):
            if (name.startswith("rookhaven.") and not (
                    name.startswith("rookhaven.transparency")
                    or name in TRANSPARENCY_MAY_IMPORT)) or name == "rookhaven":
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
            if name.split(".")[0] in CORE_FORBIDDEN_MODULES:
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
    for path in sorted(CORE.rglob("*.py")):
        offending += [f"{path.relative_to(ROOT)} imports {name}" for name in _imports(path)
                      if name.startswith("rookhaven.transparency")]
    assert not offending, "\n".join(offending)


def test_the_core_reads_no_environment_and_no_clock() -> None:
    for path in [*sorted(CORE.rglob("*.py")), *_pure_transparency()]:
        source = path.read_text(encoding="utf-8")
        for needle in (r"\benviron\b", r"\bgetenv\b", r"\btime\.time\b", r"\.now\(",
                       r"\brandom\."):
            assert not re.search(needle, source), f"{path.relative_to(ROOT)} matches {needle}"


def test_the_package_never_imports_the_workers() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        assert not any(n == "workers" or n.startswith("workers.") for n in _imports(path)), path


# Outside rookhaven/store nothing holds a Redis client; the workers' broker edge is the one
# exception: its guarded read is kombu's own method (its channel's client pops the message).
BROKER_EDGE = ROOT / "workers" / "broker.py"
REDIS_ALLOWED = {BROKER_EDGE}
REDIS_MODULES = ("redis", "fakeredis")
KOMBU_REDIS = "kombu.transport.redis"


def _sources() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *(ROOT / "workers").rglob("*.py")])


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_only_the_store_touches_a_redis_client() -> None:
    offending = []
    for path in _sources():
        if path.is_relative_to(PACKAGE / "store") or path in REDIS_ALLOWED:
            continue
        where = path.relative_to(ROOT)
        offending += [f"{where} imports {n}" for n in _imports(path)
                      if n.split(".")[0] in REDIS_MODULES]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offending += [f"{where}:{node.lineno} reaches for a .client"
                      for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and node.attr == "client"]
    assert not offending, "\n".join(offending) + "\n(add what you need to rookhaven/store)"


def test_kombus_redis_transport_is_touched_by_the_broker_edge_alone() -> None:
    """A kombu upgrade is reviewed in one room: ``workers/broker.py``."""
    touching = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set(_imports(path))
        names |= {f"{node.module}.{alias.name}" for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module
                  for alias in node.names}
        if any(n == KOMBU_REDIS or n.startswith(KOMBU_REDIS + ".") for n in names):
            touching.append(path)
    assert touching == [BROKER_EDGE], touching


def _graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, at any depth of the file (lazy ones too).

    A module's own ancestor packages are not edges: Python has imported them before it.
    """
    paths = {_module_name(p): p for p in _sources()}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                for base in _imports_of(node, name, path):
                    # ``from . import tasks`` may name a module, not a package attribute.
                    targets += [base, *(f"{base}.{alias.name}" for alias in node.names)]
        edges: set[str] = set()
        for target in targets:
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                edges.add(target)
        graph[name] = edges
    return graph


def _imports_of(node: ast.ImportFrom, module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        yield ".".join([*base, node.module] if node.module else base)
    elif node.module:
        yield node.module


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
