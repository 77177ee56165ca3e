"""The `anchor` command line: its arguments, and `main`, which runs one command and turns
every error into one line and an exit status."""

from __future__ import annotations

import argparse
import os
import sys

from redis.exceptions import RedisError

from anchor.dictionaries import lexica
from anchor.dictionaries.recipes import RECIPES
from anchor.engine import AnchorError
from anchor.engine.simulate import RANKS

from . import protocol
from .arguments import (
    Parser,
    non_negative,
    package_version,
    positive,
    service_options,
    threads_option,
)
from .client import ServiceError
from .commands import (
    cmd_analyze,
    cmd_build_lexicon,
    cmd_demo,
    cmd_endgame,
    cmd_lexicon,
    cmd_preendgame,
    cmd_score,
    cmd_show,
)
from .games import cmd_annotate, cmd_selfplay, cmd_train_leaves


def _sim_shape(p: argparse.ArgumentParser) -> None:
    """--sim-candidates, --sim-plies and --sim-rank-by, as selfplay and annotate take them."""
    p.add_argument("--sim-candidates", type=positive, default=10, help="plays simulated (10)")
    p.add_argument("--sim-plies", type=positive, default=2, help="moves played on (2)")
    p.add_argument(
        "--sim-rank-by",
        choices=RANKS,
        default="spread",
        help="simulated plays rank by mean spread (spread) or by chance of winning (win)",
    )


def _position_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ruleset", help=RULESET_HELP)
    p.add_argument("--cgp", help="a CGP position (full, or just its board field)")
    p.add_argument("--board", help="a text file of board rows ('.' empty, lowercase blank)")
    p.add_argument("--rack", help="the rack, e.g. AEINRS? (default: the CGP's player to move)")


def ruleset_help(default: str = "english") -> str:
    """--ruleset's help, the built-ins listed once with the command's default marked."""
    builtin = ("english", "russian", "erudit")
    names = ", ".join(f"{n} (default)" if n == default else n for n in builtin)
    return f"{names} or a .toml file; without it, the ruleset the lexicon was built for"


RULESET_HELP = ruleset_help()


