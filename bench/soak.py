"""Soak under faults: N jobs through two workers while one worker is SIGKILLed every few
seconds (and restarted under its fixed name) and Redis is restarted twice. Passes when
every job is answered with the same moves as in-process analysis and Redis's peak memory
stays under its maxmemory. Figures go to BENCHMARKS.md.

    python bench/soak.py [JOBS] [KILL_EVERY_SECONDS]     (default 20000, 3)
"""

from __future__ import annotations

import os
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
from anchor.client.analysis import LexiconRegistry, run_request
from anchor.client.client import AnalysisClient
from anchor.engine import Ruleset, parse_cgp
from anchor.engine.legality import random_rack

TWL06 = DATA / "kwg" / "TWL06.kwg"
BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
MAXMEMORY = 256 << 20
RETRIES = 5


def redis_cmd(folder: Path, port: int) -> list[str]:
    return [
        shutil.which("redis-server") or "redis-server",
        "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
        "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
        "--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction",
    ]  # fmt: skip


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
    url = f"redis://127.0.0.1:{port}/0"
    server = subprocess.Popen(redis_cmd(folder, port), stdout=subprocess.DEVNULL)
    wait_redis(url)
    queue = "soak"
    names = ["soak-a", "soak-b"]
    procs = {n: worker(url, queue, n, folder / f"{n}.log") for n in names}
    time.sleep(3)
    client = AnalysisClient(url, queue=queue, retries=RETRIES)
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
    peak = 0
    next_kill = time.monotonic() + kill_every
    restart_at = [started + 15, started + 40]
    while runner.is_alive():
        time.sleep(0.2)
        try:
            peak = max(peak, redis.Redis.from_url(url).info("memory")["used_memory_peak"])
        except redis.exceptions.ConnectionError:
            pass
        now = time.monotonic()
        if now >= next_kill:
            victim = names[kills % 2]
            procs[victim].send_signal(signal.SIGKILL)
            procs[victim].wait()
            procs[victim] = worker(url, queue, victim, folder / f"{victim}.log")
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
    for proc in procs.values():
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
    print(f"jobs {jobs:,}  answered {len(results):,}  wrong or missing {wrong}")
    print(f"worker kills {kills}  Redis restarts {restarts}  time {elapsed:.1f} s")
    print(f"Redis peak memory {peak / 2**20:.1f} MiB of maxmemory {MAXMEMORY / 2**20:.0f} MiB")
    ok = wrong == 0 and len(results) == jobs and peak <= MAXMEMORY and restarts == 2
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
