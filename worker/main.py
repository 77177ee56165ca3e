"""`anchor worker`: open the lexica, then take jobs from the queue until told to stop.

Built on RQ's SimpleWorker: jobs run in the worker process (no fork per job, which costs
~10 ms here; see BENCHMARKS.md), so lexica are mapped once and metrics persist. What a
stranger may write to the queue is checked by worker.guard; what a job may cost is capped
by the server's Limits (PROTOCOL.md, "Limits").
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import signal
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from redis import Redis
from redis.exceptions import NoPermissionError
from rq.exceptions import StopRequested

from anchor.client import protocol as p
from anchor.client.protocol.acl import WORKER
from anchor.client.protocol.connection import ServiceError, connect, redacted
from anchor.client.protocol.serializer import MsgpackSerializer
from anchor.dictionaries.lexica import lexicon_path, search_dirs
from anchor.engine import AnchorError, LexiconInfo, Ruleset
from anchor.engine.lexicon import LexiconWarning, anagram_path
from anchor.engine.peers import MAX_PROCESSES as PEERS_MAX
from anchor.engine.peers import Peer, Peers
from anchor.engine.rules import builtin_names

from . import logs
from .forks import supervise
from .guard import AnchorJob
from .metrics import HEALTH, METRICS, QueueDepths, serve
from .queues import AnchorQueue, lane_queues
from .runner import LexiconRegistry
from .snapshot import prune, release_all, snapshot
from .warming import warm
from .worker import HEARTBEAT_INTERVAL, AnchorWorker, quiet_stop, redis_trouble

log = logging.getLogger("anchor.worker")
MAINTENANCE_INTERVAL = 5  # seconds between registry clean-ups (requeueing dead workers' jobs)


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


# a bingo-word file is at most this many times its KWG (plus 16 MiB): TWL06's is 1.7 times
# its KWG with a GADDAG, the default English lexicon's 12 times a KWG without one
ANAGRAM_SIZE_FACTOR = 64


def open_lexica(
    lexica: list[LexiconSpec], leave_paths: dict[str, str] | None = None, snapshots: bool = True
) -> LexiconRegistry:
    """Open every lexicon (a private snapshot, mmapped) and leave file: before any job,
    and before Redis is needed, so a bad file is refused at once."""
    if not snapshots:
        return _open_lexica({spec.name: spec.path for spec in lexica}, lexica, leave_paths)
    prune()  # what killed workers and refused files left in memory
    try:
        paths = {spec.name: str(_snapshot_lexicon(spec.path)) for spec in lexica}
        return _open_lexica(paths, lexica, leave_paths)
    except BaseException:
        release_all()
        raise


def _snapshot_lexicon(path: str) -> Path:
    """The KWG's snapshot, with its bingo-word file's beside it when it has one of a size
    its KWG can have: snapshots live in memory, and a stray huge file must not fill it."""
    kwg = snapshot(path)
    words = anagram_path(path)
    if words.is_file():
        size, most = words.stat().st_size, ANAGRAM_SIZE_FACTOR * kwg.stat().st_size + (16 << 20)
        if size <= most:
            snapshot(words, name=anagram_path(kwg).name)
        else:
            log.warning(
                f"{words}: {size:,} bytes, more than the bingo words of {path} can take "
                f"({most:,}), so it is not used; `anchor lexicon index {path}` writes it anew",
                extra={"path": str(words)},
            )
    return kwg


def build_worker(
    connection: Redis,
    queues: list[str],
    registry: LexiconRegistry,
    name: str | None = None,
    maintenance_interval: int = MAINTENANCE_INTERVAL,
    limits: p.Limits | None = None,
    lanes: tuple[str, ...] = p.LANES,
    peer: Peer | None = None,
) -> AnchorWorker:
    """The worker on an open registry; it serves each queue's lanes, in the order of
    `lanes`. RQ talks to Redis here already."""
    serializer = MsgpackSerializer
    names = lane_queues(queues, lanes)
    return AnchorWorker(
        [
            AnchorQueue(q, connection=connection, serializer=serializer, job_class=AnchorJob)
            for q in names
        ],
        connection=connection,
        serializer=serializer,
        name=name,
        maintenance_interval=maintenance_interval,
        job_monitoring_interval=HEARTBEAT_INTERVAL,
        registry=registry,
        limits=limits or p.Limits(),
        peer=peer,
    )


def _open_lexica(
    paths: dict[str, str], lexica: list[LexiconSpec], leave_paths: dict[str, str] | None
) -> LexiconRegistry:
    registry = LexiconRegistry(
        paths,
        leave_paths=dict(leave_paths or {}),
        rulesets={spec.name: spec.ruleset for spec in lexica},
    )
    solvers = []
    for spec in lexica:
        try:
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always", LexiconWarning)
                solvers += registry.preload([(spec.ruleset, spec.name)])
        except (AnchorError, p.ProtocolError) as exc:  # the user's file, not its snapshot
            said = getattr(exc, "message", None) or str(exc)
            raise ValueError(said.replace(paths[spec.name], spec.path)) from None
        for w in warned:  # a stale bingo-word file: named as the user knows it
            text = str(w.message).replace(paths[spec.name], spec.path)
            log.warning(text, extra={"lexicon": spec.name})
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
    return registry


_LIMIT_FLAGS = {
    "job_seconds": "max_job_seconds",
    "result_bytes": "max_result_bytes",
    "moves": "max_moves",
    "batch": "max_batch",
    "result_ttl": "result_ttl",
    "retries": "max_retries",
    "endgame_table_mb": "max_endgame_table_mb",
    "endgame_threads": "max_endgame_threads",
    "infer_racks": "max_infer_racks",
    "infer_threads": "max_infer_threads",
}
_FLOAT_LIMITS = {"job_seconds", "endgame_table_mb"}


def limits_from(args, environ=os.environ) -> p.Limits:
    """The server's caps: a flag, else $ANCHOR_<FLAG NAME>, else the default."""
    values = {}
    for field, flag in _LIMIT_FLAGS.items():
        value = getattr(args, flag, None)
        env = f"ANCHOR_{flag.upper()}"
        if value is None and environ.get(env):
            try:
                value = float(environ[env]) if field in _FLOAT_LIMITS else int(environ[env])
            except ValueError:
                raise ValueError(f"${env} must be a number, not {environ[env]!r}") from None
        if value is not None:
            values[field] = value
    return p.Limits(**values)


