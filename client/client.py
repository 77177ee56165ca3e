"""AnalysisClient: what a game server imports. Through Redis (RQ) when given a URL,
in-process otherwise (embedded mode), with the same requests and the same answers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from . import protocol as p
from .protocol.connection import ServiceError, connect, redacted


def _runner():
    """The worker's request runner, for embedded mode (no Redis): the one place the client
    reaches into the worker. Loaded on first use, so a client of the fleet never loads the
    engine or its C extension."""
    from anchor.worker import runner

    return runner


def redis_errors():
    """redis-py's exceptions, imported only on the Redis path: an embedded client (and
    every in-process CLI command) never loads the Redis client, a tenth of a second."""
    from redis import exceptions

    return exceptions


def _transient() -> tuple[type[Exception], ...]:
    """The errors of a Redis that is restarting or unreachable: wait, or say so."""
    errors = redis_errors()
    return (errors.ConnectionError, errors.TimeoutError)


def _can_fork() -> bool:
    from multiprocessing import get_all_start_methods  # only when processes are asked for

    return "fork" in get_all_start_methods()


def _lost(gone: int, of: int) -> ServiceError:
    what = "the job is" if of == 1 else f"{gone} of {of} jobs are"
    return ServiceError(
        f"{what} gone from Redis without a result (Redis restarted empty, someone deleted "
        "them, or their results outlived the result TTL): send the request again"
    )


def _refused_writes(exc: Exception) -> ServiceError:
    text = str(exc)
    if isinstance(exc, redis_errors().OutOfMemoryError) or "maxmemory" in text:
        return ServiceError(
            "Redis is full (maxmemory) and refused the job; try again when results have "
            "been read or expired",
            p.REDIS_FULL,
        )
    return ServiceError(f"Redis refused the job: {text}")


def failure_code(exc_string: str) -> str | None:
    """The failure code a worker put first in a failed job's text, if any."""
    head = exc_string.strip().split(":", 1)[0]
    if head in p.FAILURE_CODES:
        return head
    if "AbandonedJobError" in exc_string:
        return p.ABANDONED
    return None


@dataclass
class Job:
    """A submitted request; `result()` on the client waits for its answer."""

    id: str
    _result: dict | None = field(default=None, repr=False)  # embedded mode answers at once


# analyze_many waits on this many jobs or fewer with one blocking read (it wakes at the
# first result); on more, it polls their newest entries in pipelines, backing off.
BLOCKING_WAIT = 64
GONE_CHECK = 2.0  # seconds without a result after which the client asks whether jobs exist


