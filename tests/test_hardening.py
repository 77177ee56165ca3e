"""The service against an attacker and an operator's bad day, with a real redis-server:
foreign job functions, hostile job hashes, unbounded requests, impossible positions, a
full Redis, long jobs, a fixed-name worker killed and restarted, a lexicon rewritten in
place, and a bounded mutation fuzz of raw jobs. PROTOCOL.md lists every cap and code."""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
import uuid
import zlib
from datetime import datetime, timezone

import msgpack
import pytest
import redis

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient, ServiceError

from .conftest import data_path
from .service import TWL06, RedisServer, WorkerProcess, run_worker, wait_until

pytestmark = pytest.mark.service  # not in `make test-fast` (pyproject: markers)

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
TWO_BLANKS = BENCH[6]


def stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def raw_job(r, queue: str, func="worker.jobs.analyze", args=None, data=None, **fields) -> str:
    """A job written with plain Redis commands (PROTOCOL.md), fields overridable; a field
    given as None is left out."""
    job_id = uuid.uuid4().hex
    if args is None:
        args = [p.pack({"v": 1, "lexicon": "twl06", "cgp": BENCH[1], "limit": 1})]
    if data is None:
        data = msgpack.packb([func, None, args, {}])
    now = stamp()
    base = {
        "data": data,
        "origin": queue,
        "status": "queued",
        "created_at": now,
        "enqueued_at": now,
        "timeout": "30",
        "result_ttl": "600",
        "failure_ttl": "600",
        "retries_left": "0",
        "description": "hardening test",
    }
    base.update(fields)
    mapping = {k: v for k, v in base.items() if v is not None}
    with r.pipeline() as pipe:
        pipe.hset(f"rq:job:{job_id}", mapping=mapping)
        pipe.sadd("rq:queues", f"rq:queue:{queue}")
        pipe.rpush(f"rq:queue:{queue}", job_id)
        pipe.execute()
    return job_id


def outcome(client: AnalysisClient, job_id: str, timeout: float = 20):
    """The result map, or the ServiceError the client raises for a failed job."""
    from anchor.client.client import Job

    try:
        return client.result(Job(job_id), timeout=timeout)
    except ServiceError as exc:
        return exc


# ----------------------------------------------------------- foreign code
def test_foreign_functions_never_run(server, queue, workers, tmp_path):
    worker = workers()
    r = server.client()
    client = AnalysisClient(server.url, queue=queue)
    touched = [tmp_path / f"touched{i}" for i in range(5)]
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("precious")
    hostile = [
        ("os.system", [f"touch {touched[0]}"]),
        ("subprocess.check_output", [["touch", str(touched[1])]]),
        ("builtins.exec", [f"open({str(touched[2])!r}, 'w')"]),
        ("shutil.rmtree", [str(victim)]),
        ("posix.system", [f"touch {touched[3]}"]),
        ("worker.jobs.analyze.__globals__", []),
        ("antigravity.geohash", [1, 2, b"x"]),
    ]
    ids = [raw_job(r, queue, func=name, args=args) for name, args in hostile]
    # the allowed name with an instance, or with a failure callback that would run os.system
    ids.append(raw_job(r, queue, data=msgpack.packb(["worker.jobs.analyze", "x", [b""], {}])))
    ids.append(
        raw_job(r, queue, args=[b"\x00"], failure_callback_name="os.system", retries_left=None)
    )
    ids.append(raw_job(r, queue, success_callback_name="os.system"))
    for job_id in ids:
        got = outcome(client, job_id)
        assert isinstance(got, ServiceError), job_id
        assert got.code in (p.FORBIDDEN_FUNCTION, p.MALFORMED_JOB), got
    time.sleep(0.5)
    assert not any(t.exists() for t in touched)
    assert (victim / "keep").read_text() == "precious"
    assert worker.proc.poll() is None
    failed = r.zrange(f"rq:failed:{queue}", 0, -1)
    assert {f.decode() for f in failed} == set(ids)  # each kept, with its reason
    assert r.llen(f"rq:queue:{queue}") == 0
    log = worker.log.read_text()
    assert "refused job" in log and "forbidden_function" in log
    good = client.analyze(p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),)))
    assert good["ok"] and good["total"] == 275


