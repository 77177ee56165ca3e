"""Argument types and the parser class shared by the `anchor` and `anchor worker`
command lines: whole numbers, ports, and one-line errors."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from anchor.engine import AnchorError


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is a --help away)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def package_version() -> str:
    """The installed distribution's version (anchor-scrabble)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anchor-scrabble")
    except PackageNotFoundError:
        return "(not installed)"


def log_level(text: str) -> str:
    """A logging level by name, any case: DEBUG, INFO, WARNING, ERROR, CRITICAL."""
    name = text.strip().upper()
    if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a log level: DEBUG, INFO, WARNING, ERROR or CRITICAL"
        )
    return name


def queue_name(text: str) -> str:
    """A queue's name: not empty, no spaces or control characters (it is a Redis key)."""
    if not text or not text.isprintable() or any(ch.isspace() for ch in text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a queue name: give a non-empty name without spaces"
        )
    return text


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def port(text: str) -> int:
    value = non_negative(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (0..65535)")
    return value


def positive(text: str) -> int:
    value = non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


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
