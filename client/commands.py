"""The `anchor` commands that work on one position or one lexicon: demo, analyze (and
its simulation), show, score, build-lexicon and lexicon. Each takes the parsed arguments
and returns the exit status; errors are AnchorError, which `cli.main` prints."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import time
from pathlib import Path

from anchor.dictionaries import lexica
from anchor.dictionaries.lexica import open_lexicon
from anchor.dictionaries.recipes import RECIPES
from anchor.engine import AnchorError, Board, Lexicon, Position, Ruleset, Solver, parse_cgp

from . import endgame, preendgame, protocol
from .arguments import output_file, service_url, threads_for
from .client import AnalysisClient, ServiceError

DEMO_GAME = "Doug vs Emely, a recorded game: Doug to play his fifth turn, 148 to 55 ahead"
DEMO_CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADENOST/ 148/55 0"
DEMO_PLAY = "10B DONATES"


def _board_and_rack(rules: Ruleset, args) -> tuple[Board, str]:
    if args.cgp:
        position = Position.read(rules, args.cgp, args.rack)
        board, rack = position.board, position.rack or None
    elif args.board:
        board = Board.from_rows(rules, _read_text(args.board, "board file"))
        rack = args.rack
    else:
        board, rack = Board.empty(rules), args.rack
    return board, rack


def _shown(path) -> str:
    """A path as a user finds it: relative to the current folder when it lies below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def cmd_demo(args) -> int:
    rules = Ruleset.load("english")
    lexicon = open_lexicon(args.lexicon, rules)
    solver = Solver(lexicon, rules)
    position = parse_cgp(rules, DEMO_CGP)
    rack = position.racks[0]
    print(f"Anchor demo — {rules.title}, lexicon {_shown(lexicon.path)} ({len(lexicon):,} words)")
    print(f"{DEMO_GAME}\n")
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
    if not (args.cgp or args.board) and args.rack is None:
        raise AnchorError(
            "no position: give --cgp CGP (or --board FILE with --rack RACK; --rack alone "
            "plays on the empty board)"
        )
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
    redis_url = service_url(args)
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
    found = protocol.answer(result, protocol.Analysis)
    moves = found.move_dicts()
    if args.json:
        print(json.dumps(moves, ensure_ascii=False))
        return 0
    if args.show_board and args.cgp:
        print(Board.from_cgp(rules, args.cgp).render() + "\n")
    rack = args.rack if args.rack is not None else Position.read(rules, args.cgp).rack
    total = found.total
    if total is None:
        listed = f"the top {len(moves)} plays" if len(moves) != 1 else "the best play"
    else:
        listed = f"top {len(moves)} of {total} plays" if len(moves) < total else f"{total} plays"
    on = "" if args.cgp or args.board else " on an empty board"
    timing = _timing(found.timings.generate_us, elapsed, redis_url)
    print(f"Rack {rack}{on}: {listed} ({timing})")
    width = max((len(m["notation"]) for m in moves), default=0)
    by_equity = any("equity" in m for m in moves)
    if by_equity:
        print(f"{'':>7}{'play':<{width}}  {'score':>5}  {'equity':>8}")
    for rank, m in enumerate(moves, 1):
        equity = f"  {m['equity']:>8.2f}" if "equity" in m else ""
        print(f"{rank:>5}. {m['notation']:<{width}}  {m['score']:>{5 if by_equity else 4}}{equity}")
    return 0


def _timing(generate: float | None, elapsed: float, redis_url: str | None) -> str:
    """Where the time went: generating the plays, and the whole call (opening the
    lexicon in-process, or the queue's round trip)."""
    where = "via Redis" if redis_url else "in-process"
    if generate is None:
        return f"{elapsed * 1e3:.2f} ms, {where}"
    extra = "the queue's round trip" if redis_url else "opening the lexicon"
    return f"generated in {generate:,.0f} µs; {elapsed * 1e3:.2f} ms {where} with {extra}"


