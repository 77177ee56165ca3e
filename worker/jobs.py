"""The job functions RQ calls. Enqueued by name ("worker.jobs.analyze"), so clients never
import this module. Lexica are preloaded into REGISTRY before the worker takes a job."""

from __future__ import annotations

import logging
import time

from client import protocol as p
from client.analysis import LexiconRegistry, run_request
from client.serializer import MsgpackSerializer

from .metrics import METRICS

log = logging.getLogger("anchor.jobs")
REGISTRY = LexiconRegistry()


def analyze(payload: bytes) -> dict:
    """One request (single position or batch) as msgpack bytes -> a result map.

    Bad requests become error results (the client reads the code and message; the worker
    goes on). Only a result msgpack cannot pack fails the job, loudly.
    """
    started = time.perf_counter()
    try:
        request = p.decode_request(payload)
        result = run_request(request, REGISTRY)
    except p.ProtocolError as exc:
        METRICS.inc("anchor_jobs_invalid_total")
        log.info("invalid request", extra={"code": exc.code, "error": exc.message})
        return exc.to_result()
    except Exception:  # an engine bug must not take the worker down
        log.exception("analysis failed")
        METRICS.inc("anchor_jobs_failed_total")
        return p.error_result(p.INTERNAL, "the engine failed on this request; it has been logged")
    # A TypeError here fails the job instead of RQ storing a placeholder string.
    MsgpackSerializer.pack_result(result)
    positions, plays = _work_done(result)
    METRICS.inc("anchor_jobs_done_total")
    METRICS.inc("anchor_positions_analysed_total", positions)
    METRICS.inc("anchor_plays_generated_total", plays)
    METRICS.observe(time.perf_counter() - started)
    return result


def _work_done(result: dict) -> tuple[int, int]:
    """(positions analysed, plays generated) by a request, whichever kind it was."""
    if "annotation" in result:
        turns = result["annotation"]["turns"]
        analysed = [t for t in turns if t.get("analysed")]
        return len(analysed), sum(t["total_plays"] for t in analysed)
    if "games" in result:
        return sum(g["turns"] for g in result["games"]), sum(g["plays"] for g in result["games"])
    singles = result["results"] if "results" in result else [result]
    return len(singles), sum(r.get("total", 0) for r in singles)
