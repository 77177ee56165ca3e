"""The service with real parts: a redis-server started by the suite, `anchor worker`
processes, the client and the CLI. Faults: a worker killed mid-job, Redis restarted under
load, SIGTERM during a job; and the bad-input table through a live worker."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from random import Random

import pytest

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.engine import Ruleset, parse_cgp
from anchor.engine.legality import random_rack
from anchor.worker.runner import LexiconRegistry, run_request

from .conftest import ROOT, data_path
from .service import TWL06, RedisServer, WorkerProcess, free_port, run_worker, wait_until
from .test_protocol import BAD_INPUTS, ENGINE_ERRORS

pytestmark = pytest.mark.service  # not in `make test-fast` (pyproject: markers)

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
ENGLISH = Ruleset.load("english")
RACKS = [random_rack(parse_cgp(ENGLISH, BENCH[i % 6]).board, Random(i)) for i in range(24)]


@pytest.fixture(scope="module")
def local() -> LexiconRegistry:
    return LexiconRegistry({"twl06": str(TWL06)})


def position_requests(n: int) -> list[p.Request]:
    return [
        p.Request(
            lexicon="twl06",
            positions=(p.Position(cgp=BENCH[i % 6], rack=RACKS[i % 24], limit=5),),
        )
        for i in range(n)
    ]


def test_single_jobs_and_many(server, queue, workers, local):
    workers()
    client = AnalysisClient(server.url, queue=queue)
    req = p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),))
    result = client.analyze(req, timeout=20)
    assert result["ok"] and result["total"] == 275
    assert result["moves"] == run_request(req, local)["moves"]
    requests = position_requests(120)
    results = client.analyze_many(requests, timeout=60)
    expected = [run_request(r, local) for r in requests]
    assert [r["moves"] for r in results] == [e["moves"] for e in expected]


def test_bad_input_table_through_a_live_worker(server, queue, workers):
    worker = workers()
    client = AnalysisClient(server.url, queue=queue)
    cases = BAD_INPUTS + ENGINE_ERRORS
    jobs = [client.submit(payload) for _, payload, _ in cases]
    for (name, _, code), job in zip(cases, jobs, strict=True):
        result = client.result(job, timeout=30)
        assert not result["ok"] and result["error"]["code"] == code, name
        assert result["error"]["message"]
    later = client.analyze(
        p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[1]),)), timeout=20
    )
    assert later["ok"] and later["total"] == 94
    assert worker.proc.poll() is None  # still running
    log = worker.log.read_text().splitlines()
    assert all(json.loads(line) for line in log)  # structured logs, one JSON object a line


def test_cli_through_redis_prints_what_it_prints_in_process(server, queue, workers):
    workers()
    kwg = str(TWL06)
    base = [
        sys.executable,
        "-m",
        "anchor.client.cli",
        "analyze",
        "--cgp",
        BENCH[3],
        "--top",
        "25",
        "--json",
    ]
    remote = subprocess.run(
        base + ["--lexicon", "twl06", "--redis-url", server.url, "--queue", queue],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    here = subprocess.run(
        base + ["--lexicon", kwg],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert remote.returncode == 0, remote.stderr
    assert here.returncode == 0, here.stderr
    assert remote.stdout == here.stdout and len(json.loads(remote.stdout)) == 25


def test_sigkill_mid_job_every_job_still_answered(server, queue, workers, local):
    """A worker dies holding a job: another worker's maintenance requeues it (Retry) after
    the job timeout + margin, and the client sees exactly one result per job."""
    doomed = workers("doomed")
    workers("survivor")
    client = AnalysisClient(server.url, queue=queue, job_timeout=3, retries=2)
    heavy = p.Request(
        lexicon="twl06",
        batch=True,
        # no limit: every play searched (and counted), the server's cap of them sent
        positions=tuple(p.Position(cgp=BENCH[6]) for _ in range(25)),
    )
    requests = [heavy, heavy] + position_requests(150) + [heavy, heavy]
    submitted = time.monotonic()
    jobs = [client.submit(r) for r in requests]
    ids = [job.id for job in jobs]
    held = wait_until(
        lambda: doomed.current_job(ids[:2] + ids[-2:]), 30, "doomed to take a heavy job"
    )
    doomed.signal(signal.SIGKILL)
    killed_at = time.monotonic()
    doomed.proc.wait(5)
    results, recovered = [], {}
    for job in jobs:
        results.append(client.result(job, timeout=60))
        recovered[job.id] = time.monotonic()
    assert len(results) == len(requests) and all(r["ok"] for r in results)
    for req, res in zip(requests, results, strict=True):
        if req.batch:
            assert [r["total"] for r in res["results"]] == [158_705] * 25
        else:
            assert res["moves"] == run_request(req, local)["moves"]
    assert held in {job.id for job in jobs}
    print(
        f"\nabandoned job answered {recovered[held] - killed_at:.1f} s after the kill "
        f"({recovered[held] - submitted:.1f} s after submission)"
    )


def test_redis_restart_under_load(server, queue, workers, local):
    worker = workers()
    client = AnalysisClient(server.url, queue=queue, job_timeout=5)
    first = position_requests(60)
    jobs = [client.submit(r) for r in first]
    server.restart()
    jobs += [client.submit(r) for r in position_requests(60)]
    results = [client.result(job, timeout=90) for job in jobs]
    assert all(r["ok"] for r in results) and len(results) == 120
    assert worker.proc.poll() is None  # the worker reconnected rather than dying


def test_sigterm_finishes_the_current_job_then_exits(server, queue, workers):
    worker = workers()
    client = AnalysisClient(server.url, queue=queue, job_timeout=60)
    heavy = p.Request(  # every play of a two-blank rack, 40 times: ~1 s of work here,
        lexicon="twl06",  # long enough to be seen running on a much faster machine
        batch=True,
        positions=tuple(p.Position(cgp=BENCH[6]) for _ in range(40)),
    )
    job = client.submit(heavy)
    wait_until(lambda: worker.current_job([job.id]), 30, "the worker to take the job")
    worker.signal(signal.SIGTERM)
    result = client.result(job, timeout=60)
    assert result["ok"] and len(result["results"]) == 40
    assert worker.proc.wait(20) == 0
    after = client.submit(p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),)))
    time.sleep(1)
    assert client.connection.hget(f"rq:job:{after.id}", "status") == b"queued"


def test_metrics_endpoint(server, queue, workers):
    port = free_port()
    workers(None, "--metrics-port", str(port))
    client = AnalysisClient(server.url, queue=queue)
    client.analyze_many(position_requests(12), timeout=30)
    client.analyze(BAD_INPUTS[0][1], timeout=10)
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    values = {
        line.split()[0]: float(line.split()[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert values["anchor_jobs_done_total"] == 12
    assert values["anchor_jobs_invalid_total"] == 1
    assert values["anchor_positions_analysed_total"] == 12
    assert values["anchor_plays_generated_total"] > 0
    assert values['anchor_analysis_seconds_bucket{le="+Inf"}'] == 12
    assert values["process_resident_memory_bytes"] > 1 << 20
    assert "# HELP anchor_jobs_refused_total" in text and "_created" not in text


def test_worker_refuses_a_bad_lexicon_at_start(server, tmp_path):
    bad = tmp_path / "bad.kwg"
    bad.write_bytes(b"not a kwg file at all!!")
    done = run_worker(server.url, "--lexicon", f"english={bad}", "--burst")
    assert (
        done.returncode == 2
        and "not a usable KWG" in done.stderr
        and "Traceback" not in done.stderr
    )


def test_another_language_can_enqueue_with_plain_redis_commands(server, queue, workers):
    """Exactly the commands PROTOCOL.md gives, sent raw: no RQ, no client library."""
    import base64
    from datetime import datetime, timezone

    import msgpack

    workers()
    r = server.client()
    job_id = uuid.uuid4().hex
    request = msgpack.packb({"v": 1, "lexicon": "twl06", "cgp": BENCH[0], "limit": 2})
    data = msgpack.packb(["worker.jobs.analyze", None, [request], {}])
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    r.execute_command(
        "HSET",
        f"rq:job:{job_id}",
        "data",
        data,
        "origin",
        queue,
        "status",
        "queued",
        "created_at",
        stamp,
        "enqueued_at",
        stamp,
        "timeout",
        "30",
        "result_ttl",
        "3600",
        "failure_ttl",
        "3600",
        "retries_left",
        "2",
        "retry_intervals",
        "[0]",
        "description",
        "anchor analyze",
    )
    r.execute_command("SADD", "rq:queues", f"rq:queue:{queue}")
    r.execute_command("RPUSH", f"rq:queue:{queue}", job_id)
    reply = r.execute_command("XREAD", "BLOCK", "20000", "STREAMS", f"rq:results:{job_id}", "0-0")
    ((_stream, entries),) = reply
    _entry_id, fields = entries[-1]
    fields = (
        dict(zip(fields[::2], fields[1::2], strict=True)) if isinstance(fields, list) else fields
    )
    assert fields[b"type"] == b"1"  # successful
    result = msgpack.unpackb(base64.b64decode(fields[b"return_value"]), raw=False)
    assert result["ok"] and [m[0] for m in result["moves"]] == ["H10 (G)RILLS", "D9 G(A)RLICS"]


def test_password_protected_redis(tmp_path_factory, tmp_path):
    secured = RedisServer(tmp_path_factory.mktemp("redis-auth"), password="s3cr3t-pw")
    try:
        queue = f"q{uuid.uuid4().hex[:8]}"
        worker = WorkerProcess(secured.url, queue, "auth-worker", tmp_path)
        client = AnalysisClient(secured.url, queue=queue)
        result = client.analyze(
            p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[5]),)), timeout=20
        )
        assert result["ok"] and result["total"] == 330
        assert "s3cr3t-pw" not in worker.log.read_text()  # the URL is logged without it
        worker.stop()
        wrong = secured.url.replace("s3cr3t-pw", "wrong")
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "anchor.client.cli",
                    "worker",
                    "--redis-url",
                    wrong,
                    "--lexicon",
                    f"twl06@english={TWL06}",
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=20,
            )
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"hung: {exc.stderr!r} {exc.stdout!r}") from None
        assert done.returncode == 2 and "anchor worker: error:" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        secured.stop()


def test_selfplay_through_the_fleet_matches_in_process(server, queue, workers, tmp_path, capsys):
    from anchor.client.cli import main

    workers(None)
    workers(None)
    fleet, here = tmp_path / "fleet", tmp_path / "here"
    assert (
        main(
            [
                "selfplay",
                "--games",
                "12",
                "--seed",
                "40",
                "--games-per-job",
                "3",
                "--out",
                str(fleet),
                "--redis-url",
                server.url,
                "--queue",
                queue,
            ]
        )
        == 0
    )
    assert "via Redis" in capsys.readouterr().out
    assert main(["selfplay", "--games", "12", "--seed", "40", "--out", str(here)]) == 0
    names = sorted(f.name for f in fleet.glob("*.gcg"))
    assert len(names) == 12 and names == sorted(f.name for f in here.glob("*.gcg"))
    for name in names:
        assert (fleet / name).read_text() == (here / name).read_text()


def test_annotate_through_the_fleet_matches_in_process(server, queue, workers, tmp_path):
    from anchor.client.cli import main

    # what is compared is the annotation, not its speed: a game's job may take far past the
    # default 30 s cap when both cores are busy (boys2.gcg's endgames did, under load)
    workers(None, "--max-job-seconds", "600")
    workers(None, "--max-job-seconds", "600")
    games = data_path("gcg", "quackle")
    fleet, here = tmp_path / "fleet", tmp_path / "here"
    assert (
        main(
            [
                "annotate",
                str(games),
                "--out",
                str(fleet),
                "--lexicon",
                "twl06",
                "--no-progress",
                "--redis-url",
                server.url,
                "--queue",
                queue,
            ]
        )
        == 0
    )
    assert (
        main(["annotate", str(games), "--out", str(here), "--lexicon", str(TWL06), "--no-progress"])
        == 0
    )
    a = (fleet / "annotations.jsonl").read_text().splitlines()
    b = (here / "annotations.jsonl").read_text().splitlines()
    assert len(a) == 17 and a == b


def test_train_leaves_through_the_fleet(server, queue, workers, tmp_path, capsys):
    from anchor.client.cli import main
    from anchor.engine import Ruleset
    from anchor.engine.leaves import Leaves

    workers(None, "--lexicon", "russian")
    out = tmp_path / "ru.klv2"
    assert (
        main(
            [
                "train-leaves",
                "--ruleset",
                "russian",
                "--games",
                "40",
                "--iterations",
                "2",
                "--games-per-job",
                "10",
                "--max-leave",
                "2",
                "--out",
                str(out),
                "--redis-url",
                server.url,
                "--queue",
                queue,
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "iteration 1: 40 games (score players)" in text
    assert "iteration 2: 40 games (equity players)" in text
    leaves = Leaves.open(out, Ruleset.load("russian"))
    assert len(leaves) == 34 + 583
    assert leaves.value([0]) > 0  # a kept blank is worth points


def test_endgame_split_over_two_workers_gives_the_one_process_answer(server, queue, workers, local):
    """Real endgames (Macondo's test positions): the root's plays split over two workers,
    with the first play's value passed on as a floor, give one search's value and line."""
    from anchor.client import endgame

    workers()
    workers()
    client = AnalysisClient(server.url, queue=queue)
    wanted = {"line31", "line201", "line459", "line94"}
    cgps = {}
    for line in data_path("cgp", "macondo_test_cgp.jsonl").read_text().splitlines():
        entry = json.loads(line)
        cgp = " ".join(entry["cgp"].split()[:4])
        if entry["name"] in wanted and "/ " not in cgp and entry["name"] not in cgps:
            cgps[entry["name"]] = cgp
    assert set(cgps) == wanted
    for name, cgp in sorted(cgps.items()):
        request = p.EndgameRequest(cgp=cgp, lexicon="twl06")
        one = run_request(request, local)
        for parts in (2, 3):
            fleet = endgame.solve(client, request, parts=parts, timeout=120, split="root")
            assert fleet.exact and one["exact"], name
            assert (fleet.value, fleet.moves) == (one["value"], one["moves"]), (name, parts)
            assert fleet.parts == parts + 1
