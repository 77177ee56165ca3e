"""`anchor worker`: open the lexica, then take jobs from the queue until told to stop.

Built on RQ's SimpleWorker: jobs run in the worker process (no fork per job, which costs
~10 ms here; see BENCHMARKS.md), so lexica are mapped once and metrics persist. What a
stranger may write to the queue is checked by worker.guard; what a job may cost is capped
by the server's Limits (PROTOCOL.md, "Limits").
"""

from __future__ import annotations

import gc
import logging
import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ExecAbortError, OutOfMemoryError, ReadOnlyError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Queue, SimpleWorker, worker_registration
from rq.registry import clean_registries
from rq.utils import now, str_to_date
from rq.worker import WorkerStatus

from anchor.client import protocol as p
from anchor.client.analysis import LexiconRegistry
from anchor.client.client import connect, redacted
from anchor.client.lexica import lexicon_path, search_dirs
from anchor.client.serializer import MsgpackSerializer
from anchor.engine import LexiconInfo, Ruleset
from anchor.engine.rules import builtin_names

from . import logs
from .guard import AnchorJob
from .jobs import JobContext
from .metrics import HEALTH, METRICS, serve
from .snapshot import snapshot

log = logging.getLogger("anchor.worker")
HEARTBEAT_INTERVAL = 2  # seconds between heartbeats while a job runs
HEARTBEAT_EVERY = 1.0  # seconds: between jobs, the worker's own key is refreshed at most this often
HEARTBEAT_TTL = 10  # a job whose worker has been silent this long is abandoned
TIMEOUT_GRACE = 5  # RQ's own alarm fires this long after a job's deadline: a backstop
MIN_RESULT_TTL = 60  # seconds: results are kept at least this long (or the server's TTL)
MAINTENANCE_LOCK = 30  # seconds a registry clean-up may hold its lock (RQ: 899)
STALE_AFTER = 60  # a registration of this worker's name silent this long is a dead worker's


