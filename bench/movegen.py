"""Move generation benchmark on ../shared/data/bench/positions.cgp with TWL06.

For each position: median time of all plays ranked, of the top 10 and of the best play
only (through the Python API, Move objects not read), by score; the same by equity with
MAGPIE's leaves; and, in the same run, MAGPIE's own generator (../shared/peers/magpie,
all plays sorted and best only, by equity; the fastest of three runs of its harness) when
its harness is there and runs here.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from functools import partial

from common import DATA, ROOT, header, median_time

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
MAGPIE = ROOT.parent / "shared" / "peers" / "magpie"


def magpie(mode: str, lines: list[str], runs: int) -> tuple[list[float] | None, str]:
    """MAGPIE's median generation time per position (seconds), or None and why not."""
    harness = MAGPIE / "bench_movegen"
    if not harness.exists():
        return None, f"MAGPIE harness absent ({harness})"
    try:
        done = subprocess.run(
            [str(harness), "TWL06", "0", mode, str(runs), *lines],
            cwd=MAGPIE,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"MAGPIE harness failed to run: {exc}"
    if done.returncode != 0:
        why = (
            "illegal instruction: built for a CPU this one is not"
            if done.returncode
            in (
                -4,
                132,
            )
            else f"exit {done.returncode}: {done.stderr.strip()[:200]}"
        )
        return None, f"MAGPIE harness cannot run here ({why})"
    times = [float(m) / 1e6 for m in re.findall(r"gen_median_us=([0-9.]+)", done.stdout)]
    if mode == "all":
        sorts = [float(m) / 1e6 for m in re.findall(r"sort_median_us=([0-9.]+)", done.stdout)]
        times = [g + s for g, s in zip(times, sorts, strict=True)]
    if len(times) != len(lines):
        return None, "MAGPIE harness printed an unexpected report"
    return times, "MAGPIE: ../shared/peers/magpie/bench_movegen, 0 = KWG movegen"


def fastest(run, mode: str, lines: list[str], reps: int, times: int = 3):
    """The fastest of `times` runs of MAGPIE's harness, per position: one run's medians
    were bimodal on a shared VM (the same binary and position at 26 or 47 µs, a whole
    process at a time), and the faster mode is the engine's speed."""
    runs = [run(mode, lines, reps) for _ in range(times)]
    found = [t for t, _ in runs if t is not None]
    if not found:
        return runs[0]
    return [min(column) for column in zip(*found, strict=True)], runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=200, help="runs per position (fewer for big ones)"
    )
    args = parser.parse_args()
    header("movegen: bench/positions.cgp, lexicon TWL06.kwg (MAGPIE's file)")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(DATA / "kwg" / "TWL06.kwg", rules), rules)
    leaves = Leaves.open(DATA / "kwg" / "TWL06.klv2", rules)
    text = (DATA / "bench" / "positions.cgp").read_text().splitlines()
    lines = [ln for ln in text if ln.strip() and not ln.startswith("#")]
    positions = [parse_cgp(rules, ln) for ln in lines]
    magpie_all, note = fastest(magpie, "all", lines, 51)
    magpie_best, _ = fastest(magpie, "best", lines, 51)
    print(f"# {note}")
    print(
        f"{'position':<24}{'plays':>8}{'all':>10}{'top 10':>10}{'best':>10}"
        f"{'eq. all':>10}{'eq. best':>10}{'MAGPIE all':>12}{'MAGPIE best':>13}"
    )
    for i, (name, pos) in enumerate(zip(NAMES, positions, strict=True)):
        rack, board = pos.racks[0], pos.board
        runs = max(5, args.runs // 20) if "2 blanks" in name else args.runs
        plays = len(solver.generate_moves(board, rack))
        gen = partial(solver.generate_moves, board, rack)
        by_equity = partial(gen, rank="equity", leaves=leaves)
        cells = [
            median_time(gen, runs),
            median_time(partial(gen, limit=10), runs),
            median_time(partial(gen, limit=1), runs),
            median_time(by_equity, runs),
            median_time(partial(by_equity, limit=1), runs),
        ]
        theirs = [t[i] if t else None for t in (magpie_all, magpie_best)]
        print(
            f"{name:<24}{plays:>8}"
            + "".join(f"{fmt(t):>10}" for t in cells)
            + f"{fmt(theirs[0]):>12}{fmt(theirs[1]):>13}"
        )


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
