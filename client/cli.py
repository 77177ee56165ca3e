"""The `anchor` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from engine import AnchorError, Board, Lexicon, Ruleset, Solver, parse_cgp

from . import protocol
from .client import AnalysisClient, ServiceError
from .lexica import open_lexicon

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
    request = protocol.Request(
        ruleset=args.ruleset,
        lexicon=args.lexicon,
        positions=(position,),
        options=protocol.Options(exchanges=args.exchanges),
        rank=args.rank,
        leaves=args.leaves,
    )
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(redis_url, queue=args.queue)
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
    rack = args.rack or (args.cgp.split()[1].split("/")[0] if args.cgp else "")
    total = result["total"]
    shown = f"top {len(moves)} of " if len(moves) < total else ""
    where = "via Redis" if redis_url else "in-process"
    print(f"Rack {rack}: {shown}{total} plays ({elapsed * 1e3:.2f} ms, {where})")
    width = max((len(m["notation"]) for m in moves), default=0)
    for rank, m in enumerate(moves, 1):
        equity = f"  {m['equity']:>8.2f}" if "equity" in m else ""
        print(f"{rank:>5}. {m['notation']:<{width}}  {m['score']:>4}{equity}")
    return 0


def cmd_selfplay(args) -> int:
    """Whole games, in-process or as jobs across the worker fleet; GCG files and stats."""
    import resource
    import statistics

    Ruleset.load(args.ruleset)  # a bad name fails here, before any job
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(redis_url, queue=args.queue, job_timeout=max(60, 5 * args.per_job))
    requests = [
        protocol.SelfPlayRequest(
            ruleset=args.ruleset,
            lexicon=args.lexicon,
            seed=args.seed + start,
            games=min(args.per_job, args.games - start),
            players=args.players,
            check=not args.no_check,
            policies=tuple(args.policy or ()),
            leaves=args.leaves,
            alternate=args.alternate,
        )
        for start in range(0, args.games, args.per_job)
    ]
    started = time.perf_counter()
    try:
        results = client.analyze_many(requests, timeout=args.timeout, progress=args.progress)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    failed = [r["error"] for r in results if not r["ok"]]
    if failed:
        raise AnchorError("; ".join(f"{e['message']} [{e['code']}]" for e in failed))
    games = [g for r in results for g in r["games"]]
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for g in games:
            (out / f"{args.ruleset}-{g['seed']}.gcg").write_text(g["gcg"], encoding="utf-8")
    times = sorted(t for g in games for t in g["move_us"])
    plays = sum(g["plays"] for g in games)
    totals = [sum(g["scores"]) for g in games]
    ends = {end: sum(1 for g in games if g["end"] == end) for end in ("out", "scoreless")}
    where = f"via Redis ({redis_url.split('@')[-1]})" if redis_url else "in-process"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{len(games)} {args.ruleset} games, {args.players} players, seeds {args.seed}.."
        f"{args.seed + len(games) - 1}, {where}, invariants {'off' if args.no_check else 'checked'}"
    )
    print(
        f"  {elapsed:.2f} s: {len(games) / elapsed:.1f} games/s, "
        f"{plays / elapsed:,.0f} plays generated/s"
    )
    print(
        f"  per-turn generation: median {statistics.median(times):.0f} µs, "
        f"p99 {times[int(len(times) * 0.99) - 1]:.0f} µs, max {times[-1]:.0f} µs "
        f"({len(times)} turns)"
    )
    print(
        f"  average score per game {statistics.mean(totals):.1f} "
        f"(per player {statistics.mean(totals) / args.players:.1f}); ended: {ends['out']} out, "
        f"{ends['scoreless']} after six scoreless turns"
    )
    print(
        f"  peak RSS of this process {peak:.1f} MiB" + (f"; GCG in {args.out}" if args.out else "")
    )
    seated = {name for g in games for name in g["policies"]}
    if len(seated) > 1:
        for name in sorted(seated):
            wins = 0.0
            for g in games:
                pairs = list(zip(g["scores"], g["policies"], strict=True))
                mine = max(s for s, pol in pairs if pol == name)
                theirs = max(s for s, pol in pairs if pol != name)
                wins += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
            low, high = _wilson(wins, len(games))
            print(
                f"  {name} player won {wins:g} of {len(games)} = {100 * wins / len(games):.1f}% "
                f"(95% CI {100 * low:.1f}-{100 * high:.1f}%)"
            )
    return 0


def cmd_train_leaves(args) -> int:
    """Learn leave values by self-play (through the fleet when a Redis URL is given)."""
    from engine.training import LeaveModel, fit, observations

    rules = Ruleset.load(args.ruleset)
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(redis_url, queue=args.queue, job_timeout=600)
    model = LeaveModel(rules)

    def play(games: int, seed: int, policies: tuple[str, ...], alternate: bool) -> list[dict]:
        requests = [
            protocol.SelfPlayRequest(
                ruleset=args.ruleset,
                lexicon=args.lexicon,
                seed=seed + start,
                games=min(args.per_job, games - start),
                check=False,
                policies=policies,
                alternate=alternate,
                model=tuple(model.params) if "equity" in policies else (),
            )
            for start in range(0, games, args.per_job)
        ]
        results = client.analyze_many(requests, timeout=args.timeout)
        failed = [r["error"]["message"] for r in results if not r["ok"]]
        if failed:
            raise AnchorError("; ".join(failed))
        return [g for r in results for g in r["games"]]

    def evaluate(label: str) -> None:
        games = play(args.eval_games, 1_000_000, ("equity", "score"), True)
        wins = 0.0
        for g in games:
            pairs = dict(zip(g["policies"], g["scores"], strict=True))
            wins += (
                1.0
                if pairs["equity"] > pairs["score"]
                else 0.5
                if pairs["equity"] == pairs["score"]
                else 0.0
            )
        low, high = _wilson(wins, len(games))
        print(
            f"  {label}: equity player won {100 * wins / len(games):.1f}% of {len(games)} games "
            f"against the score player (95% CI {100 * low:.1f}-{100 * high:.1f}%)"
        )

    started = time.perf_counter()
    for iteration in range(1, args.iterations + 1):
        policies = ("score",) if iteration == 1 else ("equity",)
        games = play(args.games, args.seed + iteration * 100_000, policies, False)
        data = [obs for g in games for obs in observations(g["gcg"], rules)]
        model = fit(rules, data)
        print(
            f"iteration {iteration}: {len(games)} games ({policies[0]} players), "
            f"{len(data)} leaves observed, {time.perf_counter() - started:.1f} s"
        )
        if args.eval_games:
            evaluate(f"after iteration {iteration}")
    values = {
        ("?" if i == 0 else rules.alphabet[i - 1]): round(v, 2)
        for i, v in enumerate(model.params[: rules.size + 1])
    }
    best = sorted(values.items(), key=lambda kv: -kv[1])
    print("  tile values, best to worst: " + " ".join(f"{k}{v:+.1f}" for k, v in best))
    data = model.to_klv2(args.max_leave)
    Path(args.out).write_bytes(data)
    print(f"wrote {args.out}: {len(data):,} bytes ({time.perf_counter() - started:.1f} s in all)")
    return 0


def _wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    import math

    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def cmd_annotate(args) -> int:
    """Annotate game records: JSON Lines for machines, HTML pages for people."""
    from engine.gcg import decode_gcg

    from . import report
    from .client import Progress

    rules = Ruleset.load(args.ruleset)
    files: list[tuple[str, Path]] = []
    for given in args.paths:
        root = Path(given)
        if root.is_dir():
            files += [(str(p.relative_to(root)), p) for p in sorted(root.rglob("*.gcg"))]
        else:
            files.append((root.name, root))
    if not files:
        raise AnchorError(f"no .gcg files in {', '.join(args.paths)}")
    entries: list[dict] = []
    requests, pending = [], []
    for name, path in files:
        try:
            text = decode_gcg(path.read_bytes())
        except OSError as exc:
            entries.append({"name": name, "error": f"cannot read {path}: {exc.strerror}"})
            continue
        requests.append(
            protocol.AnnotateRequest(text, args.ruleset, args.lexicon, args.top, args.leaves)
        )
        pending.append(name)
        entries.append({"name": name})

    class PositionProgress(Progress):
        unit = "positions"

        def count(self, result: dict) -> int:
            turns = result.get("annotation", {}).get("turns", [])
            return sum(1 for turn in turns if turn.get("analysed"))

    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    client = AnalysisClient(redis_url, queue=args.queue, job_timeout=300)
    started = time.perf_counter()
    bar = PositionProgress(len(requests)) if not args.quiet else False
    try:
        results = client.analyze_many(requests, timeout=args.timeout, progress=bar)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    by_name = dict(zip(pending, results, strict=True))
    positions = 0
    with open(out / "annotations.jsonl", "w", encoding="utf-8") as jsonl:
        for entry in entries:
            result = by_name.get(entry["name"])
            if result is None:
                jsonl.write(
                    json.dumps({"game": entry["name"], "error": entry["error"]}, ensure_ascii=False)
                    + "\n"
                )
                continue
            if not result["ok"]:
                entry["error"] = f"{result['error']['message']} [{result['error']['code']}]"
                jsonl.write(
                    json.dumps(
                        {"game": entry["name"], "error": result["error"]}, ensure_ascii=False
                    )
                    + "\n"
                )
                continue
            annotation = result["annotation"]
            positions += sum(1 for turn in annotation["turns"] if turn.get("analysed"))
            page = entry["name"].replace("/", "__").removesuffix(".gcg") + ".html"
            (out / page).write_text(
                report.game_page(entry["name"], rules, annotation), encoding="utf-8"
            )
            entry.update(page=page, players=annotation["players"], summary=annotation["summary"])
            jsonl.write(
                json.dumps({"game": entry["name"], "annotation": annotation}, ensure_ascii=False)
                + "\n"
            )
    (out / "index.html").write_text(report.index_page(entries), encoding="utf-8")
    failed = [e for e in entries if "error" in e]
    where = "via Redis" if redis_url else "in-process"
    print(
        f"{len(entries) - len(failed)} of {len(entries)} games annotated, {positions} positions, "
        f"{elapsed:.2f} s ({positions / max(elapsed, 1e-9):,.0f} positions/s, {where})"
    )
    for e in failed:
        print(f"  not annotated: {e['name']}: {e['error']}")
    print(f"report: {out / 'index.html'}")
    return 0


def cmd_worker(args) -> int:
    from worker.main import run

    return run(args)


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
        from engine import score_play, validate_play

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
    lexicon.save(args.out)
    report = lexicon.report
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


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AnchorError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise AnchorError(f"{what} {path} is not UTF-8 text") from None


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _position_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ruleset", default="english", help="english, russian, erudit or a .toml file")
    p.add_argument("--cgp", help="a CGP position (full, or just its board field)")
    p.add_argument("--board", help="a text file of board rows ('.' empty, lowercase blank)")
    p.add_argument("--rack", help="the rack, e.g. AEINRS? (default: the CGP's player to move)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anchor", description="Scrabble-family analysis engine")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="show a real position and score a play on it")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: english)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("analyze", help="every legal play for a rack, ranked by score")
    _position_args(p)
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--top", type=_non_negative, help="print only the N best plays")
    p.add_argument("--mode", choices=("both", "across", "down"), default="both")
    p.add_argument("--exchanges", action="store_true", help="also list exchanges and the pass")
    p.add_argument(
        "--rank",
        choices=("score", "equity"),
        default="score",
        help="rank by score, or by equity: score + value of the tiles kept",
    )
    p.add_argument(
        "--leaves",
        help="leave values for --rank equity: a .klv2 path or a name "
        "(default: the lexicon's name, NAME.klv2 beside the lexica)",
    )
    p.add_argument("--show-board", action="store_true", help="render the board first")
    p.add_argument("--json", action="store_true", help="print a JSON list of plays")
    p.add_argument(
        "--redis-url",
        help="go through the worker queue (default: $REDIS_URL; with neither, run in-process)",
    )
    p.add_argument("--queue", default="anchor", help="queue name (default: anchor)")
    p.add_argument("--timeout", type=float, default=30, help="seconds to wait for the answer")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("selfplay", help="play whole games, checking every invariant")
    p.add_argument("--ruleset", default="english")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--games", type=_positive, default=10)
    p.add_argument("--seed", type=_non_negative, default=1, help="seed of the first game")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    p.add_argument("--out", help="write one GCG file per game into this folder")
    p.add_argument("--no-check", action="store_true", help="skip the per-turn invariant checks")
    p.add_argument(
        "--policy",
        action="append",
        choices=("score", "equity"),
        help="a player's policy, once per seat or once for all (default: score)",
    )
    p.add_argument("--leaves", help="leave values (.klv2 path or name) for equity players")
    p.add_argument("--alternate", action="store_true", help="rotate seats so who starts alternates")
    p.add_argument("--per-job", type=_positive, default=10, help="games per job (fleet mode)")
    p.add_argument("--redis-url", help="play through the worker fleet (default: $REDIS_URL)")
    p.add_argument("--queue", default="anchor")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for all games")
    p.add_argument("--progress", action="store_true", help="a progress bar on stderr")
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
    p.add_argument("--ruleset", default="english")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--top", type=_non_negative, default=5, help="best plays listed per turn")
    p.add_argument(
        "--leaves",
        help="leave values (.klv2 path or name): rank by equity and report equity given up",
    )
    p.add_argument("--redis-url", help="one job per game through the fleet (default: $REDIS_URL)")
    p.add_argument("--queue", default="anchor")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_annotate)

    p = sub.add_parser("train-leaves", help="learn leave values by self-play, write a KLV2 file")
    p.add_argument("--ruleset", default="russian")
    p.add_argument("--lexicon", help="lexicon name or .kwg path (default: the ruleset's)")
    p.add_argument("--games", type=_positive, default=1000, help="games per iteration")
    p.add_argument("--iterations", type=_positive, default=2)
    p.add_argument("--seed", type=_non_negative, default=1)
    p.add_argument(
        "--eval-games",
        type=_non_negative,
        default=0,
        help="after each iteration, games of equity against score play",
    )
    p.add_argument("--max-leave", type=_positive, default=6, help="largest leave in the file")
    p.add_argument("--out", required=True, help="the .klv2 file to write")
    p.add_argument("--per-job", type=_positive, default=50)
    p.add_argument("--redis-url", help="play through the worker fleet (default: $REDIS_URL)")
    p.add_argument("--queue", default="anchor")
    p.add_argument("--timeout", type=float, default=7200)
    p.set_defaults(func=cmd_train_leaves)

    p = sub.add_parser("worker", help="run a worker: take analysis jobs from Redis")
    p.add_argument(
        "--lexicon",
        action="append",
        metavar="NAME[@RULESET]=PATH",
        help="a lexicon to serve, opened before the first job (repeatable; "
        "default: english from dictionaries/build)",
    )
    p.add_argument(
        "--leaves",
        action="append",
        metavar="NAME=PATH",
        help="leave values (KLV2) served for rank=equity requests (repeatable)",
    )
    p.add_argument("--queue", action="append", help="queue(s) to listen on (default: anchor)")
    p.add_argument(
        "--redis-url",
        help="redis:// or rediss:// URL (default: $REDIS_URL, else redis://localhost:6379/0)",
    )
    p.add_argument("--name", help="worker name (default: RQ's)")
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument("--max-jobs", type=_non_negative, help="exit after this many jobs")
    p.add_argument(
        "--maintenance-interval",
        type=_non_negative,
        default=10,
        help="seconds between registry clean-ups that requeue abandoned jobs",
    )
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    p.add_argument("--metrics-host", default="127.0.0.1")
    p.add_argument("--log-format", choices=("json", "text"), default="json")
    p.add_argument("--log-level", default="INFO")
    p.set_defaults(func=cmd_worker)

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

    p = sub.add_parser("build-lexicon", help="build a .kwg lexicon from a word list")
    p.add_argument("--ruleset", default="english")
    p.add_argument("--words", required=True, help="UTF-8 text file, one word a line")
    p.add_argument("--out", required=True, help="output .kwg path")
    p.set_defaults(func=cmd_build_lexicon)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AnchorError as exc:
        print(f"anchor: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"anchor: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
