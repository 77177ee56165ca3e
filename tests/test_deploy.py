"""The deploy files run commands that exist and parse, with the timeouts the service
needs (stop grace above the job timeout), and a redis.conf redis-server accepts."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess

import pytest
import redis

from anchor.worker.cli import build_parser

from .conftest import ROOT
from .service import free_port, wait_until

pytestmark = pytest.mark.subprocess  # not in `make test-fast` (pyproject: markers)

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
    if argv[0] == "redis-server" or (
        argv[0] == "sh" and re.search(r"redis-(server|cli)", argv[-1])
    ):
        assert shutil.which("redis-server")
        return
    assert argv[0].endswith("anchor"), where
    assert (ROOT / ".venv" / "bin" / "anchor").exists() or shutil.which("anchor")
    assert argv[1] == "worker", where
    args = build_parser().parse_args(argv[2:])  # SystemExit on a bad argument
    assert args.lexicon


def test_every_worker_deploy_is_covered():
    names = {where for where, argv in anchor_commands() if argv[0].endswith("anchor")}
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


def test_redis_is_private_and_has_acl_users():
    """No published Redis port, protected mode, the ACL users of users.acl with passwords
    from secret files (never on a command line), workers logging in as anchor-worker and
    reading their password from a file."""
    import yaml

    from anchor.client.protocol.acl import PLACEHOLDERS, acl_file

    users = acl_file(PLACEHOLDERS)
    assert (DEPLOY / "users.acl").read_text() == users
    compose = (DEPLOY / "docker-compose.yml").read_text()
    assert "ports:" not in compose and "internal: true" in compose
    assert "--aclfile /tmp/users.acl" in compose and "requirepass" not in compose
    for name, placeholder in PLACEHOLDERS.items():
        secret = f"/run/secrets/redis_{name.split('-')[1]}_password"
        assert f"s/{placeholder}/$$(cat {secret})/" in compose
    assert "REDIS_URL: redis://anchor-worker@redis:6379/0" in compose
    assert "REDIS_PASSWORD_FILE: /run/secrets/redis_worker_password" in compose
    conf = (DEPLOY / "redis.conf").read_text()
    assert re.search(r"^protected-mode yes$", conf, re.M)
    k8s_redis = (DEPLOY / "k8s" / "redis.yaml").read_text()
    assert "kind: NetworkPolicy" in k8s_redis and "--aclfile /tmp/users.acl" in k8s_redis
    assert "requirepass" not in k8s_redis
    config = next(d for d in yaml.safe_load_all(k8s_redis) if d and d["kind"] == "ConfigMap")
    assert config["data"]["users.acl"] == users
    k8s_worker = (DEPLOY / "k8s" / "worker.yaml").read_text()
    assert "secretName: anchor-redis" in k8s_worker and "key: worker-password" in k8s_worker
    assert "redis://anchor-worker@anchor-redis:6379/0" in k8s_worker
    metrics_policy = k8s_worker.split("name: anchor-worker-metrics", 1)[1]
    assert "- from:" in metrics_policy and "anchor-metrics-scraper" in metrics_policy  # not any
    unit = (DEPLOY / "systemd" / "anchor-worker@.service").read_text()
    assert "REDIS_PASSWORD_FILE=" in unit
    for _where, argv in anchor_commands():
        assert not any("@" in a and a.startswith("redis") for a in argv)  # no URL password


def test_workers_run_as_a_user_restart_and_are_probed():
    docker = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^USER 10001:10001$", docker, re.M) and "HEALTHCHECK" in docker
    compose = (DEPLOY / "docker-compose.yml").read_text()
    assert compose.count("restart: unless-stopped") == 2
    assert compose.count("healthcheck:") == 2 and "/healthz" in compose
    assert 'user: "10001:10001"' in compose
    k8s = (DEPLOY / "k8s" / "worker.yaml").read_text()
    assert "livenessProbe" in k8s and "path: /healthz" in k8s
    assert "readinessProbe" in k8s and "path: /readyz" in k8s
    assert "runAsNonRoot: true" in k8s
    unit = (DEPLOY / "systemd" / "anchor-worker@.service").read_text()
    assert re.search(r"^User=anchor$", unit, re.M)


def test_a_worker_answers_its_probes(tmp_path):
    """/healthz and /readyz on the metrics port, as the deploy probes use them."""
    import sys

    from .service import TWL06, RedisServer, http_status

    srv = RedisServer(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", srv.url, "--lexicon",
         f"twl06@english={TWL06}", "--metrics-port", str(port), "--maintenance-interval", "1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip

    try:
        wait_until(lambda: http_status(port, "/readyz") == 200, 30, "the worker to be ready")
        assert http_status(port, "/healthz") == 200
        srv.stop()  # Redis gone: still alive, no longer ready
        wait_until(
            lambda: http_status(port, "/readyz") == 503, 60, "readiness to drop", interval=0.5
        )
        assert http_status(port, "/healthz") == 200
        srv.start()
        wait_until(
            lambda: http_status(port, "/readyz") == 200, 60, "readiness to return", interval=0.5
        )
    finally:
        proc.terminate()
        proc.wait(20)
        srv.stop()


# ------------------------------------------------ the worker as deploy/ starts it
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"),
    reason="emulating a container's users, mounts and read-only root needs root and unshare",
)


def _k8s_worker() -> dict:
    import yaml

    docs = yaml.safe_load_all((DEPLOY / "k8s" / "worker.yaml").read_text())
    return next(d for d in docs if d and d.get("kind") == "Deployment")


@needs_root
@pytest.mark.parametrize("name", ["worker", "worker-interactive"])
def test_the_k8s_worker_starts_as_the_manifest_describes(name):
    """The image's ENV, then the manifest's; uid/gid/fsGroup; the Secret mounted as the
    kubelet would (defaultMode | 0440, root:fsGroup); the emptyDir root-owned; a read-only
    root. Before: "cannot read Redis password file", then "not a folder this user owns"."""
    from .container import from_k8s, image, run

    password = "k8s-" + os.urandom(8).hex()
    secrets = {"anchor-redis": {"worker-password": password}}
    container = from_k8s(_k8s_worker(), image(), secrets, name)
    assert container.read_only and container.uid == 10001 and container.uid != 0
    outcome = run(container, password)
    assert outcome["answered"], outcome["log"]
    assert "Traceback" not in outcome["log"]


@needs_root
def test_the_k8s_emulation_catches_what_broke_before():
    """The emulation is not lenient: the manifest as it was (the password in the
    environment while the image names a file; no fsGroup) fails to start."""
    from .container import from_k8s, image, run

    password = "k8s-" + os.urandom(8).hex()
    manifest = _k8s_worker()
    pod = manifest["spec"]["template"]["spec"]
    spec = pod["containers"][0]
    spec["volumeMounts"] = [m for m in spec["volumeMounts"] if m["name"] != "redis-password"]
    spec["env"].append(
        {
            "name": "REDIS_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "anchor-redis", "key": "worker-password"}},
        }  # noqa: E501
    )
    secrets = {"anchor-redis": {"worker-password": password}}
    outcome = run(from_k8s(manifest, image(), secrets), password)
    assert not outcome["answered"] and outcome["exit"] == 2
    assert "cannot read the Redis password file /run/secrets/redis_password" in outcome["log"]


@needs_root
@pytest.mark.parametrize("name", ["worker", "worker-interactive"])
def test_the_compose_worker_starts_as_the_file_describes(tmp_path, name):
    """The secret file made as the compose file's header says, bind-mounted with its host
    owner and mode; the worker as `user:`, `read_only:`, `environment:` say."""
    import yaml

    from .container import compose_secret_setup, from_compose, image, run

    text = (DEPLOY / "docker-compose.yml").read_text()
    password = "compose-" + os.urandom(8).hex()
    secret = tmp_path / "redis_worker_password"
    secret.write_text(password + "\n")
    setup = compose_secret_setup(text)
    os.chown(secret, setup["uid"], setup["gid"])
    secret.chmod(setup["mode"])
    container = from_compose(yaml.safe_load(text), image(), {"redis_worker_password": secret}, name)
    assert container.read_only and container.uid == 10001
    outcome = run(container, password)
    assert outcome["answered"], outcome["log"]
    # the instructions as they were (0600, the operator's own file) fail, as in production
    secret.chmod(0o600)
    os.chown(secret, 0, 0)
    outcome = run(
        from_compose(yaml.safe_load(text), image(), {"redis_worker_password": secret}), password
    )
    assert not outcome["answered"] and "Permission denied" in outcome["log"]


def test_the_image_keeps_gcc_out_and_pins_its_bases():
    docker = (DEPLOY / "Dockerfile").read_text()
    stages = docker.split("\nFROM ")
    assert len(stages) >= 2 and "gcc" in stages[0] and "gcc" not in stages[-1]
    assert "COPY --from=build" in stages[-1]
    for base in re.findall(r"^FROM (\S+)", docker, re.M):
        assert re.search(r":\d+\.\d+\.\d+", base), base  # a pinned release, not :3.11 or :latest
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in ignore and "!engine/" in ignore  # nothing but what the image copies
    compose = (DEPLOY / "docker-compose.yml").read_text()
    assert re.search(r"image: redis:\d+\.\d+\.\d+", compose)
    # Redis through the official entrypoint, which drops root for the redis user
    assert "exec docker-entrypoint.sh redis-server" in compose
    assert "name: anchor-backend" in compose and "external: true" in compose  # documented
    # metrics on 0.0.0.0 only where probes come from outside the container (k8s)
    for where, argv in anchor_commands():
        if "--metrics-host" in argv:
            assert where.startswith("worker") and where.endswith(".yaml"), where


def test_keda_scales_on_both_lanes():
    import yaml

    from anchor.client.protocol import LANES, lane_queue

    docs = list(yaml.safe_load_all((DEPLOY / "k8s" / "keda.yaml").read_text()))
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    assert scaled["spec"]["scaleTargetRef"]["name"] == _k8s_worker()["metadata"]["name"]
    lists = {t["metadata"]["listName"] for t in scaled["spec"]["triggers"]}
    assert lists == {f"rq:queue:{lane_queue('anchor', lane)}" for lane in LANES}
