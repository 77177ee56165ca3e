"""Simulation benchmark: playouts and iterations per second per core in-process, and the
same simulation through 1 and 2 workers (the speed-up of spreading it over the fleet).

An iteration plays every candidate once (15 candidates, 2 plies, TWL06 and its leaves:
MAGPIE's setting). MAGPIE's own simulation, in the same run, is the goal to compare with:
its `gsimulate` with a random opponent rack, no inference, no early stop, one thread.
MAGPIE refuses to simulate without a win-percentage table, which its bundle here lacks; the
bench writes a made-up logistic one in a scratch folder (it changes the win % MAGPIE
reports, not the work of a playout, since every play gets the same iterations).
"""

from __future__ import annotations

import math
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import DATA, header
from service import fleet

from anchor.client.client import AnalysisClient
from anchor.client.simulation import SimulationJob, simulate
from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.simulate import Simulation
from anchor.worker.runner import LexiconRegistry

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
    settings = Simulation(candidates=15, plies=2, iterations=200, confidence=None)
    theirs, why = magpie_rates(BENCH[:4], iterations=500)
    print(f"# MAGPIE: {why}")
    print("position  playouts/s  iterations/s  MAGPIE playouts/s  ratio  (median of 3, one core)")
    for n, cgp in enumerate(BENCH[:4], 1):
        pos = parse_cgp(rules, cgp)
        rates = []
        for _ in range(3):
            started = time.perf_counter()
            stats = settings.run(solver, pos.board, pos.racks[0], leaves)
            elapsed = time.perf_counter() - started
            rates.append(sum(s.iterations for s in stats) / elapsed)
        rate = statistics.median(rates)
        other = f"{theirs[n - 1]:>17,.0f}  {rate / theirs[n - 1]:>5.2f}" if theirs else "-"
        print(f"P{n:<8} {rate:>10,.0f}  {rate / len(stats):>12,.1f}  {other}")

    cgp = BENCH[0]
    total = 480
    big = Simulation(candidates=15, plies=2, iterations=total, confidence=None, round_size=total)
    job = SimulationJob(cgp, lexicon="twl06", leaves="twl06")
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    started = time.perf_counter()
    local = simulate(AnalysisClient(registry=registry, threads=1), job, big, per_job=40)
    base = time.perf_counter() - started
    print(f"\n{total} iterations of P1 in jobs of 40: in-process, one thread, {base:.2f} s")
    times = {}
    for count in (1, 2):
        extra = ("--leaves", f"twl06={KLV2}")
        with fleet(f"sim{count}", count, extra=extra) as url:
            client = AnalysisClient(url, queue=f"sim{count}", job_timeout=600)
            started = time.perf_counter()
            merged = simulate(client, job, big, per_job=40)
            times[count] = elapsed = time.perf_counter() - started
        assert merged == local, "the fleet's answer differs from the in-process one"
        print(f"  {count} worker(s): {elapsed:.2f} s (x{base / elapsed:.2f} of in-process)")
    print(f"  speed-up of 2 workers over 1: x{times[1] / times[2]:.2f}")


def magpie_rates(lines: list[str], iterations: int) -> tuple[list[float] | None, str]:
    """MAGPIE's playouts per second on each position (median of 3 runs), or None and why."""
    if not MAGPIE.exists():
        return None, f"absent ({MAGPIE})"
    data = MAGPIE.parents[1] / "data"
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "data" / "strategy").mkdir(parents=True)
        for part in ("layouts", "letterdistributions", "lexica"):
            (work / "data" / part).symlink_to(data / part)
        rows = []
        for unseen in range(1, 101):  # made up: P(win | spread) logistic, wider early on
            wins = [round(2000 / (1 + math.exp(-s / (8 + 0.7 * unseen)))) for s in range(-300, 301)]
            rows.append(" ".join(map(str, [1000, *wins])))
        (work / "data" / "strategy" / "winpct.csv").write_text("\n".join(rows) + "\n")
        rates = []
        for cgp in lines:
            runs = []
            for _ in range(3):
                (work / "settings.txt").write_text("setoptions -mode sync -savesettings false\n")
                script = (
                    f"set -lex TWL06 -threads 1 -wmp false -plies 2 -numplays 15 "
                    f"-iterations {iterations} -minplayiterations {iterations} -seed 1 "
                    f"-sinfer false -scondition none\ncgp {cgp}\ngsimulate -\n"
                )
                try:
                    done = subprocess.run([str(MAGPIE)], input=script, capture_output=True,
                                          text=True, cwd=work, timeout=600)  # fmt: skip
                except (OSError, subprocess.SubprocessError) as exc:
                    return None, f"failed to run: {exc}"
                iters = re.search(r"Iters:\s+(\d+)", done.stdout)
                secs = re.search(r"Time:\s+([0-9.]+) seconds", done.stdout)
                if done.returncode or not iters or not secs:
                    code = done.returncode
                    why = (
                        "illegal instruction (built for another CPU)"
                        if code in (-4, 132)
                        else (f"exit {code}: {(done.stderr or done.stdout).strip()[-200:]}")
                    )
                    return None, f"cannot run here: {why}"
                runs.append(int(iters.group(1)) / float(secs.group(1)))
            rates.append(statistics.median(runs))
    return rates, f"{MAGPIE} gsimulate, {iterations} iterations a play, same positions"


if __name__ == "__main__":
    main()
