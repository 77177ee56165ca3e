"""Service benchmark: a redis-server and `anchor worker` processes started here.

Round-trip latency of single-position jobs (p50/p99), throughput with 1 and 2 workers,
batch jobs (positions per second), the floor of a trivial job, SimpleWorker against
RQ's forking Worker, and each worker's RSS/PSS (the lexicon must be shared): four workers
on TWL06 as `anchor lexicon install` leaves it (the KWG, byte for byte MAGPIE's file, and
its bingo words beside it), and on the bare KWG (each worker builds its own bingo words).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from random import Random

from common import DATA, ROOT, header

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.engine import Lexicon, Ruleset, parse_cgp
from anchor.engine.legality import random_rack
from anchor.engine.lexicon import anagram_path

TWL06 = DATA / "kwg" / "TWL06.kwg"
TWL06_SHA = hashlib.sha256(TWL06.read_bytes()).hexdigest()
BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
ENGLISH = Ruleset.load("english")
# Racks a real bag could give beside each board (the service refuses impossible ones).
RACKS = [random_rack(parse_cgp(ENGLISH, BENCH[i % 6]).board, Random(i)) for i in range(48)]
FORKING = """
import sys
from redis import Redis
from rq import Queue, Worker
from anchor.client import protocol as p
from anchor.worker.runner import LexiconRegistry
from anchor.client.protocol.serializer import MsgpackSerializer
from anchor.worker.guard import AnchorJob
from anchor.worker.jobs import JobContext
from anchor.worker.metrics import Metrics
registry = LexiconRegistry({"twl06": sys.argv[2]})
registry.preload([("english", "twl06")])
context = JobContext(registry, p.Limits(), Metrics())
class Forking(Worker):
    def execute_job(self, job, queue):
        job.context = context
        return super().execute_job(job, queue)
