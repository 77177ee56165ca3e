"""`anchor worker --workers N`: workers forked from one process that opened the lexica
(issue 49, memory per worker), against a real redis-server: each registers under its own
name and answers, one killed is started again with nothing lost, SIGTERM stops them all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import redis

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient

from .conftest import ROOT, data_path
from .service import wait_until

pytestmark = pytest.mark.service  # not in `make test-fast` (pyproject: markers)

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


def children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def registered(r: redis.Redis, names: list[str]) -> dict[str, int]:
    pids = {n: r.hget(f"rq:worker:{n}", "pid") for n in names}
    return {n: int(v) for n, v in pids.items() if v is not None}


def test_forked_workers_serve_survive_a_kill_and_stop_together(server, tmp_path):
    queue = "forks"
    names = [f"fork-{i}" for i in (1, 2, 3)]
    log = open(tmp_path / "workers.log", "w")
    parent = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", server.url,
         "--queue", queue, "--name", "fork", "--workers", "3", "--lexicon", "english",
         "--maintenance-interval", "1"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    r = redis.Redis.from_url(server.url)
    try:
        wait_until(lambda: len(registered(r, names)) == 3, 60, "three forked workers")
        first = registered(r, names)
        assert set(first.values()) == children(parent.pid)  # forked from the one process

        client = AnalysisClient(server.url, queue=queue)
        requests = [p.Request(positions=(p.Position(cgp=cgp, limit=5),)) for cgp in BENCH * 4]
        inline = AnalysisClient()
        wanted = [inline.analyze(req)["moves"] for req in requests[: len(BENCH)]]
        answers = client.analyze_many(requests, timeout=120)
        assert [a["moves"] for a in answers] == wanted * 4

        os.kill(first["fork-2"], signal.SIGKILL)  # a worker dies: the parent starts it again
        wait_until(
            lambda: registered(r, names).get("fork-2") not in (None, first["fork-2"]),
            60,
            "fork-2 started again",
        )
        assert registered(r, names)["fork-2"] in children(parent.pid)
        answers = client.analyze_many(requests, timeout=120)
        assert [a["moves"] for a in answers] == wanted * 4

        parent.send_signal(signal.SIGTERM)
        assert parent.wait(90) == 0  # three workers finishing their jobs on a busy machine
        assert not children(parent.pid)
        members = {m.decode() for m in r.smembers("rq:workers")}
        assert not members & {f"rq:worker:{n}" for n in names}  # each said it stopped
    finally:
        if parent.poll() is None:
            parent.kill()
        log.close()
    said = (tmp_path / "workers.log").read_text()
    assert "a worker died; starting it again" in said and "Traceback" not in said


def test_a_forked_worker_refused_its_configuration_is_not_restarted(server, tmp_path):
    """Status 2 (here: a metrics port already taken) is a configuration to fix, not a crash
    to retry: the parent reports it and exits with it once the others stop. The first
    worker's port is the one held: the port below a free one may be any client's own."""
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", server.url,
             "--queue", "forks2", "--workers", "2", "--lexicon", "english", "--burst",
             "--metrics-port", str(port)],
            capture_output=True, text=True, cwd=ROOT, timeout=120,
        )  # fmt: skip
    finally:
        busy.close()
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"cannot serve metrics on 127.0.0.1:{port}" in done.stderr
    assert "starting it again" not in done.stderr


def test_workers_stop_when_their_parent_is_killed(server, tmp_path):
    """A parent killed outright (SIGKILL, the OOM killer) must not leave its workers
    serving as orphans: each is sent SIGTERM and stops, saying so in Redis, and the last
    releases the lexicon snapshots the parent held (they stayed in memory)."""
    names = ["orphan-1", "orphan-2"]
    snapshots = tmp_path / "snapshots"
    log = open(tmp_path / "workers.log", "w")
    parent = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", server.url,
         "--queue", "orphans", "--name", "orphan", "--workers", "2", "--lexicon", "english"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
        env=dict(os.environ, ANCHOR_SNAPSHOT_DIR=str(snapshots)),
    )  # fmt: skip
    r = redis.Redis.from_url(server.url)
    try:
        wait_until(lambda: len(registered(r, names)) == 2, 60, "two forked workers")
        workers = children(parent.pid)
        assert len(workers) == 2
        assert list(snapshots.glob("*.kwg"))  # the parent's, held for its workers
        parent.kill()
        parent.wait(10)

        def gone() -> bool:  # exited: no such process, or a zombie no one has reaped yet
            return all(state(pid) in ("", "Z") for pid in workers)

        wait_until(gone, 30, "the orphaned workers to stop")
        assert not [p.name for p in snapshots.iterdir()]
        members = {m.decode() for m in r.smembers("rq:workers")}
        assert not members & {f"rq:worker:{n}" for n in names}
    finally:
        for pid in children(parent.pid):
            os.kill(pid, signal.SIGKILL)
        log.close()


def test_a_stop_while_workers_start_is_a_clean_stop(tmp_path):
    """SIGTERM while the workers wait for a Redis not up yet: each stops as a lone worker
    would, and the parent exits 0 (it exited 241: the workers died of the signal)."""
    from .service import free_port

    parent = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--workers", "2",
         "--redis-url", f"redis://127.0.0.1:{free_port()}/0", "--lexicon", "english"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: len(children(parent.pid)) == 2, 60, "two forked workers")
        time.sleep(1.0)  # into their wait for Redis
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(90) == 0, parent.stdout.read()[-2000:]
    finally:
        if parent.poll() is None:
            parent.kill()


SUPERVISED = """
import os, signal, sys, time
from anchor.worker import forks

