"""The `anchor` command line's vocabulary: each option that more than one subcommand takes
is defined here once, so a name means one thing everywhere (tests/test_cli_vocabulary.py
holds it). The types both command lines use (the worker's too) are the protocol leaf's
(protocol/settings.py), re-exported here."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from anchor.engine import AnchorError

from .protocol import SIM_RANKS
from .protocol.settings import (  # noqa: F401  (re-exported for the subcommands)
    Parser,
    VersionAction,
    at_most,
    log_level,
    non_negative,
    package_version,
    port,
    positive,
    queue_name,
    seconds,
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


KLV2_NOTE = "english.klv2: the leave values the train-leaves example writes."


def command(sub, name: str, summary: str, description: str, *examples: str) -> Parser:
    """A subcommand with its one-line summary (in `anchor --help`), a description and
    examples (in `anchor NAME --help`), with a note on english.klv2 when one names it."""
    epilog = "example:\n" + "\n".join(f"  {line}" for line in examples) if examples else None
    if any("english.klv2" in line for line in examples) and "train-leaves" not in name:
        epilog += f"\n\n{KLV2_NOTE}"
    return sub.add_parser(name, help=summary, description=description, epilog=epilog)


def ruleset_option(parser, default: str | None = "english") -> None:
    """--ruleset; without it a command plays the ruleset its lexicon was built for (the
    lexicon's sidecar says), else the default."""
    builtin = ", ".join(f"{n} (default)" if n == default else n for n in BUILTIN_RULESETS)
    parser.add_argument(
        "--ruleset",
        help=f"the rules: {builtin} or a .toml file; without it, the ruleset the lexicon "
        "was built for",
    )
    parser.set_defaults(default_ruleset=default)


BUILTIN_RULESETS = ("english", "russian", "erudit", "super-english")


def lexicon_option(parser, default: str = "the ruleset's") -> None:
    parser.add_argument(
        "--lexicon",
        help=f"the word list: an installed lexicon's name or a .kwg path (default: {default})",
    )


def leaves_option(parser, default: str) -> None:
    parser.add_argument(
        "--leaves",
        help="leave values for ranking by equity (score + the value of the tiles kept): an "
        f"installed name or a .klv2 path (default: {default})",
    )


def position_options(parser, board: bool = True, required: bool = False) -> None:
    """--cgp (and --board, the rows of a text file) and --rack."""
    parser.add_argument(
        "--cgp",
        required=required,
        help="the position as CGP: 'BOARD RACK/OPPONENT SCORE/SCORE ZEROS' (or the board "
        "field alone)",
    )
    if board:
        parser.add_argument(
            "--board", help="the board as a text file of rows ('.' empty, lowercase a blank)"
        )
    parser.add_argument(
        "--rack", help="the rack to move, e.g. AEINRS? (default: the CGP's first rack)"
    )


def seed_option(parser) -> None:
    parser.add_argument(
        "--seed",
        type=non_negative,
        default=1,
        help="the seed of the random draws: the same seed gives the same answer",
    )


def sim_options(parser, iterations: int, candidates: int = 10, check=positive) -> None:
    """How a simulation is shaped: --sim-iterations, --sim-candidates, --sim-plies and
    --sim-rank-by, in every command that simulates."""
    parser.add_argument(
        "--sim-iterations",
        type=check,
        default=iterations,
        help="playouts of each play simulated, at most",
    )
    parser.add_argument(
        "--sim-candidates",
        type=positive,
        default=candidates,
        help="plays simulated, the top by equity",
    )
    parser.add_argument(
        "--sim-plies", type=positive, default=2, help="moves played on after each play"
    )
    parser.add_argument(
        "--sim-rank-by",
        choices=SIM_RANKS,
        default="spread",
        help="order simulated plays by mean spread (spread) or by chance of winning (win)",
    )


def per_job_option(parser, unit: str, default: int | None, default_text: str = "") -> None:
    """--games-per-job or --iterations-per-job: how finely a run is cut into jobs."""
    text = f"{unit} in one job (how finely the work is spread over workers or processes)"
    parser.add_argument(
        f"--{unit}-per-job",
        type=positive,
        default=default,
        help=f"{text} (default: {default_text})" if default_text else text,
    )


def progress_option(parser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: on when stderr is a terminal)",
    )