class AnchorWorker(SimpleWorker):
    """SimpleWorker with the server's caps applied to every job, a heartbeat while a job
    runs (so a long job is never started twice and a dead machine's job is retried
    within seconds), and a fixed name that a restarted worker can take over at once."""

    stopping = False  # set by SIGTERM/SIGINT: work() returning then means "exit"

    def __init__(self, *args, registry: LexiconRegistry, limits: p.Limits, **kwargs):
        kwargs.setdefault("job_class", AnchorJob)
        super().__init__(*args, **kwargs)
        self.registry = registry
        self.limits = limits
        self._beat_at = -math.inf  # time.monotonic() of the last heartbeat sent at once
        self._alive_until = -math.inf  # and when the key it refreshed expires

    @property
    def dequeue_timeout(self) -> int:
        # RQ blocks on an empty queue for worker_ttl - 15 s (405 s) and only cleans
        # registries between waits; wake at least every maintenance interval instead.
        return max(1, min(int(self.maintenance_interval), self.worker_ttl - 15))

    def request_stop(self, signum, frame):
        self.stopping = True
        return super().request_stop(signum, frame)

    def get_heartbeat_ttl(self, job, working_time: float = 0.0) -> int:
        return HEARTBEAT_TTL

    def heartbeat(self, timeout=None, pipeline=None):
        """RQ's heartbeat, also recorded for the /healthz and /readyz probes. RQ sends one
        before and after every dequeue and after every job, three round trips each: with
        short jobs back to back, one sent less than HEARTBEAT_EVERY ago that keeps the key
        alive as long as this one would is enough (a quarter of a small job's round trips)."""
        wanted = timeout or self.worker_ttl + 60
        at = time.monotonic()
        if (
            pipeline is None
            and at - self._beat_at < HEARTBEAT_EVERY
            and at + wanted <= self._alive_until + HEARTBEAT_EVERY
        ):
            HEALTH.beat(redis_ok=True)
            return None
        result = super().heartbeat(timeout, pipeline)
        if pipeline is None:
            self._beat_at, self._alive_until = at, at + wanted
        HEALTH.beat(redis_ok=pipeline is None)
        return result

    # ------------------------------------------------------------ one job
    def execute_job(self, job, queue) -> None:
        seconds = self.apply_limits(job, queue)
        job.context = JobContext(self.registry, self.limits, METRICS, seconds)
        execution = self.prepare_execution(job)
        beating = threading.Event()
        beat = threading.Thread(
            target=self._beat, args=(job, execution, beating), daemon=True, name="heartbeat"
        )
        beat.start()
        try:
            self.perform_job(job, queue, execution)
        except Exception as exc:
            if _redis_trouble(exc):
                raise  # the job stays started; maintenance retries it when Redis is back
            self._fail_unfinishable(job, queue, execution, exc)
        finally:
            beating.set()
            beat.join()
        self.set_state(WorkerStatus.IDLE)

    def _fail_unfinishable(self, job, queue, execution, exc: Exception) -> None:
        """RQ's own bookkeeping failed on this job (a field it read but cannot use): fail
        it here, with the reason, so it is answered rather than left started."""
        reason = f"{p.MALFORMED_JOB}: RQ could not finish this job ({type(exc).__name__}: {exc})"
        log.warning("unfinishable job", extra={"job": job.id, "error": reason[:500]})
        METRICS.inc("anchor_jobs_refused_total")
        job.retries_left = None
        try:
            self.handle_job_failure(job, queue, exc_string=reason, execution=execution)
        except Exception:
            log.exception("could not record the failure of job %s", job.id)

    def apply_limits(self, job, queue) -> float | None:
        """Clamp what the job's hash asks for to the server's caps; returns the seconds
        the job may take (its own timeout if less than the cap)."""
        limits = self.limits
        job.origin = queue.name  # a retry goes back to the queue this worker serves
        asked = job.timeout if job.timeout is not None and job.timeout > 0 else None
        seconds = limits.job_seconds
        if asked is not None and (seconds is None or asked < seconds):
            seconds = float(asked)
        job.timeout = int(seconds + TIMEOUT_GRACE) if seconds is not None else -1
        for field in ("result_ttl", "failure_ttl"):
            ttl = getattr(job, field)
            if ttl is None or ttl < 0 or ttl > limits.result_ttl:
                setattr(job, field, limits.result_ttl)
            elif ttl < MIN_RESULT_TTL:  # every job leaves an answer a client can read
                setattr(job, field, min(MIN_RESULT_TTL, limits.result_ttl))
        if job.retries_left is None or job.retries_left < 0:
            job.retries_left = None
        else:
            job.retries_left = min(job.retries_left, limits.retries)
        job.retry_intervals = [0]  # retry now: no scheduler runs to wake a delayed retry
        job.repeats_left = None
        job.repeat_intervals = None
        if job.refusal() is not None:
            job.retries_left = None  # a refused job is refused again: fail it for good
        return seconds

    def _beat(self, job, execution, done: threading.Event) -> None:
        """Keep this worker, the job and its place in the started registry alive."""
        while not done.wait(HEARTBEAT_INTERVAL):
            try:
                self.maintain_heartbeats(job, execution)
                HEALTH.beat(redis_ok=True)
            except Exception as exc:  # Redis away or full: the job goes on; maintenance decides
                log.warning("heartbeat failed", extra={"job": job.id, "error": str(exc)})

    def handle_job_failure(
        self, job, queue, started_job_registry=None, exc_string="", execution=None
    ):
        refusal = job.refusal() if isinstance(job, AnchorJob) else None
        if refusal is not None:
            code, message = refusal
            exc_string = f"{code}: {message}"
            METRICS.inc("anchor_jobs_refused_total")
            log.warning(
                "refused job",
                extra={"job": job.id, "code": code, "error": message, "origin": job.origin},
            )
        else:
            retrying = bool(job.retries_left)
            METRICS.inc("anchor_jobs_retried_total" if retrying else "anchor_jobs_failed_total")
            log.warning(
                "job failed",
                extra={"job": job.id, "retrying": retrying, "error": exc_string[-500:]},
            )
        return super().handle_job_failure(job, queue, started_job_registry, exc_string, execution)

    # ------------------------------------------------------- registration
    def register_birth(self) -> None:
        """Register; a registration under this name that a dead worker left (SIGKILL, OOM,
        a machine restart) is cleaned up first, so a fixed name restarts at once."""
        info = self.connection.hgetall(self.key)
        if info and b"death" not in info and self._is_stale(info):
            log.warning(
                "taking over a stale registration",
                extra={"worker": self.name, "pid": _text(info.get(b"pid"))},
            )
            self._bury_stale()
        super().register_birth()

    def _is_stale(self, info: dict) -> bool:
        host, pid = _text(info.get(b"hostname")), _text(info.get(b"pid"))
        if host == self.hostname and pid.isascii() and pid.isdigit():  # not '²': int() refuses
            if int(pid) == os.getpid() or not _alive(int(pid)):
                return True
        try:
            last = str_to_date(info[b"last_heartbeat"])
            return (now() - last).total_seconds() > STALE_AFTER
        except Exception:
            return True  # no readable heartbeat: nothing alive keeps it

    def clean_registries(self) -> None:
        """RQ's registry maintenance under a lock of MAINTENANCE_LOCK seconds, not RQ's
        899: a worker killed while cleaning would otherwise stop every worker from
        requeueing abandoned jobs for 15 minutes. The lock names its holder."""
        for queue in self.queues:
            key = queue.registry_cleaning_key
            if not self.connection.set(key, self.name, nx=True, ex=MAINTENANCE_LOCK):
                continue
            try:
                clean_registries(queue, self._exc_handlers)
                worker_registration.clean_worker_registry(queue)
                queue.intermediate_queue.cleanup(self, queue)
            finally:
                queue.release_maintenance_lock()
        self.last_cleaned_at = now()

    def _bury_stale(self) -> None:
        """Unregister the dead worker and expire its jobs' heartbeats, so maintenance
        requeues them now rather than when their heartbeat would have run out."""
        executions = self.connection.smembers(self.executions_key)
        with self.connection.pipeline() as pipe:
            for queue in self.queues:
                for member in executions:
                    pipe.zadd(queue.started_job_registry.key, {member: 1}, xx=True)
            pipe.delete(self.key, self.executions_key)
            for queue in self.queues:  # a cleaning lock the dead worker held
                if self.connection.get(queue.registry_cleaning_key) == self.name.encode():
                    pipe.delete(queue.registry_cleaning_key)
            for queue in self.queues:
                pipe.srem(f"rq:workers:{queue.name}", self.key)
            pipe.srem("rq:workers", self.key)
            pipe.execute()
        self.clean_registries()


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value or "")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none by that number, or none could be
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LexiconSpec:
    name: str
    ruleset: str
    path: str


