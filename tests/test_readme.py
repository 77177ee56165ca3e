"""The README's code blocks, run as written (issue 50): the demo's output is what `make demo`
prints, the Python runs, and the service example answers through a real Redis and worker.
The wheel block runs in tests/test_install.py, which builds the wheel."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT
from .service import WorkerProcess

README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, re.S | re.M)
BIN = Path(sys.executable).parent


def block(start: str) -> str:
    """The one README block whose first line starts with `start`."""
    (found,) = [body for _kind, body in BLOCKS if body.startswith(start)]
    return found


# Each block, by its first line, and the test that runs it.
RUN_BY = {
    "make demo": "test_the_make_block_and_the_demo_output",
    "Anchor demo": "test_the_make_block_and_the_demo_output",
    "pip install": "tests/test_install.py::test_a_wheel_user_installs_a_lexicon_and_plays",
    "from anchor.dictionaries": "test_the_python_block_runs",
    "export REDIS_URL": "test_the_service_blocks_answer_through_redis",
    "import os": "test_the_service_blocks_answer_through_redis",
}


def test_every_block_is_run_by_a_test():
    assert len(BLOCKS) >= 6
    for kind, body in BLOCKS:
        assert kind in ("sh", "text", "python"), f"a README block of kind {kind!r}: {body[:60]}"
        assert any(body.startswith(s) for s in RUN_BY), f"no test runs the block {body[:60]!r}"


def env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PATH=f"{BIN}:{os.environ.get('PATH', '')}", **extra)


def normal(text: str) -> str:
    """Output with this machine's times and the checkout's folder taken out."""
    text = text.replace(f"{ROOT}/", "")
    return re.sub(r"in \d[\d,]* µs", "in N µs", text).strip()


@pytest.mark.subprocess
def test_the_make_block_and_the_demo_output():
    """`make demo` runs `anchor demo` (after the set-up, which the suite has already done);
    its output is the README's, but for the times. `make test` runs pytest over the whole
    suite (this test is part of it, so it is checked by what make would run, not run)."""
    commands = [line.split("#")[0].split() for line in block("make demo").splitlines()]
    assert commands == [["make", "demo"], ["make", "test"]]
    dry = subprocess.run(["make", "-n", "demo", "test"], capture_output=True, text=True, cwd=ROOT)
    assert ".venv/bin/anchor demo" in dry.stdout and "-m pytest -q\n" in dry.stdout
    demo = subprocess.run(
        [sys.executable, "-m", "anchor.client.cli", "demo"],
        capture_output=True, text=True, cwd=ROOT, env=env(), timeout=60,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    assert normal(demo.stdout) == normal(block("Anchor demo"))


@pytest.mark.subprocess
def test_the_python_block_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", block("from anchor.dictionaries")],
        capture_output=True, text=True, cwd=tmp_path, env=env(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "CATS (8H): C3 + A1 + T1 + S1 = 6\ntotal 6" in done.stdout  # the breakdown
    value, exact, _line = done.stdout.strip().splitlines()[-1].split(" ", 2)
    assert exact == "True" and int(value) != 0


@pytest.mark.service
def test_the_service_blocks_answer_through_redis(server, tmp_path):
    """The shell block (a worker for one job, then `anchor analyze` through it) and the game
    server's Python, against a real redis-server and worker on the queue `anchor`."""
    shell = subprocess.run(
        ["bash", "-e", "-c", block("export REDIS_URL").replace(
            "redis://localhost:6379/0", server.url)],
        capture_output=True, text=True, cwd=tmp_path, env=env(), timeout=180,
    )  # fmt: skip
    assert shell.returncode == 0, shell.stderr[-2000:]
    plays = [line for line in shell.stdout.splitlines() if re.match(r"\s*\d+\.", line)]
    assert len(plays) == 3 and "ANESTRI" in plays[0], shell.stdout
    assert "via Redis" in shell.stdout
    worker = WorkerProcess(server.url, "anchor", "readme", tmp_path)
    try:
        done = subprocess.run(
            [sys.executable, "-c", block("import os")],
            capture_output=True, text=True, cwd=tmp_path, env=env(REDIS_URL=server.url),
            timeout=180,
        )  # fmt: skip
    finally:
        worker.stop()
    assert done.returncode == 0, done.stderr[-2000:]
    best, counts = done.stdout.strip().splitlines()
    assert best == "K5 ANESTRI 84"  # the comment in the README says so
    assert [int(n) for n in counts.strip("[]").split(",")] == [50, 3, 48]


def test_the_wheel_route_the_readme_names_is_configured():
    """The README sends other platforms to cibuildwheel with the settings in pyproject.toml,
    checking each wheel with `anchor --version` and `anchor docs`."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    assert "anchor --version" in settings["test-command"]
    assert "anchor docs" in settings["test-command"]
    assert "cibuildwheel" in README and "anchor docs protocol" in README


def test_the_readme_says_what_anchor_is_before_how_to_set_it_up():
    """It opened with `make demo` before a word of what the project is (issue 50)."""
    before_code = README.split("```")[0]
    assert "Anchor is an analysis engine for Scrabble-family games" in before_code
    assert "game servers" in before_code and "annotating" in before_code  # who it is for