def _simulate(args) -> int:
    """anchor analyze --sim: the top plays by equity, ranked by simulation."""
    from anchor.engine.simulate import Simulation

    from .simulation import SimulationJob, run_simulation

    if not args.cgp or len(args.cgp.split()) < 2:
        raise AnchorError("--sim needs a full CGP (--cgp 'BOARD RACK/ SCORES ZEROS')")
    if not 0 <= args.confidence < 1:
        raise AnchorError(f"--confidence must be in [0, 1), not {args.confidence}")
    redis_url = service_url(args)
    threads = threads_for(args, redis_url)
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=300, threads=threads
    )
    settings = Simulation(
        candidates=args.sim_candidates,
        plies=args.sim_plies,
        iterations=args.sim_iterations,
        seed=args.seed,
        confidence=args.confidence or None,
        rank=args.sim_rank_by,
    )
    play, exchanged = _last_move(args.infer)
    job = SimulationJob(args.cgp, args.ruleset, args.lexicon, args.leaves, args.rack,
                        play, args.infer_score, exchanged, args.margin)  # fmt: skip
    started = time.perf_counter()
    try:
        answer = run_simulation(
            client, job, settings, args.iterations_per_job, max(args.timeout, 600), progress=True
        )
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    stats = answer.stats
    if args.json:  # the statistics of every candidate, best first (and the inference's)
        rows = [dataclasses.asdict(s) for s in stats]
        out = rows if args.infer is None else {"candidates": rows, "inferred": answer.inferred}
        print(json.dumps(out, ensure_ascii=False))
        return 0
    if answer.inferred is not None:
        print(_inferred_line(answer.inferred))
    done = sum(s.iterations for s in stats)
    where = "via Redis" if redis_url else f"in-process, {threads} thread{'s' * (threads > 1)}"
    order = "by chance of winning" if args.sim_rank_by == "win" else "by mean spread"
    print(
        f"{len(stats)} candidates {order}, {args.sim_plies} plies, {done:,} playouts in "
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


def _last_move(text: str | None) -> tuple[str | None, int]:
    """--infer's move: (the play, 0), or (None, tiles exchanged); (None, 0) when not given."""
    if text is None:
        return None, 0
    words = text.split()
    count = words[1] if len(words) == 2 and words[0].lower() == "exchange" else None
    if count is None and len(words) == 1 and words[0].startswith("-"):
        count = words[0][1:]  # GCG's '-3' (or the tiles, '-ABC', when the watcher saw them)
        count = count if count.isdigit() else str(len(count))
    if count is None:
        return text, 0
    if not count.isdigit() or not 1 <= int(count) <= 16:
        raise AnchorError(f"--infer {text!r}: an exchange is 'exchange N' with N from 1 to 16")
    return None, int(count)


def _explained(inference: dict) -> dict:
    """An inference map's tally of every rack that explains the move (Inference.explained):
    after an exchange the whole racks, not only those whose best move it was."""
    return inference.get("racks") or inference["kept"]


def _inferred_line(inferred: dict) -> str:
    """What the inference the simulation drew from found, in a line."""
    if inferred.get("empty"):
        return (
            f"inference: no rack explains {inferred['move']} (a phony, or not the best by "
            "equity within the margin): the opponent's racks were drawn uniformly"
        )
    kept = _explained(inferred)
    leaves = ", ".join(f"{k['leave'] or '-'} {100 * k['chance']:.2g}%" for k in inferred["leaves"])
    return (
        f"inference: {kept['racks']:,} leaves explain {inferred['move']} "
        f"({kept['draws']:,} draws); likeliest {leaves}"
    )


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
    Position.of(board, rack or "").check()  # a position a game could reach, rack and all
    lexicon = None if args.no_lexicon else open_lexicon(args.lexicon, rules)
    if lexicon is None:
        from anchor.engine import score_play, validate_play

        result = validate_play(board, args.play, None, rack)
        score = result.score if result.score else score_play(board, args.play)
    else:
        result = Solver(lexicon, rules).validate_play(board, args.play, rack=rack)
        score = result.score
    if result.play is None:  # not a play at all: bad input, not the command's "no"
        raise AnchorError(f"{args.play!r}: {'; '.join(result.errors)}")
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
        lexicon = Lexicon.build(text.splitlines(), rules, gaddag=not args.no_gaddag)
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
    if args.action == "index":
        if not args.names:
            raise AnchorError("name the KWG files to index, e.g. anchor lexicon index mine.kwg")
        for name in args.names:
            path = lexica.lexicon_path(name, dirs)
            rules = Ruleset.load(args.kwg_ruleset or lexica.lexicon_ruleset(str(path)) or "english")
            written = Lexicon.open(path, rules).write_anagrams(path)
            print(f"{path}: " + (f"wrote {written}" if written else "too large for the file"))
        return 0
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
    if args.names:  # only those named
        unknown = [n for n in args.names if n not in RECIPES and n not in found]
        if unknown:
            raise AnchorError(f"no recipe or installed lexicon named {', '.join(unknown)}")
        found = {n: item for n, item in found.items() if n in args.names}
    for name, recipe in RECIPES.items():
        if args.names and name not in args.names:
            continue
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


def cmd_endgame(args) -> int:
    """Solve the endgame of a CGP (both racks in it, the player to move first), in-process
    or over the workers; the best play, the value and the line both sides play."""
    rules = Ruleset.load(args.ruleset)
    position = parse_cgp(rules, args.cgp).with_racks(args.rack, args.opponent)
    if not position.rack:
        raise AnchorError(
            "an endgame needs the racks: a CGP with 'RACK/OPPONENT' (the player to move "
            "first), or --rack (and --opponent, or the unseen tiles are the opponent's)"
        )
    position = position.endgame()  # the bag empty; the opponent's rack what is unseen
    rack, other = position.rack, position.opponent or ""
    redis_url = service_url(args)
    threads = args.search_threads
    if threads is None and not redis_url:  # the user's own machine: every core
        threads = min(os.cpu_count() or 1, 16)
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
        threads=threads,
    )
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=max(30, int(args.timeout))
    )
    started = time.perf_counter()
    try:
        result = endgame.solve(
            client, request, parts=args.parts, timeout=args.timeout, split=args.split
        )
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(result.to_entry(), ensure_ascii=False))
        return 0
    if args.show_board:
        print(position.board.render() + "\n")
    state = (
        f"solved ({result.depth} plies searched)"
        if result.exact
        else f"not proven: the deepest search completed was {result.depth} plies"
    )
    jobs = result.parts  # what ran: a root split is its lead and --parts more
    where = f"over {jobs} jobs" if jobs > 1 else "in-process" if not redis_url else "by a worker"
    if args.parts > 1 and jobs == 1:  # copies in one process: its threads share instead
        where += f" (--parts {args.parts} asks workers; here the search's threads share one table)"

    print(f"Endgame, bag empty: {rack} to move against {other} ({rules.title})")
    print(
        f"value {result.value:+d} for {rack}: {state}; {result.nodes:,} positions, "
        f"{elapsed:.2f} s {where}"
    )
    width = max((len(n) for n, _ in result.moves), default=0)
    for i, (notation, score) in enumerate(result.moves, 1):
        who = rack if i % 2 else other
        play = "pass" if notation == "-" else notation
        print(f"{i:>4}. {who:<8} {play:<{width}}  {score:>4}")
    return 0