class AnalysisClient:
    """submit / result / analyze / analyze_many.

    redis_url None -> embedded: requests run in this process on lexica found like the
    CLI finds them, `threads` of them at a time in analyze_many (the C core releases the
    GIL, so simulations and big searches use every core); with processes=True on threads
    forked processes instead (Linux), for work that is half Python (annotation, self-play),
    which threads cannot run at once. Otherwise jobs go to the RQ queue `queue` with a
    timeout and retries, in its `lane`: a bot waiting for its move asks in the
    interactive lane (the default), bulk work (annotating archives) in the batch lane, and
    workers take every interactive job before any batch one.
    """

    def __init__(
        self,
        redis_url: str | None = None,
        queue: str = "anchor",
        job_timeout: int = 30,
        retries: int = 2,
        result_ttl: int = 3600,
        registry=None,  # embedded mode's worker.runner.LexiconRegistry (default: a searching one)
        connection=None,
        threads: int = 1,
        processes: bool = False,
        lane: str = p.INTERACTIVE,
    ):
        if not (isinstance(job_timeout, int | float) and job_timeout > 0):
            raise ValueError(f"job_timeout must be a number of seconds > 0, not {job_timeout!r}")
        if lane not in p.LANES:
            raise ValueError(f"lane must be one of {', '.join(p.LANES)}, not {lane!r}")
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
            raise ValueError(f"threads must be a whole number 1..256, not {threads!r}")
        self.threads = threads  # embedded: requests analyze_many runs at once
        self.processes = processes and threads > 1 and _can_fork()
        self._warm = False  # embedded: whether a request has run (and loaded its lexica)
        self.redis_url = redis_url
        self.job_timeout = job_timeout
        self.retries = retries
        self.result_ttl = result_ttl
        if redis_url is None and connection is None:
            if registry is None:
                registry = _runner().LexiconRegistry(search=True)
            self.registry = registry
            self.queue = None
            return
        from rq import Queue

        from .protocol.serializer import MsgpackSerializer

        self.connection = connection if connection is not None else connect(redis_url)
        self.serializer = MsgpackSerializer
        self.queue = Queue(
            p.lane_queue(queue, lane), connection=self.connection, serializer=self.serializer
        )

    @property
    def embedded(self) -> bool:
        return self.queue is None

    def capacity(self) -> int:
        """How many of this client's jobs can run at once: its threads in-process, else the
        workers registered for its queue's lane (at least 1; RQ's worker registry, which
        may still count a worker that died within its heartbeat's timeout). One SCARD:
        all a client user may read of the registry (PROTOCOL.md, Redis users), and no
        worker's name or current job."""
        if self.embedded:
            return self.threads
        from rq.worker_registration import WORKERS_BY_QUEUE_KEY

        try:
            return max(1, self.connection.scard(WORKERS_BY_QUEUE_KEY % self.queue.name))
        except _transient() as exc:
            raise self._unreachable(exc) from None

    # ---------------------------------------------------------------- one job
    def submit(self, request: p.Request | bytes) -> Job:
        """Enqueue a request (or raw protocol bytes, as another client would send)."""
        payload = request if isinstance(request, bytes) else p.encode_request(request)
        if self.embedded:
            return Job(_new_job_id(), self._run_local(payload))
        try:
            job = self.queue.enqueue_call(**self._job_args(payload))
        except redis_errors().ResponseError as exc:
            raise _refused_writes(exc) from None
        except _transient() as exc:
            raise self._unreachable(exc) from None
        return Job(job.id)

    def _unreachable(self, exc: Exception) -> ServiceError:
        where = redacted(self.redis_url) if self.redis_url else "the given connection"
        return ServiceError(f"cannot reach Redis at {where}: {exc}")

    def result(self, job: Job, timeout: float = 30) -> dict:
        """The job's result map; ServiceError if none arrives within `timeout` seconds."""
        if job._result is not None:
            return job._result
        from rq.results import Result

        key = Result.get_key(job.id)
        last = "0-0"
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServiceError(f"no result for job {job.id} within {timeout:g} s")
            try:
                block = max(1, int(min(left, GONE_CHECK) * 1000))
                reply = self.connection.xread({key: last}, block=block)
                if not reply and self._gone([job.id]):
                    reply = self.connection.xread({key: last})  # a last look: none came
                    if not reply:
                        raise _lost(1, 1)
            except _transient():
                time.sleep(min(0.2, max(left, 0)))  # Redis restarting: try again until the deadline
                continue
            if not reply:
                continue
            for entry_id, fields in reply[0][1]:
                last = entry_id
                outcome = self._outcome(job.id, entry_id, fields)
                if outcome is not None:
                    return outcome

    def analyze(self, request: p.Request | bytes, timeout: float = 30) -> dict:
        return self.result(self.submit(request), timeout)

    # ----------------------------------------------------------------- many
    def analyze_many(
        self,
        requests: Sequence[p.Request | bytes],
        timeout: float = 300,
        progress: bool | Progress = False,
    ) -> list[dict]:
        """Results in request order. Enqueues in one pipeline and collects with pipelined
        reads, so thousands of jobs cost a few round trips, not thousands."""
        payloads = [r if isinstance(r, bytes) else p.encode_request(r) for r in requests]
        if isinstance(progress, Progress):
            bar = progress
        else:
            bar = Progress(len(payloads)) if progress else None
        if self.embedded:
            out = []
            alone = 1 if not self._warm else 0  # the first request loads the lexica, alone
            first, rest = (
                (payloads[:alone], payloads[alone:]) if self.threads > 1 else (payloads, [])
            )
            for payload in first:
                out.append(self._run_local(payload))
                bar and bar.step(1, out[-1:])
            if rest and self.processes:
                for result in self._run_in_processes(rest):
                    out.append(result)
                    bar and bar.step(1, [result])
            elif rest:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(self.threads) as pool:
                    for result in pool.map(self._run_local, rest):
                        out.append(result)
                        bar and bar.step(1, [result])
            bar and bar.close()
            return out
        from rq import Queue

        datas = [Queue.prepare_data(**self._job_args(pl)) for pl in payloads]
        try:
            with self.connection.pipeline() as pipe:
                jobs = self.queue.enqueue_many(datas, pipeline=pipe)
                pipe.execute()
        except redis_errors().ResponseError as exc:
            raise _refused_writes(exc) from None
        ids = [j.id for j in jobs]
        results: dict[str, dict] = {}
        deadline = time.monotonic() + timeout
        pause = 0.002
        read_from: dict[str, str] = {}  # blocking reads: each stream's last entry seen
        checked = time.monotonic()
        while len(results) < len(ids):
            left = deadline - time.monotonic()
            if left <= 0:
                raise ServiceError(
                    f"{len(ids) - len(results)} of {len(ids)} jobs unanswered after {timeout:g} s"
                )
            waiting = [i for i in ids if i not in results]
            try:
                if len(waiting) <= BLOCKING_WAIT:
                    entries = self._read_blocking(waiting, read_from, left)
                else:
                    entries = self._read_latest(waiting)
                if not entries and time.monotonic() - checked >= GONE_CHECK:
                    checked = time.monotonic()
                    gone = self._gone(waiting)
                    if gone and len(self._read_latest(gone)) < len(gone):
                        raise _lost(len(gone), len(ids))
            except _transient():
                time.sleep(0.2)  # Redis restarting: ask again until the deadline
                continue
            fresh = []
            for job_id, entry_id, fields in entries:
                if job_id not in results:
                    outcome = self._outcome(job_id, entry_id, fields)
                    if outcome is not None:
                        results[job_id] = outcome
                        fresh.append(outcome)
            bar and bar.step(len(fresh), fresh)
            if len(results) < len(ids) and len(waiting) > BLOCKING_WAIT:
                pause = 0.002 if fresh else min(pause * 2, 0.1)
                time.sleep(pause)
        bar and bar.close()
        return [results[i] for i in ids]

    def _gone(self, waiting: list[str]) -> list[str]:
        """Of the jobs awaited, those whose hash is no longer in Redis: Redis restarted
        empty (no persistence) or the job was deleted. No result will come for them."""
        from rq.job import Job as RQJob

        with self.connection.pipeline(transaction=False) as pipe:
            for job_id in waiting:
                pipe.exists(RQJob.key_for(job_id))
            found = pipe.execute()
        return [j for j, there in zip(waiting, found, strict=True) if not there]

    def _read_latest(self, waiting: list[str]) -> list[tuple]:
        """The newest result entry of each job that has one: one pipelined round trip."""
        from rq.results import Result

        with self.connection.pipeline(transaction=False) as pipe:
            for job_id in waiting:
                pipe.xrevrange(Result.get_key(job_id), "+", "-", count=1)
            replies = pipe.execute()
        return [(j, r[0][0], r[0][1]) for j, r in zip(waiting, replies, strict=True) if r]

    def _read_blocking(self, waiting: list[str], read_from: dict, left: float) -> list[tuple]:
        """The result entries after those seen, of a few jobs: one XREAD that returns at
        the first result (polling would answer a round of short jobs late by its pause)."""
        from rq.results import Result

        keys = {Result.get_key(j): j for j in waiting}
        block = max(1, int(min(left, 1.0) * 1000))
        reply = self.connection.xread({k: read_from.get(k, "0-0") for k in keys}, block=block)
        out = []
        for key, entries in reply or ():
            key = key.decode() if isinstance(key, bytes) else key
            for entry_id, fields in entries:
                read_from[key] = entry_id
                out.append((keys[key], entry_id, fields))
        return out

    # -------------------------------------------------------------- helpers
    def _job_args(self, payload: bytes) -> dict:
        from rq import Retry

        return {
            "func": p.JOB_FUNCTION,
            "args": (payload,),
            "timeout": max(1, int(self.job_timeout)),
            "result_ttl": self.result_ttl,
            "failure_ttl": self.result_ttl,
            "retry": Retry(max=self.retries) if self.retries else None,
            "job_id": _new_job_id(),
            "description": "anchor analyze",
        }

    def _outcome(self, job_id: str, entry_id, fields: dict) -> dict | None:
        """A result stream entry -> the result map, None for 'retried, wait on', or
        ServiceError for a job that failed for good."""
        from rq.results import Result

        result = Result.restore(
            job_id,
            entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
            fields,
            connection=self.connection,
            serializer=self.serializer,
        )
        if result.type == Result.Type.SUCCESSFUL:
            return p.check_result(result.return_value)
        if result.type == Result.Type.RETRIED:
            return None
        text = (result.exc_string or "").strip()
        raise ServiceError(f"job {job_id} failed in the worker: {text[-500:]}", failure_code(text))

    def _run_in_processes(self, payloads: list[bytes]) -> Iterator[dict]:
        """Results of `payloads`, in order, from `threads` forked children that inherit this
        client (and the lexica it has opened). Children ignore Ctrl-C: the parent cancels
        what has not started and waits only for the jobs running. A child that dies (killed,
        or out of memory) is a ServiceError, not a traceback."""
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool
        from multiprocessing import get_context

        pool = ProcessPoolExecutor(
            self.threads, mp_context=get_context("fork"), initializer=_adopt, initargs=(self,)
        )
        try:
            yield from pool.map(_run_forked, payloads)
        except BrokenProcessPool:
            raise ServiceError(
                "a process running the jobs died (killed, or out of memory?); "
                "run again, with fewer --threads or --no-processes"
            ) from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _run_local(self, payload: bytes) -> dict:
        self._warm = True
        try:
            request = p.decode_request(payload, p.Limits.unbounded())
            return _runner().run_request(request, self.registry)
        except p.ProtocolError as exc:
            return exc.to_result()


