"""The Redis users a deployment runs with (client/protocol/acl.py, deploy/users.acl): on a
real redis-server loading them, the service works end to end with a client user and a
worker user, and a client user cannot stop workers, touch the registries, a pool's shared
values, results, registrations or the server (issue 46)."""

from __future__ import annotations

import json
import secrets

import pytest
import redis
from redis.exceptions import AuthenticationError, NoPermissionError

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.protocol.acl import ADMIN, CLIENT, PLACEHOLDERS, USERS, WORKER, acl_file
from anchor.client.simulation import SimulationJob, simulate
from anchor.engine import Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.simulate import Simulation

from .conftest import ROOT, data_path
from .service import TWL06, RedisServer, WorkerProcess, run_worker

pytestmark = pytest.mark.service

PASSWORDS = {user.name: secrets.token_hex(16) for user in USERS}
QUEUE = "acl"  # the client user may push on this queue's lanes only
CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADEIOST/ 148/55 0"
KLV2 = data_path("kwg", "TWL06.klv2")
BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    server = RedisServer(
        tmp_path_factory.mktemp("redis-acl"),
        password=PASSWORDS[ADMIN.name],
        acl=acl_file(PASSWORDS, queues=(QUEUE,)),
    )
    yield server
    server.stop()


def url(server: RedisServer, user) -> str:
    return server.url_of(user.name, PASSWORDS[user.name])


def analyze(cgp: str) -> p.Request:
    return p.Request(lexicon="twl06", positions=(p.Position(cgp=cgp, limit=3),))


def test_the_deployed_acl_file_is_the_protocols():
    """deploy/users.acl is acl_file() with placeholders the deployment fills in."""
    assert (ROOT / "deploy" / "users.acl").read_text() == acl_file(PLACEHOLDERS)