def redis_connection(url: str, password_file: str | None, environ=os.environ) -> Redis:
    """A connection to `url`; the password from a file or the environment when the URL
    carries none (client.connection.redis_password), never from a command line."""
    try:
        return connect(
            url,
            password_file,
            environ,
            health_check_interval=30,
            socket_keepalive=True,
            socket_connect_timeout=5,
        )
    except ServiceError as exc:
        raise ValueError(str(exc)) from None


class _StoppedStarting(BaseException):
    """SIGTERM or SIGINT before the work loop: the worker stops, leaving nothing behind."""


def _stop_starting(signum, frame) -> None:
    raise _StoppedStarting(signal.Signals(signum).name)


def run(args) -> int:
    """Run the worker with the arguments worker/cli.py parsed; exit status. A stop asked
    for while it starts (opening lexica, waiting for Redis) ends it at once, like one
    while it waits for a job: its snapshots released, exit status 0. Left to the default
    action, SIGTERM killed it there and its snapshots stayed in memory."""
    logs.configure(args.log_format, args.log_level)
    signal.signal(signal.SIGTERM, _stop_starting)
    signal.signal(signal.SIGINT, _stop_starting)
    try:
        return _run(args)
    except _StoppedStarting as stop:
        release_all()
        log.info("worker stopped", extra={"signal": str(stop)})
        return 0


