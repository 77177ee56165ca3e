"""Self-play beside MAGPIE's autoplay, one thread each, same lexicon (TWL06, MAGPIE's file)
and leaves: games per second with equity players (MAGPIE's default players) and with
highest-score players, invariants unchecked on both sides (MAGPIE checks none).

Anchor plays in-process through the engine's API (engine/selfplay.py: play_game with
EquityPlayer or Greedy); MAGPIE runs `autoplay games N -lex TWL06 -threads 1` from the
folder ../shared/peers/magpie/build.sh prints (its word map on: its default). Rounds
interleave the two; each figure is the median of its rounds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from common import DATA, add_cpu_option, header, magpie_folder, positive, share_one_cpu

from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine.leaves import Leaves
from anchor.engine.selfplay import EquityPlayer, Greedy, play_game

PLAYERS = {"equity": [], "score": ["-s1", "score", "-s2", "score", "-r1", "best", "-r2", "best"]}


def magpie_seconds(folder, games: int, players: str, seed: int) -> float:
    """The wall time of one MAGPIE autoplay run (it prints no time of its own)."""
    cmd = [str(folder / "bin" / "magpie"), "autoplay", "games", str(games), "-lex", "TWL06",
           "-threads", "1", "-seed", str(seed), *PLAYERS[players]]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=3600)
    if done.returncode or f"Games Played: {games}" not in done.stdout:
        raise RuntimeError(f"MAGPIE autoplay: {(done.stderr or done.stdout).strip()[-300:]}")
    return time.perf_counter() - started


def magpie_rate(folder, games: int, players: str, seed: int) -> float:
    """Games per second of MAGPIE's autoplay, its start-up (loading the lexicon and the
    word map: the time of a 1-game run) taken out."""
    start_up = magpie_seconds(folder, 1, players, seed)
    return (games - 1) / max(1e-6, magpie_seconds(folder, games, players, seed) - start_up)


def anchor_rate(solver: Solver, leaves: Leaves, games: int, players: str, seed: int) -> float:
    started = time.perf_counter()
    for i in range(games):
        seats = [EquityPlayer(leaves) if players == "equity" else Greedy() for _ in range(2)]
        play_game(solver, seed + i, policies=seats, check=False)
    return games / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=positive, default=200, help="games a round (200)")
    parser.add_argument("--rounds", type=positive, default=5, help="interleaved rounds (5)")
    add_cpu_option(parser)
    args = parser.parse_args()
    header(f"self-play vs MAGPIE autoplay: {args.games} games a round, one thread, TWL06")
    print(f"# {share_one_cpu(args.cpu)}")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
    folder, why = magpie_folder()
    print(f"# MAGPIE: {why}")
    ours: dict[str, list[float]] = {p: [] for p in PLAYERS}
    theirs: dict[str, list[float]] = {p: [] for p in PLAYERS}
    for r in range(args.rounds):
        for players in PLAYERS:
            ours[players].append(anchor_rate(solver, leaves, args.games, players, 1 + r))
            if folder is not None:
                theirs[players].append(magpie_rate(folder, args.games, players, 1 + r))
    print("players   Anchor games/s  MAGPIE games/s  Anchor / MAGPIE (rate)  round by round")
    for players in PLAYERS:
        mine = statistics.median(ours[players])
        them = statistics.median(theirs[players]) if theirs[players] else None
        other = "-"
        if them:
            rounds = [a / b for a, b in zip(ours[players], theirs[players], strict=True)]
            q1, mid, q3 = statistics.quantiles(rounds, n=4) if len(rounds) > 1 else [rounds[0]] * 3
            other = f"{them:>14.1f}  {mine / them:>8.2f}  {' ' * 14}{mid:.2f} ({q1:.2f} - {q3:.2f})"
        print(f"{players:<8} {mine:>15.1f}  {other}")


if __name__ == "__main__":
    main()
