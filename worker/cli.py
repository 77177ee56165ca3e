"""The worker's command line: `anchor worker` (the anchor command hands it over) or
`anchor-worker`, or `python -m anchor.worker`."""

from __future__ import annotations

import sys

from anchor.client.protocol.settings import (
    Parser,
    VersionAction,
    at_most,
    log_level,
    non_negative,
    port,
    queue_name,
)


def build_parser() -> Parser:
    p = Parser(
        prog="anchor worker",
        description="Take analysis jobs from Redis (RQ) and answer them: every lexicon named "
        "is mapped once, before the first job, and the worker serves until SIGTERM (a job "
        "running is finished first). The jobs' format and every limit: PROTOCOL.md "
        "(`anchor docs protocol`).",
        epilog="example:\n  anchor worker --lexicon english --redis-url "
        "redis://anchor-worker@localhost:6379/0\n  anchor-worker --lexicon english "
        "--lexicon mine@russian=/srv/mine.kwg --lane batch --metrics-port 9100",
    )
    p.add_argument("--version", action=VersionAction)
    p.add_argument(
        "--lexicon",
        action="append",
        metavar="NAME[@RULESET]=PATH",
        help="a lexicon to serve, opened before the first job (repeatable; "
        "default: english, found by name like every command finds lexica)",
    )
    p.add_argument(
        "--leaves",
        action="append",
        metavar="NAME=PATH",
        help="leave values (KLV2) served for rank=equity requests: NAME=PATH, a .klv2 "
        "path (served by its file name) or a NAME found beside the lexica (repeatable)",
    )
    p.add_argument(
        "--queue",
        action="append",
        type=queue_name,
        help="queue(s) to serve, each with its lanes (default: anchor; its batch lane is "
        "anchor:batch)",
    )
    p.add_argument(
        "--lane",
        action="append",
        metavar="LANE",
        help="a lane served (repeatable, or LANE,LANE), first first: a job waiting in an "
        "earlier lane is always taken before one in a later lane (default: interactive, then "
        "batch)",
    )
    p.add_argument(
        "--redis-url",
        help="redis://, rediss:// or unix:// URL (default: $REDIS_URL, else "
        "redis://localhost:6379/0)",
    )
    p.add_argument(
        "--name", help="the worker's name in Redis (default: RQ's, from the host and pid)"
    )
    p.add_argument(
        "--nice",
        type=non_negative,
        default=0,
        help="lower this worker's CPU priority by this much (os.nice): batch workers beside "
        "an interactive-only one (--lane interactive) leave it the CPU a bot waits for",
    )
    p.add_argument(
        "--workers",
        type=at_most(256),
        default=1,
        help="run this many workers, forked from one process that opened the lexica: they "
        "share its memory (a worker started apart holds its own); one that dies is started "
        "again; with --name, NAME-1, NAME-2, ...; with --metrics-port, PORT, PORT+1, ...",
    )
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument(
        "--max-jobs", type=non_negative, help="exit after this many jobs (default: never)"
    )
    p.add_argument(
        "--maintenance-interval",
        type=non_negative,
        default=5,
        help="seconds between registry clean-ups that requeue abandoned jobs",
    )
    p.add_argument(
        "--metrics-port",
        type=port,
        help="serve Prometheus metrics, /healthz and /readyz on this port (default: none)",
    )
    p.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        help="the address the metrics port listens on (0.0.0.0: every interface)",
    )
    p.add_argument(
        "--log-format",
        choices=("json", "text"),
        default="json",
        help="log lines as JSON objects (for a log collector) or as text",
    )
    p.add_argument(
        "--log-level",
        type=log_level,
        default="INFO",
        help="the least severe lines logged: DEBUG, INFO, WARNING, ERROR or CRITICAL",
    )
    p.add_argument(
        "--redis-password-file",
        help="read the Redis password from this file (default: $REDIS_PASSWORD_FILE, or "
        "$REDIS_PASSWORD); keeps it off the command line",
    )
    caps = p.add_argument_group(
        "limits", "caps this worker enforces (PROTOCOL.md, Limits); each also reads $ANCHOR_<NAME>"
    )
    for flag, help_text in (
        ("--max-job-seconds", "time one job may take; a client may ask for less (default: 30)"),
        ("--max-result-bytes", "size of one packed result (default: 8388608)"),
        ("--max-moves", "moves a position returns (its limit may be lower; default: 1000)"),
        ("--max-batch", "positions in one batch request (default: 1000)"),
        ("--result-ttl", "seconds results and failures are kept in Redis (default: 3600)"),
        ("--max-retries", "retries of a job whose worker died (default: 2)"),
        ("--max-endgame-table-mb", "an endgame's transposition table in MiB (default: 256)"),
        ("--max-endgame-threads", "threads one endgame job searches on (default: 1)"),
        ("--max-infer-racks", "racks one inference job may try (default: 4000000)"),
        ("--max-infer-threads", "threads one inference job runs on (default: 1)"),
    ):
        number = float if "seconds" in flag or "mb" in flag else int
        caps.add_argument(flag, type=number, help=help_text)
    return p


def main(argv: list[str] | None = None) -> int:
    from .main import run

    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
