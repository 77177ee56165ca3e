"""The deploy files run commands that exist and parse, with the timeouts the service
needs (stop grace above the job timeout), and a redis.conf redis-server accepts."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess

import pytest
import redis

from client.cli import build_parser

from .conftest import ROOT
from .service import free_port, wait_until

DEPLOY = ROOT / "deploy"
JOB_TIMEOUT = 30  # AnalysisClient's default job timeout


def anchor_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in [DEPLOY / "docker-compose.yml", *sorted((DEPLOY / "k8s").glob("*.yaml"))]:
        for m in re.finditer(r"command: (\[.*\])", path.read_text()):
            found.append((path.name, json.loads(m.group(1))))
    cmd = re.search(r"^CMD (\[.*\])$", (DEPLOY / "Dockerfile").read_text(), re.M)
    found.append(("Dockerfile", json.loads(cmd.group(1))))
    unit = (DEPLOY / "systemd" / "anchor-worker@.service").read_text()
    found.append(("systemd", shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))))
    return found


@pytest.mark.parametrize(
    "where, argv", anchor_commands(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_commands_exist_and_parse(where, argv):
    if argv[0] == "redis-server":
        assert shutil.which("redis-server")
        return
    assert argv[0].endswith("anchor"), where
    assert (ROOT / ".venv" / "bin" / "anchor").exists() or shutil.which("anchor")
    args = build_parser().parse_args(argv[1:])  # SystemExit on a bad argument
    assert args.command == "worker" and args.lexicon


def test_every_worker_deploy_is_covered():
    names = {where for where, argv in anchor_commands() if argv[0] != "redis-server"}
    assert names == {"docker-compose.yml", "worker.yaml", "Dockerfile", "systemd"}


def test_stop_grace_exceeds_the_job_timeout():
    unit = (DEPLOY / "systemd" / "anchor-worker@.service").read_text()
    assert "KillMode=mixed" in unit
    assert int(re.search(r"TimeoutStopSec=(\d+)", unit).group(1)) > JOB_TIMEOUT
    k8s = (DEPLOY / "k8s" / "worker.yaml").read_text()
    assert int(re.search(r"terminationGracePeriodSeconds: (\d+)", k8s).group(1)) > JOB_TIMEOUT
    compose = (DEPLOY / "docker-compose.yml").read_text()
    assert int(re.search(r"stop_grace_period: (\d+)s", compose).group(1)) > JOB_TIMEOUT


def test_redis_conf_is_accepted_and_keeps_jobs(tmp_path):
    conf = (DEPLOY / "redis.conf").read_text()
    settings = dict(
        line.split(None, 1) for line in conf.splitlines() if line and not line.startswith("#")
    )
    assert settings["maxmemory-policy"] == "noeviction" and settings["appendonly"] == "yes"
    port = free_port()
    local = tmp_path / "redis.conf"  # the same file with the container's /data made local
    local.write_text(conf.replace("dir /data", f"dir {tmp_path}"))
    proc = subprocess.Popen(
        ["redis-server", str(local), "--port", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)

        def up():
            try:
                return client.ping()
            except redis.exceptions.ConnectionError:
                return False

        wait_until(up, 10, "redis-server with deploy/redis.conf")
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
        assert client.config_get("appendonly") == {"appendonly": "yes"}
    finally:
        proc.terminate()
        proc.wait(10)
