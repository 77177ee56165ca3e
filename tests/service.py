"""Real parts for the service tests: a redis-server the suite starts on a free port, and
`anchor worker` processes, and the fixtures built on them (loaded as a pytest plugin:
pyproject's addopts). Not collected by pytest (no test_ prefix)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from .conftest import DATA, ROOT

TWL06 = DATA / "kwg" / "TWL06.kwg"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def http_status(port: int, path: str) -> int:
    """The HTTP status of GET 127.0.0.1:port/path; 0 when nothing answers."""
    import urllib.error
    import urllib.request

    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


class RedisServer:
    """redis-server with append-only persistence in a temporary folder."""

    def __init__(
        self,
        folder: Path,
        password: str | None = None,
        acl: str | None = None,
        port: int | None = None,
        start: bool = True,
    ):
        """`acl`: an ACL file's text (client/protocol/acl.py's acl_file) for the server to
        load; `url` is then the admin's, with `password`. `start=False`: started later,
        with `start()` (a worker waiting for a Redis not up yet)."""
        exe = shutil.which("redis-server")
        if not exe:
            pytest.fail("redis-server is not installed: `make test` installs it with apt")
        self.exe, self.folder, self.port = exe, folder, port or free_port()
        self.password = password
        self.acl = None
        auth = f":{password}@" if password else ""
        if acl is not None:
            from anchor.client.protocol.acl import ADMIN

            self.acl = folder / "users.acl"
            self.acl.write_text(acl)
            auth = f"{ADMIN.name}{auth}"
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        if start:
            self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                self.exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--maxmemory-policy",
                "noeviction",
                "--logfile",
                str(self.folder / "redis.log"),
                *(["--requirepass", self.password] if self.password and not self.acl else []),
                *(["--aclfile", str(self.acl)] if self.acl else []),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._ping, 10, "redis-server to answer")

    def _ping(self) -> bool:
        try:
            return redis.Redis.from_url(self.url, socket_timeout=0.5).ping()
        except redis.exceptions.ConnectionError:
            return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                redis.Redis.from_url(self.url).shutdown()
            except redis.exceptions.ConnectionError:
                pass
            self.proc.wait(10)

    def restart(self, down_for: float = 0.5) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def url_of(self, user: str, password: str) -> str:
        return f"redis://{user}:{password}@127.0.0.1:{self.port}/0"


def run_worker(url: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """`anchor worker --redis-url URL ARGS...` to its end (a start-up that must fail, or
    --burst), output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", url, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


class WorkerProcess:
    """`anchor worker` in a subprocess, logging JSON lines to a file."""

    def __init__(self, url: str, queue: str, name: str, log_dir: Path, *extra: str):
        self.name = name
        self.log = log_dir / f"{name}.log"
        cmd = [
            sys.executable,
            "-m",
            "anchor.client.cli",
            "worker",
            "--redis-url",
            url,
            "--queue",
            queue,
            "--name",
            name,
            "--lexicon",
            f"twl06@english={TWL06}",
            "--lexicon",
            "english",
            "--maintenance-interval",
            "1",
            "--log-format",
            "json",
            *extra,
        ]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT, cwd=ROOT, env=env
        )
        self.redis = redis.Redis.from_url(url)
        wait_until(self.registered, 20, f"worker {name} to register")

    def registered(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"worker {self.name} exited: {self.log.read_text()[-2000:]}")
        # this process's registration, not one a killed worker of the same name left
        pid = self.redis.hget(f"rq:worker:{self.name}", "pid")
        return pid is not None and int(pid) == self.proc.pid

    def state(self) -> str:
        value = self.redis.hget(f"rq:worker:{self.name}", "state")
        return value.decode() if value else ""

    def current_job(self, job_ids) -> str:
        """Which of `job_ids` this worker is running now ('' if none)."""
        with self.redis.pipeline() as pipe:
            for job_id in job_ids:
                pipe.hmget(f"rq:job:{job_id}", "status", "worker_name")
            replies = pipe.execute()
        for job_id, (status, worker) in zip(job_ids, replies, strict=True):
            if status == b"started" and worker == self.name.encode():
                return job_id
        return ""

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = RedisServer(tmp_path_factory.mktemp("redis"))
    yield srv
    srv.stop()


@pytest.fixture
def queue() -> str:
    return f"q{uuid.uuid4().hex[:8]}"


@pytest.fixture
def workers(server, queue, tmp_path):
    """start(name=None, *extra_args) -> a WorkerProcess on this test's queue."""
    started: list[WorkerProcess] = []

    def start(name: str | None = None, *extra: str) -> WorkerProcess:
        w = WorkerProcess(server.url, queue, name or f"w{uuid.uuid4().hex[:6]}", tmp_path, *extra)
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()
