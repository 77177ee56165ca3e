"""How a worker takes jobs off Redis: priority lanes, stray bytes, stranded ids.

Anyone may write to the queue, so what RQ reads by id is checked before RQ sees it:

- **Lanes.** A worker serves its queues in order (interactive before batch). Each id is
  moved (LMOVE) from its lane into that lane's intermediate list, as RQ does for a single
  queue, so a worker killed between taking an id and starting the job loses nothing: the id
  waits in the intermediate list until maintenance puts it back (`recover_stranded`).
- **Ids that are not UTF-8.** RQ decodes every id it reads and a single bad one raised in
  every dequeue and every maintenance pass, wedging every worker. An id is checked when it
  is taken; the keys maintenance reads are scrubbed when RQ trips over one (`scrub`). Each
  bad member is removed and logged once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence

from redis import Redis
from redis.exceptions import ResponseError, WatchError
from rq import Queue
from rq.exceptions import DequeueTimeout
from rq.executions import WORKER_EXECUTIONS_KEY_TEMPLATE
from rq.group import Group
from rq.rate_limit import RateLimitRegistry
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY

from anchor.client.protocol import LANES, lane_queue

from . import rq_private
from .metrics import HEALTH, METRICS

log = logging.getLogger("anchor.queues")

LANE_POLL = 0.05  # seconds a worker serving several lanes blocks on the first before looking again
SCRUB_MAX = 1_000_000  # members: a larger key is not scanned (a second or more of Redis time)
STRANDED_AFTER = 3.0  # seconds an id may sit in an intermediate list before it is put back
CLAIM_MARK_TTL = 60  # seconds a job's claim marker lives: far past any claim's few ms


def claim_mark(job_id: str | bytes) -> str:
    """The key a worker's claim of a job (atomic.CLAIM, one script) and maintenance's
    putting it back both SET, and the put-back WATCHes: a claim landing between the
    put-back's look and its write makes the put-back give up. The two exclude each other
    on this one job, not on the whole lane's intermediate list (whose every change, by any
    worker, made the others' claims retry). SET, which no value a stranger leaves there
    can make fail."""
    return f"anchor:claim:{_text(job_id) or job_id!r}"


def lane_queues(bases: Sequence[str], lanes: Sequence[str] = LANES) -> list[str]:
    """Queue names in the order a worker serves them: every base's first lane, then the next."""
    return [lane_queue(base, lane) for lane in lanes for base in bases]


def _text(raw: bytes | str) -> str | None:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def _dropped(key: str, member: bytes) -> None:
    log.warning(
        "removed an id that is not UTF-8",
        extra={"key": key, "member": repr(member[:80]), "length": len(member)},
    )
    METRICS.inc("anchor_bad_ids_removed_total")


class AnchorQueue(Queue):
    """RQ's Queue with a dequeue over priority lanes that never passes RQ an id it cannot
    read, and never loses an id it has taken."""

    @classmethod
    def dequeue_any(
        cls,
        queues: Iterable[Queue],
        timeout: int | None,
        connection: Redis,
        job_class=None,
        serializer=None,
        death_penalty_class=None,
    ):
        queues = list(queues)
        waited_until = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                taken = cls._take(queues, connection, waited_until)
            except Exception:
                HEALTH.trouble()
                raise
            if taken is None:
                return None
            queue, raw = taken
            job_id = _text(raw)
            if job_id is None:  # logged under the key a client wrote it to
                connection.lrem(queue.intermediate_queue_key, 1, raw)
                _dropped(queue.key, raw)
                continue
            found = rq_private.fetch_dequeued_job(
                cls,
                connection,
                queue.key,
                job_id,
                job_class=job_class,
                serializer=serializer,
                death_penalty_class=death_penalty_class,
            )
            if found is None:  # no such job (any more): nothing to run, nothing to keep
                connection.lrem(queue.intermediate_queue_key, 1, raw)
                continue
            HEALTH.beat(redis_ok=True)
            return found

    @classmethod
    def _take(cls, queues: list[Queue], connection: Redis, until: float | None):
        """(queue, raw id) moved into that queue's intermediate list, first lane first;
        None at once when `until` is None and all are empty; DequeueTimeout at `until`."""
        while True:
            for queue in queues:
                raw = _moved(connection, queue.key, queue.intermediate_queue_key)
                if raw is not None:
                    return queue, raw
            if until is None:
                return None
            left = until - time.monotonic()
            if left <= 0:
                raise DequeueTimeout(0, queues[0].key)
            first = queues[0]
            wait = left if len(queues) == 1 else min(left, LANE_POLL)
            raw = _moved(connection, first.key, first.intermediate_queue_key, max(wait, 0.01))
            HEALTH.beat(redis_ok=True)
            if raw is not None:
                return first, raw


def _moved(connection: Redis, source: str, target: str, wait: float | None = None):
    """LMOVE (BLMOVE when `wait`) from a lane to its intermediate list. Anyone may write to
    Redis: a lane or list key holding another type (a string, a hash) would fail every
    dequeue for good; it holds no job a worker could take, so it is removed and logged."""
    try:
        if wait is None:
            return connection.lmove(source, target)
        return connection.blmove(source, target, wait)
    except ResponseError as exc:
        if "WRONGTYPE" not in str(exc):
            raise
        _drop_wrong_types(connection, source, target)
        return None


