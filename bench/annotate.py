"""Annotation benchmark: every game record in ../shared/data/gcg, in-process and through
2 workers (redis-server and workers started here), lexicon TWL06.kwg."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from common import DATA, header
from service import TWL06, fleet

from anchor.client.cli import main as anchor


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    anchor(argv)
    return time.perf_counter() - start


def main() -> None:
    header("annotate: ../shared/data/gcg (44 records, 43 English), TWL06")
    out = Path(tempfile.mkdtemp())
    base = ["annotate", str(DATA / "gcg"), "--no-progress", "--top", "5"]
    try:
        runs = [
            timed([*base, "--out", str(out / f"local{i}"), "--lexicon", str(TWL06)])
            for i in range(5)
        ]
        print(f"in-process, median of 5: {sorted(runs)[2]:.2f} s")
        with fleet("annotate", 2) as url:
            runs = [
                timed(
                    [
                        *base,
                        "--out",
                        str(out / f"fleet{i}"),
                        "--lexicon",
                        "twl06",
                        "--redis-url",
                        url,
                        "--queue",
                        "annotate",
                    ]
                )
                for i in range(5)
            ]
            print(f"2 workers, median of 5: {sorted(runs)[2]:.2f} s")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