def parse_lexicon_spec(text: str) -> LexiconSpec:
    """NAME=PATH, NAME@RULESET=PATH, or a bare NAME found like the CLI finds lexica.
    The ruleset defaults to the one the file's sidecar names, else to NAME when NAME is
    a built-in ruleset, else english; a sidecar naming another alphabet is refused."""
    head, sep, path = text.partition("=")
    name, _, ruleset = head.partition("@")
    if not name or (sep and not path):
        raise ValueError(f"bad --lexicon {text!r}: expected NAME, NAME=PATH or NAME@RULESET=PATH")
    if not sep:
        path = str(lexicon_path(name))
    info = LexiconInfo.read(path) if Path(path).is_file() else None
    ruleset = ruleset or (info.ruleset if info else None)
    ruleset = ruleset or (name if name in builtin_names() else "english")
    if ruleset not in builtin_names():
        raise ValueError(f"bad --lexicon {text!r}: unknown ruleset {ruleset!r}")
    if info is not None:
        info.check_alphabet(path, ruleset, "".join(Ruleset.load(ruleset).alphabet))
    return LexiconSpec(name, ruleset, path)


def build_worker(
    redis_url: str,
    queues: list[str],
    lexica: list[LexiconSpec],
    name: str | None = None,
    maintenance_interval: int = 10,
    connection=None,
    leave_paths: dict[str, str] | None = None,
    limits: p.Limits | None = None,
    snapshots: bool = True,
) -> AnchorWorker:
    """Open every lexicon (a private snapshot, mmapped) and connect; the worker takes no
    job before this."""
    paths = {spec.name: str(snapshot(spec.path)) if snapshots else spec.path for spec in lexica}
    registry = LexiconRegistry(
        paths,
        leave_paths=dict(leave_paths or {}),
        rulesets={spec.name: spec.ruleset for spec in lexica},
    )
    solvers = registry.preload([(spec.ruleset, spec.name) for spec in lexica])
    for leaves_name in leave_paths or {}:  # open (and check) leave files before any job too
        ruleset = next((s.ruleset for s in lexica if s.name == leaves_name), "english")
        registry.leaves(ruleset, leaves_name, leaves_name)
    for spec, solver in zip(lexica, solvers, strict=True):
        log.info(
            "lexicon ready",
            extra={
                "lexicon": spec.name,
                "ruleset": spec.ruleset,
                "path": spec.path,
                "snapshot": paths[spec.name],
                "words": len(solver.lexicon),
            },
        )
    if connection is None:
        connection = Redis.from_url(redis_url, health_check_interval=30, socket_keepalive=True)
    serializer = MsgpackSerializer
    return AnchorWorker(
        [
            Queue(q, connection=connection, serializer=serializer, job_class=AnchorJob)
            for q in queues
        ],
        connection=connection,
        serializer=serializer,
        name=name,
        maintenance_interval=maintenance_interval,
        job_monitoring_interval=HEARTBEAT_INTERVAL,
        registry=registry,
        limits=limits or p.Limits(),
    )


