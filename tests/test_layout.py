"""The house's shape, checked from the source: which package may import which (DESIGN-NOTES,
"Packages and the path of a request"). An import added against the grain fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

PACKAGES = {"engine": "anchor.engine", "dictionaries": "anchor.dictionaries",
            "client": "anchor.client", "worker": "anchor.worker"}  # fmt: skip


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    parts[0] = PACKAGES[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(folder: str) -> dict[str, set[str]]:
    """Every module under `folder` -> the anchor names it imports (anywhere in it, lazy
    imports and TYPE_CHECKING blocks included; `from a.b import c` as a.b.c), relative
    imports resolved."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        name = _module(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("anchor"))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.startswith("anchor"):  # the names it takes (modules or not)
                    found.update(f"{target}.{a.name}" for a in node.names)
        out[name] = found
    return out


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_worker_imports_only_the_clients_protocol_leaf():
    for module, found in imports("worker").items():
        for name in found:
            if _within(name, "anchor.client"):
                assert _within(name, "anchor.client.protocol"), f"{module} imports {name}"


def test_the_protocol_leaf_imports_nothing_else_of_the_project():
    for module, found in imports("client/protocol").items():
        for name in found:
            assert _within(name, "anchor.client.protocol"), f"{module} imports {name}"


def test_the_engine_imports_nothing_of_the_others():
    for module, found in imports("engine").items():
        for name in found:
            assert _within(name, "anchor.engine"), f"{module} imports {name}"


def test_the_client_reaches_the_worker_in_one_place():
    reach = [
        (module, name)
        for module, found in imports("client").items()
        for name in found
        if _within(name, "anchor.worker")
    ]
    assert {module for module, _ in reach} == {"anchor.client.client"}, reach
    source = (ROOT / "client" / "client.py").read_text()
    assert source.count("anchor.worker") == 1, "one import of the worker's runner"

