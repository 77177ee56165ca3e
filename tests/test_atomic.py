"""worker.atomic: recorded writes run by one script, only while its condition holds, with
MULTI/EXEC's outcome (every command run, the first error raised after) and nothing written
by a full Redis. The service tests run the scripts on a real redis-server: fakeredis's Lua
is another implementation."""

from __future__ import annotations

import pytest
import redis
from fakeredis import FakeRedis
from redis.exceptions import OutOfMemoryError, ResponseError

from anchor.worker.atomic import (
    ALREADY_ANSWERED,
    BEAT,
    CLAIM,
    COUNTERS_REFUSED,
    STORE,
    recorder,
    run_if,
    run_script,
)

from .service import server  # noqa: F401 - the fixture


def _claim_writes(conn) -> object:
    pipe = recorder(conn)
    pipe.hset("job", "status", "started")
    pipe.lrem("lane", 1, "id")
    pipe.set("mark", "w1")
    return pipe


def _check_claim(conn) -> None:
    conn.flushall()
    assert not run_if(conn, CLAIM, ["lane", "job"], ["id"], _claim_writes(conn))  # not in the list
    assert conn.keys("*") == []
    conn.rpush("lane", "other", "id")
    assert run_if(conn, CLAIM, ["lane", "job"], ["id"], _claim_writes(conn))
    assert conn.lrange("lane", 0, -1) == [b"other"]
    assert conn.hget("job", "status") == b"started" and conn.get("mark") == b"w1"
    for final in ("finished", "failed", "started"):  # answered, or running elsewhere: dropped
        conn.hset("job", "status", final)
        conn.delete("mark")
        conn.rpush("lane", "id")
        answer = run_script(conn, CLAIM, ["lane", "job"], ["id"], _claim_writes(conn))
        assert answer == ALREADY_ANSWERED
        assert conn.lrange("lane", 0, -1) == [b"other"] and not conn.exists("mark")
        assert conn.hget("job", "status") == final.encode()


def _check_store(conn) -> None:
    conn.flushall()

    def writes():
        pipe = recorder(conn)
        pipe.hset("job", "status", "finished")
        pipe.xadd("results", {"v": b"\x00\xff"})
        pipe.zrem("started", "w1:e1")
        return pipe

    owner = ["w1", "2026-11-29T10:00:00.000001Z", "started"]
    assert not run_if(conn, STORE, ["job"], owner, writes())  # no such job
    conn.hset("job", mapping={"status": "started", "worker_name": "w2", "started_at": owner[1]})
    assert not run_if(conn, STORE, ["job"], owner, writes())  # another's
    conn.hset("job", mapping={"worker_name": "w1", "started_at": "2026-11-29T10:00:09.0Z"})
    assert not run_if(conn, STORE, ["job"], owner, writes())  # an execution after this one
    conn.hset("job", mapping={"status": "queued", "started_at": owner[1]})
    assert not run_if(conn, STORE, ["job"], owner, writes())  # taken over: requeued
    assert conn.xlen("results") == 0
    conn.hset("job", "status", "started")
    assert run_if(conn, STORE, ["job"], owner, writes())  # no registry entry needed
    assert conn.hget("job", "status") == b"finished"
    assert conn.xrange("results")[0][1] == {b"v": b"\x00\xff"}  # bytes kept as they are


START = "2026-11-29T10:00:00.000001Z"
BEAT_KEYS = ["job", "wip", "worker", "worker:executions", "execution", "job:executions"]


def _beat(conn, now: float = 1000.0) -> int:
    args = ["w1", START, "w1:e1", "e1", 10, 70, repr(now), "2026-11-29T10:16:40.0Z", "started"]
    return run_script(conn, BEAT, BEAT_KEYS, args)


def _check_beat(conn) -> None:
    """The job's registry entry, the worker's and the execution's keys renewed while the
    job is this execution's; an entry a stranger deleted written back; none for a job
    taken over."""
    conn.flushall()
    conn.hset("job", mapping={"status": "started", "worker_name": "w1", "started_at": START})
    conn.hset("worker", "birth", "x")
    conn.hset("execution", "id", "e1")
    conn.zadd("wip", {"w1:e1": 1})
    conn.zadd("job:executions", {"e1": 1})
    assert _beat(conn) == 1
    assert conn.zscore("wip", "w1:e1") == 1010 and conn.zscore("job:executions", "e1") == 1070
    assert conn.ttl("worker") == 70 and conn.ttl("execution") == 10
    assert conn.hget("worker", "last_heartbeat") == conn.hget("job", "last_heartbeat")
    conn.delete("wip")  # a stranger's DEL rq:wip:<queue>
    assert _beat(conn, 1002.0) == 1 and conn.zscore("wip", "w1:e1") == 1012
    conn.hset("job", "status", "queued")  # requeued by a peer: no entry comes back
    conn.delete("wip")
    assert _beat(conn) == 0 and not conn.exists("wip")
    conn.delete("execution")  # never recreated holding a heartbeat alone
    conn.hset("job", "status", "started")
    assert _beat(conn) == 1 and not conn.exists("execution")


