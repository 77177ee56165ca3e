"""Simulation benchmark: playouts and iterations per second per core in-process, and the
same simulation through 1 and 2 workers (the speed-up of spreading it over the fleet).

An iteration plays every candidate once (15 candidates, 2 plies, TWL06 and its leaves:
MAGPIE's setting). MAGPIE's own simulation is the goal to compare with in one run; its
prebuilt harness needs AVX-512, so this says so when it cannot run here.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from common import DATA, header
from service import fleet

from anchor.client.analysis import LexiconRegistry
from anchor.client.client import AnalysisClient
from anchor.client.simulation import SimulationJob, simulate
from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.simulate import Simulation

TWL06 = DATA / "kwg" / "TWL06.kwg"
KLV2 = DATA / "kwg" / "TWL06.klv2"
MAGPIE = Path(__file__).resolve().parents[2] / "shared" / "peers" / "magpie" / "bin" / "magpie"
BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


def main() -> None:
    header("simulation: 15 candidates, 2 plies, TWL06 + TWL06.klv2")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(TWL06, rules), rules)
    leaves = Leaves.open(KLV2, rules)
    settings = Simulation(candidates=15, plies=2, iterations=40, confidence=None)
    print("position  playouts/s  iterations/s  (median of 3, in-process)")
    for n, cgp in enumerate(BENCH[:4], 1):
        pos = parse_cgp(rules, cgp)
        rates = []
        for _ in range(3):
            started = time.perf_counter()
            stats = settings.run(solver, pos.board, pos.racks[0], leaves)
            elapsed = time.perf_counter() - started
            rates.append(sum(s.iterations for s in stats) / elapsed)
        rate = statistics.median(rates)
        print(f"P{n:<8} {rate:>10,.0f}  {rate / len(stats):>12,.1f}")

    cgp = BENCH[0]
    big = Simulation(candidates=15, plies=2, iterations=240, confidence=None, round_size=240)
    job = SimulationJob(cgp, lexicon="twl06", leaves="twl06")
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    started = time.perf_counter()
    local = simulate(AnalysisClient(registry=registry), job, big, per_job=20)
    base = time.perf_counter() - started
    print(f"\n240 iterations of P1: in-process {base:.2f} s")
    for count in (1, 2):
        extra = ("--leaves", f"twl06={KLV2}")
        with fleet(f"sim{count}", count, extra=extra) as url:
            client = AnalysisClient(url, queue=f"sim{count}", job_timeout=600)
            started = time.perf_counter()
            merged = simulate(client, job, big, per_job=20)
            elapsed = time.perf_counter() - started
        assert merged == local, "the fleet's answer differs from the in-process one"
        print(f"  {count} worker(s): {elapsed:.2f} s (x{base / elapsed:.2f} of in-process)")
    probe = [str(MAGPIE), "autoplay", "games", "1", "-lex", "TWL06", "-threads", "1"]
    try:
        ran = subprocess.run(probe, capture_output=True, timeout=60, cwd=MAGPIE.parents[1])
        runs = ran.returncode == 0
    except (OSError, subprocess.SubprocessError):
        runs = False
    if runs:
        print("\nMAGPIE runs here: compare with its `sim` on the same position in this run")
    else:
        print("\nMAGPIE: its prebuilt binary does not run on this CPU (AVX-512): no comparison")


if __name__ == "__main__":
    main()