def _run(args) -> int:
    sys.unraisablehook = quiet_stop
    if args.nice:
        os.nice(min(args.nice, 19))
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or "redis://localhost:6379/0"
    queues = args.queue or ["anchor"]
    try:
        limits = limits_from(args)
        lanes = lanes_from(args.lane)
        specs = [parse_lexicon_spec(s) for s in (args.lexicon or ["english"])]
        registry = open_lexica(specs, dict(_pair(s) for s in (args.leaves or [])))
        connection = redis_connection(redis_url, args.redis_password_file)
    except Exception as exc:  # start-up problems are one clear line, not a traceback
        print(f"anchor worker: error: {exc}", file=sys.stderr)
        return 2
    atexit.register(release_all)
    setup = _Setup(registry, limits, lanes, queues, redis_url)
    if args.workers > 1:  # forked from this process, which holds the lexica for them
        peers = endgame_peers(args.workers, limits)
        warm(registry, limits, [(spec.ruleset, spec.name) for spec in specs], connection)

        def serve_one(index: int) -> int:
            name = f"{args.name}-{index + 1}" if args.name else None
            port = args.metrics_port + index if args.metrics_port else args.metrics_port
            peer = peers.peer(index) if index < peers.slots else None
            try:
                again = redis_connection(redis_url, args.redis_password_file)  # its own sockets
                return _serve(args, setup, again, name, port, peer)
            except _StoppedStarting as stop:  # a stop before its work loop began
                log.info("worker stopped", extra={"signal": str(stop)})
                return 0

        if args.metrics_port and args.metrics_port + args.workers - 1 > 65535:
            print(
                f"anchor worker: error: --metrics-port {args.metrics_port} with --workers "
                f"{args.workers} would go past port 65535 (the workers serve PORT, PORT+1, ...)",
                file=sys.stderr,
            )
            return 2
        return supervise(args.workers, serve_one, orphaned=release_all, ended=peers.forget)
    return _serve(args, setup, connection, args.name, args.metrics_port)


@dataclass(frozen=True)
class _Setup:
    """What a worker serves with, opened once (and shared by forked workers)."""

    registry: LexiconRegistry
    limits: p.Limits
    lanes: tuple[str, ...]
    queues: list[str]
    redis_url: str


def endgame_peers(workers: int, limits: p.Limits) -> Peers:
    """The endgame tables forked workers share (engine/peers.py): a slot a worker, as large
    as the server lets one endgame's table be. Shared memory, taken as it is written."""
    from anchor.engine.endgame import DEFAULT_TABLE_MB, table_bits

    table_mb = limits.endgame_table_mb or DEFAULT_TABLE_MB
    return Peers(min(workers, PEERS_MAX), table_bits(min(table_mb, DEFAULT_TABLE_MB)))


