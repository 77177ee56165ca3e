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


ALGORITHM_UNITS = [
    "search", "bounds", "board", "tables", "rank", "endgame", "endgame_peers", "playout",
    "anagram_file", "leave_table", "kwg_check",
]  # fmt: skip


def test_the_c_algorithm_units_compile_without_python(tmp_path):
    """core.h and the algorithm units know nothing of CPython: each compiles with no Python
    include path (and a Python.h that fails loudly, should one slip in through the system's
    paths). The glue (glue.h) is in units of its own."""
    import shutil
    import subprocess

    compiler = shutil.which("gcc") or shutil.which("cc")
    assert compiler, "a C compiler is needed to build the extension at all"
    (tmp_path / "Python.h").write_text('#error "an algorithm unit includes Python.h"\n')
    for unit in ALGORITHM_UNITS:
        source = ROOT / "engine" / f"{unit}.c"
        done = subprocess.run(
            [
                compiler,
                "-fsyntax-only",
                "-std=c11",
                "-Wall",
                "-Werror=implicit-function-declaration",
                f"-I{tmp_path}",
                str(source),
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{unit}.c:\n{done.stderr[-2000:]}"
    for header in (
        "core.h",
        "endgame.h",
        "endgame_peers.h",
        "playout.h",
        "leave_table.h",
        "kwg_check.h",
    ):
        text = (ROOT / "engine" / header).read_text()
        assert "#include <Python.h>" not in text and "PyObject" not in text, header


def _rq_private_names() -> set[str]:
    """Names with one leading underscore that RQ's own source defines or sets."""
    import re

    import rq

    names: set[str] = set()
    for path in Path(rq.__file__).parent.rglob("*.py"):
        text = path.read_text()
        names.update(re.findall(r"def (_[a-z]\w*)", text))
        names.update(re.findall(r"self\.(_[a-z]\w*)", text))
    return names


def test_rq_private_names_are_used_in_one_module():
    """Every reach into RQ's private names is worker/rq_private.py's: an attribute with one
    leading underscore that RQ defines, read or set on an RQ object (`self` in a subclass of
    an RQ class, or any other object) anywhere else in worker/ fails here."""
    private = _rq_private_names()
    found: set[str] = set()
    for path in sorted((ROOT / "worker").glob("*.py")):
        if path.name == "rq_private.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        rq_classes = {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any(isinstance(b, ast.Name) and b.id in {"Job", "SimpleWorker", "Worker", "Queue"}
                    for b in node.bases)
        }  # fmt: skip
        for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)] + [tree]:
            inside_rq = getattr(cls, "name", None) in rq_classes
            for node in ast.walk(cls):
                if not (isinstance(node, ast.Attribute) and node.attr in private):
                    continue
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if on_self and not inside_rq:
                    continue  # our own class's attribute of the same name
                found.add(f"{path.name}:{node.lineno} .{node.attr}")
    assert not found, sorted(found)
    assert {"_handle_success", "_deserialize_data", "_stop_requested"} <= private  # the probe works


def test_the_docs_stand_on_their_own():
    """A clone has no ../shared beside it: the docs may name the test data and the peer
    engine the benchmarks run (../shared/data, ../shared/peers), nothing else there
    (README pointed at ../shared/DESIGN.md; issue 50)."""
    import re

    for name in ("README.md", "DESIGN.md", "DESIGN-NOTES.md", "PROTOCOL.md", "BENCHMARKS.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        outside = re.findall(r"\.\./shared/(?!data\b|peers\b)[\w./-]*", text)
        assert not outside, (name, outside)
    assert "# Anchor — design" in (ROOT / "DESIGN.md").read_text(encoding="utf-8")
