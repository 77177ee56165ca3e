"""Move generation benchmark on ../shared/data/bench/positions.cgp with TWL06.

For each position: median time of all plays ranked, of the top 10 and of the best play
only (through the Python API, Move objects not read), by score; the same by equity with
MAGPIE's leaves; and, interleaved with them in the same run, MAGPIE's own generator
(../shared/peers/magpie/build.sh's folder: its harness, all plays sorted and best only, by
equity) with its word map (`-wmp true`, its default) and without. Each round runs
everything once; a figure is the median of its rounds; ratios are Anchor / MAGPIE with
its word map, by equity (time: below 1 is faster).

With --best, only the best play by equity, each position's Anchor and MAGPIE calls side by
side (which goes first alternating by round) and the ratio of each such pair kept: on a
machine whose speed wanders for seconds at a time, a round of every column let one engine
meet a slow spell the other missed (JOSH2 came out 1.29 and 1.84 in two runs of one build).
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import subprocess
from functools import partial
from pathlib import Path

from common import DATA, add_cpu_option, header, magpie_folder, median_time, positive, share_one_cpu

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves

NAMES = [
    "JOSH2",
    "NOAH_VS_MISHU",
    "SOME_ISC_GAME",
    "VS_MATT2",
    "VS_ED (1 blank)",
    "VS_FRENTZ",
    "MANY_MOVES (2 blanks)",
]
COLUMNS = ("all", "top 10", "best", "eq. all", "eq. best")
THEIRS = ("MAGPIE all", "MAGPIE best", "no-WMP all", "no-WMP best")


def magpie(folder: Path, wmp: bool, mode: str, lines: list[str], runs: int) -> list[float]:
    """MAGPIE's median generation time per position (seconds): its harness, `runs` calls
    a position; with mode "all" its sort of the plays by equity is added."""
    done = subprocess.run(
        [str(folder / "bench_movegen"), "TWL06", "1" if wmp else "0", mode, str(runs), *lines],
        cwd=folder, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    times = [float(m) / 1e6 for m in re.findall(r"gen_median_us=([0-9.]+)", done.stdout)]
    if mode == "all":
        sorts = [float(m) / 1e6 for m in re.findall(r"sort_median_us=([0-9.]+)", done.stdout)]
        times = [g + s for g, s in zip(times, sorts, strict=True)]
    if len(times) != len(lines):
        raise RuntimeError(f"MAGPIE's harness printed an unexpected report: {done.stdout[-300:]}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=positive, default=200, help="calls a position a round (fewer for big ones)"
    )
    parser.add_argument(
        "--rounds", type=positive, default=None, help="interleaved rounds (5; 11 with --best)"
    )
    parser.add_argument(
        "--best", action="store_true", help="only the best play by equity, in pairs"
    )
    add_cpu_option(parser)
    args = parser.parse_args()
    header("movegen: bench/positions.cgp, lexicon TWL06.kwg (MAGPIE's file)")
    print(f"# {share_one_cpu(args.cpu)}")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
    text = (DATA / "bench" / "positions.cgp").read_text().splitlines()
    lines = [ln for ln in text if ln.strip() and not ln.startswith("#")]
    positions = [parse_cgp(rules, ln) for ln in lines]
    folder, why = magpie_folder()
    rounds = args.rounds or (11 if args.best else 5)
    print(f"# MAGPIE: {why}; {rounds} interleaved rounds, medians")
    if args.best:
        if folder is not None:
            best_in_pairs(solver, leaves, positions, lines, folder, rounds, args.runs)
        return
    ours: dict[tuple[int, str], list[float]] = {}
    theirs: dict[tuple[int, str], list[float]] = {}
    for _ in range(rounds):
        for i, (name, pos) in enumerate(zip(NAMES, positions, strict=True)):
            rack, board = pos.racks[0], pos.board
            runs = max(5, args.runs // 20) if "2 blanks" in name else args.runs
            gen = partial(solver.generate_moves, board, rack)
            by_equity = partial(gen, rank="equity", leaves=leaves)
            calls = (gen, partial(gen, limit=10), partial(gen, limit=1), by_equity,
                     partial(by_equity, limit=1))  # fmt: skip
            for column, call in zip(COLUMNS, calls, strict=True):
                ours.setdefault((i, column), []).append(median_time(call, runs))
        if folder is not None:
            for column, wmp, mode in zip(THEIRS, (1, 1, 0, 0), ("all", "best") * 2, strict=True):
                for i, t in enumerate(magpie(folder, bool(wmp), mode, lines, 51)):
                    theirs.setdefault((i, column), []).append(t)
    print(f"{'position':<24}{'plays':>8}" + "".join(f"{c:>10}" for c in COLUMNS)
          + "".join(f"{c:>13}" for c in THEIRS) + f"{'eq.all/M':>10}{'eq.best/M':>10}")  # fmt: skip
    ratios: dict[str, list[float]] = {"all": [], "best": []}
    for i, (name, pos) in enumerate(zip(NAMES, positions, strict=True)):
        plays = len(solver.generate_moves(pos.board, pos.racks[0]))
        mine = [statistics.median(ours[i, c]) for c in COLUMNS]
        them = [statistics.median(theirs[i, c]) if theirs else None for c in THEIRS]
        cells = "".join(f"{fmt(t):>10}" for t in mine) + "".join(f"{fmt(t):>13}" for t in them)
        if them[0] is not None:
            ratios["all"].append(mine[3] / them[0])
            ratios["best"].append(mine[4] / them[1])
            cells += f"{ratios['all'][-1]:>10.2f}{ratios['best'][-1]:>10.2f}"
        print(f"{name:<24}{plays:>8}" + cells)
    if ratios["all"]:
        for what, values in ratios.items():
            geo = math.exp(statistics.fmean(math.log(r) for r in values))
            print(f"# Anchor / MAGPIE (word map), {what} by equity: geometric mean {geo:.2f}, "
                  f"highest {max(values):.2f}")  # fmt: skip


def best_in_pairs(solver, leaves, positions, lines, folder: Path, rounds: int, runs: int) -> None:
    """Best play by equity, each position's two engines timed one right after the other;
    per position the medians of each side and the median of the pairs' ratios."""
    pairs: dict[int, list[tuple[float, float]]] = {}
    for round_ in range(rounds):
        for i, pos in enumerate(positions):
            best = partial(solver.generate_moves, pos.board, pos.racks[0], limit=1,
                           rank="equity", leaves=leaves)  # fmt: skip
            if round_ % 2:
                theirs = magpie(folder, True, "best", [lines[i]], 51)[0]
                ours = median_time(best, runs)
            else:
                ours = median_time(best, runs)
                theirs = magpie(folder, True, "best", [lines[i]], 51)[0]
            pairs.setdefault(i, []).append((ours, theirs))
    print(f"{'position':<24}{'eq. best':>10}{'MAGPIE':>10}{'ratio':>8}{'of pairs':>10}")
    ratios = []
    for i, name in enumerate(NAMES):
        mine = statistics.median(a for a, _ in pairs[i])
        them = statistics.median(b for _, b in pairs[i])
        paired = statistics.median(a / b for a, b in pairs[i])
        ratios.append(paired)
        print(f"{name:<24}{fmt(mine):>10}{fmt(them):>10}{mine / them:>8.2f}{paired:>10.2f}")
    geo = math.exp(statistics.fmean(math.log(r) for r in ratios))
    print(f"# Anchor / MAGPIE (word map), best by equity, median of {rounds} pairs: geometric "
          f"mean {geo:.2f}, highest {max(ratios):.2f}")  # fmt: skip


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
