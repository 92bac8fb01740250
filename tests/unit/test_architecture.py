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
                          "asyncio", "secrets", "uuid", "tempfile", "shutil"}


def _imports(path: Path) -> Iterator[str]:
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                yield ".".join([*base, node.module] if node.module else base)
            elif node.module:
                yield node.module


def test_the_core_imports_only_itself_models_errors_and_pure_libraries() -> None:
    offending = []
    for path in sorted(CORE.rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if name.startswith("rookhaven.") and not (
                    name.startswith("rookhaven.core") or name in CORE_MAY_IMPORT):
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
            if top in CORE_FORBIDDEN_MODULES:
                offending.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offending, "\n".join(offending)


def test_the_core_reads_no_environment_and_no_clock() -> None:
    for path in sorted(CORE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for needle in (r"\benviron\b", r"\bgetenv\b", r"\btime\.time\b", r"\.now\(",
                       r"\brandom\."):
            assert not re.search(needle, source), f"{path.relative_to(ROOT)} matches {needle}"


def test_the_package_never_imports_the_workers() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        assert not any(n == "workers" or n.startswith("workers.") for n in _imports(path)), path