def resolve_ruleset(args) -> None:
    """Fill in --ruleset when it was not given: the lexicon's own (its sidecar), else the
    command's default. A lexicon built for another alphabet is refused when opened."""
    if getattr(args, "ruleset", "") is None:
        lexicon = getattr(args, "lexicon", None)
        args.ruleset = lexica.lexicon_ruleset(lexicon) or args.default_ruleset


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="anchor", description="Scrabble-family analysis engine")
    parser.add_argument("--version", action="version", version=f"anchor {package_version()}")
    parser.set_defaults(default_ruleset="english")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="show a real position and score a play on it")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: english)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("analyze", help="every legal play for a rack, ranked by score")
    _position_args(p)
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--top", type=non_negative, help="print only the N best plays")
    p.add_argument("--mode", choices=("both", "across", "down"), default="both")
    p.add_argument("--exchanges", action="store_true", help="also list exchanges and the pass")
    p.add_argument(
        "--rank",
        choices=("score", "equity"),
        help="rank by score (default), or by equity: score + value of the tiles kept "
        "(the default when --leaves is given)",
    )
    p.add_argument(
        "--leaves",
        help="leave values for --rank equity: a .klv2 path or a name "
        "(default: the lexicon's name, NAME.klv2 beside the lexica)",
    )
    sim = p.add_argument_group(
        "simulation", "rank the top plays by playing on (Monte Carlo), spread over the workers"
    )
    sim.add_argument("--sim", action="store_true", help="simulate instead of ranking statically")
    sim.add_argument("--candidates", type=positive, default=15, help="plays simulated (15)")
    sim.add_argument("--plies", type=positive, default=2, help="moves played after each (2)")
    sim.add_argument("--iterations", type=positive, default=1000, help="at most (1000)")
    sim.add_argument("--seed", type=non_negative, default=1, help="the draws' seed (1)")
    sim.add_argument(
        "--confidence",
        type=float,
        default=0.99,
        help="drop a play once it is behind the leader with this confidence; 0 never (0.99)",
    )
    sim.add_argument(
        "--sim-rank-by",
        choices=RANKS,
        default="spread",
        help="order the plays by mean spread (spread), or by chance of winning given the "
        "CGP's scores (win)",
    )
    sim.add_argument(
        "--per-job",
        type=positive,
        help="send each round as jobs of this many iterations (default: the whole "
        "simulation as one job per worker serving the queue, or per --threads in-process, "
        "sharing every round)",
    )
    threads_option(sim)
    p.add_argument("--show-board", action="store_true", help="render the board first")
    p.add_argument("--json", action="store_true", help="print a JSON list of plays")
    service_options(p, protocol.INTERACTIVE, 30)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser(
        "endgame",
        help="solve an endgame exactly (bag empty, both racks known)",
        description="Solve the endgame of a position with the bag empty: the value (the "
        "spread the side to move gains until the game ends, the going-out adjustment "
        "included), the best play and the line both sides play.",
    )
    p.add_argument("--ruleset", help=RULESET_HELP)
    p.add_argument(
        "--cgp", required=True, help="the position: board, 'RACK/OPPONENT', scores, scoreless turns"
    )
    p.add_argument("--rack", help="the rack to move (default: the CGP's first)")
    p.add_argument("--opponent", help="the other rack (default: the CGP's second)")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--plies", type=positive, help="search at most this deep (default: to the end)")
    p.add_argument("--budget", type=float, help="seconds; past them, the best line found so far")
    p.add_argument("--table-mb", type=float, help="transposition table memory in MiB (64)")
    p.add_argument(
        "--scoreless",
        type=non_negative,
        help="scoreless turns already in a row (default: the CGP's)",
    )
    p.add_argument(
        "--parts", type=positive, default=1,
        help="split the search over this many jobs (workers) after the first play (1)",
    )  # fmt: skip
    p.add_argument("--show-board", action="store_true", help="render the board first")
    p.add_argument("--json", action="store_true", help="print the result map as JSON")
    service_options(p, protocol.INTERACTIVE, 600)
    p.set_defaults(func=cmd_endgame)

    p = sub.add_parser(
        "preendgame",
        help="one tile in the bag: value the top plays by solving every draw's endgame",
    )
    p.add_argument("--ruleset", help=RULESET_HELP)
    p.add_argument("--cgp", required=True, help="the position, the mover's rack first")
    p.add_argument("--rack", help="the rack to move (default: the CGP's first)")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument(
        "--candidates", type=positive, default=20, help="plays valued, the top by score (20)"
    )
    p.add_argument("--budget", type=float, help="seconds for the whole")
    p.add_argument("--json", action="store_true", help="print the result map as JSON")
    service_options(p, protocol.INTERACTIVE, 600)
    p.set_defaults(func=cmd_preendgame)

    p = sub.add_parser("selfplay", help="play whole games, checking every invariant")
    p.add_argument("--ruleset", help=RULESET_HELP)
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--games", type=positive, default=10)
    p.add_argument("--seed", type=non_negative, default=1, help="seed of the first game")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    p.add_argument("--out", help="write one GCG file per game into this folder")
    p.add_argument("--no-check", action="store_true", help="skip the per-turn invariant checks")
    p.add_argument(
        "--policy",
        action="append",
        choices=protocol.POLICIES,
        help="a player's policy, once per seat or once for all (default: score); sim "
        "simulates before every move; endgame plays by equity until the bag is empty, "
        "then solves the endgame exactly",
    )
    p.add_argument(
        "--leaves", help="leave values (.klv2 path or name) for equity/sim/endgame players"
    )
    p.add_argument("--sim-iterations", type=positive, default=100, help="for sim players (100)")
    _sim_shape(p)
    p.add_argument("--alternate", action="store_true", help="rotate seats so who starts alternates")
    p.add_argument("--per-job", type=positive, default=10, help="games per job (fleet mode)")
    service_options(p, protocol.BATCH, 3600, "play through the worker fleet")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    threads_option(p, processes=True)
    p.set_defaults(func=cmd_selfplay)

    p = sub.add_parser(
        "annotate", help="annotate game records (GCG): best plays, rank, points lost"
    )
    p.add_argument("paths", nargs="+", help="GCG files or folders of them")
    p.add_argument(
        "--out",
        required=True,
        help="folder for index.html, one page per game and annotations.jsonl",
    )
    p.add_argument(
        "--ruleset",
        help="the rules every game was played under (default: each game's #ruleset line, "
        "else the ruleset of its #lexicon or of --lexicon, else english)",
    )
    p.set_defaults(default_ruleset=None)
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--top", type=non_negative, default=5, help="best plays listed per turn")
    p.add_argument(
        "--leaves",
        help="leave values (.klv2 path or name): rank by equity and report equity given up",
    )
    service_options(p, protocol.BATCH, 3600, "one job per game through the fleet")
    p.add_argument(
        "--sim-iterations",
        type=non_negative,
        default=0,
        help="also rank each play by simulation, this many iterations a turn (needs --leaves)",
    )
    _sim_shape(p)
    p.add_argument("--seed", type=non_negative, default=1, help="the simulations' seed (1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.epilog = "Exit status: 0 when every game was annotated, 1 when some were not, 2 on bad input."
    threads_option(p, processes=True)
    p.set_defaults(func=cmd_annotate)

    p = sub.add_parser("train-leaves", help="learn leave values by self-play, write a KLV2 file")
    p.add_argument("--ruleset", help=ruleset_help("russian"))
    p.set_defaults(default_ruleset="russian")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--games", type=positive, default=1000, help="games per iteration")
    p.add_argument("--iterations", type=positive, default=2)
    p.add_argument("--seed", type=non_negative, default=1)
    p.add_argument(
        "--eval-games",
        type=non_negative,
        default=0,
        help="after each iteration, games of equity against score play",
    )
    p.add_argument("--max-leave", type=positive, default=6, help="largest leave in the file")
    p.add_argument("--out", required=True, help="the .klv2 file to write")
    p.add_argument("--per-job", type=positive, default=50)
    service_options(p, protocol.BATCH, 7200, "play through the worker fleet")
    threads_option(p, processes=True)
    p.set_defaults(func=cmd_train_leaves)

    # The worker is its own program (anchor.worker, also installed as anchor-worker): main()
    # hands `anchor worker ...` to it, so the client never imports the worker.
    sub.add_parser(
        "worker",
        help="run a worker: take analysis jobs from Redis (see anchor worker --help)",
        add_help=False,
    )

    p = sub.add_parser("show", help="render a position")
    _position_args(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("score", help="score and validate a play, with a breakdown")
    _position_args(p)
    p.add_argument("play", help="GCG notation, e.g. '8D WORD' (across) or 'D8 WORD' (down)")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--no-lexicon", action="store_true", help="skip the word check")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser(
        "lexicon",
        help="install the pinned lexica, list, verify or locate them",
        description="Lexica live in $ANCHOR_LEXICON_DIR or the per-user data folder; "
        "every command finds them there by name.",
    )
    p.set_defaults(func=cmd_lexicon)
    actions = p.add_subparsers(dest="action", required=True)
    for action, text, dir_help in (
        ("install", "fetch, build and check pinned lexica (default: the default set)",
         "install into this folder (default: $ANCHOR_LEXICON_DIR, else the per-user data "
         "folder)"),
        ("list", "the recipes, and what is installed where", "list only this folder"),
        ("verify", "re-check installed lexica against their sidecars and pins",
         "verify the lexica in this folder (default: where each name is found)"),
        ("path", "print the file a name stands for", "look only in this folder"),
    ):  # fmt: skip
        a = actions.add_parser(action, help=text, description=text)
        a.add_argument(
            "names",
            nargs="*",
            help=f"recipes or installed names ({', '.join(RECIPES)}, ...)",
        )
        a.add_argument("--dir", help=dir_help)
        if action == "install":
            a.add_argument(
                "--force", action="store_true", help="rebuild even when installed and intact"
            )

    p = sub.add_parser("build-lexicon", help="build a .kwg lexicon from a word list")
    p.add_argument("--ruleset", default="english")
    p.add_argument("--words", required=True, help="UTF-8 text file, one word a line")
    p.add_argument("--out", required=True, help="output .kwg path")
    p.add_argument(
        "--no-gaddag",
        action="store_true",
        help="the DAWG alone: a sixth of the size, slower best-play search (default: both)",
    )
    p.set_defaults(func=cmd_build_lexicon)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every error is one line on stderr and a non-zero exit: 2 for
    input, files and the service (the message says what to change), 70 for a bug
    (ANCHOR_DEBUG=1 shows its traceback), 130 for Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["worker"]:  # the worker's own program, in this process's place
        os.execv(sys.executable, [sys.executable, "-m", "anchor.worker", *argv[1:]])
    args = build_parser().parse_args(argv)
    prog = f"anchor {args.command}"  # errors name the command, as argparse's do
    try:
        resolve_ruleset(args)
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's exit
        return status
    except BrokenPipeError:  # `anchor analyze | head`: the reader has what it wanted
        return _closed_pipe()
    except (AnchorError, ServiceError, OSError) as exc:
        return _fail(prog, str(exc), 2)
    except protocol.ProtocolError as exc:  # the service's answer: a refusal, with its code
        return _fail(prog, f"{exc.message} [{exc.code}]", 2)
    except RedisError as exc:
        return _fail(prog, f"Redis: {exc}", 2)
    except KeyboardInterrupt:
        return _fail(prog, "interrupted", 130)
    except Exception as exc:
        if os.environ.get("ANCHOR_DEBUG"):
            raise
        return _fail(
            prog,
            f"internal error {type(exc).__name__}: {exc} (a bug: please report it; "
            "ANCHOR_DEBUG=1 shows the traceback)",
            70,
        )


def _closed_pipe() -> int:
    """Stdout's reader went away: stop quietly with the status a Unix tool killed by
    SIGPIPE has (141), and keep Python from complaining while it flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 128 + 13


def _fail(prog: str, message: str, code: int) -> int:
    print(f"{prog}: error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
