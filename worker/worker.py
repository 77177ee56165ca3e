"""AnchorWorker: RQ's SimpleWorker made safe to run as a fleet against a Redis anyone may
write to, that may fill up, restart, or outlive a paused machine's claim on a job.

What it adds to RQ, each for a failure seen in production-like trials:

- the server's caps applied to every job (`apply_limits`), a heartbeat while a job runs;
- a job is *claimed* atomically from its lane's intermediate list (`_claim`): an id put
  back by maintenance (its worker looked dead) is never also run by the worker that took it;
- **one final result per job**: a result is stored only while this worker still owns the
  job (status started, under its name, its execution in the started registry), checked
  under WATCH in the transaction that stores it (`_store`). A worker paused past its
  heartbeat finds the job taken over and drops its result;
- a result Redis refuses (full, away) is retried, the job still started and its heartbeat
  going, rather than the job being abandoned and run again; the heartbeat itself is one
  script a full Redis lets through (atomic.BEAT), and puts back a registry entry a
  stranger deleted;
- maintenance that scrubs ids RQ cannot decode and puts back ids stranded in an
  intermediate list (worker.queues).
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
import threading
import time

from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    ExecAbortError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import SimpleWorker, worker_registration
from rq.exceptions import StopRequested
from rq.executions import Execution, ExecutionRegistry
from rq.job import JobStatus
from rq.registry import clean_registries
from rq.timeouts import JobTimeoutException
from rq.utils import now, str_to_date, utcformat
from rq.worker import WorkerStatus

from anchor.client import protocol as p

from . import rq_private
from .atomic import (
    ALREADY_ANSWERED,
    BEAT,
    CLAIM,
    COUNTERS_REFUSED,
    STORE,
    recorder,
    run_script,
)
from .exchange import RedisPools
from .guard import AnchorJob
from .jobs import JobContext
from .metrics import HEALTH, METRICS
from .queues import CLAIM_MARK_TTL, AnchorQueue, claim_mark, recover_stranded, rq_keys, scrub

log = logging.getLogger("anchor.worker")
HEARTBEAT_INTERVAL = 2  # seconds between heartbeats while a job runs
HEARTBEAT_EVERY = 1.0  # seconds: between jobs, the worker's own key is refreshed at most this often
SUSPENSION_CHECK_EVERY = 1.0  # seconds: between jobs, `rq suspend` is looked for at most this often
HEARTBEAT_TTL = 10  # a job whose worker has been silent this long is abandoned
TIMEOUT_GRACE = 5  # RQ's own alarm fires this long after a job's deadline: a backstop
MIN_RESULT_TTL = 60  # seconds: results are kept at least this long (or the server's TTL)
MAINTENANCE_LOCK = 30  # seconds a registry clean-up may hold its lock (RQ: 899)
STALE_AFTER = 60  # a registration of this worker's name silent this long is a dead worker's
RETRY_WRITE_MAX = 1.0  # seconds between tries of a result write Redis refused, at most

RedisRefusedWrite = (OutOfMemoryError, ReadOnlyError, ExecAbortError)


def redis_trouble(exc: BaseException) -> bool:
    """Redis unreachable, restarting, or refusing writes (maxmemory, loading, read-only):
    conditions that pass, so the worker waits them out instead of exiting."""
    if isinstance(exc, (AuthenticationError, AuthorizationError)):
        return False  # a ConnectionError to redis-py, but waiting will not fix a password
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, *RedisRefusedWrite)):
        return True
    return isinstance(exc, ResponseError) and "maxmemory" in str(exc)


class JobLost(Exception):
    """This worker no longer owns the job it ran: another worker took it over."""


class AnchorWorker(SimpleWorker):
    """SimpleWorker with the server's caps applied to every job, a heartbeat while a job
    runs (so a long job is never started twice and a dead machine's job is retried
    within seconds), one final result per job, and a fixed name that a restarted worker
    can take over at once."""

    queue_class = AnchorQueue
    stopping = False  # set by SIGTERM/SIGINT: work() returning then means "exit"
    _bootstrapping = False  # registering: a stop waits for the work loop's first turn
    max_connection_wait_time = 1.0  # RQ backs off to 60 s between tries of a lost Redis

    def __init__(self, *args, registry, limits: p.Limits, peer=None, **kwargs):
        kwargs.setdefault("job_class", AnchorJob)
        super().__init__(*args, **kwargs)
        self.registry = registry
        self.limits = limits
        self.peer = peer  # engine.peers.Peer: endgames searched with the workers forked alongside
        self._beat_at = -math.inf  # time.monotonic() of the last heartbeat sent at once
        self._alive_until = -math.inf  # and when the key it refreshed expires
        self._suspension_checked = -math.inf  # time.monotonic() of the last `rq suspend` check
        self._started = ""  # the running job's `started_at`, as the claim wrote it

    @property
    def dequeue_timeout(self) -> int:
        # RQ blocks on an empty queue for worker_ttl - 15 s (405 s) and only cleans
        # registries between waits; wake at least every maintenance interval instead.
        return max(1, min(int(self.maintenance_interval), self.worker_ttl - 15))

    def request_stop(self, signum, frame):
        self.stopping = True
        # RQ raises StopRequested here when idle, to break out of the wait for a job. The
        # signal can land while Python runs a callback of its own (a weakref's, in the
        # garbage collector), where the raise is swallowed (quiet_stop keeps it out of the
        # log): the work loop then stops at its next turn, on this flag.
        rq_private.mark_stop_requested(self)
        if self._bootstrapping:  # no raise mid-registration: the loop's first turn stops
            signal.signal(signal.SIGINT, self.request_force_stop)
            signal.signal(signal.SIGTERM, self.request_force_stop)
            return None
        return super().request_stop(signum, frame)

    def bootstrap(self, *args, **kwargs) -> None:
        """RQ registers the worker in Redis and only then installs its SIGTERM handler: a
        SIGTERM in between (an operator scaling down a fleet just started) killed the
        worker outright, its registration left alive and its lexicon snapshots left in
        memory. The handler goes in first here; a stop asked for meanwhile is taken at the
        work loop's first turn, which ends with RQ's teardown (registration marked dead)."""
        rq_private.install_signal_handlers(self)
        self._bootstrapping = True
        try:
            super().bootstrap(*args, **kwargs)
        finally:
            self._bootstrapping = False

    def subscribe(self) -> None:
        """Not subscribed: RQ's workers obey `shutdown`, `kill-horse` and `stop-job`
        published on `rq:pubsub:<name>` by anyone who can write to Redis (issue 46: one
        PUBLISH per registered name stopped the whole fleet). An operator stops a worker
        with SIGTERM (deploy/: docker stop, kubectl, systemctl), which finishes its job."""
        log.info("not listening for RQ's published worker commands; stop with SIGTERM")

    def unsubscribe(self) -> None:
        """Nothing to leave (see subscribe)."""

    def handle_warm_shutdown_request(self) -> None:
        """Nothing here: RQ logs at this point, inside the SIGTERM handler, and a line
        written while the main thread is writing one is a reentrant write to stderr (a
        'Logging error' traceback in the log). The work loop logs the stop instead."""

    def check_for_suspension(self, burst: bool) -> None:
        """RQ asks Redis whether workers are suspended (`rq suspend`), with a heartbeat,
        before every job: with short jobs back to back, asking at most every
        SUSPENSION_CHECK_EVERY is enough (a suspension takes hold within that)."""
        at = time.monotonic()
        if not burst and at - self._suspension_checked < SUSPENSION_CHECK_EVERY:
            return
        super().check_for_suspension(burst)
        self._suspension_checked = time.monotonic()

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
        try:
            result = super().heartbeat(timeout, pipeline)
        except Exception:
            HEALTH.trouble()
            raise
        if pipeline is None:
            self._beat_at, self._alive_until = at, at + wanted
            HEALTH.beat(redis_ok=True)
        return result

    # ------------------------------------------------------------ one job
    def execute_job(self, job, queue) -> None:
        seconds = self.apply_limits(job, queue)
        job.context = JobContext(
            self.registry, self.limits, METRICS, seconds, RedisPools(self.connection), self.peer
        )
        execution = self._claim(job, queue)
        if execution is None:
            self.set_state(WorkerStatus.IDLE)
            return
        beating = threading.Event()
        beat = threading.Thread(
            target=self._beat, args=(job, execution, beating), daemon=True, name="heartbeat"
        )
        beat.start()
        try:
            self.perform_job(job, queue, execution)
        except JobLost:
            pass
        except Exception as exc:
            if redis_trouble(exc):
                raise  # the job stays started; maintenance retries it when Redis is back
            self._fail_unfinishable(job, queue, execution, exc)
        finally:
            beating.set()
            beat.join()
        self.executions.pop(execution.id, None)
        # no state write here: RQ's next dequeue sets IDLE first thing (one round trip a job)

    def _claim(self, job, queue) -> Execution | None:
        """Start the job if its id is still in the lane's intermediate list, removing it
        from there and entering it in the started registry in one script (atomic.CLAIM):
        the id is never in neither (lost) nor run twice. None when it was put back, or when
        the job has its final result already (the id pushed again: dropped). The
        claim also sets the job's claim mark (queues.claim_mark), which a put-back
        watches: a put-back that looked before this claim finds the id gone."""
        key = queue.intermediate_queue_key
        ttl = self.get_heartbeat_ttl(job)
        pipe = recorder(self.connection)
        # first: a write a full Redis refuses, so that it refuses the whole (atomic)
        pipe.set(claim_mark(job.id), self.name, ex=CLAIM_MARK_TTL)
        execution = Execution.create(job, ttl, pipeline=pipe, worker_name=self.name)
        self.set_state(WorkerStatus.BUSY, pipeline=pipe)
        self.heartbeat(ttl, pipeline=pipe)
        job.prepare_for_execution(self.name, pipeline=pipe)
        pipe.persist(job.key)
        pipe.lrem(key, 1, job.id)
        claimed = run_script(self.connection, CLAIM, [key, job.key], [job.id], pipe)
        if claimed == ALREADY_ANSWERED:  # a job runs at most once per enqueue
            log.warning("job answered already or running elsewhere; its id was enqueued "
                        "again and is dropped",
                        extra={"job": job.id})  # fmt: skip
            METRICS.inc("anchor_jobs_refused_total")
            return None
        if not claimed:
            log.warning("job put back before it started here", extra={"job": job.id})
            return None
        self.executions[execution.id] = execution
        self._started = utcformat(job.started_at)
        return execution

    def perform_job(self, job, queue, execution) -> bool:
        """Run the job; store its result or its failure. Unlike RQ, a result that cannot be
        stored (Redis away, the job taken over) is not then recorded as the job's failure:
        JobLost and Redis trouble go up to `execute_job`."""
        self.prepare_job_execution(job)
        job.started_at = now()
        timeout = job.timeout or self.queue_class.DEFAULT_TIMEOUT
        try:
            with self.death_penalty_class(timeout, JobTimeoutException, job_id=job.id):
                return_value = job.perform()
        except Exception:
            rq_private.finalize_failure(self, job, queue, execution, sys.exc_info())
            return False
        rq_private.finalize_success(self, job, queue, execution, return_value)
        return True

    def prepare_job_execution(self, job, remove_from_intermediate_queue: bool = False) -> None:
        """Done by `_claim`, atomically with taking the id."""
        self.procline(f"Processing {job.func_name} from {job.origin} since {time.time()}")

    def handle_execution_ended(self, job, queue, heartbeat_ttl: int) -> None:
        # RQ writes a last heartbeat to the job here; the heartbeat thread still runs, and a
        # write to a job another worker finished (and whose key expired) would revive it.
        job.ended_at = now()

    def _fail_unfinishable(self, job, queue, execution, exc: Exception) -> None:
        """RQ's own bookkeeping failed on this job (a field it read but cannot use): fail
        it here, with the reason, so it is answered rather than left started."""
        reason = f"{p.MALFORMED_JOB}: RQ could not finish this job ({type(exc).__name__}: {exc})"
        log.warning("unfinishable job", extra={"job": job.id, "error": reason[:500]})
        METRICS.inc("anchor_jobs_refused_total")
        job.retries_left = None
        job.ended_at = job.ended_at or now()
        try:
            self.handle_job_failure(job, queue, exc_string=reason, execution=execution)
        except JobLost:
            pass
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

    def maintain_heartbeats(self, job, execution) -> None:
        """RQ's heartbeat while a job runs, as one script (atomic.BEAT) that a full Redis
        does not refuse and that writes back the job's started-registry entry when a
        stranger deleted it. RQ's MULTI was refused whole by a full Redis: the entry ran
        out and a peer's maintenance requeued, or failed as abandoned, a running job."""
        keys = [
            job.key,
            job.started_job_registry.key,
            self.key,
            self.executions_key,
            execution.key,
            ExecutionRegistry(job_id=job.id, connection=self.connection).key,
        ]
        at = now()
        args = [
            self.name,
            self._started,
            execution.composite_key,
            execution.id,
            self.get_heartbeat_ttl(job),
            self.job_monitoring_interval + 60,
            repr(at.timestamp()),
            utcformat(at),
            JobStatus.STARTED.value,
        ]
        run_script(self.connection, BEAT, keys, args)

    def _beat(self, job, execution, done: threading.Event) -> None:
        """Keep this worker, the job and its place in the started registry alive."""
        while not done.wait(HEARTBEAT_INTERVAL):
            try:
                self.maintain_heartbeats(job, execution)
                HEALTH.beat(redis_ok=True)
            except Exception as exc:  # Redis away or full: the job goes on; maintenance decides
                HEALTH.trouble()
                log.warning("heartbeat failed", extra={"job": job.id, "error": str(exc)})

    # -------------------------------------------------- storing an outcome
    def _store(self, job, execution, write) -> None:
        """Run what `write(pipeline)` records in one script that writes only while this
        worker owns the job (atomic.STORE: the job started, by this worker, at this
        execution's start); retried while Redis refuses it (full, away) until it
        lands, the job is lost to another worker (JobLost), or the worker is told to stop."""
        delay = 0.05
        retries_left = job.retries_left
        while True:
            job.retries_left = retries_left  # a failed try may have spent one
            try:
                pipe = recorder(self.connection)
                write(pipe)
                self.cleanup_execution(job, pipeline=pipe, execution=execution)
                owner = [self.name, self._started, JobStatus.STARTED.value]
                stored = run_script(self.connection, STORE, [job.key], owner, pipe, self.key)
                if not stored:
                    self._drop(job, execution)
                    raise JobLost(job.id)
                if stored == COUNTERS_REFUSED:
                    self._reset_counters()
                HEALTH.beat(redis_ok=True)
                return
            except Exception as exc:
                if not redis_trouble(exc) or self.stopping:
                    raise
                HEALTH.trouble()
                METRICS.inc("anchor_result_writes_retried_total")
                if delay == 0.05:
                    log.warning(
                        "Redis refused the result; retrying until it takes it",
                        extra={"job": job.id, "error": str(exc)[:200]},
                    )
                time.sleep(delay)
                delay = min(delay * 2, RETRY_WRITE_MAX)

    def _reset_counters(self) -> None:
        """RQ's counters in this worker's hash hold what cannot be added to (not a number,
        or at the edge of one: a stranger's write), so the store skipped them (they failed
        every store before). They start again at 0; best effort."""
        log.warning("this worker's job counters could not be added to; they start again at 0",
                    extra={"worker": self.name})  # fmt: skip
        try:
            self.connection.hdel(self.key, *COUNTERS)
        except Exception:
            log.debug("could not reset the counters", exc_info=True)

    def _drop(self, job, execution) -> None:
        """The job was taken over (this worker looked dead): forget this execution and
        keep the other worker's answer."""
        METRICS.inc("anchor_results_dropped_total")
        log.warning(
            "job taken over by another worker; this result is dropped", extra={"job": job.id}
        )
        try:
            with self.connection.pipeline() as pipe:
                execution.delete(job=job, pipeline=pipe)
                pipe.execute()
        except Exception:  # best effort: the execution's key expires by itself
            log.debug("could not delete execution %s", execution.id, exc_info=True)

    def handle_job_success(self, job, queue, started_job_registry, execution) -> None:
        def write(pipe) -> None:  # the result first: XADD, which a full Redis refuses
            result_ttl = job.get_result_ttl(self.default_result_ttl)
            if result_ttl != 0:
                rq_private.write_success(job, result_ttl, pipe, **self._by(job, execution))
            job.cleanup(result_ttl, pipeline=pipe, remove_from_queue=False)
            self.increment_successful_job_count(pipeline=pipe)  # counters last: best effort
            self.increment_total_working_time(job.ended_at - job.started_at, pipe)

        self._store(job, execution, write)
        rq_private.mark_finished(job)

    def _by(self, job, execution) -> dict:
        """Who ran the job, and when: what RQ records beside a result or a failure."""
        return {
            "worker_name": self.name,
            "execution_id": execution.id,
            "execution_started_at": execution.created_at,
            "execution_ended_at": job.ended_at,
        }

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

        def write(pipe) -> None:  # the outcome first (HSET), the counters last
            if job.should_retry:
                job.retry(queue, pipe)
            else:
                job.set_status(JobStatus.FAILED, pipeline=pipe)
                rq_private.write_failure(job, exc_string, pipe, **self._by(job, execution))
            self.increment_failed_job_count(pipe)
            if job.started_at and job.ended_at:
                self.increment_total_working_time(job.ended_at - job.started_at, pipe)

        self._store(job, execution, write)

    # ------------------------------------------------------- maintenance
    def run_maintenance_tasks(self) -> None:
        """RQ's maintenance, which never ends the work loop: Redis trouble waits for the
        next round; an id RQ cannot decode is scrubbed and the round run again."""
        try:
            self.register_again()
        except StopRequested:  # SIGTERM while checking: stop, not log it and serve on
            raise
        except Exception as exc:  # a stranger's key of the wrong type: the rest still runs
            log.warning("could not check this worker's registration",
                        extra={"error": str(exc)[:200]})  # fmt: skip
        try:
            try:
                super().run_maintenance_tasks()
            except UnicodeDecodeError:
                self.scrub()
                super().run_maintenance_tasks()
        except StopRequested:  # SIGTERM while cleaning: stop, as between jobs
            raise
        except Exception as exc:
            if not redis_trouble(exc):
                log.exception("maintenance failed; trying again next round")
            else:
                HEALTH.trouble()
            self.last_cleaned_at = now()

    def scrub(self) -> int:
        """Remove what RQ cannot decode from every key this worker reads."""
        keys = {key: None for q in self.queues for key in rq_keys(q, self.name)}
        return scrub(self.connection, keys)

    def clean_registries(self) -> None:
        """RQ's registry maintenance under a lock of MAINTENANCE_LOCK seconds, not RQ's
        899: a worker killed while cleaning would otherwise stop every worker from
        requeueing abandoned jobs for 15 minutes. The lock names its holder. Ids stranded
        in an intermediate list go back to their queue (not failed, as RQ does, a minute on)."""
        for queue in self.queues:
            key = queue.registry_cleaning_key
            if not self.connection.set(key, self.name, nx=True, ex=MAINTENANCE_LOCK):
                continue
            try:
                clean_registries(queue, rq_private.exception_handlers(self))
                worker_registration.clean_worker_registry(queue)
                back = recover_stranded(queue)
                if back:
                    METRICS.inc("anchor_jobs_requeued_stranded_total", len(back))
            finally:
                queue.release_maintenance_lock()
        self.last_cleaned_at = now()

    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        try:
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        except UnicodeDecodeError:
            self.scrub()
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)

    # ------------------------------------------------------- registration
    def register_birth(self) -> None:
        """Register. A registration under this name that this very process left (the work
        loop restarted after Redis trouble) is simply renewed: its jobs are its own and
        still running or stored. One that a dead worker left (SIGKILL, OOM, a machine
        restart) is cleaned up first, so a fixed name restarts at once."""
        info = self.connection.hgetall(self.key)
        if info and b"death" not in info:
            if self._is_own(info):
                self.connection.delete(self.key)
            elif self._is_stale(info):
                log.warning(
                    "taking over a stale registration",
                    extra={"worker": self.name, "pid": _text(info.get(b"pid"))},
                )
                self._bury_stale()
        super().register_birth()

    def register_again(self) -> bool:
        """Register anew when the registration is gone: Redis restarted empty (no
        persistence, a pod on an emptyDir) or the worker sets were deleted. Without this
        the worker serves on unseen: `Worker.count` reads 0 and a simulation goes out as one
        job. A hash a heartbeat recreated alone (no `birth`) is replaced. Whether it did."""
        with self.connection.pipeline(transaction=False) as pipe:
            pipe.sismember("rq:workers", self.key)
            for queue in self.queues:
                pipe.sismember(f"rq:workers:{queue.name}", self.key)
            pipe.hexists(self.key, "birth")
            got = pipe.execute()
        if all(got):
            return False
        log.warning("registration lost (Redis restarted empty?): registering again",
                    extra={"worker": self.name})  # fmt: skip
        self.connection.delete(self.key)
        super().register_birth()
        return True

    def _is_own(self, info: dict) -> bool:
        host, pid = _text(info.get(b"hostname")), _text(info.get(b"pid"))
        return host == self.hostname and pid == str(os.getpid())

    def _is_stale(self, info: dict) -> bool:
        host, pid = _text(info.get(b"hostname")), _text(info.get(b"pid"))
        if host == self.hostname and pid.isascii() and pid.isdigit():  # not '²': int() refuses
            if not _alive(int(pid)):
                return True
        try:
            last = str_to_date(info[b"last_heartbeat"])
            return (now() - last).total_seconds() > STALE_AFTER
        except Exception:
            return True  # no readable heartbeat: nothing alive keeps it

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


COUNTERS = ("successful_job_count", "failed_job_count", "total_working_time")


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


def quiet_stop(unraisable) -> None:
    """sys.unraisablehook for a worker: a StopRequested raised inside a callback Python
    runs on its own cannot stop anything there (AnchorWorker.request_stop has set the flag
    the work loop stops on), so it is not a traceback in the log; everything else goes to
    Python's own hook."""
    if isinstance(unraisable.exc_value, StopRequested):
        return
    sys.__unraisablehook__(unraisable)
