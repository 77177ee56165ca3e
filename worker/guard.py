"""What a worker accepts from the queue. Anyone who can write to Redis can write a job, so
a job is data to check, never code to trust.

`AnchorJob` is RQ's Job with its three import points closed: the job function is looked
up in an allow-list (nothing is ever imported by a name read from Redis), and callbacks
and webhooks are never run. Its `restore` never raises on a field RQ cannot parse: the
field is dropped and the problem recorded, so the job is answered (failed with a reason)
instead of being lost. A refused job runs `refuse`, which raises `RefusedJob`; RQ then
fails it through its ordinary path (started registry, failed registry, result stream).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from typing import Any

from rq.exceptions import NoSuchJobError
from rq.job import Job

from . import jobs

log = logging.getLogger("anchor.guard")

# The only functions a worker runs, by the name a client enqueues.
ALLOWED_FUNCTIONS: dict[str, Callable[..., Any]] = {"worker.jobs.analyze": jobs.analyze}

FORBIDDEN_FUNCTION = "forbidden_function"
MALFORMED_JOB = "malformed"
MAX_JOB_DATA = (1 << 20) + 4096  # a request (PROTOCOL.md: 1 MiB) plus its RQ envelope
MAX_EXC_INFO = 1 << 16
_CALLBACKS = ("success_callback_name", "failure_callback_name", "stopped_callback_name")


class RefusedJob(Exception):
    """A job this worker will not run; `code` is a PROTOCOL.md failure code."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _inflate(raw: bytes, limit: int) -> bytes | None:
    """RQ stores data zlib-compressed or plain; None when it inflates past `limit`."""
    try:
        inflater = zlib.decompressobj()
        out = inflater.decompress(raw, limit + 1)
    except zlib.error:
        return raw if len(raw) <= limit else None
    if len(out) > limit or inflater.unconsumed_tail:
        return None
    return out


class AnchorJob(Job):
    """A job read from Redis with every field checked before anything uses it."""

    problems: tuple[str, ...] = ()

    def restore(self, raw_data) -> Any:
        fields = {k.decode() if isinstance(k, bytes) else str(k): v for k, v in raw_data.items()}
        if "data" not in fields:
            raise NoSuchJobError(f"job {self.id} has no data field")
        problems = []
        for name, limit in (("data", MAX_JOB_DATA), ("exc_info", MAX_EXC_INFO)):
            if name in fields and _inflate(_as_bytes(fields[name]), limit) is None:
                problems.append(f"'{name}' is larger than {limit} bytes")
                fields[name] = zlib.compress(b"\xc0") if name == "data" else b""
        for name in list(fields):
            if name == "data":
                continue
            probe = Job(self.id, connection=self.connection, serializer=self.serializer)
            try:
                Job.restore(probe, {"data": fields["data"], name: fields[name]})
            except Exception:  # whatever RQ's parser raises, the field is unusable
                problems.append(f"field '{name}' has a value RQ cannot read: {fields[name]!r:.60}")
                del fields[name]
        result = super().restore(fields)
        for name in _CALLBACKS:
            if getattr(self, f"_{name}", None):
                problems.append(f"'{name}' is set; this service runs no callbacks")
        if self.webhooks:
            problems.append("webhooks are set; this service sends none")
            self.webhooks = []
        self._success_callback = self._failure_callback = self._stopped_callback = None
        self.problems = tuple(problems)
        return result

    @property
    def func(self) -> Callable[..., Any]:
        """The allow-listed job function, or `refuse` bound to the reason."""
        refusal = self.refusal()
        if refusal is not None:
            code, message = refusal
            return lambda *args, **kwargs: refuse(code, message)
        return ALLOWED_FUNCTIONS[self.func_name]

    def refusal(self) -> tuple[str, str] | None:
        """(code, message) when this job must not run, else None."""
        if self.problems:
            return MALFORMED_JOB, "the job hash is malformed: " + "; ".join(self.problems)
        try:
            name, instance, args, kwargs = self.func_name, self.instance, self.args, self.kwargs
        except Exception:
            return MALFORMED_JOB, "the job's 'data' is not a msgpack [function, nil, args, kwargs]"
        if not isinstance(name, str) or name not in ALLOWED_FUNCTIONS or instance is not None:
            shown = name if isinstance(name, str) else type(name).__name__
            allowed = ", ".join(sorted(ALLOWED_FUNCTIONS))
            return FORBIDDEN_FUNCTION, f"this worker runs only {allowed}, not {shown[:100]!r}"
        if (
            not isinstance(args, list | tuple)
            or len(args) != 1
            or not isinstance(args[0], bytes)
            or kwargs
        ):
            return MALFORMED_JOB, f"{name} takes one argument: the request as msgpack binary"
        return None

    def send_webhooks(self, status, *, exc_string=None) -> None:
        """Never: a URL read from Redis is not one this worker will call."""

    def execute_success_callback(self, *args, **kwargs) -> None:
        """Never: see `restore`."""

    def execute_failure_callback(self, *args, **kwargs) -> None:
        """Never: see `restore`."""


def refuse(code: str, message: str):
    """The job function of a refused job: fails it with the reason, logged."""
    raise RefusedJob(code, message)


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
