"""Helpers shared by the benchmarks: where the data is, the machine, and timing."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
MAGPIE_BUILD = ROOT.parent / "shared" / "peers" / "magpie" / "build.sh"
sys.path.insert(0, str(ROOT))
# ../shared's TWL06.kwg (MAGPIE's own file, read-only) has no bingo-word file beside it: each
# bench process builds the set as it starts, outside every timing. Said once, in the header.
warnings.filterwarnings("ignore", message=r".*has no bingo-word file beside it")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def header(title: str) -> None:
    print(f"# {title}")
    print(f"# {time.strftime('%Y-%m-%d')}  {cpu_model()}  Python {platform.python_version()}")
    if not (DATA / "kwg" / "TWL06.kwg.anagrams").exists():
        print("# TWL06.kwg (../shared) has no bingo-word file: built at start, not timed")


def share_one_cpu(cpu: int | None = None) -> str:
    """Pin this process, and so every engine it starts, to one CPU, and say which.

    On some VMs (the Intel Xeon model 207 of 2026-12-06) one vCPU runs 1.4x slower than the
    other for seconds at a time; unpinned, a head-to-head bench measured each engine on
    whichever CPU the scheduler gave it, and the same racks came out 0.6 or 1.6 from run to
    run. On one CPU both engines meet the same spells, which the interleaved rounds share.
    """
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    chosen = max(os.sched_getaffinity(0)) if cpu is None else cpu  # cpu: allowed_cpu's
    os.sched_setaffinity(0, {chosen})
    return f"pinned to CPU {chosen}, with every engine it starts"


def positive(text: str) -> int:
    """argparse type: a whole number of at least 1 (runs, rounds, games)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def allowed_cpu(text: str) -> int:
    """argparse type: a CPU this process may run on (share_one_cpu)."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    try:
        cpu = int(text)
    except ValueError:
        cpu = None
    if cpu is None or (allowed and cpu not in allowed):
        raise argparse.ArgumentTypeError(f"{text!r}: this process may run only on CPUs {allowed}")
    return cpu


def add_cpu_option(parser) -> None:
    parser.add_argument(
        "--cpu", type=allowed_cpu, default=None,
        help="the CPU both engines share (default: the last this process may use)",
    )  # fmt: skip


def english_turns(rules) -> list:
    """Every turn of the English game records (../shared/data/gcg), replayed; a record the
    English rules cannot replay (the Polish endgame) is left out whole."""
    from anchor.engine.errors import AnchorError
    from anchor.engine.gcg import read_gcg, replay

    turns = []
    for path in sorted((DATA / "gcg").rglob("*.gcg")):
        try:
            turns += list(replay(read_gcg(path), rules))
        except AnchorError:
            continue
    return turns


def median_time(fn: Callable[[], object], runs: int = 5, inner: int = 1) -> float:
    """Median over `runs` of the mean time of `inner` calls, in seconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def magpie_folder() -> tuple[Path | None, str]:
    """MAGPIE built for this machine (../shared/peers/magpie/build.sh: cached after the
    first build, with its harness and the TWL06 word map), or None and why not."""
    if not MAGPIE_BUILD.exists():
        return None, f"absent ({MAGPIE_BUILD})"
    try:
        done = subprocess.run([str(MAGPIE_BUILD)], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"build failed: {exc}"
    folder = Path(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    if done.returncode or not folder or not (folder / "bin" / "magpie").exists():
        return None, f"build failed: {done.stderr.strip()[-200:]}"
    return folder, str(folder)


@dataclass(slots=True)
class Played:
    """Where a seeded top-score game stopped: the board, both racks (the side to move's
    first as `side`), the scores, the tiles left in the bag, passes in a row."""

    board: object
    racks: list
    side: int
    scores: list
    bag: list
    passes: int


def top_score_game(solver, seed: int, bag_left: int = 0) -> Played:
    """A game of TWL-style 7-tile racks from the bag seeded `seed`, each side playing its top
    play by score, stopped once the bag holds `bag_left` tiles or fewer (or six passes)."""
    import random

    from anchor.engine import Board
    from anchor.engine.notation import format_rack

    rules = solver.rules
    rng = random.Random(seed)
    bag = [0] * rules.blanks + [rules.index(c) for c, n in rules.counts.items() for _ in range(n)]
    rng.shuffle(bag)
    racks = [[bag.pop() for _ in range(7)] for _ in range(2)]
    scores = [0, 0]
    board, side, passes = Board.empty(rules), 0, 0
    while len(bag) > bag_left and passes < 6:
        moves = solver.generate_moves(board, format_rack(rules, tuple(racks[side])), limit=1)
        if not len(moves):
            passes += 1
            side = 1 - side
            continue
        passes = 0
        move = moves[0]
        for _, _, letter in move.placed:
            racks[side].remove(0 if letter.islower() else rules.index(letter))
        board = board.apply(move.placed)
        scores[side] += move.score
        while len(racks[side]) < 7 and bag:
            racks[side].append(bag.pop())
        side = 1 - side
    return Played(board, racks, side, scores, bag, passes)
