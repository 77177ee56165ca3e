"""Simulation benchmark: playouts per second per core in-process, beside MAGPIE's
`gsimulate` with its word map (its default) in the same run, and the same simulation
through 1 and 2 workers with the CLI's defaults (the speed-up of spreading it over the
fleet).

An iteration plays every candidate once (15 candidates, 2 plies, TWL06 and its leaves:
MAGPIE's setting); MAGPIE: a random opponent rack, no inference, no early stop, one
thread, from the folder ../shared/peers/magpie/build.sh prints. Rounds interleave the two
engines; each figure is the median of its rounds.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import DATA, add_cpu_option, header, magpie_folder, positive, share_one_cpu
from service import fleet

from anchor.client.client import AnalysisClient
from anchor.client.simulation import SimulationJob, simulate
from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.simulate import Simulation
from anchor.worker.runner import LexiconRegistry

TWL06 = DATA / "kwg" / "TWL06.kwg"
KLV2 = DATA / "kwg" / "TWL06.klv2"
BENCH = [
    ln
    for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


def magpie_scratch(folder: Path, scratch: Path) -> Path:
    """A working folder for MAGPIE's gsimulate: the build's data (lexicon, word map,
    leaves) linked in, a settings file that starts it in sync mode (a command sent while
    the previous one runs is refused otherwise), and a win-percentage table: the bundled
    one stops at 93 unseen tiles and MAGPIE exits on an opening position, so a made-up
    logistic one stands in (it changes the win % MAGPIE reports, not a playout's work:
    every play gets the same iterations)."""
    (scratch / "data" / "strategy").mkdir(parents=True)
    for part in ("layouts", "letterdistributions", "lexica"):
        (scratch / "data" / part).symlink_to(folder / "data" / part)
    rows = []
    for unseen in range(1, 101):  # P(win | spread), wider early on
        wins = [round(2000 / (1 + math.exp(-s / (8 + 0.7 * unseen)))) for s in range(-300, 301)]
        rows.append(" ".join(map(str, [1000, *wins])))
    (scratch / "data" / "strategy" / "winpct.csv").write_text("\n".join(rows) + "\n")
    (scratch / "settings.txt").write_text("setoptions -mode sync -savesettings false\n")
    return scratch


def magpie_rate(folder: Path, scratch: Path, cgp: str, iterations: int) -> float:
    """MAGPIE's playouts per second on one position (Iters / Time of one gsimulate),
    with its word map (-wmp true, its default)."""
    script = (
        f"set -lex TWL06 -threads 1 -wmp true -plies 2 -numplays 15 "
        f"-iterations {iterations} -minplayiterations {iterations} -seed 1 -sinfer false "
        f"-scondition none\ncgp {cgp}\ngsimulate\n"
    )
    done = subprocess.run([str(folder / "bin" / "magpie")], input=script, capture_output=True,
                          text=True, cwd=scratch, timeout=900)  # fmt: skip
    iters = re.search(r"Iters:\s+(\d+)", done.stdout)
    secs = re.search(r"Time:\s+([0-9.]+) seconds", done.stdout)
    if done.returncode or not iters or not secs:
        raise RuntimeError(f"MAGPIE's gsimulate: {(done.stderr or done.stdout).strip()[-300:]}")
    return int(iters.group(1)) / float(secs.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=positive, default=5, help="interleaved rounds (5)")
    parser.add_argument("--iterations", type=positive, default=100, help="a position a round (100)")
    parser.add_argument("--skip-fleet", action="store_true", help="only the engines' rates")
    parser.add_argument("--fleet-only", action="store_true", help="only the fleet's speed-up")
    add_cpu_option(parser)
    args = parser.parse_args()
    if args.fleet_only:
        header("simulation through the fleet: TWL06 + TWL06.klv2")
        fleet_speedup(BENCH)
        return
    header("simulation: 15 candidates, 2 plies, TWL06 + TWL06.klv2")
    print(f"# {share_one_cpu(args.cpu)}")
    rules = Ruleset.load("english")
    solver = Solver(Lexicon.open(TWL06, rules), rules)
    leaves = Leaves.open(KLV2, rules)
    settings = Simulation(candidates=15, plies=2, iterations=args.iterations, confidence=None)
    folder, why = magpie_folder()
    scratch = magpie_scratch(folder, Path(tempfile.mkdtemp())) if folder else None
    print(f"# MAGPIE: {why}; gsimulate -wmp true, {15 * args.iterations} playouts a round")
    ours: dict[int, list[float]] = {}
    theirs: dict[int, list[float]] = {}
    for _ in range(args.rounds):
        for n, cgp in enumerate(BENCH):
            pos = parse_cgp(rules, cgp)
            started = time.perf_counter()
            stats = settings.run(solver, pos.board, pos.racks[0], leaves)
            ours.setdefault(n, []).append(
                sum(s.iterations for s in stats) / (time.perf_counter() - started)
            )
            if folder is not None:
                rate = magpie_rate(folder, scratch, cgp, 15 * args.iterations)
                theirs.setdefault(n, []).append(rate)
    # each round times a position on both engines back to back: the median of those
    # pairs' ratios is the steadier figure where the machine's speed wanders
    print("position  playouts/s  MAGPIE playouts/s  ratio  of pairs  (medians, one core each)")
    ahead = 0
    for n in range(len(BENCH)):
        rate = statistics.median(ours[n])
        other = "-"
        if theirs:
            them = statistics.median(theirs[n])
            paired = statistics.median(a / b for a, b in zip(ours[n], theirs[n], strict=True))
            ahead += paired >= 1
            other = f"{them:>17,.0f}  {rate / them:>5.2f}  {paired:>8.2f}"
        print(f"P{n + 1:<8} {rate:>10,.0f}  {other}")
    if theirs:
        print(f"# Anchor at least as fast as MAGPIE (word map), by pairs: {ahead} of {len(BENCH)}")
    if not args.skip_fleet:
        fleet_speedup(BENCH)


def fleet_speedup(lines: list[str], passes: int = 9) -> None:
    """`anchor analyze --sim` with the CLI's defaults (1,000 iterations, rounds of 100,
    early stop at 0.99, jobs sized by the workers serving the queue) on every bench
    position, in-process and through 1 and 2 workers; every answer must equal the
    in-process one. Both fleets run side by side (each with its own Redis) and the passes
    interleave, so the machine's drift falls on every figure alike; times are the sums
    over the positions, median of `passes`."""
    settings = Simulation(candidates=15, plies=2, iterations=1000, seed=1, confidence=0.99)
    jobs = [SimulationJob(cgp, lexicon="twl06", leaves="twl06") for cgp in lines]
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    local_client = AnalysisClient(registry=registry, threads=1)
    local = [simulate(local_client, job, settings) for job in jobs]
    extra = ("--leaves", f"twl06={KLV2}")
    times: dict[str, list[float]] = {"in-process": [], "1 worker": [], "2 workers": []}
    with fleet("sim1", 1, extra=extra) as url1, fleet("sim2", 2, extra=extra) as url2:
        clients = {"in-process": local_client}
        for name, url, queue, count in (
            ("1 worker", url1, "sim1", 1),
            ("2 workers", url2, "sim2", 2),
        ):
            client = AnalysisClient(url, queue=queue, job_timeout=600)
            deadline = time.monotonic() + 30
            while client.capacity() < count and time.monotonic() < deadline:
                time.sleep(0.2)  # until every worker has registered
            assert [simulate(client, job, settings) for job in jobs] == local, (
                "the fleet's answer differs from the in-process one"
            )
            clients[name] = client
        times["2 side by side"] = []
        for _ in range(passes):
            for name, client in clients.items():
                started = time.perf_counter()
                for job in jobs:
                    simulate(client, job, settings)
                times[name].append(time.perf_counter() - started)
            times["2 side by side"].append(side_by_side(local_client, jobs, settings))
    pair = times.pop("2 side by side")
    base = statistics.median(times["in-process"])
    print(
        f"\n{len(jobs)} positions with the CLI's defaults, median of {passes} interleaved passes:"
    )
    for name, runs in times.items():
        median = statistics.median(runs)
        shown = " ".join(f"{t:.2f}" for t in runs)
        print(f"  {name:>10}: {median:.2f} s (x{base / median:.2f} of in-process; passes {shown})")
    one, two = statistics.median(times["1 worker"]), statistics.median(times["2 workers"])
    pairs = zip(times["1 worker"], times["2 workers"], strict=True)
    paired = statistics.median(a / b for a, b in pairs)
    print(f"  speed-up of 2 workers over 1: x{one / two:.2f} (each pass's, median: x{paired:.2f})")
    ceiling = statistics.median(2 * a / b for a, b in zip(times["in-process"], pair, strict=True))
    print(
        f"  the machine: two in-process runs side by side did x{ceiling:.2f} of one run's work "
        f"a second (passes {' '.join(f'{t:.2f}' for t in pair)} s): the most two workers "
        "could give here, with no cost of their own"
    )


def _run_alone(client: AnalysisClient, jobs, settings) -> None:
    for job in jobs:
        simulate(client, job, settings)


def side_by_side(client: AnalysisClient, jobs, settings) -> float:
    """Seconds for two forked copies of this process to each run every job in-process,
    started together: on a machine of two cores, twice one run's time if the cores were
    free and equal. Sets the speed-up a 2-worker fleet can be read against."""
    context = multiprocessing.get_context("fork")
    started = time.perf_counter()
    copies = [context.Process(target=_run_alone, args=(client, jobs, settings)) for _ in range(2)]
    for copy in copies:
        copy.start()
    for copy in copies:
        copy.join()
    if any(copy.exitcode for copy in copies):
        raise RuntimeError("an in-process copy failed")
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
