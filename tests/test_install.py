"""What a new user does, in fresh virtual environments: install the wheel and get a
lexicon with `anchor lexicon`, from a folder that is not the source tree; and the
Docker image's own steps (its COPY, ENV, RUN, CMD and HEALTHCHECK lines, read from
deploy/Dockerfile) ending in a worker that answers a job.

These build the package and install its dependencies with pip, as a user would: about a
minute here. Downloads of word lists come from the checkout's cache (`make` fills it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from anchor.client.client import AnalysisClient
from anchor.client.protocol import Position, Request, move_dicts

from .conftest import ROOT
from .service import RedisServer, free_port, wait_until

pytestmark = pytest.mark.install  # not in `make test-fast` (pyproject: markers)

CACHE = ROOT / "dictionaries" / "build" / "cache"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
README = (ROOT / "README.md").read_text()


def make_venv(folder: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    return folder / "bin"


def run(argv: list[str], cwd: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return done


def user_env(bin_dir: Path, home: Path, **extra: str) -> dict:
    """A user's environment: the venv first on PATH, a home of its own (so the per-user
    data folder is empty), nothing of this project's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANCHOR_", "XDG_"))}
    env.pop("PYTHONPATH", None)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        VIRTUAL_ENV=str(bin_dir.parent),
        ANCHOR_CACHE_DIR=str(CACHE),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
        cwd=out,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (found,) = out.glob("anchor_scrabble-*.whl")
    return found


def test_the_wheel_installs_under_one_namespace(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"anchor"}, tops  # no generic engine/, client/, worker/ in site-packages
    assert any(re.match(r"anchor/engine/_movegen\..*\.so$", n) for n in names)
    assert "anchor/engine/rulesets/english.toml" in names
    assert "anchor/dictionaries/recipes.py" in names
    assert not any("dictionaries/build" in n for n in names)  # built lexica are not packaged
    assert "anchor/client/templates/game.html" in names  # the report works from a wheel
    assert "anchor/client/templates/board.js" in names  # ... and its board follows the moves
    from anchor.client.docs import DOCS

    for relative, _about in DOCS.values():  # the documents the help texts cite
        assert f"anchor/client/docs/{relative}" in names, relative


def test_a_wheel_user_installs_a_lexicon_and_plays(wheel, tmp_path):
    bin_dir = make_venv(tmp_path / "venv")
    home = tmp_path / "home"
    elsewhere = tmp_path / "somewhere"
    elsewhere.mkdir()
    env = user_env(bin_dir, home)
    # the README's install block, as written but for the wheel's path
    (block,) = re.findall(r"```sh\n(pip install .*?)```", README, re.S)
    pip, install_line, demo_line = (line.split("#")[0].split() for line in block.splitlines())
    assert pip[:2] == ["pip", "install"] and pip[2].endswith("anchor_scrabble-*.whl")
    done = run([str(bin_dir / "pip"), "install", "--quiet", str(wheel)], elsewhere, env)
    assert done.returncode == 0, done.stderr[-3000:]

    before = run(demo_line, elsewhere, env)
    assert before.returncode == 2
    assert "run `anchor lexicon install english`" in before.stderr
    assert "Traceback" not in before.stderr and before.stderr.count("\n") == 1

    install = run(install_line, elsewhere, env)
    assert install.returncode == 0, install.stderr
    user_dir = home / ".local" / "share" / "anchor" / "lexica"
    assert (user_dir / "english.kwg").is_file() and (user_dir / "english.kwg.json").is_file()

    demo = run(demo_line, elsewhere, env)
    assert demo.returncode == 0, demo.stderr
    assert "total 82" in demo.stdout and str(user_dir / "english.kwg") in demo.stdout
    listed = run(["anchor", "lexicon", "list"], elsewhere, env)
    assert re.search(rf"^english .* {re.escape(str(user_dir))}/english.kwg ", listed.stdout, re.M)
    verify = run(["anchor", "lexicon", "verify"], elsewhere, env)
    assert verify.returncode == 0 and "english: ok" in verify.stdout
    protocol = run(["anchor", "docs", "protocol"], elsewhere, env)  # the docs help cites
    assert protocol.returncode == 0 and protocol.stdout == (ROOT / "PROTOCOL.md").read_text()
    where = run(["anchor", "docs", "lexica", "--path"], elsewhere, env).stdout.strip()
    assert where.endswith("anchor/client/docs/dictionaries/README.md") and str(ROOT) not in where
    # the README's Python snippet, as written, from the wheel, outside any checkout
    (snippet,) = re.findall(r"```python\n(.*?)```", README.split("## From Python")[1], re.S)[:1]
    readme = run([str(bin_dir / "python"), "-c", snippet], elsewhere, env)
    assert readme.returncode == 0, readme.stderr[-2000:]
    assert "total" in readme.stdout and "Traceback" not in readme.stderr

    # ANCHOR_LEXICON_DIR moves both the install and the search
    other = tmp_path / "shared-lexica"
    env2 = dict(env, ANCHOR_LEXICON_DIR=str(other))
    assert run(["anchor", "lexicon", "install", "english"], elsewhere, env2).returncode == 0
    assert (other / "english.kwg").is_file()
    path = run(["anchor", "lexicon", "path", "english"], elsewhere, env2)
    assert path.stdout.strip() == str((other / "english.kwg").resolve())
    # nothing named engine, client or worker was installed at the top level
    probe = "import importlib.util as u; print([n for n in ('engine', 'client', 'worker') if u.find_spec(n)])"  # noqa: E501
    assert run([str(bin_dir / "python"), "-c", probe], elsewhere, env).stdout.strip() == "[]"


