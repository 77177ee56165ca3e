"""The endgame player against the static player: both play by equity (TWL06 leaves) until
the bag is empty; then one solves the endgame exactly (a time cap a move) and the other
ranks plays statically (score, plus the going-out adjustment). Seats alternate; every
game's seed is played twice, each player starting once. The win rate with its 95%
interval, and how often the endgame changed who won against the same game played by two
static players.

    .venv/bin/python bench/endgame_selfplay.py [--games 200] [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import math
import time

from common import DATA, header

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.selfplay import EndgamePlayer, EquityPlayer, play_game


def wilson(wins: float, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z, p = 1.96, wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games (seeds x 2 seats; 200)")
    parser.add_argument("--seconds", type=float, default=1.0, help="the solver's cap a move (1.0)")
    args = parser.parse_args()
    header("Self-play: endgame player (equity, then the exact solver) vs the static player")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = solver.leaves(DATA / "kwg" / "TWL06.klv2")
    wins = draws = changed = solved = 0
    started = time.perf_counter()
    for g in range(args.games):
        seed, seat = 1 + g // 2, g % 2
        endgame = EndgamePlayer(EquityPlayer(leaves), seconds=args.seconds)
        players = [EquityPlayer(leaves), EquityPlayer(leaves)]
        players[seat] = endgame
        game = play_game(solver, seed, policies=players, check=False)
        control = play_game(
            solver, seed, policies=[EquityPlayer(leaves), EquityPlayer(leaves)], check=False
        )
        mine, theirs = game.scores[seat], game.scores[1 - seat]
        wins += mine > theirs
        draws += mine == theirs
        before = control.scores[seat] - control.scores[1 - seat]
        changed += (before <= 0 < mine - theirs) - (before > 0 >= mine - theirs)
        solved += endgame.solved
    n = args.games
    score = wins + draws / 2
    low, high = wilson(score, n)
    print(
        f"games {n}, {time.perf_counter() - started:.0f} s, solver cap {args.seconds:g} s a move, "
        f"{solved} endgame moves solved"
    )
    print(
        f"endgame player: {wins} won, {draws} drawn, {n - wins - draws} lost: "
        f"{100 * score / n:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%)"
    )
    print(
        "games whose winner the endgame changed against the same deal played statically: "
        f"net {changed:+d}"
    )


if __name__ == "__main__":
    main()
