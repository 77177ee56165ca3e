"""The `anchor` command line: its arguments, and `main`, which runs one command and turns
every error into one line and an exit status."""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
import warnings

# Positions the examples use: CAT on the centre row; and from a recorded game (Macondo's
# issue 476) the turn with one tile left in the bag, and the next one, the bag empty.
_CAT = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15"
_LATE = (
    "1C5W7/1R4FE7/1EL2HID2J4/1PAC1EX3ID3/1OVA1B4NE3/1N1R1E5V3/1SLOTTERS2I3/3T1A1OKAYs3/"
    "2NE1T1MI1OE3/1ZINGER2WOE3/BATE3L1IF4/OI1STOAI1G{}/OD5N{}/1A5GURU{}/7Y2P4"
)
EXAMPLE_CGP = f"'{_CAT} AEINRST/ 0/0 0'"
PREENDGAME_CGP = "'" + _LATE.format("5", "7", "4") + " ADEIQRS/ 359/405 0'"
# The recorded game's board before Doug's fifth turn, its letters watched by Emely.
INFER_CGP = "'15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 /AEINOST 148/55 0'"
ENDGAME_CGP = "'" + _LATE.format("1Q3", "3I3", "S3") + " ?AHLNUU/ADEMR 405/389 0'"


# Where leave values come from when --leaves is not given (worker/registry.py).
LEAVES_BY_LEXICON = "the lexicon's: NAME.klv2 named after it, beside it or in the lexica folders"


