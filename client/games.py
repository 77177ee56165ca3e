"""Whole-game commands of the `anchor` CLI: self-play, leave training, annotation.
They build protocol requests and run them through AnalysisClient, in-process or across
the worker fleet, then summarise or write what comes back."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from anchor.dictionaries.lexica import lexicon_ruleset
from anchor.engine import AnchorError, Ruleset
from anchor.engine.match import Outcome, win_rate

from . import protocol
from .arguments import output_file, progress_wanted, service_url, threads_for
from .client import AnalysisClient, Progress, ServiceError


def cmd_selfplay(args) -> int:
    """Whole games, in-process or as jobs across the worker fleet; GCG files and stats."""
    import resource
    import statistics

    rules = Ruleset.load(args.ruleset)  # a bad name fails here, before any job
    out = _output_folder(args.out, "GCG") if args.out else None
    client, redis_url = _fleet(args, job_timeout=max(60, 5 * args.games_per_job))
    requests = [
        protocol.SelfPlayRequest(
            ruleset=args.ruleset,
            lexicon=args.lexicon,
            seed=args.seed + start,
            games=min(args.games_per_job, args.games - start),
            players=args.players,
            check=not args.no_check,
            policies=tuple(args.policy or ()),
            leaves=args.leaves,
            alternate=args.alternate,
            records=out is not None,  # a GCG a game is a fifth of an equity game's time
            sim_iterations=args.sim_iterations,
            sim_candidates=args.sim_candidates,
            sim_plies=args.sim_plies,
            sim_rank_by=args.sim_rank_by,
        )
        for start in range(0, args.games, args.games_per_job)
    ]
    bar = GameProgress(len(requests)) if progress_wanted(args) else False
    started = time.perf_counter()
    try:
        results = client.analyze_many(requests, timeout=args.timeout, progress=bar)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
    games = _games(results)
    if out is not None:
        for g in games:
            # named by the ruleset's name: --ruleset may be a file's path
            (out / f"{_file_safe(rules.name)}-{g.seed}.gcg").write_text(g.gcg, encoding="utf-8")
    times = sorted(t for g in games for t in g.move_us)
    plays = sum(g.plays for g in games)
    totals = [sum(g.scores) for g in games]
    ends = {end: sum(1 for g in games if g.end == end) for end in ("out", "scoreless")}
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
        f"{ends['scoreless']} after the ruleset's scoreless turns in a row"
    )
    print(
        f"  peak RSS of this process {peak:.1f} MiB" + (f"; GCG in {args.out}" if args.out else "")
    )
    seated = {name for g in games for name in g.policies}
    if len(seated) > 1:
        outcomes = [_outcome(g) for g in games]
        for name in sorted(seated):
            r = win_rate(outcomes, name)
            print(
                f"  {name} player won {r.wins:g} of {r.games} = {100 * r.rate:.1f}% "
                f"(95% CI {100 * r.low:.1f}-{100 * r.high:.1f}%)"
            )
    return 0


class GameProgress(Progress):
    """Self-play jobs done, with the games they played per second."""

    unit = "games"

    def count(self, result: dict) -> int:
        found = protocol.read_result(result, protocol.SelfPlayResult)
        return 0 if isinstance(found, protocol.Failure) else len(found.games)


def _games(results: list[dict]) -> list[protocol.Game]:
    """The games of self-play results; AnchorError naming every job that failed."""
    read = [protocol.read_result(r, protocol.SelfPlayResult) for r in results]
    failed = Counter(f"{f.message} [{f.code}]" for f in read if isinstance(f, protocol.Failure))
    if failed:
        why = "; ".join(f"{why} ({n} jobs)" if n > 1 else why for why, n in failed.items())
        raise AnchorError(f"{sum(failed.values())} of {len(read)} jobs failed: {why}")
    return [g for r in read for g in r.games]


def _file_safe(name: str) -> str:
    """A ruleset's name as part of a file name (a file's ruleset may name itself anyhow)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".") or "game"


def _outcome(game: protocol.Game) -> Outcome:
    return Outcome(tuple(game.scores), tuple(game.policies), game.gcg)


def cmd_train_leaves(args) -> int:
    """Learn leave values by self-play (through the fleet when a Redis URL is given)."""
    from anchor.engine.training import train

    rules = Ruleset.load(args.ruleset)
    out = output_file(args.out, "leave values (.klv2)")  # before the training, not after
    client, redis_url = _fleet(args, job_timeout=600)

    def play(games: int, seed: int, policies: tuple[str, ...], alternate: bool, model):
        requests = [
            protocol.SelfPlayRequest(
                ruleset=args.ruleset,
                lexicon=args.lexicon,
                seed=seed + start,
                games=min(args.games_per_job, games - start),
                check=False,
                policies=policies,
                alternate=alternate,
                model=tuple(model.params) if "equity" in policies else (),
            )
            for start in range(0, games, args.games_per_job)
        ]
        bar = GameProgress(len(requests))
        results = client.analyze_many(requests, timeout=args.timeout, progress=bar)
        return [_outcome(g) for g in _games(results)]

    started = time.perf_counter()
    model = train(
        rules, play, args.games, args.iterations, args.seed, args.eval_games,
        say=lambda line: print(line, flush=True),
    )  # fmt: skip
    values = {
        ("?" if i == 0 else rules.alphabet[i - 1]): round(v, 2)
        for i, v in enumerate(model.params[: rules.size + 1])
    }
    best = sorted(values.items(), key=lambda kv: -kv[1])
    print("  tile values, best to worst: " + " ".join(f"{k}{v:+.1f}" for k, v in best))
    print(f"  writing the value of every leave of up to {args.max_leave} tiles ...", flush=True)
    data = model.to_klv2(args.max_leave)
    out.write_bytes(data)
    print(f"wrote {args.out}: {len(data):,} bytes ({time.perf_counter() - started:.1f} s in all)")
    return 0