conn = Redis.from_url(sys.argv[1])
Forking([Queue(sys.argv[3], connection=conn, serializer=MsgpackSerializer, job_class=AnchorJob)],
        connection=conn, serializer=MsgpackSerializer, job_class=AnchorJob, name=sys.argv[4]).work()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(folder: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            shutil.which("redis-server"),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    return proc, f"redis://127.0.0.1:{port}/0"


def start_worker(
    url: str,
    queue: str,
    name: str,
    forking: bool = False,
    lexicon: str | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if forking:
        cmd = [sys.executable, "-c", FORKING, url, str(TWL06), queue, name]
    else:
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
            lexicon or f"twl06@english={TWL06}",
            "--log-level",
            "WARNING",
            *extra,
        ]
    proc = subprocess.Popen(
        cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(2.0)
    return proc


@contextmanager
def redis_server():
    """A redis-server in a temporary folder, torn down afterwards; yields (URL, folder)."""
    folder = Path(tempfile.mkdtemp())
    redis_proc, url = start_redis(folder)
    try:
        yield url, folder
    finally:
        redis_proc.terminate()
        redis_proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def fleet(queue: str, count: int, lexicon: str | None = None, extra: tuple[str, ...] = ()):
    """A redis-server and `count` workers on `queue`, torn down afterwards; yields the URL."""
    with redis_server() as (url, _folder):
        workers = []
        try:
            workers = [
                start_worker(url, queue, f"{queue}{i}", lexicon=lexicon, extra=extra)
                for i in range(count)
            ]
            yield url
        finally:
            stop(workers)


def stop(procs) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def single(i: int) -> p.Request:
    return p.Request(
        lexicon="twl06", positions=(p.Position(cgp=BENCH[i % 6], rack=RACKS[i % 48], limit=10),)
    )


def latency(client: AnalysisClient, n: int, request_of) -> tuple[float, float]:
    samples = []
    for i in range(n):
        start = time.perf_counter()
        result = client.analyze(request_of(i), timeout=30)
        samples.append(time.perf_counter() - start)
        assert result["v"] == 1
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def throughput(client: AnalysisClient, requests) -> float:
    start = time.perf_counter()
    results = client.analyze_many(requests, timeout=600)
    assert all(r["ok"] for r in results)
    return len(requests) / (time.perf_counter() - start)


def memory(pid: int) -> dict[str, int]:
    """RSS and PSS of a process, and of its mappings of the lexicon file and its bingo
    words, in KiB."""
    out = {"rss": 0, "pss": 0, "kwg_rss": 0, "kwg_pss": 0, "words_rss": 0, "words_pss": 0}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(("Rss:", "Pss:")):
            out[line.split(":")[0].lower()] = int(line.split()[1])
    mapped = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if "-" in line.split()[0] and len(line.split()) >= 5:
            # the worker maps a content-named snapshot of the file (worker/snapshot.py)
            name = line.rstrip()
            mapped = (
                "kwg" if name.endswith((f"{TWL06_SHA}.kwg", "TWL06.kwg"))
                else "words" if name.endswith(".kwg.anagrams") else None
            )  # fmt: skip
        elif mapped and line.startswith(("Rss:", "Pss:")):
            out[f"{mapped}_" + line.split(":")[0].lower()] += int(line.split()[1])
    return out


def installed_twl06(folder: Path) -> Path:
    """TWL06 as `anchor lexicon install twl06` leaves it: the KWG (byte for byte the file
    in ../shared) and its bingo words beside it."""
    path = folder / "twl06.kwg"
    shutil.copyfile(TWL06, path)
    lexicon = Lexicon.open(path, ENGLISH)
    lexicon.write_anagrams(path)
    lexicon.close()
    return path


def four_workers(url: str, client: AnalysisClient, queue: str, lexicon: Path) -> str:
    """Four workers of one machine on `lexicon`, warmed up: what each costs once the
    lexicon is shared four ways."""
    procs = [start_worker(url, queue, f"{queue}{i}", lexicon=f"twl06@english={lexicon}")
             for i in range(4)]  # fmt: skip
    try:
        throughput(client, batches(100, 40))
        four = [memory(proc.pid) for proc in procs]
    finally:
        stop(procs)
    each = ", ".join(f"{m['pss'] / 1024:.1f}" for m in four)
    total = sum(m["pss"] for m in four) / 1024
    return (
        f"PSS {each} MiB (sum {total:.1f}); lexicon mapping PSS "
        f"{four[0]['kwg_pss'] / 1024:.2f} MiB each, bingo words' mapping PSS "
        f"{four[0]['words_pss'] / 1024:.2f} MiB each (RSS {four[0]['words_rss'] / 1024:.2f})"
    )


def batches(size: int, count: int) -> list[p.Request]:
    positions = [p.Position(cgp=BENCH[i % 6], rack=RACKS[i % 48], limit=10) for i in range(size)]
    return [
        p.Request(lexicon="twl06", batch=True, positions=tuple(positions)) for _ in range(count)
    ]


def main() -> None:
    header("service: redis-server + anchor worker processes on this machine")
    folder = Path(tempfile.mkdtemp())
    redis_proc, url = start_redis(folder)
    try:
        client = AnalysisClient(url, queue="bench1")
        w1 = start_worker(url, "bench1", "b1")
        latency(client, 50, single)  # warm up
        p50, p99 = latency(client, 1000, single)
        print(
            f"single-position job round trip (1 worker, 1000 jobs): p50 {p50 * 1e3:.2f} ms, "
            f"p99 {p99 * 1e3:.2f} ms"
        )
        t50, t99 = latency(client, 1000, lambda i: b"")  # an empty payload: answered at once
        print(
            f"trivial job round trip (error answer, no analysis):   p50 {t50 * 1e3:.2f} ms, "
            f"p99 {t99 * 1e3:.2f} ms"
        )
        one = throughput(client, [single(i) for i in range(3000)])
        print(f"throughput, 1 worker, 3000 single jobs (pipelined):   {one:,.0f} jobs/s")
        b_one = throughput(client, batches(100, 40)) * 100
        print(f"batch jobs of 100 positions, 1 worker:                 {b_one:,.0f} positions/s")
        w2 = start_worker(url, "bench1", "b2")
        two = throughput(client, [single(i) for i in range(3000)])
        print(f"throughput, 2 workers, 3000 single jobs (pipelined):  {two:,.0f} jobs/s")
        b_two = throughput(client, batches(100, 60)) * 100
        print(f"batch jobs of 100 positions, 2 workers:                {b_two:,.0f} positions/s")
        for name, proc in (("worker 1", w1), ("worker 2", w2)):
            m = memory(proc.pid)
            print(
                f"{name}: RSS {m['rss'] / 1024:.1f} MiB, PSS {m['pss'] / 1024:.1f} MiB; lexicon "
                f"mapping RSS {m['kwg_rss'] / 1024:.2f} MiB, PSS {m['kwg_pss'] / 1024:.2f} MiB"
            )
        stop([w1, w2])
        installed = installed_twl06(folder)
        print(
            f"4 workers, TWL06 as installed:      {four_workers(url, client, 'bench1', installed)}"
        )
        anagram_path(installed).unlink()
        print(
            f"4 workers, the bare KWG:            {four_workers(url, client, 'bench1', installed)}"
        )
        fork_client = AnalysisClient(url, queue="bench2")
        wf = start_worker(url, "bench2", "f1", forking=True)
        latency(fork_client, 20, single)
        f50, f99 = latency(fork_client, 300, single)
        print(
            f"RQ's forking Worker instead (1 worker, 300 jobs):      p50 {f50 * 1e3:.2f} ms, "
            f"p99 {f99 * 1e3:.2f} ms"
        )
        stop([wf])
    finally:
        redis_proc.terminate()
        redis_proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
