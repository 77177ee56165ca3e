"""Soak under faults: N jobs through two workers while one worker is SIGKILLed every few
seconds (and restarted under its fixed name), Redis is restarted twice, a job id that is
not UTF-8 is pushed onto the queue, a worker is paused (SIGSTOP) past its heartbeat and
resumed, and Redis is filled to its maxmemory with jobs running for longer than a job's
heartbeat lives. Redis runs with the deployment's ACL users (workers as anchor-worker, the
client as anchor-client); as the admin, a stranger publishes RQ's shutdown to every worker,
deletes the started registries and the workers' registrations, and pushes answered jobs'
ids again. Passes when every job is answered with the same moves as in-process analysis,
each with exactly one final result in its stream, no worker exited on its own, both are
registered at the end, and Redis's peak memory (outside the fill) stays under its
maxmemory. Figures go to BENCHMARKS.md.

    python bench/soak.py [JOBS] [KILL_EVERY_SECONDS]     (default 20000, 3)
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from random import Random

import redis
from common import DATA, ROOT, header

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.protocol.acl import ADMIN, CLIENT, USERS, WORKER, acl_file
from anchor.engine import Ruleset, parse_cgp
from anchor.engine.legality import random_rack
from anchor.worker.runner import LexiconRegistry, run_request
from anchor.worker.worker import HEARTBEAT_TTL

TWL06 = DATA / "kwg" / "TWL06.kwg"
BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
MAXMEMORY = 256 << 20
RETRIES = 5


PASSWORDS = {user.name: secrets.token_hex(16) for user in USERS}
QUEUE = "soak"


def redis_cmd(folder: Path, port: int) -> list[str]:
    users = folder / "users.acl"
    users.write_text(acl_file(PASSWORDS, queues=(QUEUE,)))
    return [
        shutil.which("redis-server") or "redis-server",
        "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
        "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
        "--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction",
        "--aclfile", str(users),
    ]  # fmt: skip


def url_of(user, port: int) -> str:
    return f"redis://{user.name}:{PASSWORDS[user.name]}@127.0.0.1:{port}/0"


def wait_redis(url: str) -> None:
    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            return
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def worker(url: str, queue: str, name: str, log: Path) -> subprocess.Popen:
    cmd = [
        sys.executable, "-m", "anchor.client.cli", "worker", "--redis-url", url, "--queue", queue,
        "--name", name, "--lexicon", f"twl06@english={TWL06}", "--maintenance-interval", "1",
        "--max-retries", str(RETRIES), "--log-level", "WARNING",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log.open("a"), stderr=subprocess.STDOUT)


def main() -> int:
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    kill_every = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    header(f"soak: {jobs:,} jobs, a worker SIGKILLed every {kill_every:g} s, Redis restarted twice")
    rules = Ruleset.load("english")
    racks = [random_rack(parse_cgp(rules, BENCH[i % 6]).board, Random(i)) for i in range(600)]
    requests = [
        p.Request(
            lexicon="twl06",
            positions=(p.Position(cgp=BENCH[i % 6], rack=racks[i % 600], limit=5),),
        )
        for i in range(jobs)
    ]
    local = LexiconRegistry({"twl06": str(TWL06)})
    expected = {i: run_request(requests[i], local)["moves"] for i in range(600)}

    folder = Path(tempfile.mkdtemp())
    port = 20000 + os.getpid() % 20000
    url = url_of(ADMIN, port)  # the soak's own look, and the stranger's faults
    server = subprocess.Popen(redis_cmd(folder, port), stdout=subprocess.DEVNULL)
    wait_redis(url)
    queue = QUEUE
    names = ["soak-a", "soak-b"]
    worker_url = url_of(WORKER, port)
    procs = {n: worker(worker_url, queue, n, folder / f"{n}.log") for n in names}
    time.sleep(3)
    client = AnalysisClient(url_of(CLIENT, port), queue=queue, retries=RETRIES)
    out: dict = {}

    def run() -> None:
        try:
            out["results"] = client.analyze_many(requests, timeout=3000)
        except Exception as exc:  # reported below
            out["error"] = exc

    started = time.monotonic()
    runner = threading.Thread(target=run)
    runner.start()
    kills = restarts = 0
    peak = 0  # Redis's peak memory outside the deliberate fill
    next_kill = time.monotonic() + kill_every
    restart_at = [started + 15, started + 40]
    faults = {  # seconds from the start -> the fault, each once
        8.0: "stray",  # a job id that is not UTF-8, pushed onto the queue
        12.0: "publish",  # RQ's shutdown and kill-horse published to every worker's name
        20.0: "wip",  # the started registries deleted with jobs running
        25.0: "pause",  # SIGSTOP a worker past its heartbeat, SIGCONT 15 s later
        33.0: "unregister",  # the workers' registrations deleted
        47.0: "again",  # 200 answered jobs' ids pushed onto the queue again
        55.0: "fill",  # Redis at maxmemory for longer than a job's heartbeat lives
    }
    exits = 0  # workers that exited without being killed
    paused: tuple[str, float] | None = None
    done_faults: list[str] = []
    junk = 0
    while runner.is_alive():
        time.sleep(0.2)
        now = time.monotonic()
        r = redis.Redis.from_url(url)
        try:
            if "fill" not in done_faults:
                peak = max(peak, r.info("memory")["used_memory_peak"])
        except redis.exceptions.ConnectionError:
            pass
        due = [t for t in faults if now - started >= t and faults[t] not in done_faults]
        for t in due:
            fault = faults[t]
            try:
                if fault == "stray":
                    r.rpush(f"rq:queue:{queue}", b"\xff\xfe stray")
                elif fault == "publish":
                    for command in ("shutdown", "kill-horse"):
                        for name in names:
                            r.publish(f"rq:pubsub:{name}", json.dumps({"command": command}))
                elif fault == "wip":
                    r.delete(*[k for k in r.scan_iter("rq:wip:*")] or ["rq:wip:none"])
                elif fault == "unregister":
                    r.delete("rq:workers", *r.scan_iter("rq:workers:*"))
                elif fault == "again":
                    answered = [k.decode().split(":", 2)[2] for k in r.scan_iter(
                        "rq:results:*", count=1000)][:200]  # fmt: skip
                    if answered:
                        r.rpush(f"rq:queue:{queue}", *answered)
                elif fault == "pause":
                    victim = names[(kills + 1) % 2]  # not the one killed next
                    procs[victim].send_signal(signal.SIGSTOP)
                    paused = (victim, now + 15)
                elif fault == "fill":
                    try:
                        while True:
                            r.set(f"junk:{junk}", b"x" * 65536)
                            junk += 1
                    except redis.exceptions.OutOfMemoryError:
                        pass
                    time.sleep(HEARTBEAT_TTL + 4)
                    r.delete(*[f"junk:{i}" for i in range(junk)])
            except redis.exceptions.ConnectionError:
                continue  # Redis restarting: try again on the next round
            done_faults.append(fault)
            print(f"  {now - started:5.1f} s: {fault}")
        if paused and now >= paused[1]:
            procs[paused[0]].send_signal(signal.SIGCONT)
            paused = None
        if now >= next_kill:
            victim = names[kills % 2]
            if paused and paused[0] == victim:
                victim = names[(kills + 1) % 2]
            exits += sum(1 for proc in procs.values() if proc.poll() is not None)
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait()
            procs[victim] = worker(worker_url, queue, victim, folder / f"{victim}.log")
            kills += 1
            next_kill = now + kill_every
        if restart_at and now >= restart_at[0]:
            restart_at.pop(0)
            server.send_signal(signal.SIGTERM)
            server.wait()
            time.sleep(0.5)
            server = subprocess.Popen(redis_cmd(folder, port), stdout=subprocess.DEVNULL)
            wait_redis(url)
            restarts += 1
    runner.join()
    elapsed = time.monotonic() - started
    exits += sum(1 for proc in procs.values() if proc.poll() is not None)
    finals = final_results(url)
    registered = 0
    for _ in range(50):  # a busy worker registers again once its job ends
        registered = redis.Redis.from_url(url).scard(f"rq:workers:{queue}")
        if registered == len(names):
            break
        time.sleep(0.2)
    for proc in procs.values():
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
    for proc in procs.values():
        proc.wait(30)
    server.send_signal(signal.SIGTERM)
    server.wait()
    shutil.rmtree(folder, ignore_errors=True)
    if "error" in out:
        print(f"FAILED: {out['error']}")
        return 1
    results = out["results"]
    wrong = sum(
        1 for i, r in enumerate(results) if not r.get("ok") or r["moves"] != expected[i % 600]
    )
    twice = sum(1 for n in finals if n != 1)
    print(f"jobs {jobs:,}  answered {len(results):,}  wrong or missing {wrong}")
    print(f"jobs without exactly one final result: {twice} (of {len(finals):,} read back)")
    print(f"worker kills {kills}  Redis restarts {restarts}  faults {', '.join(done_faults)}")
    print(f"workers that exited on their own {exits}  registered at the end {registered}")
    print(f"time {elapsed:.1f} s")
    print(f"Redis peak memory {peak / 2**20:.1f} MiB of maxmemory {MAXMEMORY / 2**20:.0f} MiB")
    ok = (
        wrong == 0
        and len(results) == jobs
        and twice == 0
        and len(finals) == jobs
        and peak <= MAXMEMORY
        and restarts == 2
        and len(done_faults) == len(faults)
        and exits == 0
        and registered == len(names)
    )
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def final_results(url: str) -> list[int]:
    """For each job's result stream (this Redis serves the soak alone), how many final
    entries it holds (types 1, 2, 5; 4 is 'retried'): one final result per job, always."""
    r = redis.Redis.from_url(url)
    keys = list(r.scan_iter("rq:results:*", count=1000))
    counts = []
    for start in range(0, len(keys), 1000):
        with r.pipeline(transaction=False) as pipe:
            for key in keys[start : start + 1000]:
                pipe.xrange(key)
            for entries in pipe.execute():
                counts.append(sum(1 for _, f in entries if f[b"type"] != b"4"))
    return counts


if __name__ == "__main__":
    sys.exit(main())