def _drop_wrong_types(connection: Redis, *keys: str, kind: bytes = b"list") -> None:
    for key in keys:
        found = connection.type(key)
        if found not in (kind, b"none") and connection.delete(key):
            log.warning(
                "removed a key of the wrong type",
                extra={
                    "key": key,
                    "type": found.decode(errors="replace"),
                    "expected": kind.decode(),
                },
            )
            METRICS.inc("anchor_bad_ids_removed_total")


def recover_stranded(queue: Queue, now: float | None = None) -> list[str]:
    """Put back at the head of `queue` the ids that have sat in its intermediate list for
    STRANDED_AFTER seconds (their worker died between taking and starting them); drop the
    ids that are not UTF-8. Returns the ids put back."""
    connection = queue.connection
    key = queue.intermediate_queue_key
    seen_key = f"{key}:seen"
    now = time.time() if now is None else now
    try:
        members = connection.lrange(key, 0, -1)
        seen = connection.hgetall(seen_key)
    except ResponseError as exc:  # a key of another type, written by anyone: removed
        if "WRONGTYPE" not in str(exc):
            raise
        _drop_wrong_types(connection, key)
        _drop_wrong_types(connection, seen_key, kind=b"hash")
        return []
    back = []
    for raw in dict.fromkeys(members):
        job_id = _text(raw)
        if job_id is None:
            connection.lrem(key, 0, raw)
            _dropped(key, raw)
            continue
        first = seen.get(raw)
        if first is None:
            connection.hsetnx(seen_key, raw, repr(now))
            connection.expire(seen_key, 86_400)
            continue
        try:
            stranded = now - float(first) >= STRANDED_AFTER
        except ValueError:
            stranded = True
        if stranded and _put_back(connection, key, queue.key, raw):
            back.append(job_id)
            log.warning("requeued a stranded job", extra={"job": job_id, "queue": queue.name})
    gone = [raw for raw in seen if raw not in members or raw in back]
    if gone:
        connection.hdel(seen_key, *gone)
    return back


def _put_back(connection: Redis, key: str, queue_key: str, raw: bytes) -> bool:
    """Atomically move `raw` from the intermediate list `key` to the head of its queue;
    False when a worker claimed it meanwhile (worker.AnchorWorker._claim removes it)."""
    mark = claim_mark(raw)
    with connection.pipeline() as pipe:
        try:
            pipe.watch(mark)
            if pipe.lpos(key, raw) is None:
                return False
            pipe.multi()
            pipe.lrem(key, 1, raw)
            pipe.lpush(queue_key, raw)
            pipe.set(mark, "put back", ex=CLAIM_MARK_TTL)
            pipe.execute()
            return True
        except WatchError:  # a worker claimed it meanwhile; the next round looks again
            return False


def rq_keys(queue: Queue, worker_name: str | None = None) -> list[str]:
    """Every key of RQ's that a worker serving `queue` reads ids from."""
    keys = [
        queue.key,
        queue.intermediate_queue_key,
        queue.started_job_registry.key,
        queue.finished_job_registry.key,
        queue.failed_job_registry.key,
        queue.deferred_job_registry.key,
        queue.scheduled_job_registry.key,
        queue.canceled_job_registry.key,
        queue.ready_job_registry.key,
        WORKERS_BY_QUEUE_KEY % queue.name,
        REDIS_WORKER_KEYS,
        RateLimitRegistry.rl_keys_key,
        Group.REDIS_GROUP_KEY,
    ]
    if worker_name is not None:
        keys.append(WORKER_EXECUTIONS_KEY_TEMPLATE.format(worker_name))
    return keys


def scrub(connection: Redis, keys: Iterable[str]) -> int:
    """Remove every member that is not UTF-8 from the lists, sets and sorted sets at
    `keys` (and from the groups `rq:groups` names); how many were removed."""
    removed = 0
    keys = list(keys)
    groups = [m for m in connection.smembers(Group.REDIS_GROUP_KEY) if _text(m) is not None]
    keys += [Group.REDIS_GROUP_NAME_PREFIX + m.decode() for m in groups]
    for key in keys:
        kind = connection.type(key)
        size = {b"list": connection.llen, b"set": connection.scard, b"zset": connection.zcard}
        if kind in size and size[kind](key) > SCRUB_MAX:
            log.warning("not scrubbed: too large to scan", extra={"key": key})
            continue
        if kind == b"list":
            members = connection.lrange(key, 0, -1)
            remove = lambda raw, key=key: connection.lrem(key, 0, raw)  # noqa: E731
        elif kind == b"set":
            members = list(connection.sscan_iter(key, count=1000))
            remove = lambda raw, key=key: connection.srem(key, raw)  # noqa: E731
        elif kind == b"zset":
            members = [m for m, _ in connection.zscan_iter(key, count=1000)]
            remove = lambda raw, key=key: connection.zrem(key, raw)  # noqa: E731
        else:
            continue
        for raw in dict.fromkeys(members):
            if _text(raw) is None and remove(raw):
                _dropped(key, raw)
                removed += 1
    return removed
