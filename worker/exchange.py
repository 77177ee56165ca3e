"""Where the jobs of one pooled simulation meet (PROTOCOL.md, pooled simulations): a
counter per round that hands out its pieces, and a log of the pieces' values that every
job reads.

`RedisExchange` is the fleet's: a hash of claim counters and a stream of values under
`anchor:pool:<pool>:<digest>`, the digest that of the whole request, so only jobs asking
for the very same simulation ever share one. `MemoryExchange` is the embedded client's
(threads of one process). Neither knows what a piece holds: pooled.py reads and checks it.

A value in the stream is taken only with the workers' seal: an HMAC of the pool, the
round, the piece and the value, keyed by a secret only workers can read (`SEAL_KEY`, a
key of the worker user's alone; PROTOCOL.md, "Redis users"). The request, and so what a
piece should hold, is the enqueuer's: without the seal anyone who could write the stream
could make a simulation answer what they liked. The stream is read a few entries at a
time, and a job that meets more entries it cannot use than the pool could hold goes on
alone: junk costs a bounded read, never the job's memory.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Protocol, TypeVar

from anchor.client.protocol import POOL_TTL, pool_stop_key

log = logging.getLogger("anchor.exchange")
T = TypeVar("T")

MAX_POOLS_IN_MEMORY = 64  # embedded: the pools kept, most recent first
SEAL_KEY = "anchor:workers:seal"  # the workers' shared secret: 32 random bytes, made once
SEAL_BYTES = 16  # of the HMAC-SHA256 kept in an entry's `m` field
READ_COUNT = 64  # stream entries a read takes at a time (a piece: a few KiB)


def _redis_error() -> type[Exception]:
    """redis-py's base error, imported only when a pool meets through Redis: in-process
    simulations (the CLI without a URL) never load the Redis client."""
    from redis.exceptions import RedisError

    return RedisError


class Exchange(Protocol):
    """One pooled simulation's shared state. Pieces are numbered within their round."""

    @property
    def shared(self) -> bool:
        """False once the job goes on alone (nothing more will come from others)."""

    @property
    def stopped(self) -> bool:
        """Whether the client gave the simulation up (seen at the last claim)."""

    def claim(self, round_no: int) -> int:
        """The next unclaimed piece of the round (a number past its last when none is)."""

    def publish(
        self, round_no: int, piece: int, blob: bytes, pieces: int, claim: bool
    ) -> tuple[int, int]:
        """Add a piece's values; with `claim`, claim the next piece as well: the round's
        (it has `pieces`), else the next round's, which the job plays once this round is
        merged. (round, piece) claimed, or (-1, -1)."""

    def pieces(
        self, round_no: int, seconds: float, have: Collection[int] = ()
    ) -> dict[int, list[bytes]]:
        """Every value published so far for each piece of the round (in the order they
        came: a piece may be published twice, or by a stranger), after waiting up to
        `seconds` for a piece the caller does not `have` when none is there."""


class Pools(Protocol):
    """Opens a pool's exchange by its key; `cap`: the entries it may need to hold."""

    def __call__(self, key: str, cap: int) -> Exchange: ...


class _Log:
    """Entries read so far, by round and piece, in the order they came."""

    __slots__ = ("rounds",)

    def __init__(self) -> None:
        self.rounds: dict[int, dict[int, list[bytes]]] = {}

    def add(self, round_no: int, piece: int, blob: bytes) -> None:
        self.rounds.setdefault(round_no, {}).setdefault(piece, []).append(blob)

    def of(self, round_no: int) -> dict[int, list[bytes]]:
        return {i: list(b) for i, b in self.rounds.get(round_no, {}).items()}

    def news(self, round_no: int, have: Collection[int]) -> bool:
        """Whether the round has a piece besides those in `have`."""
        return any(piece not in have for piece in self.rounds.get(round_no, {}))


class Tampered(Exception):
    """A pool's key holds what no job of this service wrote (a claim counter below zero,
    more unsealed stream entries than the pool could hold, a secret no worker made): the
    job goes on alone, as when Redis fails."""


def _claimed(piece: int, cap: int) -> int:
    """A piece number read back from the claims counter, which only jobs increment from 0,
    at most once per piece and per job past the last (`cap` bounds both)."""
    if piece < 0 or piece > cap:
        raise Tampered(f"the round's claim counter reads {piece + 1}, which no job wrote")
    return piece


