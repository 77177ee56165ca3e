"""What a parent runs once before forking its workers (`anchor worker --workers N`).

CPython 3.11 writes to the code it runs: the first calls of a function rewrite its bytecode
in place (the specializing interpreter), and the first connection resolves the host and
imports the codecs for it. Done in each worker, every page holding that code or those
modules is copied into the worker; done once in the parent, the workers share them. On
the Intel Xeon of BENCHMARKS.md this took 2.6 MiB off each worker past the first.
"""

from __future__ import annotations

import logging

from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from anchor.client import protocol as p

from .jobs import JobContext, analyze
from .metrics import Metrics
from .registry import LexiconRegistry

log = logging.getLogger("anchor.worker")
PING_SECONDS = 0.5  # the parent's one try at Redis: the workers wait for it themselves


def warm(registry: LexiconRegistry, limits: p.Limits, pairs, connection: Redis) -> None:
    """One small analysis job for each (ruleset, lexicon) pair, through the code a worker
    runs for a job (decode, engine, pack), and one ping of Redis on a connection of its
    own, closed after. Nothing here may stop the workers from starting: a failure is
    logged and the workers start unwarmed. The ping waits at most PING_SECONDS for Redis
    itself; resolving its host name waits as the system's resolver does (a failing DNS
    holds the start up as long as it would hold each worker's first connection)."""
    context = JobContext(registry, limits, Metrics())  # counters of its own, then dropped
    for ruleset, lexicon in pairs:
        try:
            analyze(p.encode_request(_first_rack(registry, ruleset, lexicon)), context)
        except Exception as exc:  # the workers run it again and report it
            log.warning("warming before fork failed", extra={"lexicon": lexicon, "error": str(exc)})
    pool = connection.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs.update(
        socket_timeout=PING_SECONDS,
        socket_connect_timeout=PING_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )
    once = Redis(connection_pool=pool.__class__(connection_class=pool.connection_class, **kwargs))
    try:
        once.ping()
    except Exception:
        pass  # Redis away, or a refusal: each worker says so as it waits
    finally:
        once.connection_pool.disconnect()


def _first_rack(registry: LexiconRegistry, ruleset: str, lexicon: str) -> p.Request:
    """The ruleset's empty board and its first letters as the rack: plays in every
    lexicon worth serving, found in well under a millisecond."""
    rules = registry.rules(ruleset)
    rows = tuple("." * rules.cols for _ in range(rules.rows))
    rack = "".join(rules.alphabet[: rules.rack_size])
    return p.Request(
        ruleset=ruleset, lexicon=lexicon, positions=(p.Position(rows=rows, rack=rack, limit=10),)
    )