real_fork = os.fork
def fork():  # a stop that lands while the workers are being forked, after the first
    pid = real_fork()
    if pid:
        os.kill(os.getpid(), signal.SIGTERM)
    return pid
os.fork = fork

def serve(index):
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    time.sleep(60)
    return 0

started = time.monotonic()
status = forks.supervise(8, serve)
print(status, round(time.monotonic() - started, 1))
"""


def test_a_stop_while_forking_forks_no_more_and_stops_those_forked():
    """SIGTERM between two forks was forwarded to the workers forked so far while the loop
    went on forking; the rest served until a second SIGTERM."""
    done = subprocess.run(
        [sys.executable, "-c", SUPERVISED], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    status, seconds = done.stdout.split()
    assert status == "0" and float(seconds) < 10  # not the workers' 60 s


KILLED_HOLDING_A_SLOT = """
import os, sys
from anchor.engine import _movegen
from anchor.engine.peers import Peers
from anchor.worker import forks

peers = Peers(1, 10)
marker = sys.argv[1]

def serve(index):
    if not os.path.exists(marker):  # the first life: dies holding the endgame slot
        open(marker, "w").close()
        os._exit(70 if _movegen.peers_claim(peers._region, 5, index) == 0 else 3)
    # started again: the slot is free for another endgame only if its holder was let go
    return 0 if _movegen.peers_claim(peers._region, 6, index + 1) == 0 else 2  # 2: no restart

print(forks.supervise(1, serve, ended=peers.forget if sys.argv[2] == "forget" else None))
"""


def test_a_worker_killed_holding_an_endgame_slot_lets_it_go(tmp_path):
    """The parent lets a dead worker's endgame peers' slots go (supervise's `ended`): without
    that, a slot stayed held by a process that no longer exists."""
    for how, status in (("forget", "0"), ("keep", "2")):
        marker = tmp_path / how
        done = subprocess.run(
            [sys.executable, "-c", KILLED_HOLDING_A_SLOT, str(marker), how],
            capture_output=True, text=True, cwd=ROOT, timeout=60,
        )  # fmt: skip
        assert done.stdout.split()[-1:] == [status], (how, done.stdout, done.stderr[-2000:])


def test_forked_workers_solve_one_endgame_together(server, tmp_path):
    """Two jobs of one endgame on two forked workers search one table (engine/peers.py):
    both answer the value and line one process finds, with about one search's positions
    between them (two searches' when nothing is shared), and the endgame asked again is
    answered from the table the slot kept."""
    from anchor.client import endgame
    from anchor.worker.runner import LexiconRegistry, run_request

    from .service import TWL06
    from .test_endgame import real_endgames

    queue, names = "peers", ["peer-1", "peer-2"]
    log = open(tmp_path / "workers.log", "w")
    parent = subprocess.Popen(
        [sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", server.url,
         "--queue", queue, "--name", "peer", "--workers", "2", "--lexicon",
         f"twl06@english={TWL06}", "--maintenance-interval", "1"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    r = redis.Redis.from_url(server.url)
    local = LexiconRegistry({"twl06": str(TWL06)})
    try:
        wait_until(lambda: len(registered(r, names)) == 2, 60, "two forked workers")
        client = AnalysisClient(server.url, queue=queue)
        for name in ("line26", "line31"):
            request = p.EndgameRequest(cgp=real_endgames()[name], lexicon="twl06")
            one = run_request(request, local)
            assert one["exact"], name
            together = endgame.solve(client, request, parts=2, timeout=120)
            assert together.exact and together.parts == 2, name
            assert (together.value, together.moves) == (one["value"], one["moves"]), name
            assert together.nodes < 1.5 * one["nodes"], (name, together.nodes, one["nodes"])
            again = endgame.solve(client, request, parts=2, timeout=120)
            assert (again.value, again.moves) == (one["value"], one["moves"]), name
            assert again.nodes < one["nodes"] / 2, (name, again.nodes, one["nodes"])
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(90) == 0
    finally:
        if parent.poll() is None:
            parent.kill()
        log.close()
    assert "Traceback" not in (tmp_path / "workers.log").read_text()
