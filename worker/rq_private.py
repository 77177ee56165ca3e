"""Every use of RQ's private names, in one place. The worker and its job class extend RQ
where it offers no hook (a result stored atomically with the claim check, a job read
field by field, signals installed before registration); each of those reaches into a
name RQ does not document. They are all here, so that an RQ upgrade is checked against
one file (tests/test_layout.py holds that no other module uses an RQ private name)."""

from __future__ import annotations

from typing import Any

from rq.job import Job, JobStatus

# ---------------------------------------------------------------- the worker


def mark_stop_requested(worker) -> None:
    """The flag RQ's work loop reads at each turn to stop (set by its SIGTERM handler)."""
    worker._stop_requested = True  # noqa: SLF001


def install_signal_handlers(worker) -> None:
    worker._install_signal_handlers()  # noqa: SLF001


def finalize_failure(worker, job: Job, queue, execution, exc_info) -> None:
    """RQ's bookkeeping of a job that raised: its failure handlers, then the failure write."""
    worker._finalize_failure(job, queue, execution, exc_info)  # noqa: SLF001


def finalize_success(worker, job: Job, queue, execution, return_value: Any) -> None:
    worker._finalize_success(job, queue, execution, return_value)  # noqa: SLF001


def exception_handlers(worker) -> list:
    """The worker's exception handlers, which RQ's registry cleaning calls for a job it
    finds abandoned."""
    return worker._exc_handlers  # noqa: SLF001


# ---------------------------------------------------------------- the queue


def fetch_dequeued_job(queue_class, connection, queue_key: str, job_id: str, **options):
    """RQ's read of a job whose id was just taken off `queue_key`: the job, or None when
    its hash is gone (`options`: job_class, serializer, death_penalty_class)."""
    return queue_class._fetch_dequeued_job(connection, queue_key, job_id, **options)  # noqa: SLF001


# ---------------------------------------------------------------- a job's result


def write_success(job: Job, result_ttl: int, pipeline, **by) -> None:
    """RQ's own result write (the Result stream entry and the job hash), into `pipeline`."""
    job._handle_success(result_ttl, pipeline=pipeline, **by)  # noqa: SLF001


def write_failure(job: Job, exc_string: str, pipeline, **by) -> None:
    """RQ's own failure record (the Result stream entry and the job hash), into `pipeline`."""
    job._handle_failure(exc_string, pipeline=pipeline, **by)  # noqa: SLF001


def mark_finished(job: Job) -> None:
    """The job object's status after its result was written (RQ sets it the same way)."""
    job._status = JobStatus.FINISHED  # noqa: SLF001


# ---------------------------------------------------------------- a job read from Redis


def has_callback(job: Job, name: str) -> bool:
    """Whether the job names a callback (`name`: success_callback_name and the like)."""
    return bool(getattr(job, f"_{name}", None))


def take_dependencies(job: Job) -> bool:
    """Whether the job names jobs it depends on; they are dropped either way."""
    named = bool(job._dependency_ids)  # noqa: SLF001
    job._dependency_ids = []  # noqa: SLF001
    return named


def drop_callbacks(job: Job) -> None:
    job._success_callback = job._failure_callback = job._stopped_callback = None  # noqa: SLF001


def read_call(job: Job) -> None:
    """Unpack the job's data now (RQ does it lazily, where a bad one would raise later);
    TypeError when the function name is not text."""
    job._deserialize_data()  # noqa: SLF001
    if not isinstance(job._func_name, str):  # noqa: SLF001
        raise TypeError("the function name is not a string")


def blank_call(job: Job) -> None:
    """A call RQ's bookkeeping can read safely, for a job whose data could not be read."""
    job._func_name, job._instance, job._args, job._kwargs = "?", None, (), {}  # noqa: SLF001
