"""The `anchor` command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from redis.exceptions import RedisError

from anchor.dictionaries import lexica
from anchor.dictionaries.lexica import open_lexicon
from anchor.dictionaries.recipes import RECIPES
from anchor.engine import AnchorError, Board, Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.simulate import RANKS

from . import protocol
from .arguments import (
    Parser,
    lane_option,
    non_negative,
    output_file,
    package_version,
    positive,
    queue_name,
    threads_for,
    threads_option,
)
from .client import AnalysisClient, ServiceError
from .games import cmd_annotate, cmd_selfplay, cmd_train_leaves

# Doug vs Emely (a recorded game), before Doug's fifth-turn bingo 10B DONATES (+82).
DEMO_CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADENOST/ 148/55 0"
DEMO_PLAY = "10B DONATES"


def _board_and_rack(rules: Ruleset, args) -> tuple[Board, str]:
    if args.cgp:
        position = parse_cgp(rules, args.cgp) if len(args.cgp.split()) >= 4 else None
        board = position.board if position else Board.from_cgp(rules, args.cgp)
        rack = args.rack if args.rack is not None else (position.racks[0] if position else None)
    elif args.board:
        board = Board.from_rows(rules, _read_text(args.board, "board file"))
        rack = args.rack
    else:
        board, rack = Board.empty(rules), args.rack
    return board, rack


def cmd_demo(args) -> int:
    rules = Ruleset.load("english")
    lexicon = open_lexicon(args.lexicon, rules)
    solver = Solver(lexicon, rules)
    position = parse_cgp(rules, DEMO_CGP)
    rack = position.racks[0]
    print(f"Anchor demo — {rules.title}, lexicon {lexicon.path} ({len(lexicon)} words)\n")
    print(position.board.render())
    print(f"\nRack: {rack}    Play: {DEMO_PLAY}\n")
    started = time.perf_counter()
    check = solver.validate_play(position.board, DEMO_PLAY, rack=rack)
    elapsed = (time.perf_counter() - started) * 1e6
    print(check.score.describe())
    print(
        f"\nvalid: {'yes' if check.ok else 'no: ' + '; '.join(check.errors)}"
        f"   (validated and scored in {elapsed:.0f} µs)"
    )
    started = time.perf_counter()
    moves = solver.generate_moves(position.board, rack)
    elapsed = (time.perf_counter() - started) * 1e6
    print(f"\nAll {len(moves)} legal plays for {rack}, found and ranked in {elapsed:.0f} µs. Best:")
    for rank, m in enumerate(moves[:5], 1):
        print(f"{rank:>3}. {m.notation:<22} {m.score:>4}")
    return 0 if check.ok else 1


def cmd_analyze(args) -> int:
    """Ranked plays for one position, in-process or through the queue (same output)."""
    rules = Ruleset.load(args.ruleset)
    if args.sim:
        return _simulate(args)
    if args.rack is not None and not args.rack.strip():
        raise AnchorError("the rack is empty: give the tiles with --rack, e.g. --rack AEINRS?")
    if args.rack is None and args.cgp and len(args.cgp.split()) < 2:
        raise AnchorError("no rack: give --rack, or a full CGP whose first rack is the player's")
    if args.cgp:
        position = protocol.Position(cgp=args.cgp, rack=args.rack, mode=args.mode, limit=args.top)
    else:
        rows = (
            _read_text(args.board, "board file").split()
            if args.board
            else ["." * rules.cols] * rules.rows
        )
        if args.rack is None:
            raise AnchorError(
                "no rack: give --rack, or a full CGP whose first rack is the player's"
            )
        position = protocol.Position(
            rows=tuple(rows), rack=args.rack, mode=args.mode, limit=args.top
        )
    rank = args.rank or ("equity" if args.leaves else "score")
    if rank == "score" and args.leaves:
        raise AnchorError("--leaves gives leave values for --rank equity, not --rank score")
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    if redis_url and args.leaves and ("/" in args.leaves or os.sep in args.leaves):
        raise AnchorError(
            f"through the queue, leave values are named, not read from a file here: "
            f"give the name a worker serves (e.g. --leaves {Path(args.leaves).stem})"
        )
    request = protocol.Request(
        ruleset=args.ruleset,
        lexicon=args.lexicon,
        positions=(position,),
        options=protocol.Options(exchanges=args.exchanges),
        rank=rank,
        leaves=args.leaves,
    )
    client = AnalysisClient(redis_url, queue=args.queue, lane=args.lane)
    started = time.perf_counter()
    try:
        result = client.analyze(request, timeout=args.timeout)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    if not result["ok"]:
        error = result["error"]
        raise AnchorError(f"{error['message']} [{error['code']}]")
    moves = protocol.move_dicts(result)
    if args.json:
        print(json.dumps(moves, ensure_ascii=False))
        return 0
    if args.show_board and args.cgp:
        print(Board.from_cgp(rules, args.cgp).render() + "\n")
    rack = args.rack if args.rack is not None else args.cgp.split()[1].split("/")[0]
    total = result.get("total")
    if total is None:
        found = f"the top {len(moves)} plays"
    else:
        found = f"top {len(moves)} of {total} plays" if len(moves) < total else f"{total} plays"
    on = "" if args.cgp or args.board else " on an empty board"
    print(f"Rack {rack}{on}: {found} ({_timing(result, elapsed, redis_url)})")
    width = max((len(m["notation"]) for m in moves), default=0)
    by_equity = any("equity" in m for m in moves)
    if by_equity:
        print(f"{'':>7}{'play':<{width}}  {'score':>5}  {'equity':>8}")
    for rank, m in enumerate(moves, 1):
        equity = f"  {m['equity']:>8.2f}" if "equity" in m else ""
        print(f"{rank:>5}. {m['notation']:<{width}}  {m['score']:>{5 if by_equity else 4}}{equity}")
    return 0


def cmd_endgame(args) -> int:
    """Solve the endgame of a CGP (both racks in it, the player to move first), in-process
    or over the workers; the best play, the value and the line both sides play."""
    from . import endgame

    rules = Ruleset.load(args.ruleset)
    position = parse_cgp(rules, args.cgp)
    racks = [*position.racks, "", ""]
    rack = args.rack if args.rack is not None else racks[0]
    other = args.opponent if args.opponent is not None else racks[1]
    if not rack or not other:
        raise AnchorError(
            "an endgame needs both racks: a CGP with 'RACK/OPPONENT' (the player to move "
            "first), or --rack and --opponent"
        )
    request = protocol.EndgameRequest(
        cgp=args.cgp,
        ruleset=args.ruleset,
        lexicon=args.lexicon,
        rack=rack,
        opponent=other,
        plies=args.plies,
        seconds=args.budget,
        table_mb=args.table_mb,
        scoreless=args.scoreless if args.scoreless is not None else position.zero_turns,
    )
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=max(30, int(args.timeout))
    )
    started = time.perf_counter()
    try:
        result = endgame.solve(client, request, parts=args.parts, timeout=args.timeout)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    if args.show_board:
        print(position.board.render() + "\n")
    state = (
        f"solved ({result['depth']} plies searched)"
        if result["exact"]
        else f"not proven: the deepest search completed was {result['depth']} plies"
    )
    where = (
        f"over {args.parts} jobs"
        if args.parts > 1
        else ("in-process" if not redis_url else "by a worker")
    )
    print(f"Endgame, bag empty: {rack} to move against {other} ({rules.title})")
    print(
        f"value {result['value']:+d} for {rack}: {state}; {result['nodes']:,} positions, "
        f"{elapsed:.2f} s {where}"
    )
    width = max((len(n) for n, _ in result["moves"]), default=0)
    for i, (notation, score) in enumerate(result["moves"], 1):
        who = rack if i % 2 else other
        play = "pass" if notation == "-" else notation
        print(f"{i:>4}. {who:<8} {play:<{width}}  {score:>4}")
    return 0


def cmd_preendgame(args) -> int:
    """One tile in the bag: the top plays, each valued by solving the endgame after every
    possible draw, in-process or by a worker."""
    Ruleset.load(args.ruleset)
    request = protocol.PreendgameRequest(
        cgp=args.cgp, ruleset=args.ruleset, lexicon=args.lexicon, rack=args.rack,
        candidates=args.candidates, seconds=args.budget,
    )  # fmt: skip
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=max(30, int(args.timeout))
    )
    started = time.perf_counter()
    try:
        result = client.analyze(request, timeout=args.timeout)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    if not result["ok"]:
        error = result["error"]
        raise AnchorError(f"{error['message']} [{error['code']}]")
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    elapsed = time.perf_counter() - started
    state = (
        "every endgame solved" if result["exact"] else "some endgames not proven in the time given"
    )
    print(
        f"Pre-endgame, one tile in the bag; unseen {result['unseen']}: "
        f"{len(result['plays'])} plays, "
        f"{state}; {result['nodes']:,} positions, {elapsed:.2f} s"
    )
    if not result["plays"]:
        print("no play for this rack: it can only pass (the bag's tile stays for the opponent)")
        return 0
    width = max((len(pl[0]) for pl in result["plays"]), default=4)
    print(f"{'':>6}{'play':<{width}}  {'score':>5}  {'mean':>7}  {'win %':>6}  draws (tile: value)")
    for i, (notation, score, mean, win, draws) in enumerate(result["plays"], 1):
        detail = " ".join(f"{t}{'x' + str(n) if n > 1 else ''}:{v:+d}" for t, n, v in draws)
        print(
            f"{i:>4}. {notation:<{width}}  {score:>5}  {mean:>+7.2f}  {100 * win:>5.1f}%  {detail}"
        )
    return 0


def _timing(result: dict, elapsed: float, redis_url: str | None) -> str:
    """Where the time went: generating the plays, and the whole call (opening the
    lexicon in-process, or the queue's round trip)."""
    where = "via Redis" if redis_url else "in-process"
    generate = (result.get("timings") or {}).get("generate_us")
    if generate is None:
        return f"{elapsed * 1e3:.2f} ms, {where}"
    extra = "the queue's round trip" if redis_url else "opening the lexicon"
    return f"generated in {generate:,.0f} µs; {elapsed * 1e3:.2f} ms {where} with {extra}"


def _simulate(args) -> int:
    """anchor analyze --sim: the top plays by equity, ranked by simulation."""
    from anchor.engine.simulate import Simulation

    from .simulation import SimulationJob, simulate

    if not args.cgp or len(args.cgp.split()) < 2:
        raise AnchorError("--sim needs a full CGP (--cgp 'BOARD RACK/ SCORES ZEROS')")
    if not 0 <= args.confidence < 1:
        raise AnchorError(f"--confidence must be in [0, 1), not {args.confidence}")
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    threads = threads_for(args, redis_url)
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=300, threads=threads
    )
    per_job = args.per_job if threads == 1 else min(args.per_job, -(-100 // threads))
    settings = Simulation(
        candidates=args.candidates,
        plies=args.plies,
        iterations=args.iterations,
        seed=args.seed,
        confidence=args.confidence or None,
        rank=args.sim_rank_by,
    )
    job = SimulationJob(args.cgp, args.ruleset, args.lexicon, args.leaves, args.rack)
    started = time.perf_counter()
    try:
        stats = simulate(client, job, settings, per_job, max(args.timeout, 600), progress=True)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    if args.json:  # the statistics of every candidate, best first
        print(json.dumps([dataclasses.asdict(s) for s in stats], ensure_ascii=False))
        return 0
    done = sum(s.iterations for s in stats)
    where = "via Redis" if redis_url else f"in-process, {threads} thread{'s' * (threads > 1)}"
    order = "by chance of winning" if args.sim_rank_by == "win" else "by mean spread"
    print(
        f"{len(stats)} candidates {order}, {args.plies} plies, {done:,} playouts in "
        f"{elapsed:.2f} s ({done / max(elapsed, 1e-9):,.0f}/s, {where}, seed {args.seed})"
    )
    width = max((len(s.notation) for s in stats), default=0)
    print(f"{'':>5}  {'play':<{width}}  score  equity   sim mean  ± s.e.   win%  iterations")
    for rank, s in enumerate(stats, 1):
        se = s.stdev / s.iterations**0.5 if s.iterations else 0.0
        mark = "  (dropped)" if s.pruned else ""
        print(
            f"{rank:>4}.  {s.notation:<{width}}  {s.score:>5}  {s.equity:>6.1f}  {s.mean:>9.2f}"
            f"  {se:>6.2f}  {100 * s.win_rate:>5.1f}  {s.iterations:>10}{mark}"
        )
    return 0


def cmd_show(args) -> int:
    rules = Ruleset.load(args.ruleset)
    board, rack = _board_and_rack(rules, args)
    print(board.render())
    if rack is not None:
        print(f"\nRack: {rack}")
    return 0


def cmd_score(args) -> int:
    rules = Ruleset.load(args.ruleset)
    board, rack = _board_and_rack(rules, args)
    lexicon = None if args.no_lexicon else open_lexicon(args.lexicon, rules)
    if lexicon is None:
        from anchor.engine import score_play, validate_play

        result = validate_play(board, args.play, None, rack)
        score = result.score if result.score else score_play(board, args.play)
    else:
        result = Solver(lexicon, rules).validate_play(board, args.play, rack=rack)
        score = result.score
    if args.json:
        out = {
            "play": result.play.notation if result.play else args.play,
            "ok": result.ok,
            "errors": list(result.errors),
            "score": score.total if score else None,
            "bingo": score.bingo if score else 0,
            "words": [
                {"word": w.word, "coordinate": w.coordinate, "score": w.score, "main": w.main}
                for w in (score.words if score else ())
            ],
        }
        print(json.dumps(out, ensure_ascii=False))
    else:
        if score:
            print(score.describe())
        print("valid" if result.ok else "invalid:\n  " + "\n  ".join(result.errors))
    return 0 if result.ok else 1


def cmd_build_lexicon(args) -> int:
    rules = Ruleset.load(args.ruleset)
    output_file(args.out, "lexicon (.kwg)")  # before reading and building, not after
    started = time.perf_counter()
    path = Path(args.words)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnchorError(
            f"{path} is not UTF-8 text (byte {exc.start}): convert it first"
        ) from None
    except OSError as exc:
        raise AnchorError(f"cannot read {path}: {exc.strerror}") from None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lexicon = Lexicon.build(text.splitlines(), rules)
    report = lexicon.report
    if report.kept == 0:
        detail = f"{report.rejected} rejected" if report.rejected else "the file holds no words"
        raise AnchorError(
            f"{path}: no word fits the {rules.name} alphabet ({detail}); nothing written. "
            f"Is --ruleset right?"
        )
    lexicon.save(args.out)
    elapsed = time.perf_counter() - started
    for position, word, reason in report.examples:
        print(f"{path}:{position}: rejected {word!r}: {reason}", file=sys.stderr)
    if report.rejected > len(report.examples):
        print(f"... and {report.rejected - len(report.examples)} more rejected", file=sys.stderr)
    print(
        f"{args.out}: {report.kept} words kept, {report.rejected} rejected, "
        f"{report.duplicates} duplicates, {report.nodes} nodes, {report.bytes} bytes, "
        f"{elapsed:.2f} s"
    )
    return 0


def cmd_lexicon(args) -> int:
    """Install, list, verify or locate lexica (anchor.dictionaries)."""
    folder = Path(args.dir) if args.dir else None
    if args.action == "install":
        lexica.install(args.names, folder, force=args.force, say=_say)
        return 0
    dirs = None
    if folder is not None:
        if not folder.is_dir():
            raise AnchorError(f"--dir {args.dir} is not a folder")
        dirs = [folder]
    if args.action == "path":
        for name in args.names or ["english"]:
            print(lexica.lexicon_path(name, dirs).resolve())
        return 0
    found = {item.name: item for item in lexica.installed(dirs)}
    if args.action == "verify":
        names = args.names or sorted(found)
        if not names:
            where = f"in {args.dir}" if dirs else "anywhere"
            raise AnchorError(f"no lexicon is installed {where}: run `anchor lexicon install`")
        bad = 0
        for name in names:
            path = lexica.lexicon_path(name, dirs)
            recipe = RECIPES.get(path.stem)
            problems = lexica.verify(path, recipe.kwg_sha256 if recipe else None)
            bad += bool(problems)
            print(f"{name}: " + ("ok" if not problems else "; ".join(problems)) + f"  ({path})")
        return 1 if bad else 0
    rows = [("name", "ruleset", "words", "where", "source")]
    for name, recipe in RECIPES.items():
        item = found.pop(name, None)
        where = (
            str(item.path) if item else "not installed" + ("" if recipe.default else " (opt-in)")
        )
        rows.append((name, recipe.ruleset, f"{recipe.expected_words:,}", where, recipe.source))
    for name, item in sorted(found.items()):
        info = item.info
        rows.append(
            (
                name,
                info.ruleset if info else "?",
                f"{info.words:,}" if info else "?",
                str(item.path),
                (info.source or "built locally") if info else "no sidecar",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print(
            "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True))
            + "  "
            + row[4]
        )
    print(f"\ninstall folder: {lexica.install_dir()} (set ANCHOR_LEXICON_DIR to change it)")
    return 0


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AnchorError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise AnchorError(f"{what} {path} is not UTF-8 text") from None


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
    sim.add_argument("--per-job", type=positive, default=100, help="iterations per job (100)")
    threads_option(sim)
    p.add_argument("--show-board", action="store_true", help="render the board first")
    p.add_argument("--json", action="store_true", help="print a JSON list of plays")
    p.add_argument(
        "--redis-url",
        help="go through the worker queue (default: $REDIS_URL; with neither, run in-process)",
    )
    p.add_argument(
        "--queue", type=queue_name, default="anchor", help="queue name (default: anchor)"
    )
    lane_option(p, protocol.INTERACTIVE)
    p.add_argument("--timeout", type=float, default=30, help="seconds to wait for the answer")
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
    p.add_argument(
        "--redis-url",
        help="go through the worker queue (default: $REDIS_URL; with neither, run in-process)",
    )
    p.add_argument(
        "--queue", type=queue_name, default="anchor", help="queue name (default: anchor)"
    )
    lane_option(p, protocol.INTERACTIVE)
    p.add_argument(
        "--timeout", type=float, default=600, help="seconds to wait for the answer (600)"
    )
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
    p.add_argument("--redis-url", help="go through the worker queue (default: $REDIS_URL)")
    p.add_argument(
        "--queue", type=queue_name, default="anchor", help="queue name (default: anchor)"
    )
    lane_option(p, protocol.INTERACTIVE)
    p.add_argument(
        "--timeout", type=float, default=600, help="seconds to wait for the answer (600)"
    )
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
    p.add_argument("--redis-url", help="play through the worker fleet (default: $REDIS_URL)")
    p.add_argument("--queue", type=queue_name, default="anchor")
    lane_option(p, protocol.BATCH)
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for all games")
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
    p.add_argument("--redis-url", help="one job per game through the fleet (default: $REDIS_URL)")
    p.add_argument("--queue", type=queue_name, default="anchor")
    lane_option(p, protocol.BATCH)
    p.add_argument("--timeout", type=float, default=3600)
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
    p.add_argument("--redis-url", help="play through the worker fleet (default: $REDIS_URL)")
    p.add_argument("--queue", type=queue_name, default="anchor")
    lane_option(p, protocol.BATCH)
    p.add_argument("--timeout", type=float, default=7200)
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
    try:
        resolve_ruleset(args)
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's exit
        return status
    except BrokenPipeError:  # `anchor analyze | head`: the reader has what it wanted
        return _closed_pipe()
    except (AnchorError, ServiceError, OSError) as exc:
        return _fail(str(exc), 2)
    except RedisError as exc:
        return _fail(f"Redis: {exc}", 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as exc:
        if os.environ.get("ANCHOR_DEBUG"):
            raise
        return _fail(
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


def _fail(message: str, code: int) -> int:
    print(f"anchor: error: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
