"""Move generation benchmark on ../shared/data/bench/positions.cgp with TWL06.

For each position: median time of all plays ranked and of the best play only (through
the Python API, Move objects not read), plays found, and plays per second.
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

from common import DATA, header

from engine import Lexicon, Ruleset, Solver, parse_cgp
from engine.notation import parse_rack

NAMES = [
    "JOSH2",
    "NOAH_VS_MISHU",
    "SOME_ISC_GAME",
    "VS_MATT2",
    "VS_ED (1 blank)",
    "VS_FRENTZ",
    "MANY_MOVES (2 blanks)",
]


def timed(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=200, help="runs per position (fewer for big ones)"
    )
    args = parser.parse_args()
    header("movegen: bench/positions.cgp, lexicon TWL06.kwg (MAGPIE's file)")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    lines = (DATA / "bench" / "positions.cgp").read_text().splitlines()
    positions = [parse_cgp(rules, ln) for ln in lines if ln.strip() and not ln.startswith("#")]
    print(
        f"{'position':<24}{'rack':<9}{'plays':>8}{'all ranked':>13}{'best only':>12}"
        f"{'C call':>11}{'plays/s':>12}"
    )
    for name, pos in zip(NAMES, positions, strict=True):
        rack = pos.racks[0]
        runs = max(5, args.runs // 20) if "2 blanks" in name else args.runs
        moves = solver.generate_moves(pos.board, rack)
        board = pos.board
        all_ranked = timed(partial(solver.generate_moves, board, rack), runs)
        best = timed(partial(solver.generate_moves, board, rack, limit=1), runs)
        counts = bytearray(rules.size + 1)
        for t in parse_rack(rules, rack):
            counts[t] += 1
        c_only = timed(partial(solver._generator.generate, board.cells, bytes(counts), 3, -1), runs)
        print(
            f"{name:<24}{rack:<9}{len(moves):>8}{fmt(all_ranked):>13}{fmt(best):>12}"
            f"{fmt(c_only):>11}{len(moves) / all_ranked:>12,.0f}"
        )


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