_LIMIT_FLAGS = {
    "job_seconds": "max_job_seconds",
    "result_bytes": "max_result_bytes",
    "moves": "max_moves",
    "batch": "max_batch",
    "result_ttl": "result_ttl",
    "retries": "max_retries",
}


def limits_from(args, environ=os.environ) -> p.Limits:
    """The server's caps: a flag, else $ANCHOR_<FLAG NAME>, else the default."""
    values = {}
    for field, flag in _LIMIT_FLAGS.items():
        value = getattr(args, flag, None)
        env = f"ANCHOR_{flag.upper()}"
        if value is None and environ.get(env):
            try:
                value = float(environ[env]) if field == "job_seconds" else int(environ[env])
            except ValueError:
                raise ValueError(f"${env} must be a number, not {environ[env]!r}") from None
        if value is not None:
            values[field] = value
    return p.Limits(**values)


def redis_connection(url: str, password_file: str | None, environ=os.environ) -> Redis:
    """A connection to `url`; the password from a file or $REDIS_PASSWORD when the URL
    carries none (so it need not appear on a command line or in `ps`)."""
    password = None
    path = password_file or environ.get("REDIS_PASSWORD_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                password = fh.read().strip()
        except OSError as exc:
            raise ValueError(f"cannot read Redis password file {path}: {exc.strerror}") from None
    elif environ.get("REDIS_PASSWORD"):
        password = environ["REDIS_PASSWORD"]
    extra = {"password": password} if password else {}
    return connect(url, health_check_interval=30, socket_keepalive=True, **extra)


def run(args) -> int:
    """Run the worker with the arguments worker/cli.py parsed; exit status."""
    logs.configure(args.log_format, args.log_level)
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or "redis://localhost:6379/0"
    try:
        limits = limits_from(args)
        specs = [parse_lexicon_spec(s) for s in (args.lexicon or ["english"])]
        worker = build_worker(
            redis_url,
            args.queue or ["anchor"],
            specs,
            args.name,
            args.maintenance_interval,
            connection=redis_connection(redis_url, args.redis_password_file),
            leave_paths=dict(_pair(s) for s in (args.leaves or [])),
            limits=limits,
        )
        worker.connection.ping()  # a wrong URL or password fails here, not mid-job
    except (RedisConnectionError, RedisTimeoutError) as exc:
        print(
            f"anchor worker: error: cannot reach Redis at {redacted(redis_url)}: {exc}",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # start-up problems are one clear line, not a traceback
        print(f"anchor worker: error: {exc}", file=sys.stderr)
        return 2
    if args.metrics_port is not None:
        try:
            server = serve(METRICS, args.metrics_host, args.metrics_port)
        except OSError as exc:
            where = f"{args.metrics_host}:{args.metrics_port}"
            print(
                f"anchor worker: error: cannot serve metrics on {where}: {exc.strerror}",
                file=sys.stderr,
            )
            return 2
        log.info(
            "metrics", extra={"url": f"http://{args.metrics_host}:{server.server_port}/metrics"}
        )
    log.info(
        "worker starting",
        extra={
            "queues": args.queue or ["anchor"],
            "redis": redacted(redis_url),
            "limits": {f: getattr(limits, f) for f in _LIMIT_FLAGS},
        },
    )
    # What is loaded by now (modules, lexica, the connection) lives as long as the worker:
    # frozen, the cyclic collector stops scanning it at every collection a job's results
    # set off (batch jobs of 100 positions, the job alone: +7%).
    gc.freeze()
    try:
        work_until_stopped(
            worker, burst=args.burst, max_jobs=args.max_jobs, log_level=args.log_level
        )
    except ValueError as exc:  # RQ: "There exists an active worker named ..."
        print(f"anchor worker: error: {exc}", file=sys.stderr)
        return 2
    log.info("worker stopped")
    return 0


RedisRefusedWrite = (OutOfMemoryError, ReadOnlyError, ExecAbortError)


def _redis_trouble(exc: BaseException) -> bool:
    """Redis unreachable, restarting, or refusing writes (maxmemory, loading, read-only):
    conditions that pass, so the worker waits them out instead of exiting."""
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, *RedisRefusedWrite)):
        return True
    return isinstance(exc, ResponseError) and "maxmemory" in str(exc)


