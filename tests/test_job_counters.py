"""worker/jobs.py's counters: a request out of time is counted apart from bad input (an
operator raising a time cap and one chasing a broken client look at different numbers)."""

from __future__ import annotations

import pytest
from rq.timeouts import JobTimeoutException

from anchor.client import protocol as p
from anchor.worker import jobs
from anchor.worker.metrics import Metrics
from anchor.worker.registry import LexiconRegistry

from .conftest import data_path


@pytest.fixture
def context() -> jobs.JobContext:
    registry = LexiconRegistry({"twl06": str(data_path("kwg", "TWL06.kwg"))})
    return jobs.JobContext(registry, p.Limits.unbounded(), Metrics(), seconds=30)


def payload() -> bytes:
    cgp = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
    return p.encode_request(p.Request(lexicon="twl06", positions=(p.Position(cgp=cgp),)))


def counts(context) -> tuple[float, float, float]:
    m = context.metrics
    return tuple(
        m.value(n) for n in ("anchor_jobs_timed_out", "anchor_jobs_invalid", "anchor_jobs_done")
    )


@pytest.mark.parametrize(
    "raised",
    [p.ProtocolError(p.TIMEOUT, "out of time"), JobTimeoutException("RQ's alarm")],
    ids=["the engine's limit", "RQ's backstop"],
)
def test_a_request_out_of_time_is_counted_as_such(context, monkeypatch, raised):
    def late(*_args, **_kwargs):
        raise raised

    monkeypatch.setattr(jobs, "run", late)
    answer = p.unpack(jobs.analyze(payload(), context))
    assert answer["error"]["code"] == p.TIMEOUT
    assert counts(context) == (1, 0, 0)


def test_bad_input_and_a_good_answer_are_counted_as_before(context):
    assert "error" in p.unpack(jobs.analyze(b"\x81\xa1v\x07", context))  # version 7
    assert "error" not in p.unpack(jobs.analyze(payload(), context))
    assert counts(context) == (0, 1, 1)