def resolve_ruleset(args) -> None:
    """Fill in --ruleset when it was not given: the lexicon's own (its sidecar), else the
    command's default. A lexicon built for another alphabet is refused when opened."""
    if getattr(args, "ruleset", "") is None:
        from anchor.dictionaries import lexica

        lexicon = getattr(args, "lexicon", None)
        args.ruleset = lexica.lexicon_ruleset(lexicon) or args.default_ruleset


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand. Its imports are here, not at the top, so that
    `anchor --version` loads nothing of Anchor's."""
    from anchor.dictionaries.recipes import RECIPES

    from . import protocol
    from .arguments import (
        Parser,
        VersionAction,
        at_most,
        budget_option,
        command,
        json_option,
        leaves_option,
        lexicon_option,
        non_negative,
        per_job_option,
        position_options,
        positive,
        preendgame_stages,
        progress_option,
        ruleset_option,
        seconds,
        seed_option,
        service_options,
        show_board_option,
        sim_options,
        threads_option,
        top_option,
    )

    parser = Parser(
        prog="anchor",
        description="Anchor: every legal play of a Scrabble-family position (English, "
        "Russian, Эрудит or a ruleset of your own), ranked by score, equity or simulation; "
        "endgames solved exactly; game records annotated. Without a Redis URL every command "
        "runs in this process; with one (--redis-url or $REDIS_URL) the work goes through "
        "the worker fleet and the answer is the same.",
        epilog=f"example:\n  anchor demo\n  anchor analyze --cgp {EXAMPLE_CGP} --top 5\n\n"
        "`anchor COMMAND --help` describes each command. Exit status: 0 done, 1 the "
        "command's own 'no' (an invalid play, records not annotated), 2 bad input or an "
        "unreachable service, 70 a bug.",
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = command(
        sub,
        "demo",
        "show a recorded position and score a play on it",
        "Show the position of a recorded game (Doug vs Emely) before Doug's fifth-turn "
        "bingo, score that play word by word, and list the best plays for the rack.",
        "anchor demo",
    )
    lexicon_option(p, "english")
    p.set_defaults(func="commands:cmd_demo", default_ruleset="english")

    p = command(
        sub,
        "analyze",
        "every legal play for a rack, ranked by score, equity or simulation",
        "Every legal play of the rack on the position, exactly once, ranked by score, by "
        "equity (score + the value of the tiles kept; --leaves) or, with --sim, the top "
        "plays by equity ranked by playing on (Monte Carlo).",
        f"anchor analyze --cgp {EXAMPLE_CGP} --top 5",
        f"anchor analyze --cgp {EXAMPLE_CGP} --leaves english.klv2 --sim --sim-iterations 200",
    )
    ruleset_option(p)
    lexicon_option(p)
    position_options(p)
    top_option(p, None)
    p.add_argument(
        "--mode",
        choices=("both", "across", "down"),
        default="both",
        help="the directions of the plays listed",
    )
    p.add_argument(
        "--exchanges",
        action="store_true",
        help="also list the exchanges and the pass (when the bag allows them)",
    )
    p.add_argument(
        "--rank",
        choices=("score", "equity"),
        help="rank by score, or by equity (default: equity with --leaves, else score)",
    )
    leaves_option(p, LEAVES_BY_LEXICON + ", when ranking by equity or simulating")
    show_board_option(p)
    json_option(p)
    sim = p.add_argument_group(
        "simulation", "rank the top plays by playing on (Monte Carlo), spread over the workers"
    )
    sim.add_argument("--sim", action="store_true", help="simulate instead of ranking statically")
    sim_options(sim, iterations=1000, candidates=15)
    sim.add_argument(
        "--confidence",
        type=float,
        default=0.99,
        help="drop a play once it is behind the leader with this confidence; 0 never",
    )
    sim.add_argument(
        "--infer",
        metavar="MOVE",
        help="draw the opponent's rack from what their last move says they kept: the play, "
        "on the board, like '8D WO(R)D' ((X) for a tile it played through), or 'exchange N'",
    )
    sim.add_argument(
        "--infer-score", type=int, help="that play's score (default: as the board scores it)"
    )
    sim.add_argument(
        "--margin",
        type=float,
        default=5.0,
        help="points of equity the move may give up (default: 5, MAGPIE's)",
    )
    seed_option(sim)
    per_job_option(
        sim,
        "iterations",
        None,
        "the whole simulation as one job per worker serving the queue, or per --threads "
        "in-process, sharing every round",
    )
    threads_option(sim)
    service_options(p, protocol.INTERACTIVE, 30)
    p.set_defaults(func="commands:cmd_analyze")

    p = command(
        sub,
        "endgame",
        "solve an endgame exactly (the bag empty, both racks known)",
        "Solve the endgame of a position with the bag empty: the value (the spread the "
        "side to move gains until the game ends, the going-out adjustment included), the "
        "best play and the line both sides play.",
        f"anchor endgame --cgp {ENDGAME_CGP}",
    )
    ruleset_option(p)
    lexicon_option(p)
    position_options(p, board=False, required=True)
    p.add_argument("--opponent", help="the other rack (default: the CGP's second rack)")
    p.add_argument(
        "--plies", type=positive, help="search at most this many moves deep (default: to the end)"
    )
    budget_option(p)
    p.add_argument("--table-mb", type=float, help="transposition table memory in MiB (default: 64)")
    p.add_argument(
        "--scoreless",
        type=non_negative,
        help="scoreless turns already in a row (default: the CGP's)",
    )
    p.add_argument(
        "--parts",
        type=at_most(1024),
        default=1,
        help="split the search over this many jobs (workers; each searches the whole endgame, "
        "on one table with the workers forked alongside it: see --split)",
    )
    p.add_argument(
        "--split",
        choices=("together", "root"),
        default="together",
        help="how --parts share the work: together (every job the whole endgame; workers "
        "forked from one `anchor worker --workers N` search one table, others each alone) or "
        "root (the root's plays dealt out after the first: no memory shared, a table a job)",
    )
    p.add_argument(
        "--search-threads",
        type=at_most(64),
        default=None,
        help="threads the search runs on (sharing one table: a proven answer is the same for "
        "any number; default: in-process one per core, at most 16; a worker's "
        "--max-endgame-threads, which caps it)",
    )
    show_board_option(p)
    json_option(p)
    service_options(p, protocol.INTERACTIVE, 600)
    p.set_defaults(func="commands:cmd_endgame")

    p = command(
        sub,
        "preendgame",
        "1 to 4 tiles in the bag: value the top moves over every way the tiles can lie",
        "With 1 to 4 tiles in the bag, value each of the top moves and the pass over every "
        "set of tiles the bag may hold (and every order it is drawn in): a move that empties "
        "the bag by the exact endgame after it, one that does not by each side's top move "
        "until it is empty, then the endgame. Stages search the endgames deeper as they "
        "narrow the field; the chances of winning, ties and losses and the mean spread are "
        "shown for each move.",
        f"anchor preendgame --cgp {PREENDGAME_CGP} --candidates 8 --stages 1:8,2:3 --parts 2",
        f"anchor preendgame --cgp {PREENDGAME_CGP} --leaves english.klv2 --stages 1:16,2:4 --json",
        f"anchor preendgame --cgp {PREENDGAME_CGP} --stages 2:8,0:2 --budget 10",
    )
    ruleset_option(p)
    lexicon_option(p)
    leaves_option(p, "none: candidates and modelled moves by score")
    position_options(p, board=False, required=True)
    p.add_argument(
        "--candidates",
        type=at_most(protocol.MAX_PREENDGAME_CANDIDATES),
        default=32,
        help="moves valued (the pass besides), the top by equity with --leaves, else by score",
    )
    p.add_argument(
        "--stages",
        type=preendgame_stages,
        default=(),
        help="PLIES:N,... each stage values the top N of the one before with every endgame "
        "searched PLIES deep (0: to the end of the game, exact) (default: MAGPIE's "
        "2:32,3:16,4:8,5:4,6:2)",
    )
    p.add_argument(
        "--no-cut",
        dest="cut",
        action="store_false",
        help="value every move of the last stage fully, even one that cannot win as often as "
        "the best",
    )
    p.add_argument(
        "--parts",
        type=at_most(protocol.MAX_PREENDGAME_PARTS),
        default=1,
        help="split the search over this many jobs (workers; each stage's moves dealt out, "
        "ranked here between stages)",
    )
    p.add_argument("--search-threads", type=at_most(64), default=None,
                   help="threads the search runs on (candidates valued at once; default: "
                   "in-process one per core, at most 16; a worker's --max-endgame-threads, "
                   "which caps it)")  # fmt: skip
    budget_option(p)
    json_option(p)
    service_options(p, protocol.INTERACTIVE, 600)
    p.set_defaults(func="commands:cmd_preendgame")

    p = command(
        sub,
        "infer",
        "what the player who just moved probably kept (rack inference)",
        "Infer the opponent's rack from their move: every rack the unseen tiles allow is "
        "tried, and kept when the move made is its best by equity within the margin "
        "(MAGPIE's infer). The CGP is the position before the move, the mover to play with "
        "an empty rack and the watcher's rack second.",
        f"anchor infer --cgp {INFER_CGP} --play '4C HO(AX)' --leaves english.klv2",
        f"anchor infer --cgp {INFER_CGP} --exchange 4 --leaves english.klv2 --search-threads 2",
        f"anchor infer --cgp {INFER_CGP} --exchange 1 --leaves english.klv2 --parts 4",
    )
    ruleset_option(p)
    lexicon_option(p)
    p.add_argument("--cgp", required=True, help="the position as CGP: 'BOARD RACK/OPPONENT "
                   "SCORE/SCORE ZEROS' (here the position before the move: the mover's rack "
                   "empty, the watcher's second)")  # fmt: skip
    move = p.add_mutually_exclusive_group(required=True)
    move.add_argument("--play", help="the play made, like '8D WORD' ((X) for a tile on the board)")
    move.add_argument("--exchange", type=at_most(16), help="tiles exchanged instead")
    p.add_argument("--score", type=non_negative, help="the play's score (default: as scored)")
    p.add_argument("--watcher", help="the watcher's rack (default: the CGP's second rack)")
    p.add_argument("--margin", type=float, default=5.0,
                   help="points of equity the move may give up (default: 5, MAGPIE's)")  # fmt: skip
    leaves_option(p, LEAVES_BY_LEXICON + "; the mover's")
    top_option(p, 15)
    p.add_argument("--search-threads", type=at_most(64), default=None,
                   help="threads the search runs on (the same answer for any number; default: "
                   "in-process one per core, at most 16; a worker's --max-infer-threads, which "
                   "caps it)")  # fmt: skip
    p.add_argument("--budget", type=seconds,
                   help="seconds the search may take (past them, an error: an inference is "
                   "all or nothing; default: no limit)")  # fmt: skip
    p.add_argument(
        "--parts",
        type=at_most(protocol.MAX_INFER_PARTS),
        default=1,
        help="split the search over this many jobs (workers; the racks dealt out in turn, "
        "each job's bounded by the worker's --max-infer-racks)",
    )
    json_option(p)
    service_options(p, protocol.INTERACTIVE, 600)
    p.set_defaults(func="commands:cmd_infer")

    p = command(
        sub,
        "selfplay",
        "play whole games, checking every invariant",
        "Play whole games between policies (score, equity, sim, siminfer, endgame), checking every "
        "invariant each turn; print the results and, with --out, write each game as GCG.",
        "anchor selfplay --games 100 --policy equity --leaves english.klv2",
        "anchor selfplay --games 4 --policy sim --policy equity --leaves english.klv2 "
        "--alternate --out games",
    )
    ruleset_option(p)
    lexicon_option(p)
    p.add_argument("--games", type=positive, default=10, help="games to play")
    seed_option(p)
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players in each game")
    p.add_argument("--out", help="write one GCG file per game into this folder")
    p.add_argument("--no-check", action="store_true", help="skip the per-turn invariant checks")
    p.add_argument(
        "--policy",
        action="append",
        choices=protocol.POLICIES,
        help="a player's policy, once per seat or once for all (default: score); sim "
        "simulates before every move; siminfer simulates against what the opponent's last "
        "move says they kept; endgame plays by equity until the bag is empty, then solves "
        "the endgame exactly",
    )
    leaves_option(p, LEAVES_BY_LEXICON + ", for equity, sim and endgame players")
    p.add_argument("--alternate", action="store_true", help="rotate seats so who starts alternates")
    sim_options(p, iterations=100)
    per_job_option(p, "games", 10)
    progress_option(p)
    threads_option(p, processes=True)
    service_options(p, protocol.BATCH, 3600)
    p.set_defaults(func="games:cmd_selfplay")

    p = command(
        sub,
        "annotate",
        "annotate game records (GCG): best plays, rank, points lost",
        "Annotate game records: for every turn the best plays, the rank of the play made, "
        "the points (or equity) it gave up, the chance of winning and the unseen tiles; "
        "an HTML page a game, an index, and annotations.jsonl. Exit status: 0 when every "
        "game was annotated, 1 when some were not, 2 on bad input.",
        "anchor annotate games/ --out report",
        "anchor annotate games/english-1.gcg --out report --leaves english.klv2 "
        "--sim-iterations 100 --infer-racks 100000",
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
    lexicon_option(p)
    top_option(p, 5)
    leaves_option(p, "none: rank by score; simulating needs it")
    sim_options(p, iterations=0, check=non_negative)
    p.add_argument(
        "--infer-racks",
        type=non_negative,
        default=0,
        metavar="N",
        help="show what each play's maker probably kept (rack inference, reading at most N "
        "racks a turn; 100000 reads all but the longest), and simulate the reply against "
        "it (default: 0, none)",
    )
    p.add_argument(
        "--preendgame",
        nargs="?",
        const=(),
        default=None,
        type=preendgame_stages,
        metavar="PLIES:N,...",
        help="value each turn with 1 to 4 tiles in the bag as `anchor preendgame` does, the "
        "play made among the moves (its stages as there; alone: 1:16,2:4, about a second a "
        "turn) (default: off)",
    )
    seed_option(p)
    progress_option(p)
    threads_option(p, processes=True)
    service_options(p, protocol.BATCH, 3600)
    p.set_defaults(func="games:cmd_annotate")

    p = command(
        sub,
        "train-leaves",
        "learn leave values by self-play, write a KLV2 file",
        "Learn the value of every leave (the tiles kept after a play) by self-play: each "
        "iteration plays --games games by equity with the values learned so far and "
        "refits them; the result is a .klv2 file for --leaves.",
        "anchor train-leaves --games 400 --iterations 2 --out english.klv2",
    )
    ruleset_option(p)
    lexicon_option(p)
    p.add_argument("--games", type=positive, default=1000, help="games to play (each iteration)")
    p.add_argument("--iterations", type=positive, default=2, help="training iterations")
    seed_option(p)
    p.add_argument(
        "--eval-games",
        type=non_negative,
        default=0,
        help="after each iteration, games of equity against score play",
    )
    p.add_argument("--max-leave", type=positive, default=6, help="largest leave in the file")
    p.add_argument("--out", required=True, help="the .klv2 file to write")
    per_job_option(p, "games", 50)
    threads_option(p, processes=True)
    service_options(p, protocol.BATCH, 7200)
    p.set_defaults(func="games:cmd_train_leaves")

    # The worker is its own program (anchor.worker, also installed as anchor-worker): main()
    # hands `anchor worker ...` to it, so the client never imports the worker.
    sub.add_parser(
        "worker",
        help="run a worker: take analysis jobs from Redis (see anchor worker --help)",
        add_help=False,
    )

    p = command(
        sub,
        "show",
        "render a position",
        "Render a position's board, and the rack to move when the CGP or --rack gives one.",
        f"anchor show --cgp {EXAMPLE_CGP}",
    )
    p.add_argument(
        "--ruleset",
        help="the rules, for the board's size and premium squares: english (default), "
        "russian, erudit, super-english or a .toml file",
    )
    position_options(p)
    p.set_defaults(func="commands:cmd_show", default_ruleset="english")

    p = command(
        sub,
        "score",
        "score and validate a play, with a breakdown",
        "Score a play word by word (letters, premiums, bingo) and check it: placement, "
        "the rack, and the words in the lexicon. Exit status 1 when the play is not valid.",
        f"anchor score --cgp '{_CAT}' --rack S '8K S'",
    )
    ruleset_option(p)
    lexicon_option(p)
    position_options(p)
    p.add_argument("play", help="GCG notation, e.g. '8D WORD' (across) or 'D8 WORD' (down)")
    p.add_argument("--no-lexicon", action="store_true", help="skip the word check")
    json_option(p)
    p.set_defaults(func="commands:cmd_score")

    search = (
        "Every command finds a lexicon by name in $ANCHOR_LEXICON_DIR, then "
        "./dictionaries/build, then the per-user data folder; a .kwg path works anywhere."
    )
    p = command(
        sub,
        "lexicon",
        "install the pinned lexica, list, verify or locate them",
        f"The pinned lexica: fetch and build them, list, verify or locate them. {search}",
        "anchor lexicon install english",
        "anchor lexicon list",
    )
    p.set_defaults(func="commands:cmd_lexicon")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    defaults = ", ".join(name for name, recipe in RECIPES.items() if recipe.default)
    for action, text, dir_help, example in (
        ("install", f"fetch, build and check pinned lexica (default: {defaults})",
         "install into this folder (default: $ANCHOR_LEXICON_DIR, else the per-user data "
         "folder)", "anchor lexicon install english russian"),
        ("list", "the recipes, and what is installed where", "list only this folder",
         "anchor lexicon list"),
        ("verify", "re-check installed lexica against their sidecars and pins",
         "verify the lexica in this folder (default: where each name is found)",
         "anchor lexicon verify"),
        ("path", "print the file a name stands for", "look only in this folder",
         "anchor lexicon path english"),
        ("index", "write the bingo-word file beside a KWG built elsewhere (wolges, MAGPIE), "
         "which every start would otherwise build", "look only in this folder",
         "anchor lexicon index mine.kwg"),
    ):  # fmt: skip
        a = command(actions, action, text, f"{text[0].upper()}{text[1:]}. {search}", example)
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
        if action == "index":
            a.add_argument(
                "--ruleset",
                dest="kwg_ruleset",  # not the commands' --ruleset, which falls back by itself
                help="the rules whose alphabet the KWG is written in (default: its sidecar's, "
                "else english)",
            )

    p = command(
        sub,
        "docs",
        "the project's documents: the design, the protocol, the benchmarks",
        "Print one of the documents the help texts cite (PROTOCOL.md and the others), "
        "from this installed copy; without a name, list them.",
        "anchor docs",
        "anchor docs protocol --path",
    )
    p.add_argument("name", nargs="?", help="a document: readme, design, notes, protocol, ...")
    p.add_argument("--path", action="store_true", help="print where the file is, not its text")
    p.set_defaults(func="docs:cmd_docs")

    p = command(
        sub,
        "build-lexicon",
        "build a .kwg lexicon from a word list",
        "Build a lexicon of your own words: the .kwg (DAWG and GADDAG, the format MAGPIE "
        "and wolges read), its sidecar naming the ruleset, and its bingo-word file.",
        "anchor build-lexicon --ruleset english --words words.txt --out mine.kwg",
    )
    p.add_argument(
        "--ruleset",
        default="english",
        help="the rules whose alphabet the words are written in: english, russian, erudit, "
        "super-english or a .toml file",
    )
    p.add_argument("--words", required=True, help="UTF-8 text file, one word a line")
    p.add_argument("--out", required=True, help="the .kwg file to write")
    p.add_argument(
        "--no-gaddag",
        action="store_true",
        help="the DAWG alone: a sixth of the size, slower best-play search (default: both)",
    )
    p.set_defaults(func="commands:cmd_build_lexicon")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every error is one line on stderr and a non-zero exit: 2 for
    input, files and the service (the message says what to change), 70 for a bug
    (ANCHOR_DEBUG=1 shows its traceback), 130 for Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["worker"]:  # the worker's own program, in this process's place
        os.execv(sys.executable, [sys.executable, "-m", "anchor.worker", *argv[1:]])
    if argv == ["--version"]:  # before the parser, whose help loads the lexicon recipes
        from .version import VERSION

        print(f"anchor {VERSION}")
        return 0
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    own = _command_parser(parser, args)
    if extra:  # named by the command's own parser, not the top one's
        own.error(f"unrecognized arguments: {' '.join(extra)}")
    _check_combinations(own, args)
    prog = f"anchor {args.command}"  # errors name the command, as argparse's do
    warnings.showwarning = functools.partial(_warning, prog)
    try:
        resolve_ruleset(args)
        module, name = args.func.split(":")  # imported only now: each command loads its own
        status = getattr(importlib.import_module(f"{__package__}.{module}"), name)(args)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's exit
        return status
    except BrokenPipeError:  # `anchor analyze | head`: the reader has what it wanted
        return _closed_pipe()
    except KeyboardInterrupt:
        return _fail(prog, "interrupted", 130)
    except Exception as exc:
        message = _user_error(exc)
        if message is not None:
            return _fail(prog, message, 2)
        if os.environ.get("ANCHOR_DEBUG"):
            raise
        return _fail(
            prog,
            f"internal error {type(exc).__name__}: {exc} (a bug: please report it; "
            "ANCHOR_DEBUG=1 shows the traceback)",
            70,
        )


# analyze's options that shape a simulation: given without --sim they would do nothing.
SIM_ONLY = {"sim_iterations", "sim_candidates", "sim_plies", "sim_rank_by", "confidence",
            "seed", "iterations_per_job", "infer", "infer_score", "margin"}  # fmt: skip


def _check_combinations(parser: argparse.ArgumentParser, args) -> None:
    """Refuse what parses but would be ignored: an empty --out, --board beside --cgp, the
    simulation's options without --sim."""
    if getattr(args, "out", None) is not None and not args.out.strip():
        parser.error("argument --out: empty; give the file or folder to write")
    if getattr(args, "cgp", None) and getattr(args, "board", None):
        parser.error("give the position once: --cgp or --board, not both")
    if args.command == "analyze" and not args.sim:
        given = [
            a.option_strings[0]
            for a in parser._actions
            if a.dest in SIM_ONLY and getattr(args, a.dest) != a.default
        ]
        if given:
            parser.error(f"{', '.join(given)} shape a simulation: add --sim, or leave them out")
    if args.command == "analyze" and args.infer is None:
        given = [o for o, v in (("--infer-score", args.infer_score), ("--margin", args.margin))
                 if v != (None if o == "--infer-score" else 5.0)]  # fmt: skip
        if given:
            parser.error(f"{', '.join(given)} shape an inference: add --infer MOVE")


def _command_parser(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` were parsed for: `anchor lexicon path`'s."""
    for name in (args.command, getattr(args, "action", None)):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not name or not subs or name not in subs[0].choices:
            break
        parser = subs[0].choices[name]
    return parser


def _user_error(exc: Exception) -> str | None:
    """The one line a user's error shows (bad input, files, the service), or None for a
    bug. The Redis client is consulted only when a command loaded it."""
    from anchor.engine import AnchorError

    from . import protocol

    if isinstance(exc, (AnchorError, OSError)):
        return str(exc)
    if isinstance(exc, protocol.ProtocolError):  # the service's refusal, with its code
        return f"{exc.message} [{exc.code}]"
    client = sys.modules.get(f"{__package__}.client")
    if client is not None and isinstance(exc, client.ServiceError):
        return str(exc)
    redis = sys.modules.get("redis.exceptions")
    if redis is not None and isinstance(exc, redis.RedisError):
        return f"Redis: {exc}"
    return None


def _warning(prog: str, message, category, filename, lineno, file=None, line=None) -> None:
    """A warning (a lexicon's missing or stale cache, say) as one line, like the errors."""
    print(f"{prog}: warning: {' '.join(str(message).split())}", file=sys.stderr)


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
