"""Helpers shared by the benchmarks: where the data is, the machine, and timing."""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


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