def _new_job_id() -> str:
    """A fresh job id: 128 random bits in hex, as unique as uuid4's (whose module would
    load with every in-process command)."""
    return os.urandom(16).hex()


_FORKED: AnalysisClient | None = None  # in a forked child: the client it runs jobs for


def _adopt(client: AnalysisClient) -> None:
    """A forked child's start: the client it works for (handed over by fork, not pickled,
    so two clients forking at once in one process each get their own), and Ctrl-C left to
    the parent."""
    global _FORKED  # noqa: PLW0603 - one client per child process
    _FORKED = client
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_forked(payload: bytes) -> dict:
    """One request in a forked process, on the lexica its parent had already opened."""
    assert _FORKED is not None
    return _FORKED._run_local(payload)  # noqa: SLF001 - the same client, forked


class Progress:
    """A progress bar on stderr (tqdm: ETA, rate, redrawn in place on a terminal; nothing
    when stderr is a file or a pipe, so logs get no carriage-return spam). It counts jobs;
    subclasses override `count` to also rate something else (positions, games)."""

    unit = "jobs"

    def __init__(self, total: int, stream=sys.stderr, what: str = "jobs"):
        from tqdm import tqdm

        self.counted = 0
        self.started = time.monotonic()
        self.bar = tqdm(
            total=total,
            unit=f" {what}",
            file=stream,
            disable=None,  # off when the stream is not a terminal
            dynamic_ncols=True,
            smoothing=0.1,
        )

    def count(self, result: dict) -> int:
        """How much one finished job adds to the rate shown beside the bar."""
        return 1

    def step(self, n: int, results: Sequence[dict] = ()) -> None:
        self.counted += sum(self.count(r) for r in results) if results else n
        if self.unit != "jobs":
            rate = self.counted / max(time.monotonic() - self.started, 1e-9)
            self.bar.set_postfix_str(f"{rate:,.0f} {self.unit}/s", refresh=False)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


def requests_for(positions: Iterable[p.Position], **kwargs) -> list[p.Request]:
    """One single-position request per position (sharing ruleset, lexicon, options)."""
    return [p.Request(positions=(pos,), **kwargs) for pos in positions]