def test_webhooks_are_never_called(server, queue, workers):
    """An SSRF attempt: a webhook URL in the job hash is refused, never requested."""
    import http.server
    import json
    import threading

    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        workers()
        url = f"http://127.0.0.1:{httpd.server_port}/hook"
        hooks = json.dumps([{"url": url, "job_status": s} for s in ("finished", "failed")])
        client = AnalysisClient(server.url, queue=queue)
        got = outcome(client, raw_job(server.client(), queue, webhooks=hooks))
        assert isinstance(got, ServiceError) and got.code == p.MALFORMED_JOB
        time.sleep(0.5)
        assert hits == []
    finally:
        httpd.shutdown()


# ------------------------------------------------------- unparsable hashes
@pytest.mark.parametrize(
    "field,value",
    [
        ("timeout", "30s!"),
        ("timeout", "30x"),
        ("created_at", "2026-11-22T10:00:00.000000+00:00"),
        ("enqueued_at", "yesterday"),
        ("retries_left", "2.0"),
        ("result_ttl", "1e9"),
        ("retry_intervals", "[0"),
        ("status", "exploded"),
        ("worker_name", b"\xff\xfe"),
        ("data", b"\x93\x01"),  # truncated msgpack
        ("data", zlib.compress(b"\x00" * (64 << 20))),  # a zlib bomb: 64 MiB from 64 KiB
    ],
)
def test_unparsable_job_fields_are_answered_not_lost(server, queue, workers, field, value):
    workers()
    r = server.client()
    client = AnalysisClient(server.url, queue=queue)
    job_id = raw_job(r, queue, **{field: value})
    got = outcome(client, job_id)
    if field == "data" and len(value) > 1000:
        assert isinstance(got, dict) and got["error"]["code"] == p.PAYLOAD_TOO_LARGE
    else:
        assert isinstance(got, ServiceError) and got.code == p.MALFORMED_JOB, got
        assert r.zscore(f"rq:failed:{queue}", job_id) is not None
    assert r.llen(f"rq:queue:{queue}") == 0
    assert r.llen(f"rq:queue:{queue}:intermediate") == 0


# ------------------------------------------------------------------- caps
CAPPED = ("--max-result-bytes", "60000", "--max-moves", "300", "--max-batch", "50")


def request(**fields) -> bytes:
    return p.pack({"v": 1, "lexicon": "twl06", **fields})


CAP_CASES = [
    ("7 blanks on the two-blank board", request(cgp=TWO_BLANKS, rack="???????"), p.BAD_RACK),
    ("3 blanks", request(cgp=TWO_BLANKS, rack="AB???"), p.BAD_RACK),
    ("two Qs in the rack", request(cgp=BENCH[0], rack="QQ"), p.BAD_RACK),
    ("board + rack over the set", request(cgp=BENCH[1], rack="Q"), p.BAD_POSITION),
    (
        "a floating tile, empty centre",
        request(rows=["." * 15] * 3 + ["...CAT........."] + ["." * 15] * 11, rack="AB"),
        p.BAD_POSITION,
    ),
    (
        "two groups",
        request(cgp="15/15/15/15/15/15/15/7AT5/15/15/15/15/15/15/2QI11", rack="AB"),
        p.BAD_POSITION,
    ),
    ("limit 2**64-1", request(cgp=BENCH[0], limit=2**64 - 1), p.LIMIT_TOO_LARGE),
    ("limit over the cap", request(cgp=BENCH[0], limit=301), p.LIMIT_TOO_LARGE),
    (
        "10,000 positions",
        p.pack({"v": 1, "kind": "batch", "positions": [{"rows": ["A"]}] * 10_000}),
        p.BATCH_TOO_LARGE,
    ),
    (
        "51 positions, cap 50",
        p.pack(
            {"v": 1, "kind": "batch", "lexicon": "twl06", "positions": [{"cgp": BENCH[0]}] * 51}
        ),
        p.BATCH_TOO_LARGE,
    ),
    (
        "a result over the byte cap",
        p.pack(
            {"v": 1, "kind": "batch", "lexicon": "twl06", "positions": [{"cgp": BENCH[4]}] * 20}
        ),
        p.RESULT_TOO_LARGE,
    ),
    (
        "CGP names a lexicon not served",
        p.pack({"v": 1, "cgp": BENCH[0] + " lex NWL20;"}),
        p.UNKNOWN_LEXICON,
    ),
    ("CGP lexicon against the request's", request(cgp=BENCH[0] + " lex CSW21;"), p.BAD_POSITION),
    ("CGP letter distribution", request(cgp=BENCH[0] + " ld french;"), p.BAD_POSITION),
    ("CGP bingo bonus", request(cgp=BENCH[0] + " bb 35;"), p.BAD_POSITION),
    ("CGP unknown opcode", request(cgp=BENCH[0] + " xyz 1;"), p.BAD_POSITION),
]