def _ask(args, redis_url: str | None, request, split=None) -> tuple[dict, float]:
    """One request answered in-process or by a worker (the command's service options): the
    raw result and the seconds it took. `split(client, request)`: a Result made of many
    jobs instead (a pre-endgame over --parts)."""
    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=max(30, int(args.timeout))
    )
    started = time.perf_counter()
    try:
        if split is None:
            raw = client.analyze(request, timeout=args.timeout)
        else:
            raw = split(client, request).to_wire((time.perf_counter() - started) * 1e6)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    return raw, time.perf_counter() - started


def cmd_infer(args) -> int:
    """Rack inference: the racks that explain the mover's move, in-process or by a worker;
    each letter's chance against a rack drawn blind, and the likeliest leaves."""
    Ruleset.load(args.ruleset)
    redis_url = service_url(args)
    threads = args.search_threads
    if threads is None and not redis_url:
        threads = min(os.cpu_count() or 1, 16)
    request = protocol.InferRequest(
        cgp=args.cgp, ruleset=args.ruleset, lexicon=args.lexicon, leaves=args.leaves,
        play=args.play, score=args.score, exchanged=args.exchange or 0, observer=args.watcher,
        margin=args.margin, top=args.top, threads=threads, seconds=args.budget,
    )  # fmt: skip
    if args.parts > 1:
        raw, elapsed = _ask_parts(args, redis_url, request)
    else:
        raw, elapsed = _ask(args, redis_url, request)
    inf = protocol.answer(raw, protocol.InferResult).inference  # a refusal: its error, exit 2
    if args.json:
        print(json.dumps(raw, ensure_ascii=False))
        return 0
    what = inf["move"] if not inf["exchanged"] else f"an exchange of {inf['exchanged']}"
    explain = _explained(inf)
    print(
        f"{what} ({inf['score']} points), margin {inf['margin']:g}: {explain['racks']:,} "
        f"racks explain it ({explain['draws']:,} draws) of {inf['tried']:,} tried; "
        f"{elapsed:.2f} s"
    )
    if inf["exchanged"]:
        print(
            f"{inf['kept']['racks']:,} of them had it as their best move: what they kept and "
            "threw back is below"
        )
    if inf.get("phony"):
        print(f"not in the lexicon: {', '.join(inf['phony'])} (a phony: inferred all the same)")
    if inf["known"]:
        print("the bag was empty before the move: the rack was every unseen tile")
    if inf["empty"]:
        print("no rack explains it (a phony, a mistake, or other leave values): nothing inferred")
        return 0
    print(f"{'letter':>6}  {'kept':>6}  {'blind':>6}   (chance of holding at least one)")
    for row in inf["kept"]["letters"][:12]:
        held, blind = 100 * row["chances"][0], 100 * row["random"][0]
        print(f"{row['letter']:>6}  {held:>5.1f}%  {blind:>5.1f}%")
    head = "kept" + ("  (thrown back)" if inf["exchanged"] else "")
    print(f"\n{'':>4}{head:<24} {'chance':>7} {'value':>7}")
    for i, leave in enumerate(inf["leaves"], 1):
        kept = leave["leave"] + (f"  ({leave['thrown']})" if leave["thrown"] else "")
        chance = 100 * leave["chance"]
        print(f"{i:>3}. {kept or '(nothing)':<24} {chance:>6.2f}% {leave['value']:>+7.2f}")
    return 0


