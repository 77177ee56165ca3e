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
from functools import partial
from typing import Any

import msgpack
from rq.exceptions import NoSuchJobError
from rq.job import Job

from anchor.client import protocol as p
from anchor.client.protocol.serializer import Packed

from . import jobs, rq_private
from .atomic import call_script

log = logging.getLogger("anchor.guard")

# The only functions a worker runs, by the name a client enqueues.
ALLOWED_FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: jobs.analyze for name in (p.JOB_FUNCTION, *p.JOB_FUNCTION_ALIASES)
}

FORBIDDEN_FUNCTION = p.FORBIDDEN_FUNCTION
MALFORMED_JOB = p.MALFORMED_JOB
MAX_JOB_DATA = (1 << 20) + 4096  # a request (PROTOCOL.md: 1 MiB) plus its RQ envelope
MAX_EXC_INFO = 1 << 16
MAX_JOB_FIELDS = 64  # in a job's hash (RQ writes about 25)
MAX_JOB_HASH = 2 * MAX_JOB_DATA  # bytes of a job's hash, names and values: data and the rest
_OVERSIZED = b"anchor:oversized"

# KEYS: a job's hash. ARGV: MAX_JOB_FIELDS, MAX_JOB_HASH. The hash (HGETALL's reply), or
# {_OVERSIZED, fields, bytes} when it is larger than a job can be, read without sending it:
# anyone who can enqueue can write a job's hash, and one 400 MB description (or two
# million fields) took a worker from 61 MB to 1.2 GB.
_FETCH = """
local n = redis.call('HLEN', KEYS[1])
if n > tonumber(ARGV[1]) then return {'anchor:oversized', n, -1} end
local size = 0
for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
  size = size + string.len(name) + redis.call('HSTRLEN', KEYS[1], name)
end
if size > tonumber(ARGV[2]) then return {'anchor:oversized', n, size} end
return redis.call('HGETALL', KEYS[1])
"""
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
    oversized: bool = False  # 'data' inflates past MAX_JOB_DATA
    too_large: str | None = None  # the hash itself is over what a job can be: why
    context: jobs.JobContext | None = None  # set by the worker before the job runs

    def refresh(self) -> None:
        """RQ's read of the job's hash (HGETALL), bounded: a hash over MAX_JOB_FIELDS
        fields or MAX_JOB_HASH bytes is not sent to this worker; the job is read as an
        empty request and answered `payload_too_large`."""
        got = call_script(self.connection, _FETCH, [self.key], [MAX_JOB_FIELDS, MAX_JOB_HASH])
        if not got:
            raise NoSuchJobError(f"No such job: {self.key}")
        if got[0] == _OVERSIZED:
            fields, size = int(got[1]), int(got[2])
            what = f"{fields:,} fields" if size < 0 else f"{size:,} bytes"
            limit = f"{MAX_JOB_FIELDS} fields" if size < 0 else f"{MAX_JOB_HASH:,} bytes"
            self.restore({"data": zlib.compress(msgpack.packb([p.JOB_FUNCTION, None, [b""], {}]))})
            self.too_large = f"the job's hash holds {what}, over the server's cap of {limit}"
            log.warning("oversized job hash", extra={"job": self.id, "error": self.too_large})
            return
        self.too_large = None
        self.restore(dict(zip(got[::2], got[1::2], strict=True)))

    def restore(self, raw_data) -> Any:
        fields = {k.decode() if isinstance(k, bytes) else str(k): v for k, v in raw_data.items()}
        if "data" not in fields:
            raise NoSuchJobError(f"job {self.id} has no data field")
        problems = []
        self.oversized = False
        if _inflate(_as_bytes(fields["data"]), MAX_JOB_DATA) is None:
            self.oversized = True  # answered `payload_too_large`, like any request over 1 MiB
            fields["data"] = zlib.compress(msgpack.packb([p.JOB_FUNCTION, None, [b""], {}]))
        if "exc_info" in fields and _inflate(_as_bytes(fields["exc_info"]), MAX_EXC_INFO) is None:
            fields["exc_info"] = b""
        try:
            result = super().restore(fields)
        except Exception:  # some field RQ cannot parse: find each by itself, drop it
            stub = {"data": msgpack.packb(["?", None, [], {}])}
            for name in [n for n in fields if n != "data"]:
                probe = Job(self.id, connection=self.connection, serializer=self.serializer)
                try:
                    Job.restore(probe, {**stub, name: fields[name]})
                except Exception:  # whatever RQ's parser raises, the field is unusable
                    shown = f"{fields[name]!r:.60}"
                    problems.append(f"field '{name}' has a value RQ cannot read: {shown}")
                    del fields[name]
            result = super().restore(fields)
        for name in _CALLBACKS:
            if rq_private.has_callback(self, name):
                problems.append(f"'{name}' is set; this service runs no callbacks")
        if self.webhooks or _as_bytes(fields.get("webhooks") or b"").strip() not in (b"", b"[]"):
            problems.append("webhooks are set; this service sends none")  # readable or not
            self.webhooks = []
        if rq_private.take_dependencies(self):
            problems.append("'dependency_ids' is set; this service runs no dependent jobs")
        rq_private.drop_callbacks(self)
        try:
            rq_private.read_call(self)
        except Exception:  # RQ reads func_name in its bookkeeping: make it safe to read
            problems.append("'data' is not a msgpack array [function, nil, args, kwargs]")
            rq_private.blank_call(self)
        self.problems = tuple(problems)
        return result

    @property
    def func(self) -> Callable[..., Any]:
        """The allow-listed job function, or `refuse` bound to the reason."""
        refusal = self.refusal()
        if refusal is not None:
            return partial(refuse, *refusal)
        if self.oversized:
            return partial(too_large, MAX_JOB_DATA)
        return partial(ALLOWED_FUNCTIONS[self.func_name], context=self.context)

    def refusal(self) -> tuple[str, str] | None:
        """(code, message) when this job must not run, else None."""
        if self.too_large is not None:
            return p.PAYLOAD_TOO_LARGE, self.too_large
        if self.problems:
            return MALFORMED_JOB, "the job hash is malformed: " + "; ".join(self.problems)
        name, instance, args, kwargs = self.func_name, self.instance, self.args, self.kwargs
        if name not in ALLOWED_FUNCTIONS or instance is not None:
            allowed = ", ".join(sorted(ALLOWED_FUNCTIONS))
            return FORBIDDEN_FUNCTION, f"this worker runs only {allowed}, not {name[:100]!r}"
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


def too_large(limit: int, *args, **kwargs) -> Packed:
    """The job function of a job whose data is over `limit` bytes: an error result."""
    message = f"the job's data is over {limit:,} bytes; a request is at most {p.MAX_PAYLOAD:,}"
    return Packed(p.pack(p.error_result(p.PAYLOAD_TOO_LARGE, message)))


def refuse(code: str, message: str, *args, **kwargs):
    """The job function of a refused job: fails it with the reason."""
    raise RefusedJob(code, message)


def _as_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
