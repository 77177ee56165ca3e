"""The worker's command line: `anchor worker` (the anchor command hands it over) or
`anchor-worker`, or `python -m anchor.worker`."""

from __future__ import annotations

import sys

from anchor.client.protocol.settings import (
    Parser,
    log_level,
    non_negative,
    package_version,
    port,
    queue_name,
)


def build_parser() -> Parser:
    p = Parser(
        prog="anchor worker", description="Take analysis jobs from Redis (RQ) and answer them."
    )
    p.add_argument("--version", action="version", version=f"anchor {package_version()}")
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
        "--lanes",
        metavar="LANE,...",
        help="the lanes served, first first (default: interactive,batch): a job waiting in "
        "an earlier lane is always taken before one in a later lane",
    )
    p.add_argument(
        "--redis-url",
        help="redis:// or rediss:// URL (default: $REDIS_URL, else redis://localhost:6379/0)",
    )
    p.add_argument("--name", help="worker name (default: RQ's)")
    p.add_argument(
        "--nice",
        type=non_negative,
        default=0,
        help="lower this worker's CPU priority by this much (os.nice): batch workers beside "
        "an interactive-only one (--lanes interactive) leave it the CPU a bot waits for",
    )
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument("--max-jobs", type=non_negative, help="exit after this many jobs")
    p.add_argument(
        "--maintenance-interval",
        type=non_negative,
        default=5,
        help="seconds between registry clean-ups that requeue abandoned jobs (default 5)",
    )
    p.add_argument("--metrics-port", type=port, help="serve Prometheus metrics on this port")
    p.add_argument("--metrics-host", default="127.0.0.1")
    p.add_argument("--log-format", choices=("json", "text"), default="json")
    p.add_argument(
        "--log-level", type=log_level, default="INFO", help="DEBUG, INFO (default), WARNING, ..."
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
        ("--max-job-seconds", "time one job may take; a client may ask for less (default 30)"),
        ("--max-result-bytes", "size of one packed result (default 8388608)"),
        ("--max-moves", "moves a position returns (its limit may be lower; default 1000)"),
        ("--max-batch", "positions in one batch request (default 1000)"),
        ("--result-ttl", "seconds results and failures are kept in Redis (default 3600)"),
        ("--max-retries", "retries of a job whose worker died (default 2)"),
        ("--max-endgame-table-mb", "an endgame's transposition table in MiB (default 256)"),
    ):
        number = float if "seconds" in flag or "mb" in flag else int
        caps.add_argument(flag, type=number, help=help_text)
    return p


def main(argv: list[str] | None = None) -> int:
    from .main import run

    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