def test_caps_through_a_live_worker(server, queue, workers):
    worker = workers(None, *CAPPED)
    client = AnalysisClient(server.url, queue=queue)
    jobs = [client.submit(payload) for _, payload, _ in CAP_CASES]
    for (name, _, code), job in zip(CAP_CASES, jobs, strict=True):
        result = client.result(job, timeout=30)
        assert not result["ok"] and result["error"]["code"] == code, (name, result)
        assert len(p.pack(result)) < 2000, name  # nothing stored beyond the error
    # No limit: the server's 300, with total counting every play and the cut flagged.
    result = client.analyze(request(cgp=BENCH[4]), timeout=30)
    assert result["ok"] and len(result["moves"]) == 300 and result["total"] == 5408
    assert result["truncated"] is True
    # A CGP's lex picks a served lexicon, matched without regard to case.
    result = client.analyze(p.pack({"v": 1, "cgp": BENCH[0] + " lex TWL06;"}), timeout=30)
    assert result["ok"] and result["total"] == 275
    assert worker.proc.poll() is None


def test_result_ttl_is_the_servers(server, queue, workers):
    workers(None, "--result-ttl", "7")
    client = AnalysisClient(server.url, queue=queue, result_ttl=86_400)
    job = client.submit(request(cgp=BENCH[0], limit=1))
    assert client.result(job, timeout=20)["ok"]
    ttl = server.client().ttl(f"rq:results:{job.id}")
    assert 0 < ttl <= 7


# -------------------------------------------------------------- timeouts
def test_a_job_past_the_servers_time_is_answered_timeout_once(server, queue, workers):
    """The client asks for an hour; the server allows 1 s. The answer is `timeout`, final
    (no retry: the same work would time out again), and the worker goes on."""
    worker = workers(None, "--max-job-seconds", "1")
    client = AnalysisClient(server.url, queue=queue, job_timeout=3600, retries=2)
    heavy = p.pack(
        {"v": 1, "kind": "batch", "lexicon": "twl06", "positions": [{"cgp": TWO_BLANKS}] * 200}
    )
    started = time.monotonic()
    result = client.analyze(heavy, timeout=30)
    assert time.monotonic() - started < 10
    assert not result["ok"] and result["error"]["code"] == p.TIMEOUT
    assert "1 s" in result["error"]["message"]
    # A client may ask for less than the server allows: 1 s of a 30 s cap.
    patient = workers(None, "--max-job-seconds", "30")
    client = AnalysisClient(server.url, queue=queue, job_timeout=1)
    assert client.analyze(heavy, timeout=30)["error"]["code"] == p.TIMEOUT
    assert worker.proc.poll() is None and patient.proc.poll() is None


def test_a_long_job_keeps_its_heartbeat_and_runs_once(server, queue, workers):
    """A job longer than the heartbeat TTL plus a maintenance round, with a second worker
    watching: it must not be declared abandoned and started again."""
    # Positions without a limit under a cap of one move: every play is searched and counted
    # (~20 ms each on two blanks; best-first would take ~0.03 ms), one is sent back: about
    # 18 s in all, well past the 10 s heartbeat TTL.
    first = workers("long-a", "--max-job-seconds", "120", "--max-moves", "1")
    client = AnalysisClient(server.url, queue=queue, job_timeout=120, retries=2)
    heavy = p.pack(
        {
            "v": 1,
            "kind": "batch",
            "lexicon": "twl06",
            "positions": [{"cgp": TWO_BLANKS}] * 900,
        }
    )
    job = client.submit(heavy)
    wait_until(lambda: first.current_job([job.id]), 20, "the first worker to take the job")
    second = workers("long-b", "--max-job-seconds", "120")
    result = client.result(job, timeout=120)
    assert result["ok"] and len(result["results"]) == 900
    # every play counted (two blanks: over 150,000), one sent: the cap, not best-first, ran
    assert {r["total"] for r in result["results"]} == {158_705}
    assert all(r["truncated"] and len(r["moves"]) == 1 for r in result["results"])
    entries = server.client().xrange(f"rq:results:{job.id}")
    assert [e[1][b"type"] for e in entries] == [b"1"]  # one success, no retry
    assert job.id not in second.log.read_text()


