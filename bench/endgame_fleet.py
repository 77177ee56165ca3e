"""One hard endgame over the fleet: the same positions solved in-process, by one worker,
by two workers started apart with the root split (the first play alone, then the rest in
two parts against its value), and by two workers forked from one `anchor worker --workers
2` searching together on one table (engine/peers.py). Positions: the self-played TWL06
endgames of bench/endgame.py that take a second or more on one core. The values and lines
must be the in-process ones. Each way: the median of --runs runs, a new fleet each run.

    .venv/bin/python bench/endgame_fleet.py [--games 12] [--least 1.0] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import DATA, header
from endgame import selfplay_endgames
from service import TWL06, fleet

from anchor.client import endgame
from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.worker.runner import LexiconRegistry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=12, help="self-played endgames to try (12)")
    parser.add_argument(
        "--least", type=float, default=1.0, help="seconds in-process at least (1.0)"
    )
    parser.add_argument("--most", type=float, default=20.0, help="... and at most (20)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each position (3)")
    args = parser.parse_args()
    header("Endgame over the fleet: 1 worker; 2 apart, the root split; 2 forked, together")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    chosen = []
    for name, cgp in selfplay_endgames(solver, args.games):
        pos = parse_cgp(rules, cgp)
        found = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], budget_s=args.most)
        if found.exact and found.seconds >= args.least:
            chosen.append((name, cgp, found.seconds))
    registry = LexiconRegistry({"twl06": str(TWL06)})
    local = AnalysisClient(registry=registry)
    answers = {}
    for name, cgp, _ in chosen:
        answers[name] = local.analyze(p.EndgameRequest(cgp=cgp, lexicon="twl06"), timeout=600)
    # (label, workers started apart, forked with --workers, split, parts)
    ways = [
        ("1 worker", 1, 1, "root", 1),
        ("2 apart, root", 2, 1, "root", 2),
        ("2 forked, together", 1, 2, "together", 2),
    ]
    times: dict[str, dict[str, list[float]]] = {w[0]: {} for w in ways}
    for label, apart, forked, split, parts in ways:
        extra = ("--max-job-seconds", "600") + (("--workers", str(forked)) if forked > 1 else ())
        for _ in range(args.runs):  # a fleet a run: forked workers would answer a repeat
            with fleet(f"end{apart}{forked}", apart, extra=extra) as url:  # from their table
                time.sleep(2.0 if forked > 1 else 0.0)  # the forked workers register
                client = AnalysisClient(url, queue=f"end{apart}{forked}", job_timeout=600)
                for name, cgp, _ in chosen:
                    request = p.EndgameRequest(cgp=cgp, lexicon="twl06")
                    started = time.perf_counter()
                    got = endgame.solve(client, request, parts=parts, timeout=600, split=split)
                    times[label].setdefault(name, []).append(time.perf_counter() - started)
                    one = answers[name]
                    assert (got.value, got.moves) == (one["value"], one["moves"]), name
    print(f"{'position':<12} {'racks':<17} {'value':>6} {'in-process':>11} "
          + " ".join(f"{w[0]:>19}" for w in ways))  # fmt: skip
    median = {w: {n: statistics.median(t) for n, t in by.items()} for w, by in times.items()}
    for name, cgp, seconds in chosen:
        racks = cgp.split()[1]
        cells = []
        for w in ways:
            took = median[w[0]][name]
            cells.append(f"{took:>8.2f}s ({median[ways[0][0]][name] / took:.2f}x)".rjust(19))
        row = " ".join(cells)
        print(f"{name:<12} {racks:<17} {answers[name]['value']:>6} {seconds:>10.2f}s {row}")
    if chosen:
        totals = {w[0]: sum(median[w[0]].values()) for w in ways}
        base = totals[ways[0][0]]
        print(
            f"all {len(chosen)} (medians of {args.runs} runs): "
            + ", ".join(f"{w} {t:.2f} s ({base / t:.2f}x)" for w, t in totals.items())
            + "; values and lines equal to in-process on every position"
        )


if __name__ == "__main__":
    main()
