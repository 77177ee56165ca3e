"""One hard endgame over the fleet: the same positions solved in-process, by one worker,
and split over two workers (the first play alone, then the rest in two parts against its
value). Positions: the self-played TWL06 endgames of bench/endgame.py that take a second
or more on one core. The values and lines must be the in-process ones.

    .venv/bin/python bench/endgame_fleet.py [--games 12] [--least 1.0]
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    header("Endgame over the fleet: in-process, 1 worker, split over 2 workers")
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
    print(
        f"{'position':<12} {'racks':<17} {'value':>6} {'in-process':>11} {'1 worker':>9} "
        f"{'2 workers':>10} {'speed-up':>9}"
    )
    times: dict[int, dict[str, float]] = {1: {}, 2: {}}
    for count in (1, 2):
        with fleet(f"end{count}", count, extra=("--max-job-seconds", "600")) as url:
            client = AnalysisClient(url, queue=f"end{count}", job_timeout=600)
            for name, cgp, _ in chosen:
                request = p.EndgameRequest(cgp=cgp, lexicon="twl06")
                started = time.perf_counter()
                got = endgame.solve(client, request, parts=count if count > 1 else 1, timeout=600)
                times[count][name] = time.perf_counter() - started
                one = answers[name]
                assert (got.value, got.moves) == (one["value"], one["moves"]), name
    for name, cgp, seconds in chosen:
        racks = cgp.split()[1]
        one, two = times[1][name], times[2][name]
        print(
            f"{name:<12} {racks:<17} {answers[name]['value']:>6} {seconds:>10.2f}s "
            f"{one:>8.2f}s {two:>9.2f}s {one / two:>8.2f}x"
        )
    if chosen:
        total1, total2 = sum(times[1].values()), sum(times[2].values())
        print(
            f"all {len(chosen)}: 1 worker {total1:.2f} s, 2 workers {total2:.2f} s: "
            f"x{total1 / total2:.2f}; "
            "values and lines equal to in-process on every position"
        )


if __name__ == "__main__":
    main()
