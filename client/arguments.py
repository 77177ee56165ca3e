"""What the `anchor` subcommands share on their command lines: output files, --threads,
the service options. The types both command lines use (the worker's too) are the
protocol leaf's (protocol/settings.py), re-exported here."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from anchor.engine import AnchorError

from .protocol.settings import (  # noqa: F401  (re-exported for the subcommands)
    Parser,
    log_level,
    non_negative,
    package_version,
    port,
    positive,
    queue_name,
)


def output_file(given: str, what: str) -> Path:
    """A file a command will write, checked before any work is done: its folder exists and
    takes files, and it is not itself a folder. AnchorError naming the fix otherwise."""
    path = Path(given)
    folder = path.parent
    if path.is_dir():
        raise AnchorError(f"--out {given} is a folder; give the {what} file to write")
    if not folder.is_dir():
        raise AnchorError(f"--out {given}: no folder {folder}; make it first, or write elsewhere")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise AnchorError(f"--out {given}: cannot write into {folder}")
    return path


def threads_option(parser, processes: bool = False) -> None:
    """--threads: how many jobs an in-process run does at once; with processes=True also
    --processes/--no-processes (on by default), for work that is half Python."""
    parser.add_argument(
        "--threads",
        type=positive,
        default=min(os.cpu_count() or 1, 16),
        help="in-process (no Redis URL): jobs run at once on this many threads (default: one "
        "per core; the C core runs without the GIL); the answers are the same for any number",
    )
    if processes:
        parser.add_argument(
            "--processes",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="in-process, run the --threads jobs in forked processes rather than threads "
            "(Linux; this work is half Python, which threads take turns at)",
        )


def service_url(args) -> str | None:
    """The Redis a command goes through: --redis-url, else $REDIS_URL; None: in-process."""
    return args.redis_url or os.environ.get("REDIS_URL") or None


def threads_for(args, redis_url: str | None) -> int:
    """The --threads an in-process run uses (1 through the fleet, whose workers are the
    parallelism); an AnchorError past 256."""
    if args.threads > 256:
        raise AnchorError(f"--threads must be 1..256, not {args.threads}")
    return 1 if redis_url else args.threads


def lane_option(parser, default: str) -> None:
    """--lane: the priority lane a fleet job waits in (PROTOCOL.md, "Lanes")."""
    from .protocol import LANES

    parser.add_argument(
        "--lane",
        choices=LANES,
        default=default,
        help=f"the queue's lane: interactive jobs are taken before batch ones (default: {default})",
    )


def service_options(
    parser, lane: str, timeout: float, through: str = "go through the worker queue"
) -> None:
    """How a command reaches the fleet: --redis-url (with neither it nor $REDIS_URL the
    command runs in-process), --queue, --lane and --timeout (seconds to wait)."""
    parser.add_argument(
        "--redis-url", help=f"{through} (default: $REDIS_URL; with neither, run in-process)"
    )
    parser.add_argument(
        "--queue", type=queue_name, default="anchor", help="queue name (default: anchor)"
    )
    lane_option(parser, lane)
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        help=f"seconds to wait for the answer ({timeout:g})",
    )