def _ask_parts(args, redis_url: str | None, request) -> tuple[dict, float]:
    """One inference dealt out to --parts jobs (each its share of the racks), merged here
    into the answer one job gives: the result map and the seconds it took."""
    from anchor.engine.inference import Part, merge_parts

    client = AnalysisClient(
        redis_url, queue=args.queue, lane=args.lane, job_timeout=max(30, int(args.timeout)),
        threads=1 if redis_url else min(args.parts, os.cpu_count() or 1),
    )  # fmt: skip
    requests = [dataclasses.replace(request, part=i, parts=args.parts) for i in range(args.parts)]
    started = time.perf_counter()
    try:
        results = client.analyze_many(requests, timeout=args.timeout)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    rules = Ruleset.load(args.ruleset)
    found = []
    for raw in results:
        part = protocol.answer(raw, protocol.InferResult).part
        if part is None:
            raise AnchorError("a worker answered a part of an inference with no racks (older?)")
        try:
            found.append(Part.from_wire(rules, part))
        except AnchorError as exc:
            raise AnchorError(f"a worker's part of the inference: {exc}") from None
    asked = (request.exchanged, float(request.margin))
    if any((f.common["exchanged"], f.common["margin"]) != asked for f in found):
        raise AnchorError("a worker answered a part of another inference than the one asked")
    try:
        merged = merge_parts(rules, found, args.top)
    except AnchorError as exc:
        raise AnchorError(f"the workers' parts of the inference: {exc}") from None
    answer = protocol.InferResult(merged.to_dict(args.top))
    elapsed = time.perf_counter() - started
    return answer.to_wire(elapsed * 1e6), elapsed