def _serve(
    args, setup: _Setup, connection: Redis, name: str | None, metrics_port, peer=None
) -> int:
    """One worker on the opened lexica: metrics, registration, then jobs until stopped.
    `peer`: its place among the workers forked alongside, for endgames searched together."""
    registry, limits, lanes = setup.registry, setup.limits, setup.lanes
    queues, redis_url = setup.queues, setup.redis_url
    if metrics_port is not None:
        try:
            server = serve(METRICS, args.metrics_host, metrics_port)
        except OSError as exc:
            where = f"{args.metrics_host}:{metrics_port}"
            print(
                f"anchor worker: error: cannot serve metrics on {where}: {exc.strerror}",
                file=sys.stderr,
            )
            return 2
        log.info(
            "metrics", extra={"url": f"http://{args.metrics_host}:{server.server_port}/metrics"}
        )
    worker = None
    while worker is None:
        try:
            _wait_for_redis(connection, redis_url)
            worker = build_worker(
                connection, queues, registry, name, args.maintenance_interval, limits, lanes,
                peer,
            )  # fmt: skip
        except Exception as exc:  # a wrong password, not a Redis: one clear line, exit
            if redis_trouble(exc):
                continue  # gone again between the ping and RQ's first command
            print(f"anchor worker: error: Redis at {redacted(redis_url)}: {exc}", file=sys.stderr)
            return 2
    if metrics_port is not None:
        METRICS.watch_queues(QueueDepths(_scrape_connection(worker), _lane_keys(queues)))
    try:  # what RQ cannot decode, in keys it reads only now and then (registries, sets)
        worker.scrub()
    except NoPermissionError as exc:
        return _refused(exc, redis_url)
    except Exception as exc:
        if not redis_trouble(exc):
            raise
    log.info(
        "worker starting",
        extra={
            "queues": [q.name for q in worker.queues],
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
    except NoPermissionError as exc:  # the user's rules changed while serving
        return _refused(exc, redis_url)
    log.info("worker stopped", extra={"signal": "SIGTERM" if worker.stopping else None})
    return 0


def _refused(exc: Exception, redis_url: str) -> int:
    """The Redis user lacks a permission a worker needs: one clear line, exit 2."""
    print(
        f"anchor worker: error: Redis at {redacted(redis_url)} refused a command ({exc}): "
        f"log in as a user with the rules of {WORKER.name} (PROTOCOL.md, Redis users; "
        "deploy/users.acl), not a client's",
        file=sys.stderr,
    )
    return 2


def lanes_from(given: list[str] | None) -> tuple[str, ...]:
    """--lane interactive --lane batch (or --lane interactive,batch): the lanes served,
    first first."""
    if not given:
        return p.LANES
    text = ",".join(given)
    lanes = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [lane for lane in lanes if lane not in p.LANES]
    if unknown or not lanes or len(set(lanes)) != len(lanes):
        raise ValueError(
            f"bad --lane {text!r}: distinct lanes from {', '.join(p.LANES)}, each given once"
        )
    return lanes


def _lane_keys(bases: list[str]) -> dict[str, tuple[str, str]]:
    """RQ queue key -> (queue, lane) for every lane of the queues served, whether this
    worker serves that lane or not (an autoscaler wants them all)."""
    return {f"rq:queue:{p.lane_queue(b, lane)}": (b, lane) for b in bases for lane in p.LANES}


def _scrape_connection(worker: AnchorWorker) -> Redis:
    """A connection of its own for /metrics, with short timeouts: a scrape while Redis is
    away answers at once, without the queue depths."""
    kwargs = dict(worker.connection.connection_pool.connection_kwargs)
    kwargs.update(socket_timeout=1.0, socket_connect_timeout=1.0, health_check_interval=0)
    pool = worker.connection.connection_pool.__class__(
        connection_class=worker.connection.connection_pool.connection_class, **kwargs
    )
    return Redis(connection_pool=pool)


QUICK_EXIT = 5.0  # seconds: a work loop that ended sooner after starting is backed off


def work_until_stopped(
    worker: AnchorWorker, burst: bool, max_jobs: int | None, log_level: str
) -> None:
    """RQ's work loop, restarted whenever it ends without being told to stop: Redis went
    away or refused writes (RQ gives up on both), or something RQ logged as unhandled. The
    worker waits until Redis takes writes again and goes on; a loop that keeps ending at
    once is backed off (and reported unready), never spun."""
    delay = 0.1
    while True:
        started = time.monotonic()
        try:
            worker.work(burst=burst, logging_level=log_level, max_jobs=max_jobs)
        except Exception as exc:
            if not redis_trouble(exc):
                raise
            METRICS.inc("anchor_redis_errors_total")
            log.warning("Redis trouble; waiting for it to pass", extra={"error": str(exc)})
        if worker.stopping or burst or max_jobs:
            return
        HEALTH.trouble()
        try:  # RQ's SIGTERM handler raises StopRequested wherever an idle worker is
            if time.monotonic() - started < QUICK_EXIT:
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
            else:
                delay = 0.1
            _wait_for_writes(worker)
        except StopRequested:
            return
        if worker.stopping:
            return
        log.info("Redis takes writes again; taking jobs")


def _wait_for_redis(connection: Redis, url: str) -> None:
    """Until Redis answers. A worker started before Redis (a fleet starting together, an
    outage) waits like a running one would, rather than exit into a restart loop with
    growing delays (k8s CrashLoopBackOff). Only Redis trouble is waited out."""
    delay, said = 0.1, False
    while True:
        try:
            connection.ping()
            HEALTH.beat(redis_ok=True)
            return
        except Exception as exc:
            if not redis_trouble(exc):
                raise
            HEALTH.trouble()  # alive, waiting: live but not ready
            if not said:
                log.warning(
                    "Redis unreachable; waiting for it",
                    extra={"redis": redacted(url), "error": str(exc)},
                )
                said = True
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def _wait_for_writes(worker: AnchorWorker) -> None:
    """Until Redis answers and accepts a write (the worker's own key), backing off to a
    second between tries: readiness returns, and jobs flow, within a second of Redis."""
    delay = 0.1
    while not worker.stopping:
        HEALTH.trouble()  # alive, waiting: live but not ready
        try:
            worker.connection.ping()
            worker.connection.set(f"{worker.key}:probe", b"1", ex=60)
            worker.connection.delete(f"{worker.key}:probe")
            HEALTH.beat(redis_ok=True)
            return
        except Exception as exc:
            if not redis_trouble(exc):
                raise
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


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