def test_the_service_works_with_a_client_user_and_a_worker_user(
    secured, tmp_path, magpie_twl06, english
):
    from anchor.client import endgame

    queue = QUEUE
    leaves = ("--leaves", f"twl06={KLV2}")
    first = WorkerProcess(url(secured, WORKER), queue, "acl-a", tmp_path, *leaves)
    second = WorkerProcess(url(secured, WORKER), queue, "acl-b", tmp_path, *leaves)
    client = AnalysisClient(url(secured, CLIENT), queue=queue)
    assert client.capacity() == 2
    one = client.analyze(analyze(BENCH[0]), timeout=30)
    assert one["ok"] and len(one["moves"]) == 3
    many = client.analyze_many([analyze(BENCH[i % 6]) for i in range(80)], timeout=60)
    assert all(r["ok"] for r in many)  # 80: read by XREVRANGE in pipelines, not XREAD
    settings = Simulation(candidates=4, plies=2, iterations=40, seed=11, round_size=20)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    pooled = simulate(client, job, settings, progress=True)  # the pool's progress read
    solver = Solver(magpie_twl06, english)
    position = parse_cgp(english, CGP)
    leaves_file = Leaves.open(KLV2, english)
    assert pooled == settings.run(solver, position.board, "ADEIOST", leaves_file, lead=93)
    cgp = None
    for line in data_path("cgp", "macondo_test_cgp.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry["name"] == "line31":
            cgp = " ".join(entry["cgp"].split()[:4])
            break
    solved = endgame.solve(client, p.EndgameRequest(cgp=cgp, lexicon="twl06"), parts=2)
    assert solved.exact
    text = first.log.read_text() + second.log.read_text()
    assert "no permissions" not in text and "not supported" not in text
    first.stop()
    second.stop()


def refused(call, *args) -> None:
    with pytest.raises(NoPermissionError):
        call(*args)


def test_a_client_user_cannot_reach_what_workers_trust(secured):
    c = redis.Redis.from_url(url(secured, CLIENT))
    lane = f"rq:queue:{QUEUE}"
    # what it is for: write a job, push its id, read its result and the workers' count
    c.hset("rq:job:mine", mapping={"status": "queued"})
    c.rpush(lane, "mine")
    c.rpush(f"{lane}:batch", "mine")
    c.sadd("rq:queues", lane)
    assert c.xrevrange("rq:results:mine", count=1) == []
    assert c.scard(f"rq:workers:{QUEUE}") == 0
    c.set("anchor:pool:p:0123:stop", 1, ex=60)
    # wipe or block the lanes and the list of queues (a worker removes a key of the
    # wrong type, and every id in it), push on another queue or the intermediate list
    refused(c.set, lane, "x")
    refused(c.expire, lane, 0)
    refused(c.set, "rq:queues", "x")
    refused(c.rpush, f"{lane}:intermediate", "junk")
    refused(c.hset, f"{lane}:intermediate:seen", "x", "0")
    refused(c.rpush, "rq:queue:elsewhere", "mine")
    refused(c.set, "rq:job:other", "x")  # a job's key as another type
    refused(c.expire, "rq:job:mine", 0)
    # stop the workers: no channel at all
    refused(c.publish, "rq:pubsub:acl-a", json.dumps({"command": "shutdown"}))
    # learn other jobs' ids: lanes, registries, the queues, keys
    refused(c.lrange, lane, 0, -1)
    refused(c.lpop, lane)
    refused(c.smembers, "rq:queues")
    refused(c.zrange, "rq:wip:anchor", 0, -1)
    refused(c.keys, "*")
    refused(c.scan)
    # the registries, a result, a registration
    refused(c.zadd, "rq:wip:anchor", {"x": 1})
    refused(c.delete, "rq:wip:anchor")
    refused(c.zrem, "rq:finished:anchor", "x")
    refused(c.xadd, "rq:results:mine", {"type": "1"})
    refused(c.sadd, "rq:workers:anchor", "rq:worker:fake")
    refused(c.sadd, "rq:workers", "rq:worker:fake")
    refused(c.hset, "rq:worker:fake", "birth", "x")
    refused(c.delete, "rq:job:mine")
    # a pool's shared values and claims, the workers' own keys
    refused(c.xadd, "anchor:pool:p:0123", {"r": 0, "i": 0, "b": b"x"})
    refused(c.set, "anchor:pool:p:0123", "x")
    refused(c.hincrby, "anchor:pool:p:0123:claims", "0", -1000)
    refused(c.get, "anchor:claim:x")
    refused(c.get, "anchor:workers:key")
    # scripts and the server
    refused(c.eval, "return 1", 0)
    refused(c.flushall)
    refused(c.config_get, "*")
    refused(c.execute_command, "ACL", "LIST")
    refused(c.execute_command, "CLIENT", "KILL", "TYPE", "normal")
    refused(c.execute_command, "SHUTDOWN")
    # the worker user: its keys, nothing that reconfigures or flushes the server
    w = redis.Redis.from_url(url(secured, WORKER))
    refused(w.flushall)
    refused(w.config_set, "maxmemory", "1")
    refused(w.publish, "rq:pubsub:acl-a", "x")
    refused(w.set, "elsewhere", 1)
    # no login, no service
    with pytest.raises((AuthenticationError, NoPermissionError)):
        redis.Redis(port=secured.port).ping()


def test_a_worker_given_the_client_user_says_so_and_exits(secured):
    done = run_worker(url(secured, CLIENT), "--lexicon", f"twl06@english={TWL06}", "--burst")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        f"the rules of {WORKER.name}" in done.stderr and PASSWORDS[CLIENT.name] not in done.stderr
    )


def test_a_restart_keeps_what_transactions_and_scripts_wrote(secured, tmp_path):
    """With the default user holding no permission, Redis replayed the append-only file's
    transactions (RQ's enqueue, every script) as it and dropped them all at a restart:
    the queue, the jobs and their results were lost (redis/redis#14541)."""
    worker = WorkerProcess(url(secured, WORKER), QUEUE, "acl-aof", tmp_path)
    client = AnalysisClient(url(secured, CLIENT), queue=QUEUE)
    answered = client.submit(analyze(BENCH[0]))
    assert client.result(answered, timeout=30)["ok"]
    worker.stop()
    queued = client.submit(analyze(BENCH[1]))  # enqueued in MULTI/EXEC, nobody to run it
    secured.restart()
    admin = secured.client()
    assert admin.hget(f"rq:job:{answered.id}", "status") == b"finished"
    assert admin.xlen(f"rq:results:{answered.id}") == 1  # written by the store's script
    assert admin.lrange(f"rq:queue:{QUEUE}", 0, -1) == [queued.id.encode()]
    worker = WorkerProcess(url(secured, WORKER), QUEUE, "acl-aof", tmp_path)
    assert client.result(queued, timeout=30)["ok"]
    worker.stop()
