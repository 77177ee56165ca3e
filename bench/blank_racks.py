"""Best play by equity on random racks, by the blanks they hold, beside MAGPIE.

bench/movegen.py times each bench position with its own rack, and only one of those racks
holds two blanks; a cost that only some racks pay hides there. Here each bench board gets
`--racks` random racks of the tiles it leaves unseen for each number of blanks (0, 1, 2; a
board whose blanks are both played gets none with blanks), and both engines find the best
play by equity of each: Anchor through its Python API (each call a new rack on a board it
keeps prepared), MAGPIE through its harness with its word map (`-wmp true`). It prints
the median time of each side, the geometric mean of the ratios and the ratio of the sums
(which the slowest racks weigh on), per number of blanks and per board, and the racks that
cost Anchor the most time over MAGPIE's. Rounds interleave the two engines (all racks of a
blank count on one side, then on the other) and each rack's time is its median over the
rounds, so a slow spell of the machine falls on both.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from functools import partial

from common import DATA, add_cpu_option, header, magpie_folder, median_time, positive, share_one_cpu
from movegen import magpie

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.rules import BLANK
from anchor.engine.simulate import unseen_tiles

BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


def racks_for(rules: Ruleset, cgp: str, blanks: int, count: int, rng: random.Random) -> list[str]:
    """`count` CGPs of the board with random racks of `blanks` blanks (none when the board
    has played more than 2 - blanks of its blanks), the opponent's rack left out."""
    fields = cgp.split(" ")
    if sum(ch.islower() for ch in fields[0]) + blanks > 2:
        return []
    position = parse_cgp(rules, cgp)
    pool = [t for t in unseen_tiles(rules, position.board, position.racks[0]) if t != BLANK]
    pool += [t for t in position.racks[0] if t != BLANK]
    size = rules.rack_size
    lines = []
    for _ in range(count):
        rack = "".join(sorted(rng.sample(pool, size - blanks))) + BLANK * blanks
        lines.append(" ".join([fields[0], rack + "/", *fields[2:]]))
    return lines


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racks", type=int, default=6, help="racks a board and blank count (6)")
    parser.add_argument("--seed", type=int, default=5, help="the racks' seed (5)")
    parser.add_argument("--runs", type=positive, default=100, help="calls a rack, median (100)")
    parser.add_argument("--rounds", type=positive, default=5, help="interleaved rounds (5)")
    parser.add_argument("--each", action="store_true", help="also every rack's times")
    add_cpu_option(parser)
    args = parser.parse_args()
    header("best play by equity on random racks, by blanks, TWL06 + TWL06.klv2")
    print(f"# {share_one_cpu(args.cpu)}")
    folder, why = magpie_folder()
    print(f"# MAGPIE: {why}")
    if folder is None:
        return
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
    rng = random.Random(args.seed)
    for blanks in (0, 1, 2):
        boards = [
            (n, racks_for(rules, cgp, blanks, args.racks, rng)) for n, cgp in enumerate(BENCH)
        ]
        lines = [ln for _, group in boards for ln in group]
        calls = []
        for line in lines:
            position = parse_cgp(rules, line)
            calls.append(partial(solver.generate_moves, position.board, position.racks[0],
                                 limit=1, rank="equity", leaves=leaves))  # fmt: skip
        our_rounds, their_rounds = [], []
        for _ in range(args.rounds):
            our_rounds.append([median_time(best, args.runs) for best in calls])
            their_rounds.append(magpie(folder, True, "best", lines, 51))
        ours = [statistics.median(r[i] for r in our_rounds) for i in range(len(lines))]
        theirs = [statistics.median(r[i] for r in their_rounds) for i in range(len(lines))]
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        mine, them = statistics.median(ours) * 1e6, statistics.median(theirs) * 1e6
        print(
            f"{blanks} blank{'s' * (blanks != 1)}: {len(lines)} racks, median {mine:.1f} µs "
            f"against {them:.1f} µs, ratio geomean {geomean(ratios):.2f}, "
            f"of the sums {sum(ours) / sum(theirs):.2f}"
        )
        at = 0
        for n, group in boards:
            if group:
                part = slice(at, at + len(group))
                print(
                    f"  P{n + 1}: geomean {geomean(ratios[part]):.2f}, mean "
                    f"{statistics.fmean(ours[part]) * 1e6:.1f} µs against "
                    f"{statistics.fmean(theirs[part]) * 1e6:.1f} µs"
                )
                at += len(group)
        if args.each:
            for i, line in enumerate(lines):
                board = next(n for n, group in boards if line in group) + 1
                print(
                    f"    P{board} {line.split(' ')[1].rstrip('/')}: {ours[i] * 1e6:.0f} µs "
                    f"against {theirs[i] * 1e6:.0f} µs ({ratios[i]:.2f})"
                )
        worst = sorted(range(len(lines)), key=lambda i: theirs[i] - ours[i])[:3]
        for i in worst:
            rack = lines[i].split(" ")[1].rstrip("/")
            board = next(n for n, group in boards if lines[i] in group) + 1
            print(
                f"  slowest against MAGPIE: {rack} on P{board}: {ours[i] * 1e6:.0f} µs "
                f"against {theirs[i] * 1e6:.0f} µs"
            )


if __name__ == "__main__":
    main()
