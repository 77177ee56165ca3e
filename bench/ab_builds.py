"""Two builds of the C core timed in one process, their runs interleaved: before and after a
change to engine/*.c, on a machine whose speed wanders.

On a shared machine two runs of one build, minutes apart, differ by 20% and more (see
BENCHMARKS.md), which hides any change smaller than that. Here both builds' extensions are
loaded into one process (each under its own module name) and given the same work in small
blocks, alternating (A B, B A, ...), so a slow spell of the machine weighs on both alike.
Each line is the median over blocks of A's time over B's (above 1: B is faster) with the
quartiles; the work is equity self-play (Generator.selfplay, the C game loop alone), the
simulation's playouts on two bench positions (Generator.playouts through engine.simulate)
and, with --best, the best play by equity of each bench position's own rack and of
bench/blank_racks.py's random racks by their blanks (as movegen.py and blank_racks.py ask).

    python bench/ab_builds.py REV            # REV's engine against the working tree's
    python bench/ab_builds.py A.so B.so      # two built extensions

A revision is built from `git archive` into a temporary folder with the project's own
setup.py (seconds); the working tree's extension is the one installed in place.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from common import DATA, ROOT, add_cpu_option, header, share_one_cpu

from anchor.engine import Lexicon, Ruleset, Solver, parse_cgp, simulate
from anchor.engine.leaves import Leaves
from anchor.engine.selfplay import Bag

TWL06 = DATA / "kwg" / "TWL06.kwg"
KLV2 = DATA / "kwg" / "TWL06.klv2"


def build_revision(rev: str, scratch: Path) -> Path:
    """REV's extension, built from its sources alone."""
    archive = scratch / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(scratch / "src", filter="data")
    out = scratch / "lib"
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(out)],
        cwd=scratch / "src", check=True, capture_output=True,
    )  # fmt: skip
    return next(out.rglob("_movegen*.so"))


def load(path: Path, tag: str):
    """The extension at `path` as a module of its own (its init is PyInit__movegen)."""
    name = f"ab_{tag}._movegen"
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def interleaved(work: dict[str, object], blocks: int) -> list[float]:
    """Each block's time of A over B, the two run in turn (A first in even blocks)."""
    ratios = []
    for b in range(blocks):
        took = {}
        for tag in "AB" if b % 2 == 0 else "BA":
            started = time.perf_counter()
            work[tag]()
            took[tag] = time.perf_counter() - started
        ratios.append(took["A"] / took["B"])
    return ratios


def report(what: str, ratios: list[float]) -> None:
    q1, mid, q3 = statistics.quantiles(ratios, n=4)
    print(f"{what:<34} A/B {mid:.3f}  (quartiles {q1:.3f} - {q3:.3f}, {len(ratios)} blocks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", help="REV (against the working tree), or A.so B.so")
    parser.add_argument("--blocks", type=int, default=20, help="blocks per measure (20)")
    parser.add_argument("--games", type=int, default=30, help="self-play games a block (30)")
    parser.add_argument("--iterations", type=int, default=10, help="playouts a block (10)")
    parser.add_argument(
        "--positions",
        default="1,5",
        help="bench positions played out, from 1 (1,5: a blank rack too)",
    )
    parser.add_argument("--best", action="store_true", help="also best play by equity")
    add_cpu_option(parser)
    args = parser.parse_args()
    header("two builds of the C core, interleaved in one process (A/B above 1: B faster)")
    print(f"# {share_one_cpu(args.cpu)}")
    with tempfile.TemporaryDirectory() as scratch:
        if len(args.builds) == 1:
            installed = next((ROOT / "engine").glob("_movegen*.so"))
            paths = [build_revision(args.builds[0], Path(scratch)), installed]
            print(f"# A: {args.builds[0]}   B: the working tree")
        else:
            paths = [Path(p) for p in args.builds[:2]]
            print(f"# A: {paths[0]}   B: {paths[1]}")
        modules = {tag: load(path, tag) for tag, path in zip("AB", paths, strict=True)}
        measure(modules, args)


def measure(modules: dict, args) -> None:
    rules = Ruleset.load("english")
    lexicon = Lexicon.open(TWL06, rules)
    leaves = Leaves.open(KLV2, rules)
    nodes, below, values = leaves.graph()
    factor = rules.end.going_out + int(rules.end.stuck_loses_own)
    generators = {
        tag: m.Generator(lexicon.buffer, *rules.generator_args(), anagrams=lexicon.anagrams)
        for tag, m in modules.items()
    }
    bags = [Bag(rules, 1 + i).order for i in range(args.games)]

    def games(g):
        def run():
            for order in bags:
                g.selfplay(order, nodes, below, values, factor, rules.end.scoreless_turns)

        return run

    report(
        "equity self-play", interleaved({t: games(g) for t, g in generators.items()}, args.blocks)
    )
    lines = [ln for ln in (DATA / "bench" / "positions.cgp").read_text().splitlines()]
    lines = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    solver = Solver(lexicon, rules)
    for n in (int(x) - 1 for x in args.positions.split(",") if x):
        position = parse_cgp(rules, lines[n])
        board, rack = position.board, position.racks[0]
        chosen = simulate.candidates(solver, board, rack, leaves, 15)

        def playouts(g, board=board, rack=rack, chosen=chosen):
            def run():
                solver._generator = g  # noqa: SLF001 - the build being timed
                simulate.iterate(solver, board, rack, leaves, chosen, 2, 1, range(args.iterations))

            return run

        work = {t: playouts(g) for t, g in generators.items()}
        report(f"playouts, position {n + 1}", interleaved(work, args.blocks))
    if args.best:
        best_plays(solver, generators, leaves, lines, args.blocks)


def best_plays(solver: Solver, generators: dict, leaves: Leaves, lines: list[str], blocks: int):
    """Best play by equity: each bench position with its own rack (20 calls each), then
    blank_racks.py's racks (its seed, 6 a board) by their blanks (5 calls each)."""
    from blank_racks import racks_for

    rules = solver.rules
    rng = random.Random(5)
    works = {"best, bench positions": ([parse_cgp(rules, ln) for ln in lines], 20)}
    for blanks in (0, 1, 2):
        racks = [r for cgp in lines for r in racks_for(rules, cgp, blanks, 6, rng)]
        works[f"best, random racks, {blanks} blank(s)"] = ([parse_cgp(rules, r) for r in racks], 5)
    for what, (positions, calls) in works.items():

        def best(g, positions=positions, calls=calls):
            def run():
                solver._generator = g  # noqa: SLF001 - the build being timed
                for p in positions:
                    for _ in range(calls):
                        solver.generate_moves(
                            p.board, p.racks[0], limit=1, rank="equity", leaves=leaves
                        )

            return run

        report(what, interleaved({t: best(g) for t, g in generators.items()}, blocks))


if __name__ == "__main__":
    main()