def work_until_stopped(
    worker: AnchorWorker, burst: bool, max_jobs: int | None, log_level: str
) -> None:
    """RQ's work loop, restarted when it ends because Redis went away or refused writes
    (RQ gives up on both). A job this worker held is requeued by maintenance once its
    heartbeat expires; this worker waits until Redis takes writes again and goes on."""
    while True:
        try:
            worker.work(burst=burst, logging_level=log_level, max_jobs=max_jobs)
        except Exception as exc:
            if not _redis_trouble(exc):
                raise
            METRICS.inc("anchor_redis_errors_total")
            log.warning("Redis trouble; waiting for it to pass", extra={"error": str(exc)})
        if worker.stopping or burst or max_jobs:
            return
        _wait_for_writes(worker)
        log.info("Redis takes writes again; taking jobs")


def _wait_for_writes(worker: AnchorWorker) -> None:
    """Until Redis answers and accepts a write (the worker's own key), backing off."""
    delay = 0.25
    while not worker.stopping:
        HEALTH.beat(redis_ok=False)  # alive, waiting: live but not ready
        try:
            worker.connection.ping()
            worker.connection.set(f"{worker.key}:probe", b"1", ex=60)
            worker.connection.delete(f"{worker.key}:probe")
            return
        except Exception as exc:
            if not _redis_trouble(exc):
                raise
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def _pair(text: str) -> tuple[str, str]:
    """--leaves NAME=PATH, a PATH (served under its file name), or a NAME found in the
    lexicon folders as NAME.klv2."""
    name, sep, path = text.partition("=")
    if sep:
        if not name or not path:
            raise ValueError(f"bad --leaves {text!r}: expected NAME=PATH, PATH or NAME")
        return name, path
    if text.endswith(".klv2") or "/" in text:
        return Path(text).name.removesuffix(".klv2"), text
    for folder in search_dirs():
        if (folder / f"{text}.klv2").is_file():
            return text, str(folder / f"{text}.klv2")
    raise ValueError(f"bad --leaves {text!r}: no {text}.klv2 in the lexicon folders")