def _depth(plies: int) -> str:
    """An endgame depth as the pre-endgame's stages give it (0: to the end)."""
    return "to the end" if plies == 0 else f"{plies} ply" if plies == 1 else f"{plies} plies"


def cmd_preendgame(args) -> int:
    """1 to 4 tiles in the bag: the top moves and the pass, each valued over every way the
    unseen tiles can lie, in-process or by a worker."""
    Ruleset.load(args.ruleset)
    redis_url = service_url(args)
    threads = args.search_threads
    if threads is None and not redis_url:  # the user's own machine: every core
        threads = min(os.cpu_count() or 1, 16)
    request = protocol.PreendgameRequest(
        cgp=args.cgp, ruleset=args.ruleset, lexicon=args.lexicon, leaves=args.leaves,
        rack=args.rack, candidates=args.candidates, stages=args.stages, cut=args.cut,
        threads=threads, seconds=args.budget,
    )  # fmt: skip
    split = None
    if args.parts > 1:  # each stage dealt out to --parts jobs, ranked here between stages
        split = functools.partial(preendgame.solve, parts=args.parts, timeout=args.timeout)
    raw, elapsed = _ask(args, redis_url, request, split)
    result = protocol.answer(raw, protocol.PreendgameResult)
    if args.json:
        print(json.dumps(raw, ensure_ascii=False))
        return 0
    stages = ", ".join(f"{_depth(plies)} over {n} ({t:.1f} s)" for plies, n, t in result.stages)
    if result.exact:
        state = "every endgame solved to the end"
    else:
        state = "endgames searched as deep as each stage says"
    if result.budget_hit:
        state += "; the time ran out: the last stage finished stands"
    tiles = "tile" if result.bag == 1 else "tiles"
    print(
        f"Pre-endgame, {result.bag} {tiles} in the bag; unseen {result.unseen}. "
        f"Stages: {stages}; {state}; {result.solves:,} endgames, {result.nodes:,} positions, "
        f"{elapsed:.2f} s"
    )
    width = max((len(pl["move"]) for pl in result.plays), default=4)
    print(
        f"{'':>6}{'move':<{width}}  {'score':>5}  {'win %':>6}  {'tie %':>5}  {'mean':>7}  valued"
    )
    for i, pl in enumerate(result.plays, 1):
        notes = [f"stage {pl['stage']}, {_depth(pl['plies'])}"]
        if pl["cut"]:
            notes.append(f"dropped: at most {100 * pl['win_bound']:.1f}% to the end")
        if pl["modelled"]:
            notes.append("modelled replies")
        print(
            f"{i:>4}. {pl['move']:<{width}}  {pl['score']:>5}  {100 * pl['wins']:>5.1f}%  "
            f"{100 * pl['ties']:>4.1f}%  {pl['mean']:>+7.2f}  {'; '.join(notes)}"
        )
    if result.plays and len(result.plays[0]["outcomes"]) <= 12:
        best = result.plays[0]
        detail = " ".join(
            f"{bag}{'x' + str(n) if n > 1 else ''}:{value:+.1f}"
            for bag, n, value, *_ in best["outcomes"]
        )
        print(f"{best['move']}, by what the bag holds: {detail}")
    return 0