class RedisExchange:
    """A pool in Redis: claims in a hash (field: the round), values in a stream (fields
    r, i, b). Each write refreshes both keys' expiry; the stream is capped at `cap`
    entries (a request's rounds times its pieces, with room for some played twice).

    When Redis fails (full, gone) the job goes on alone: from then on it claims and
    reads in its own memory, so it plays every piece it has not got; its answer is the
    same, only not shared."""

    __slots__ = ("_alone", "_claims", "_connection", "_cap", "_junk", "_key", "_last", "_log",
                 "_secret", "_stop", "_stopped")  # fmt: skip

    def __init__(self, connection, key: str, cap: int):
        self._connection = connection
        self._key = key
        self._claims = key + ":claims"
        self._stop = pool_stop_key(key)
        self._stopped = False
        self._cap = cap
        self._junk = 0  # entries read that were not sealed values of this pool
        self._last = "0-0"
        self._log = _Log()
        self._alone: MemoryExchange | None = None
        self._secret: bytes | None = None

    def claim(self, round_no: int) -> int:
        def remote() -> int:
            with self._connection.pipeline(transaction=False) as pipe:
                pipe.hincrby(self._claims, str(round_no), 1)
                pipe.expire(self._claims, POOL_TTL)
                pipe.exists(self._stop)
                got = pipe.execute()
            self._stopped = bool(got[2])
            return _claimed(int(got[0]) - 1, self._cap)

        return self._or_alone(remote, lambda alone: alone.claim(round_no))

    def publish(
        self, round_no: int, piece: int, blob: bytes, pieces: int, claim: bool
    ) -> tuple[int, int]:
        def remote() -> tuple[int, int]:
            keys = [self._key, self._claims, self._stop]
            seal = self._seal(round_no, piece, blob)
            args = [round_no, piece, blob, pieces if claim else -1, self._cap, POOL_TTL, seal]
            got = _publish_script(self._connection)(keys, args)
            self._stopped = int(got[0]) == STOPPED
            if self._stopped:
                return (-1, -1)
            if int(got[0]) < 0:  # nothing claimed (claim=False)
                return (-1, -1)
            return int(got[0]), _claimed(int(got[1]), self._cap)

        return self._or_alone(
            remote, lambda alone: alone.publish(round_no, piece, blob, pieces, claim)
        )

    def pieces(
        self, round_no: int, seconds: float, have: Collection[int] = ()
    ) -> dict[int, list[bytes]]:
        # the stream is read past what this job read: a wait is for an entry it has not seen
        def remote() -> dict[int, list[bytes]]:
            if not self._read(None) and seconds > 0:
                self._read(max(1, int(seconds * 1000)))
            return self._log.of(round_no)

        return self._or_alone(remote, lambda alone: alone.pieces(round_no, 0.0, have))

    @property
    def shared(self) -> bool:
        return self._alone is None

    @property
    def stopped(self) -> bool:
        return self._stopped

    def _or_alone(self, remote: Callable[[], T], local: Callable[[MemoryExchange], T]) -> T:
        if self._alone is None:
            try:
                return remote()
            except (_redis_error(), Tampered) as exc:
                log.warning(
                    "Redis failed a pooled simulation; it goes on alone",
                    extra={"pool": self._key, "error": str(exc)},
                )
                self._alone = MemoryExchange()
        return local(self._alone)

    def _read(self, block_ms: int | None) -> bool:
        """Read the stream past what was read, READ_COUNT entries at a time; whether
        anything was there. Entries without the workers' seal are counted, not kept."""
        found = False
        while True:
            got = self._connection.xread({self._key: self._last}, count=READ_COUNT,
                                         block=None if found else block_ms)  # fmt: skip
            taken = 0
            for _, entries in got or ():
                for entry_id, fields in entries:
                    self._last = entry_id
                    taken += 1
                    entry = self._sealed(fields)
                    if entry is not None:
                        self._log.add(*entry)
                    else:
                        self._junk += 1
            found = found or taken > 0
            if self._junk > self._cap:
                raise Tampered(f"the pool's stream holds over {self._cap} entries no job sealed")
            if taken < READ_COUNT:
                return found

    def _seal(self, round_no: int, piece: int, blob: bytes) -> bytes:
        """The HMAC an entry carries: of the pool, its round, piece and value."""
        if self._secret is None:
            self._secret = _workers_secret(self._connection)
        message = b"%s\x00%d\x00%d\x00" % (self._key.encode(), round_no, piece) + blob
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:SEAL_BYTES]

    def _sealed(self, fields: dict) -> tuple[int, int, bytes] | None:
        """(round, piece, blob) of an entry a worker of this fleet wrote; None otherwise."""
        entry = _entry(fields)
        seal = fields.get(b"m")
        if entry is None or not isinstance(seal, bytes):
            return None
        if not hmac.compare_digest(seal, self._seal(*entry)):
            return None
        return entry