# ---------------------------------------------------------- restart by name
def test_a_fixed_name_restarts_at_once_after_sigkill(server, queue, workers, tmp_path):
    worker = workers("anchor-fixed-1")
    client = AnalysisClient(server.url, queue=queue)
    assert client.analyze(request(cgp=BENCH[0], limit=1), timeout=20)["ok"]
    worker.signal(signal.SIGKILL)
    worker.proc.wait(5)
    # As if it died while cleaning registries: RQ's lock would stop maintenance for 15 min.
    lock = f"rq:clean_registries:{queue}"
    server.client().set(lock, "anchor-fixed-1", ex=899)
    started = time.monotonic()
    again = workers("anchor-fixed-1")  # waits for registration (fails after 20 s)
    assert time.monotonic() - started < 15
    assert again.proc.poll() is None
    assert server.client().ttl(lock) <= 30  # gone, or a live worker's short lock
    assert client.analyze(request(cgp=BENCH[0], limit=1), timeout=20)["ok"]


def test_a_live_worker_keeps_its_name(server, queue, workers, tmp_path):
    """Taking over is only for the dead: a second worker under a live worker's name is
    refused with a clear error."""
    workers("anchor-fixed-2")
    twin = run_worker(
        server.url, "--queue", queue, "--name", "anchor-fixed-2", "--lexicon",
        f"twl06@english={TWL06}", "--burst", "--log-format", "text",
    )  # fmt: skip
    assert twin.returncode == 2 and "active worker named" in twin.stderr
    assert "Traceback" not in twin.stderr


def test_leaves_do_not_rename_the_worker(server, queue, workers):
    klv = data_path("kwg", "TWL06.klv2")
    worker = workers("named-with-leaves", "--leaves", f"twl06={klv}")
    assert worker.registered()  # registered under the name it was given
    client = AnalysisClient(server.url, queue=queue)
    result = client.analyze(request(cgp=BENCH[3], limit=3, rank="equity"), timeout=20)
    assert result["ok"] and len(result["equities"]) == 3


# ------------------------------------------------------------------ Redis full
def test_redis_full_is_an_error_the_client_sees_and_the_worker_survives(tmp_path, tmp_path_factory):
    full = RedisServer(tmp_path_factory.mktemp("redis-full"))
    try:
        r = full.client()
        r.config_set("maxmemory", str(r.info("memory")["used_memory"] + (8 << 20)))
        queue = f"q{uuid.uuid4().hex[:8]}"
        worker = WorkerProcess(full.url, queue, "full-worker", tmp_path)
        client = AnalysisClient(full.url, queue=queue)
        assert client.analyze(request(cgp=BENCH[0], limit=5), timeout=20)["ok"]
        waiting = client.submit(request(cgp=BENCH[2], limit=5))  # may or may not run first
        junk = 0

        def fill() -> None:
            nonlocal junk
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                while True:  # fill Redis to its maxmemory
                    r.set(f"junk:{junk}", b"x" * 4096)
                    junk += 1

        refused = None
        for _ in range(50):  # a write just under the line still lands: fill again
            fill()
            try:
                client.submit(request(cgp=BENCH[0], limit=5))
            except ServiceError as exc:
                refused = exc
                break
        assert refused is not None and refused.code == p.REDIS_FULL
        assert "full" in str(refused)
        time.sleep(4)  # maintenance and heartbeats meet OOM meanwhile
        assert worker.proc.poll() is None, worker.log.read_text()[-2000:]
        r.delete(*[f"junk:{i}" for i in range(junk)])
        later = client.analyze(request(cgp=BENCH[0], limit=5), timeout=60)
        assert later["ok"] and later["moves"][0][:2] == ["H10 (G)RILLS", 24]
        assert client.result(waiting, timeout=60)["ok"]  # not lost
        worker.stop()
    finally:
        full.stop()