def cmd_annotate(args) -> int:
    """Annotate game records: JSON Lines for machines, HTML pages for people."""
    from anchor.engine.gcg import decode_gcg_as, encoding_hint, parse_gcg

    from . import report

    if args.sim_iterations and not args.leaves:
        raise AnchorError("--sim-iterations needs --leaves: the simulated players rank by equity")
    if args.infer_racks and not args.leaves:
        raise AnchorError("--infer-racks needs --leaves: a move is read by its equity")
    if args.infer_racks > protocol.MAX_INFER_RACKS:
        raise AnchorError(f"--infer-racks is at most {protocol.MAX_INFER_RACKS:,}")
    out = _output_folder(args.out)
    files: list[tuple[str, Path]] = []
    for given in args.paths:
        root = Path(given)
        if root.is_dir():
            files += [(str(p.relative_to(root)), p) for p in sorted(root.rglob("*.gcg"))]
        elif root.is_file():
            files.append((root.name, root))
        elif root.exists():  # a FIFO or a device: reading it could wait forever
            raise AnchorError(f"{given} is not a file or a folder of .gcg files")
        else:
            raise AnchorError(f"{given} does not exist")
    if not files:
        raise AnchorError(f"no .gcg files in {', '.join(args.paths)}")
    entries: list[dict] = []
    requests, pending, rulesets = [], [], {}
    guessed: dict[str, str] = {}  # records read in an encoding no line named
    for name, path in files:
        try:
            text, encoding, guess = decode_gcg_as(path.read_bytes())
            if guess:
                guessed[name] = encoding
            ruleset = args.ruleset or _game_ruleset(parse_gcg(text, source=name), args.lexicon)
            rulesets[name] = Ruleset.load(ruleset)
        except OSError as exc:
            entries.append({"name": name, "error": f"cannot read {path}: {exc.strerror}"})
            continue
        except AnchorError as exc:
            hint = encoding_hint(guessed[name]) if name in guessed else ""
            entries.append({"name": name, "error": f"{exc}{hint}"})
            continue
        requests.append(
            protocol.AnnotateRequest(
                text,
                ruleset,
                args.lexicon,
                args.top,
                args.leaves,
                args.sim_iterations,
                args.sim_candidates,
                args.sim_plies,
                args.seed,
                args.sim_rank_by,
                args.infer_racks,
                args.preendgame is not None,
                args.preendgame or (),
            )  # fmt: skip
        )
        pending.append(name)
        entries.append({"name": name})

    class PositionProgress(Progress):
        unit = "positions"

        def count(self, result: dict) -> int:
            found = protocol.read_result(result, protocol.AnnotateResult)
            return 0 if isinstance(found, protocol.Failure) else len(found.analysed_turns())

    client, redis_url = _fleet(args, job_timeout=300)
    started = time.perf_counter()
    bar = PositionProgress(len(requests), what="games") if progress_wanted(args) else False
    try:
        results = client.analyze_many(requests, timeout=args.timeout, progress=bar)
    except ServiceError as exc:
        raise AnchorError(str(exc)) from None
    elapsed = time.perf_counter() - started
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
            found = protocol.read_result(result, protocol.AnnotateResult)
            if isinstance(found, protocol.Failure):
                if entry["name"] in guessed:
                    found = replace(
                        found, message=found.message + encoding_hint(guessed[entry["name"]])
                    )
                entry["error"] = f"{found.message} [{found.code}]"
                jsonl.write(
                    json.dumps({"game": entry["name"], "error": found.to_map()}, ensure_ascii=False)
                    + "\n"
                )
                continue
            annotation = found.annotation
            positions += len(found.analysed_turns())
            page = entry["name"].replace("/", "__").removesuffix(".gcg") + ".html"
            (out / page).write_text(
                report.game_page(entry["name"], rulesets[entry["name"]], annotation),
                encoding="utf-8",
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
    return 1 if failed else 0


def _fleet(args, job_timeout: float) -> tuple[AnalysisClient, str | None]:
    """The client a whole-game command runs its jobs with, and the Redis URL it uses: the
    fleet at --redis-url ($REDIS_URL), else in-process on --threads (forked processes
    with --processes)."""
    url = service_url(args)
    client = AnalysisClient(
        url,
        queue=args.queue,
        lane=args.lane,
        job_timeout=job_timeout,
        threads=threads_for(args, url),
        processes=args.processes,
    )
    return client, url


def _output_folder(given: str, what: str = "report") -> Path:
    """The folder a command writes into, made and checked before any work is done."""
    out = Path(given)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise AnchorError(f"--out {given} is a file; give a folder for the {what}") from None
    except OSError as exc:
        raise AnchorError(f"cannot make the {what} folder {given}: {exc.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise AnchorError(f"cannot write into the {what} folder {given}")
    return out


def _game_ruleset(game, lexicon: str | None) -> str:
    """The ruleset a record was played under: its #ruleset pragma, else the one its
    #lexicon (or --lexicon) was built for, else english."""
    named = game.pragmas.get("ruleset")
    if named:
        return named
    for candidate in (game.lexicon, lexicon):
        found = lexicon_ruleset(candidate)
        if found:
            return found
    return "english"
