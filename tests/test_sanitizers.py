"""Builds the C extension with AddressSanitizer and UBSan and runs tests/sanitized_run.py
against it in a fresh interpreter: an out-of-bounds read or undefined behaviour anywhere
in the C core (engine/*.c) fails this test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import DATA, ROOT

pytestmark = pytest.mark.sanitizer  # not in `make test-fast` (pyproject: markers)


def runtime(name: str) -> str | None:
    try:
        out = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    path = out.stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


def test_generator_under_asan_and_ubsan(tmp_path):
    asan, ubsan = runtime("libasan.so"), runtime("libubsan.so")
    if not (shutil.which("gcc") and asan and ubsan):
        pytest.skip("gcc with libasan/libubsan is needed to build the sanitized extension")
    pkg = tmp_path / "anchor" / "engine"  # found before the installed copy via PYTHONPATH
    shutil.copytree(ROOT / "engine", pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    target = pkg / ("_movegen" + sysconfig.get_config_var("EXT_SUFFIX"))
    compile_cmd = [
        "gcc",
        "-shared",
        "-fPIC",
        "-std=c11",
        "-g",
        "-O1",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-pthread",
        "-fno-sanitize-recover=undefined",
        f"-I{sysconfig.get_paths()['include']}",
        *sorted(str(p) for p in (ROOT / "engine").glob("*.c")),  # every unit (setup.py)
        "-o",
        str(target),
    ]
    built = subprocess.run(compile_cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=f"{asan}:{ubsan}",
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        PYTHONPATH=str(tmp_path),
        PYTHONMALLOC="malloc",
    )
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sanitized_run.py"), str(DATA)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    report = run.stderr[-4000:]
    assert run.returncode == 0, report
    assert "AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr, report
    status, count, module = run.stdout.split()
    assert (status, int(count)) == ("ok", sum([275, 94, 296, 1714, 5408, 330, 158_705]))
    assert Path(module) == target  # the sanitized build ran, not the installed one