# ------------------------------------------------------------------ lexica
def test_a_lexicon_rewritten_in_place_changes_nothing(server, queue, workers, tmp_path):
    live = tmp_path / "live.kwg"
    shutil.copyfile(TWL06, live)
    worker = workers(None, "--lexicon", f"live@english={live}")
    client = AnalysisClient(server.url, queue=queue)
    before = client.analyze(p.pack({"v": 1, "lexicon": "live", "cgp": BENCH[3]}), timeout=20)
    with open(live, "r+b") as fh:  # what `cp other.kwg live.kwg` does: truncate, refill
        fh.truncate(0)
        fh.write(b"\x00" * 64)
    after = client.analyze(p.pack({"v": 1, "lexicon": "live", "cgp": BENCH[3]}), timeout=20)
    assert after["ok"] and after["moves"] == before["moves"]
    assert worker.proc.poll() is None


def test_a_fifo_as_lexicon_is_refused_at_once(server, tmp_path):
    fifo = tmp_path / "lexicon.kwg"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = run_worker(server.url, "--lexicon", f"english={fifo}", "--burst")
    assert time.monotonic() - started < 30
    assert done.returncode == 2 and "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


# -------------------------------------------------------------------- fuzz
INTERESTING = [
    "",
    "0",
    "-1",
    "1",
    "2.0",
    "1e9",
    "nan",
    "30s",
    "9" * 30,
    "[0",
    "[]",
    "null",
    "{}",
    "queued",
    "finished",
    "2026-11-22T10:00:00Z",
    "\xff",
    "os.system",
    "-1e999",
]
FIELDS = [
    "origin",
    "status",
    "created_at",
    "enqueued_at",
    "started_at",
    "timeout",
    "result_ttl",
    "failure_ttl",
    "retries_left",
    "retry_intervals",
    "number_of_retries",
    "repeats_left",
    "dependency_ids",
    "meta",
    "description",
    "worker_name",
    "ttl",
    "group_id",
    "success_callback_name",
    "enqueue_at_front",
    "rate_limit_key",
]


def mutated_job(rng: random.Random, queue: str) -> dict:
    """A job hash one to three mutations away from a valid one."""
    job = {
        "data": msgpack.packb(
            ["worker.jobs.analyze", None, [request(cgp=BENCH[rng.randrange(6)], limit=1)], {}]
        ),
        "origin": queue,
        "status": "queued",
        "created_at": stamp(),
        "enqueued_at": stamp(),
        "timeout": "30",
        "result_ttl": "600",
        "failure_ttl": "600",
        "retries_left": "1",
    }
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.45:
            job[rng.choice(FIELDS)] = rng.choice(INTERESTING)
        elif kind < 0.55:
            job.pop(rng.choice(list(job)), None)
        elif kind < 0.85:
            data = bytearray(job.get("data") or b"\x90")
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            job["data"] = (
                bytes(data[: rng.randint(1, len(data))]) if rng.random() < 0.3 else bytes(data)
            )
        else:
            job["data"] = msgpack.packb(
                [rng.choice(["os.system", "eval", "worker.jobs", "x"]), None, [b"x"], {}]
            )
    return job


def test_mutation_fuzz_of_raw_jobs(server, queue, workers, tmp_path):
    """Thousands of mutated job hashes: each is answered (a result, or a failure with a
    reason) or, with no data to run, is dropped by RQ without harm; no worker dies and
    every well-formed job after them is answered right."""
    cases = int(os.environ.get("ANCHOR_FUZZ_JOBS", "2000"))
    alive = [workers(), workers()]
    r = server.client()
    rng = random.Random(20261123)
    ids = []
    with r.pipeline(transaction=False) as pipe:
        for _ in range(cases):
            job_id = uuid.uuid4().hex
            job = mutated_job(rng, queue)
            ids.append((job_id, "data" in job))
            pipe.hset(f"rq:job:{job_id}", mapping=job)
            pipe.rpush(f"rq:queue:{queue}", job_id)
        pipe.sadd("rq:queues", f"rq:queue:{queue}")
        pipe.execute()
    wait_until(
        lambda: r.llen(f"rq:queue:{queue}") == 0 and all(w.state() == "idle" for w in alive),
        300,
        "the fuzzed jobs to drain",
        interval=0.5,
    )
    time.sleep(1)
    unanswered = []
    for job_id, has_data in ids:
        if not has_data:
            continue
        status = r.hget(f"rq:job:{job_id}", "status")
        if not r.exists(f"rq:results:{job_id}") and status not in (b"finished", b"failed"):
            unanswered.append((job_id, status))
    assert unanswered == []
    assert all(w.proc.poll() is None for w in alive)
    client = AnalysisClient(server.url, queue=queue)
    assert client.analyze(request(cgp=BENCH[0]), timeout=30)["total"] == 275
