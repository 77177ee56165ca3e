"""Equity against score: 1,000 seeded English games between an equity player (score +
leave value from TWL06.klv2, exchanges allowed) and a score player (greedy), who starts
alternating; win rate with a 95% Wilson interval. Then the cost of ranking by equity
against ranking by score on the bench positions."""

from __future__ import annotations

import argparse
import math
import statistics
import time

from common import DATA, header

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.selfplay import EquityPlayer, Greedy, play_game


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def median_time(solver, board, rack, runs: int, **kw) -> float:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        solver.generate_moves(board, rack, **kw)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args()
    header("equity player vs score player, TWL06 + TWL06.klv2")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
    wins = spread = 0.0
    started = time.perf_counter()
    for seed in range(1, args.games + 1):
        equity_first = seed % 2 == 0
        policies = (
            [EquityPlayer(leaves), Greedy()] if equity_first else [Greedy(), EquityPlayer(leaves)]
        )
        game = play_game(solver, seed, policies=policies, check=False)
        mine, theirs = (
            (game.scores[0], game.scores[1]) if equity_first else (game.scores[1], game.scores[0])
        )
        wins += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        spread += mine - theirs
    elapsed = time.perf_counter() - started
    low, high = wilson(wins, args.games)
    print(
        f"{args.games} games ({elapsed:.1f} s): equity player wins {wins:.1f} = "
        f"{100 * wins / args.games:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%), "
        f"average spread {spread / args.games:+.1f}"
    )
    lines = [
        ln
        for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    print(f"{'rack':<9}{'by score':>12}{'by equity':>12}{'ratio':>8}")
    for line in lines:
        pos = parse_cgp(rules, line)
        rack, runs = pos.racks[0], 10 if "??" in pos.racks[0] else 200

        a = min(median_time(solver, pos.board, rack, runs) for _ in range(2))
        b = min(
            median_time(solver, pos.board, rack, runs, rank="equity", leaves=leaves)
            for _ in range(2)
        )
        print(f"{rack:<9}{a * 1e6:>10.0f}µs{b * 1e6:>10.0f}µs{b / a:>8.2f}")


if __name__ == "__main__":
    main()