def _workers_secret(connection) -> bytes:
    """The secret that seals pool entries: made by the first worker that needs it (SET
    NX), read by the rest. A value no worker made (too short) is Tampered."""
    with connection.pipeline(transaction=False) as pipe:
        pipe.set(SEAL_KEY, os.urandom(32), nx=True)
        pipe.get(SEAL_KEY)
        secret = pipe.execute()[1]
    if not isinstance(secret, bytes) or len(secret) < 32:
        raise Tampered(f"{SEAL_KEY} holds no secret a worker made")
    return secret


# KEYS: the stream, the claims, the stop mark. ARGV: round, piece, blob, the round's pieces
# (-1: claim nothing), the stream's cap, the keys' expiry, the entry's seal. One round trip
# for what a job does after each piece: publish it, and claim its next piece, in this round
# or else in the next; {STOPPED, STOPPED} when the client gave the simulation up.
_PUBLISH = """
if redis.call('EXISTS', KEYS[3]) == 1 then return {-2, -2} end
redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[5], '*', 'r', ARGV[1], 'i', ARGV[2], 'b', ARGV[3],
           'm', ARGV[7])
redis.call('EXPIRE', KEYS[1], ARGV[6])
local pieces = tonumber(ARGV[4])
if pieces < 0 then return {-1, -1} end
local round = tonumber(ARGV[1])
local n = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
if n > pieces then
  round = round + 1
  n = redis.call('HINCRBY', KEYS[2], tostring(round), 1)
end
redis.call('EXPIRE', KEYS[2], ARGV[6])
return {round, n - 1}
"""


STOPPED = -2  # the publish script's answer once the stop mark is set


def _publish_script(connection):
    """The publish script registered on this connection (redis-py loads it once)."""
    script = getattr(connection, "_anchor_publish", None)
    if script is None:
        script = connection.register_script(_PUBLISH)
        connection._anchor_publish = script  # noqa: SLF001 - a cache on our own connection
    return script


def _entry(fields: dict) -> tuple[int, int, bytes] | None:
    """(round, piece, blob) of a stream entry; None for one this protocol did not write
    (anyone may write to Redis: a stray entry is skipped, and its piece played here)."""
    try:
        round_no, piece, blob = int(fields[b"r"]), int(fields[b"i"]), fields[b"b"]
    except (KeyError, ValueError, TypeError):
        return None
    if round_no < 0 or piece < 0 or not isinstance(blob, bytes):
        return None
    return round_no, piece, blob


class MemoryExchange:
    """A pool among the threads of one process (the embedded client)."""

    __slots__ = ("_claims", "_log", "_ready")
    shared = True  # (the Condition is reentrant: publish claims while holding it)
    stopped = False  # threads of one process stop together

    def __init__(self) -> None:
        self._claims: dict[int, int] = {}
        self._log = _Log()
        self._ready = threading.Condition(threading.RLock())

    def claim(self, round_no: int) -> int:
        with self._ready:
            got = self._claims.get(round_no, 0)
            self._claims[round_no] = got + 1
            return got

    def publish(
        self, round_no: int, piece: int, blob: bytes, pieces: int, claim: bool
    ) -> tuple[int, int]:
        with self._ready:
            self._log.add(round_no, piece, blob)
            self._ready.notify_all()
            if not claim:
                return -1, -1
            got = self.claim(round_no)
            return (round_no, got) if got < pieces else (round_no + 1, self.claim(round_no + 1))

    def pieces(
        self, round_no: int, seconds: float, have: Collection[int] = ()
    ) -> dict[int, list[bytes]]:
        with self._ready:
            if seconds > 0:
                self._ready.wait_for(lambda: self._log.news(round_no, have), seconds)
            return self._log.of(round_no)


class MemoryPools:
    """The embedded client's pools by key, the most recent MAX_POOLS_IN_MEMORY kept."""

    def __init__(self) -> None:
        self._pools: OrderedDict[str, MemoryExchange] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, key: str, cap: int) -> MemoryExchange:
        with self._lock:
            pool = self._pools.pop(key, None) or MemoryExchange()
            self._pools[key] = pool
            while len(self._pools) > MAX_POOLS_IN_MEMORY:
                self._pools.popitem(last=False)
            return pool


class RedisPools:
    """The fleet's pools: one RedisExchange per job on the worker's connection."""

    def __init__(self, connection) -> None:
        self._connection = connection

    def __call__(self, key: str, cap: int) -> RedisExchange:
        return RedisExchange(self._connection, key, cap)


MEMORY_POOLS = MemoryPools()
