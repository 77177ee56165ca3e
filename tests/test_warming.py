"""worker/warming.py: what a parent runs before forking its workers. Each pair's job must
be a real analysis (an error result would warm only the error path), nothing it does may
reach the worker's own counters, and neither a Redis that is away nor a job that fails may
stop the workers from starting."""

from __future__ import annotations

import logging
import socket

import pytest
from redis import Redis

from anchor.client import protocol as p
from anchor.client.protocol.wire import unpack
from anchor.dictionaries.lexica import lexicon_path
from anchor.worker import warming
from anchor.worker.metrics import METRICS
from anchor.worker.registry import LexiconRegistry

from .service import server  # noqa: F401  (a real redis-server for the ping)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the block ends: nothing listens there


@pytest.fixture
def away() -> Redis:
    return Redis(host="127.0.0.1", port=_closed_port(), socket_connect_timeout=5)


def test_each_pair_runs_an_analysis_that_finds_plays(monkeypatch, away):
    pairs = [("english", "english"), ("russian", "russian"), ("erudit", "erudit")]
    registry = LexiconRegistry({name: str(lexicon_path(name)) for _, name in pairs})
    answers = []

    def recorded(payload, context):
        packed = warming_analyze(payload, context)
        answers.append((p.decode_request(payload), unpack(packed)))
        return packed

    warming_analyze = warming.analyze
    monkeypatch.setattr(warming, "analyze", recorded)
    done = METRICS.value("anchor_jobs_done_total")
    warming.warm(registry, p.Limits.unbounded(), pairs, away)
    assert [(r.ruleset, r.lexicon) for r, _ in answers] == pairs
    for request, result in answers:
        assert "error" not in result, result
        assert result["moves"], f"{request.ruleset}: the warming rack found no play"
    assert METRICS.value("anchor_jobs_done_total") == done  # its counters were its own
    assert away.connection_pool._created_connections == 0  # the ping used a pool of its own


def test_a_failing_job_is_logged_and_the_rest_go_on(monkeypatch, away, caplog):
    registry = LexiconRegistry({"english": str(lexicon_path("english"))})
    calls = []

    def broken(payload, context):
        calls.append(p.decode_request(payload).lexicon)
        if len(calls) == 1:
            raise RuntimeError("engine down")
        return warming_analyze(payload, context)

    warming_analyze = warming.analyze
    monkeypatch.setattr(warming, "analyze", broken)
    with caplog.at_level(logging.WARNING, logger="anchor.worker"):
        warming.warm(registry, p.Limits.unbounded(), [("english", "english")] * 2, away)
    assert calls == ["english", "english"]
    assert any("warming before fork failed" in r.getMessage() for r in caplog.records)


def test_a_lexicon_the_registry_lacks_is_an_error_result_not_a_raise(away):
    warming.warm(LexiconRegistry({}), p.Limits.unbounded(), [("english", "nosuch")], away)


@pytest.mark.service
def test_the_ping_reaches_a_real_redis_and_leaves_no_connection(server):  # noqa: F811
    watcher = Redis.from_url(server.url)
    before = watcher.info("stats")["total_connections_received"]
    parent = Redis.from_url(server.url)  # the parent's own connection, not used for the ping
    warming.warm(LexiconRegistry({}), p.Limits.unbounded(), [], parent)
    assert watcher.info("stats")["total_connections_received"] == before + 1
    assert watcher.info("clients")["connected_clients"] == 1  # the watcher alone
    assert parent.connection_pool._created_connections == 0
