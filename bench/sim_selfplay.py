"""Does simulating pay? The simulating player against the static equity player in
self-play, seats alternating, with the win rate's 95% interval and the mean spread.

Usage: python bench/sim_selfplay.py [GAMES] [ITERATIONS] [FIRST SEED] [RANK] [CONFIDENCE]
(40, 60, 1, spread, 0.95). RANK: what the simulating player ranks by, "spread" or "win"
(engine.simulate.RANKS); CONFIDENCE: of its early stop, "none" for every iteration.
"""

from __future__ import annotations

import statistics
import sys
import time

from common import DATA, header

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.leaves import Leaves
from anchor.engine.match import Outcome, win_rate
from anchor.engine.selfplay import EquityPlayer, play_game
from anchor.engine.simulate import SimPlayer, Simulation

TWL06 = DATA / "kwg" / "TWL06.kwg"
KLV2 = DATA / "kwg" / "TWL06.klv2"


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rank = sys.argv[4] if len(sys.argv) > 4 else "spread"
    stop = sys.argv[5] if len(sys.argv) > 5 else "0.95"
    confidence = None if stop == "none" else float(stop)
    settings = Simulation(candidates=10, plies=2, iterations=iterations, round_size=20,
                          confidence=confidence, rank=rank)  # fmt: skip
    header(f"sim player (10 candidates, 2 plies, {iterations} iterations, by {rank}, "
           f"early stop {stop}) vs equity player")  # fmt: skip
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(TWL06, rules), rules)
    leaves = Leaves.open(KLV2, rules)
    results, spreads = [], []
    started = time.perf_counter()
    for seed in range(first, first + games):
        sim = SimPlayer(leaves, Simulation(**{**settings_dict(settings), "seed": seed}))
        seats = ["sim", "equity"] if seed % 2 else ["equity", "sim"]
        policies = [sim if s == "sim" else EquityPlayer(leaves) for s in seats]
        game = play_game(solver, seed, policies=policies, check=False)
        results.append(Outcome(tuple(game.scores), tuple(seats)))
        mine = game.scores[seats.index("sim")]
        spreads.append(mine - game.scores[seats.index("equity")])
        print(f"game {seed}: {dict(zip(seats, game.scores, strict=True))}", flush=True)
    elapsed = time.perf_counter() - started
    r = win_rate(results, "sim")
    se = statistics.stdev(spreads) / len(spreads) ** 0.5
    print(
        f"\nsim player won {r.wins:g} of {r.games} = {100 * r.rate:.1f}% "
        f"(95% CI {100 * r.low:.1f}-{100 * r.high:.1f}%), mean spread "
        f"{statistics.mean(spreads):+.1f} (s.e. {se:.1f}),"
        f" {elapsed / games:.1f} s a game"
    )


def settings_dict(s: Simulation) -> dict:
    return {f: getattr(s, f) for f in Simulation.__dataclass_fields__}


if __name__ == "__main__":
    main()
