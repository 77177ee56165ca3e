"""The job functions a worker runs. Enqueued by name ("anchor.worker.jobs.analyze"), so clients
never import this module; worker.guard maps that name to `analyze` (nothing is imported by
a name read from Redis) and binds the worker's `JobContext` to it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from rq.timeouts import JobTimeoutException

from anchor.client import protocol as p
from anchor.client.protocol.serializer import Packed
from anchor.engine.peers import Peer

from .exchange import Pools
from .metrics import Metrics
from .runner import Deadline, LexiconRegistry, run

log = logging.getLogger("anchor.jobs")


@dataclass(frozen=True, slots=True)
class JobContext:
    """What a job runs with: the worker's lexica, its caps, and the seconds this job has
    (the job's own timeout or the server's cap, whichever is less)."""

    registry: LexiconRegistry
    limits: p.Limits
    metrics: Metrics  # the worker's counters
    seconds: float | None = None
    pools: Pools | None = None  # where pooled simulations meet: the worker's Redis
    peer: Peer | None = None  # endgames searched with the other workers forked alongside


def analyze(payload: bytes, context: JobContext) -> Packed:
    """One request (position, batch, self-play, annotation or simulation) as msgpack bytes ->
    the packed result map.

    Bad requests, and requests over the server's caps, become error results (the client
    reads the code and message; the worker goes on). Only a result msgpack cannot pack
    fails the job, loudly.
    """
    started = time.perf_counter()
    limits = context.limits
    metrics = context.metrics
    try:
        request = p.decode_request(payload, limits)
        result = run(
            request, context.registry, limits, Deadline(context.seconds), context.pools,
            context.peer,
        )  # fmt: skip
    except p.ProtocolError as exc:
        if exc.code == p.TIMEOUT:  # the request was sound: it needed more time than it had
            metrics.inc("anchor_jobs_timed_out_total")
            log.info("request out of time", extra={"error": exc.message})
        else:
            metrics.inc("anchor_jobs_invalid_total")
            log.info("invalid request", extra={"code": exc.code, "error": exc.message})
        return Packed(p.pack(exc.to_result()))
    except MemoryError:
        log.warning("request ran out of memory")
        metrics.inc("anchor_jobs_failed_total")
        return _error(p.RESULT_TOO_LARGE, "the request needed more memory than this worker has")
    except JobTimeoutException:  # RQ's alarm, a backstop a little past the deadline
        metrics.inc("anchor_jobs_timed_out_total")
        return Packed(p.pack(Deadline(context.seconds).expired().to_result()))
    except Exception:  # an engine bug must not take the worker down
        log.exception("analysis failed")
        metrics.inc("anchor_jobs_failed_total")
        return _error(p.INTERNAL, "the engine failed on this request; it has been logged")
    packed = Packed(p.pack(result.to_wire((time.perf_counter() - started) * 1e6)))
    # (a TypeError there fails the job loudly)
    if limits.result_bytes is not None and len(packed) > limits.result_bytes:
        metrics.inc("anchor_jobs_invalid_total")
        return _error(
            p.RESULT_TOO_LARGE,
            f"the result is {len(packed):,} bytes, over this server's cap of "
            f"{limits.result_bytes:,}; ask for fewer moves or positions",
        )
    positions, plays = _work_done(result)
    metrics.inc("anchor_jobs_done_total")
    metrics.inc("anchor_positions_analysed_total", positions)
    metrics.inc("anchor_plays_generated_total", plays)
    metrics.observe(time.perf_counter() - started)
    return packed


def _error(code: str, message: str) -> Packed:
    return Packed(p.pack(p.error_result(code, message)))


def _work_done(result: p.Result) -> tuple[int, int]:
    """(positions analysed, plays generated) by a request, whichever kind it was."""
    if isinstance(result, p.AnnotateResult):
        analysed = result.analysed_turns()
        return len(analysed), sum(t["total_plays"] for t in analysed)
    if isinstance(result, p.SelfPlayResult):
        return sum(g.turns for g in result.games), sum(g.plays for g in result.games)
    if isinstance(result, p.Batch | p.Analysis):
        singles = result.results if isinstance(result, p.Batch) else (result,)
        done = [r for r in singles if isinstance(r, p.Analysis)]
        return len(singles), sum(len(r.moves) if r.total is None else r.total for r in done)
    return 1, 0  # a simulation's or an endgame's work is not counted in plays
