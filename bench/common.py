"""Helpers shared by the benchmarks: where the data is, the machine, and timing."""

from __future__ import annotations

import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
MAGPIE_BUILD = ROOT.parent / "shared" / "peers" / "magpie" / "build.sh"
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