def dockerfile_steps() -> dict:
    """Per stage: its name, WORKDIR, COPY (with --from), ENV and RUN lines; CMD and
    HEALTHCHECK of the last. Continuation lines joined; RUN lines before a stage's
    WORKDIR (apt, useradd: the base image's business) are left out."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    steps: dict = {"stages": [], "cmd": None, "health": None}
    stage: dict = {}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "FROM":
            name = rest.split(" AS ")[1].strip() if " AS " in rest else None
            stage = {"name": name, "copy": [], "env": {}, "run": [], "workdir": None}
            steps["stages"].append(stage)
        elif word == "WORKDIR":
            stage["workdir"] = rest.strip()
        elif word == "COPY":
            *sources, dest = rest.split()
            origin = sources.pop(0).removeprefix("--from=") if sources[0].startswith("--") else None
            stage["copy"].append((origin, sources, dest))
        elif word == "ENV":
            key, _, value = rest.partition("=")
            stage["env"][key.strip()] = value.strip()
        elif word == "RUN" and stage["workdir"]:
            stage["run"].append(rest)
        elif word == "CMD":
            steps["cmd"] = json.loads(rest)
        elif word == "HEALTHCHECK":
            steps["health"] = json.loads(rest.split(" CMD ", 1)[1])
    return steps


def test_the_docker_image_steps_build_a_worker_that_answers(tmp_path):
    """Each stage's WORKDIR is a folder of this test's; its COPY lines copy (from the
    checkout, or `--from` an earlier stage's folder) and its RUN lines run in a fresh venv
    of its own: the wheel built in the first, installed in the second without gcc's
    output from anywhere else."""
    steps = dockerfile_steps()
    folders = {st["workdir"]: tmp_path / st["workdir"].strip("/") for st in steps["stages"]}

    def local(value: str) -> str:  # the image's /src, /app are this test's folders
        for inside, here in folders.items():
            value = re.sub(rf"(?<![\w/]){re.escape(inside)}(?=/|\b|$)", str(here), value)
        return value

    password = "s3cret-" + os.urandom(4).hex()
    secret = tmp_path / "redis_password"
    secret.write_text(password + "\n")
    for n, stage in enumerate(steps["stages"]):
        here = folders[stage["workdir"]]
        here.mkdir(parents=True, exist_ok=True)
        for origin, sources, dest in stage["copy"]:  # only what the image copies
            for source in sources:
                if origin is not None:
                    src, target = Path(local(source)), Path(local(dest))
                else:
                    src = ROOT / source
                    target = here / dest if dest not in ("./", ".") else here / source
                if src.is_dir():
                    skip = shutil.ignore_patterns("*.so", "__pycache__", "build")  # .dockerignore
                    shutil.copytree(src, target, ignore=skip)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(src, target)
        bin_dir = make_venv(tmp_path / f"venv{n}")
        env = user_env(bin_dir, tmp_path / "home")
        for key, value in stage["env"].items():
            env[key] = str(secret) if key == "REDIS_PASSWORD_FILE" else local(value)
        for command in stage["run"]:
            done = run(["sh", "-c", local(command)], here, env)
            assert done.returncode == 0, f"RUN {command}\n{done.stderr[-3000:]}"
    app = folders[steps["stages"][-1]["workdir"]]
    assert env["ANCHOR_LEXICON_DIR"] == str(app / "lexica")
    assert (app / "lexica" / "english.kwg").is_file()
    assert not (app / "dist").exists()  # the wheel does not stay in the image

    srv = RedisServer(tmp_path, password=password)
    port = free_port()
    cmd = [a if a != "9100" else str(port) for a in steps["cmd"]]
    env["REDIS_URL"] = f"redis://127.0.0.1:{srv.port}/0"  # the password comes from the file
    worker = subprocess.Popen(
        cmd, cwd=app, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    health = [a.replace("9100", str(port)) for a in steps["health"]]
    try:
        wait_until(
            lambda: worker.poll() is not None or run(health, app, env, 10).returncode == 0,
            60,
            "the image's HEALTHCHECK to pass",
            interval=0.5,
        )
        assert worker.poll() is None, worker.stderr.read()[-3000:]
        cgp = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADENOST/ 148/55 0"
        request = Request(ruleset="english", lexicon="english", positions=(Position(cgp=cgp),))
        result = AnalysisClient(srv.url, queue="anchor").analyze(request)
        assert result["ok"], result
        # the image's lexicon is the pinned one: the same plays as this checkout's
        assert move_dicts(result) == move_dicts(AnalysisClient(None).analyze(request))
        assert move_dicts(result)[0]["notation"] == "10B DONATES"
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(45) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
        srv.stop()
    assert "Traceback" not in worker.stderr.read()
