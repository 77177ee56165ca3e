"""`anchor worker`: open the lexica, then take jobs from the queue until told to stop.

Built on RQ's SimpleWorker: jobs run in the worker process (no fork per job, which costs
~10 ms here; see BENCHMARKS.md), so lexica are mapped once and metrics persist.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Queue, SimpleWorker

from client.analysis import LexiconRegistry
from client.lexica import lexicon_path
from client.serializer import MsgpackSerializer
from engine.rules import builtin_names

from . import jobs, logs
from .metrics import METRICS, serve

log = logging.getLogger("anchor.worker")
HEARTBEAT_MARGIN = 5  # seconds beyond the job timeout before a silent job is abandoned


class AnchorWorker(SimpleWorker):
    """SimpleWorker that counts failures and retries, and whose jobs are declared
    abandoned soon after their timeout (RQ's default adds 60 s), so that a job held by a
    machine that died is retried within about timeout + margin + maintenance interval."""

    @property
    def dequeue_timeout(self) -> int:
        # RQ blocks on an empty queue for worker_ttl - 15 s (405 s) and only cleans
        # registries between waits; wake at least every maintenance interval instead.
        return max(1, min(int(self.maintenance_interval), self.worker_ttl - 15))

    stopping = False  # set by SIGTERM/SIGINT: work() returning then means "exit"

    def request_stop(self, signum, frame):
        self.stopping = True
        return super().request_stop(signum, frame)

    def get_heartbeat_ttl(self, job, working_time: float = 0.0) -> int:
        timeout = job.timeout if job.timeout and job.timeout > 0 else 60
        return int(timeout) + HEARTBEAT_MARGIN

    def handle_job_failure(
        self, job, queue, started_job_registry=None, exc_string="", execution=None
    ):
        retrying = bool(job.retries_left)
        METRICS.inc("anchor_jobs_retried_total" if retrying else "anchor_jobs_failed_total")
        log.warning(
            "job failed", extra={"job": job.id, "retrying": retrying, "error": exc_string[-500:]}
        )
        return super().handle_job_failure(job, queue, started_job_registry, exc_string, execution)


@dataclass(frozen=True)
class LexiconSpec:
    name: str
    ruleset: str
    path: str


def parse_lexicon_spec(text: str) -> LexiconSpec:
    """NAME=PATH, NAME@RULESET=PATH, or a bare NAME found like the CLI finds lexica.
    The ruleset defaults to NAME when NAME is a built-in ruleset, else english."""
    head, sep, path = text.partition("=")
    name, _, ruleset = head.partition("@")
    if not name:
        raise ValueError(f"bad --lexicon {text!r}: expected NAME=PATH")
    ruleset = ruleset or (name if name in builtin_names() else "english")
    if ruleset not in builtin_names():
        raise ValueError(f"bad --lexicon {text!r}: unknown ruleset {ruleset!r}")
    if not sep:
        path = str(lexicon_path(name))
    return LexiconSpec(name, ruleset, path)


def build_worker(
    redis_url: str,
    queues: list[str],
    lexica: list[LexiconSpec],
    name: str | None = None,
    maintenance_interval: int = 10,
    connection=None,
    leave_paths: dict[str, str] | None = None,
) -> AnchorWorker:
    """Open every lexicon (mmap) and connect; the worker takes no job before this."""
    registry = LexiconRegistry(
        {spec.name: spec.path for spec in lexica},
        leave_paths=dict(leave_paths or {}),
    )
    solvers = registry.preload([(spec.ruleset, spec.name) for spec in lexica])
    for name in leave_paths or {}:  # open (and check) leave files before any job too
        ruleset = next((s.ruleset for s in lexica if s.name == name), "english")
        registry.leaves(ruleset, name, name)
    jobs.REGISTRY = registry
    for spec, solver in zip(lexica, solvers, strict=True):
        log.info(
            "lexicon ready",
            extra={
                "lexicon": spec.name,
                "ruleset": spec.ruleset,
                "path": spec.path,
                "words": len(solver.lexicon),
            },
        )
    if connection is None:
        connection = Redis.from_url(redis_url, health_check_interval=30, socket_keepalive=True)
    serializer = MsgpackSerializer
    return AnchorWorker(
        [Queue(q, connection=connection, serializer=serializer) for q in queues],
        connection=connection,
        serializer=serializer,
        name=name,
        maintenance_interval=maintenance_interval,
        job_monitoring_interval=5,
    )


def run(args) -> int:
    """Entry point of `anchor worker` (arguments parsed by client.cli)."""
    logs.configure(args.log_format, args.log_level)
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or "redis://localhost:6379/0"
    try:
        specs = [parse_lexicon_spec(s) for s in (args.lexicon or ["english"])]
        worker = build_worker(
            redis_url,
            args.queue or ["anchor"],
            specs,
            args.name,
            args.maintenance_interval,
            leave_paths=dict(_pair(s) for s in (args.leaves or [])),
        )
        worker.connection.ping()  # a wrong URL or password fails here, not mid-job
    except Exception as exc:  # start-up problems are one clear line, not a traceback
        print(f"anchor worker: error: {exc}", file=sys.stderr)
        return 2
    if args.metrics_port is not None:
        server = serve(METRICS, args.metrics_host, args.metrics_port)
        log.info(
            "metrics", extra={"url": f"http://{args.metrics_host}:{server.server_port}/metrics"}
        )
    log.info(
        "worker starting", extra={"queues": args.queue or ["anchor"], "redis": _safe(redis_url)}
    )
    work_until_stopped(worker, burst=args.burst, max_jobs=args.max_jobs, log_level=args.log_level)
    log.info("worker stopped")
    return 0


def work_until_stopped(
    worker: AnchorWorker, burst: bool, max_jobs: int | None, log_level: str
) -> None:
    """RQ's work loop, restarted when it ends because Redis went away (RQ gives up when a
    connection drops mid-job). The job it held is requeued by maintenance once its
    heartbeat expires; this worker reconnects and goes on."""
    while True:
        try:
            worker.work(burst=burst, logging_level=log_level, max_jobs=max_jobs)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            log.warning("lost Redis", extra={"error": str(exc)})
        if worker.stopping or burst or max_jobs:
            return
        delay = 0.25
        while True:
            try:
                worker.connection.ping()
                break
            except (RedisConnectionError, RedisTimeoutError):
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
        try:
            worker.register_death()  # so the same name may register again
        except (RedisConnectionError, RedisTimeoutError):
            continue
        log.info("reconnected to Redis; taking jobs again")


def _pair(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"bad --leaves {text!r}: expected NAME=PATH")
    return name, path


def _safe(url: str) -> str:
    """A Redis URL without its password, for logs."""
    if "@" not in url:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://***@{rest.split('@', 1)[1]}"