def _check_counters(conn) -> None:
    """HINCRBY/HINCRBYFLOAT on the named counters' hash are best effort: one Redis cannot
    do is skipped, the rest written, the answer says so; on any other key an error."""
    conn.flushall()
    conn.hset("job", mapping={"status": "started", "worker_name": "w1", "started_at": START})
    conn.hset("worker", mapping={"n": "x", "t": "inf"})
    owner = ["w1", START, "started"]
    pipe = recorder(conn)
    pipe.hset("job", "status", "finished")
    pipe.hincrby("worker", "n", 1)
    pipe.hincrbyfloat("worker", "t", 1.5)
    pipe.hset("job", "after", 1)
    assert run_script(conn, STORE, ["job"], owner, pipe, "worker") == COUNTERS_REFUSED
    assert conn.hget("job", "status") == b"finished" and conn.hget("job", "after") == b"1"
    conn.hset("job", "status", "started")
    pipe = recorder(conn)
    pipe.hset("job", "status", "finished")
    pipe.hincrby("worker", "n", 1)
    with pytest.raises(ResponseError):  # not the counters' hash: an error, as before
        run_script(conn, STORE, ["job"], owner, pipe, "elsewhere")


def _check_errors(conn) -> None:
    """A later command's error: the others still run, the error comes after (as EXEC
    reports it). The first command's: nothing runs."""
    conn.flushall()
    conn.rpush("lane", "id")
    conn.set("a string", "x")
    pipe = recorder(conn)
    pipe.set("before", 1)
    pipe.lpush("a string", "y")  # WRONGTYPE
    pipe.set("after", 1)
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        run_if(conn, CLAIM, ["lane", "job"], ["id"], pipe)
    assert conn.get("before") == b"1" and conn.get("after") == b"1"
    conn.delete("before", "after")
    pipe = recorder(conn)
    pipe.lpush("a string", "y")
    pipe.set("after", 1)
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        run_if(conn, CLAIM, ["lane", "job"], ["id"], pipe)
    assert not conn.exists("after")


def test_scripts_on_fakeredis():
    conn = FakeRedis()
    _check_claim(conn)
    _check_store(conn)
    _check_beat(conn)
    _check_counters(conn)
    _check_errors(conn)


@pytest.mark.service
def test_scripts_on_redis(server):  # noqa: F811
    conn = redis.Redis.from_url(server.url)
    conn.script_flush()  # the first call finds no script and sends its text
    _check_claim(conn)
    _check_store(conn)
    _check_beat(conn)
    _check_counters(conn)
    _check_errors(conn)


@pytest.mark.service
def test_a_full_redis_writes_nothing(server):  # noqa: F811
    """maxmemory reached: the script is refused at its first write, so no part of a claim
    or a store lands (the worker retries it whole once Redis has room)."""
    conn = redis.Redis.from_url(server.url)
    conn.flushall()
    conn.rpush("lane", "id")
    for n in range(500):
        conn.set(f"fill{n}", "x" * 4096)
    try:  # well past the limit: no command's passing buffers take it back under
        conn.config_set("maxmemory", str(conn.info("memory")["used_memory"] - (512 << 10)))
        with pytest.raises(OutOfMemoryError):
            conn.set("one more", "x")
        for first in ("set", "del"):  # a first command that grows, one that frees
            pipe = recorder(conn)
            if first == "del":
                pipe.delete("nothing here")
            pipe.set("mark", "w1")
            pipe.lrem("lane", 1, "id")
            pipe.hset("job", "status", "started")
            try:
                run_if(conn, CLAIM, ["lane", "job"], ["id"], pipe)
            except OutOfMemoryError:
                assert not conn.exists("mark") and conn.llen("lane") == 1
            else:  # a first write that took: Redis lets the rest through, all of it
                assert first == "del"
                assert conn.get("mark") == b"w1" and conn.llen("lane") == 0
                assert conn.hget("job", "status") == b"started"
    finally:
        conn.config_set("maxmemory", "0")
        conn.flushall()


@pytest.mark.service
def test_a_full_redis_still_takes_a_running_jobs_heartbeat(server):  # noqa: F811
    """A full Redis refused RQ's heartbeat (a MULTI holding HSET and ZADD), the job's
    registry entry ran out and a peer requeued or failed a running job (issue 46)."""
    conn = redis.Redis.from_url(server.url)
    conn.flushall()
    conn.hset("job", mapping={"status": "started", "worker_name": "w1", "started_at": START})
    conn.hset("worker", "birth", "x")
    conn.zadd("wip", {"w1:e1": 1})
    for n in range(500):
        conn.set(f"fill{n}", "x" * 4096)
    try:
        conn.config_set("maxmemory", str(conn.info("memory")["used_memory"] - (512 << 10)))
        with pytest.raises(OutOfMemoryError):
            conn.zadd("wip", {"w1:e1": 5})
        assert _beat(conn, 2000.0) == 1
        assert conn.zscore("wip", "w1:e1") == 2010
    finally:
        conn.config_set("maxmemory", "0")
        conn.flushall()