def progress_wanted(args) -> bool:
    """--progress, or by default whether stderr is a terminal."""
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


def json_option(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")


def show_board_option(parser) -> None:
    parser.add_argument("--show-board", action="store_true", help="render the board first")


def top_option(parser, default: int | None) -> None:
    parser.add_argument(
        "--top",
        type=non_negative,
        default=default,
        help="list only this many of the best plays"
        + (" (default: all)" if default is None else " (each turn)"),
    )


def preendgame_stages(text: str) -> tuple[tuple[int, int], ...]:
    """--stages: 'PLIES:N,PLIES:N,...' as ((plies, n), ...); plies 0 is to the end."""
    from .protocol import MAX_ENDGAME_PLIES, MAX_PREENDGAME_CANDIDATES, MAX_PREENDGAME_STAGES

    stages: list[tuple[int, int]] = []
    parts = text.split(",")
    if not 1 <= len(parts) <= MAX_PREENDGAME_STAGES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give 1 to {MAX_PREENDGAME_STAGES} stages as PLIES:N, like 2:32,0:4"
        )
    before = MAX_PREENDGAME_CANDIDATES
    for part in parts:
        plies, _, n = part.strip().partition(":")
        if not (plies.isascii() and plies.isdigit() and n.isascii() and n.isdigit()):
            raise argparse.ArgumentTypeError(f"stage {part!r} is not PLIES:N, like 2:32")
        plies_n, count = int(plies), int(n)
        if plies_n > MAX_ENDGAME_PLIES:
            raise argparse.ArgumentTypeError(
                f"stage {part!r}: plies must be 0 (to the end) .. {MAX_ENDGAME_PLIES}"
            )
        if not 1 <= count <= before:
            raise argparse.ArgumentTypeError(
                f"stage {part!r}: N must be 1..{before} (no more than the stage before)"
            )
        stages.append((plies_n, count))
        before = count
    return tuple(stages)


def budget_option(parser) -> None:
    parser.add_argument(
        "--budget",
        type=seconds,
        help="seconds the search may take (past them, the best answer found so far, said to "
        "be unproven; default: no limit)",
    )


def threads_option(parser, processes: bool = False) -> None:
    """--threads: how many jobs an in-process run does at once; with processes=True also
    --processes/--no-processes (on by default), for work that is half Python."""
    parser.add_argument(
        "--threads",
        type=positive,
        default=min(os.cpu_count() or 1, 16),
        help="in-process (no Redis URL): jobs run at once on this many threads (default: one "
        "per core, at most 16; the C core runs without the GIL); the answers are the same "
        "for any number",
    )
    if processes:
        parser.add_argument(
            "--processes",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="in-process, run the --threads jobs in forked processes rather than threads "
            "(Linux; this work is half Python, which threads take turns at; default: on)",
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
        help="the queue's lane the jobs wait in: interactive jobs are taken before batch ones",
    )


def service_options(parser, lane: str, timeout: float) -> None:
    """How a command reaches the fleet: --redis-url (with neither it nor $REDIS_URL the
    command runs in-process), --queue, --lane and --timeout (seconds to wait)."""
    group = parser.add_argument_group(
        "the service", "with a Redis URL the work goes through the worker fleet (the same answer)"
    )
    group.add_argument(
        "--redis-url",
        help="the fleet's Redis, redis://, rediss:// or unix:// (default: $REDIS_URL; with "
        "neither, run in-process)",
    )
    group.add_argument("--queue", type=queue_name, default="anchor", help="the queue's name")
    lane_option(group, lane)
    group.add_argument(
        "--timeout",
        type=seconds,
        default=timeout,
        help="seconds to wait for the answer",
    )
