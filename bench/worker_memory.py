"""Memory per worker (issue 49): PSS of workers on one machine after 200 jobs, TWL06 as
`anchor lexicon install` leaves it (the KWG and its bingo words).

Three ways, each after 200 single-position jobs (the 6 bench boards, racks a bag could
give): one worker alone; four started apart (`anchor worker` x4); four forked from one
preloaded process (`anchor worker --workers 4`: the parent holds imports and lexica,
the workers share its pages). "Each worker past the first" is the total PSS of the four
(and their parent) less the lone worker's, over three.
"""

from __future__ import annotations

import time
from pathlib import Path

from common import header
from service import (
    installed_twl06,
    memory,
    redis_server,
    single,
    start_worker,
    stop,
    throughput,
)

from anchor.client.client import AnalysisClient

JOBS = 200


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def after_jobs(url: str, queue: str, procs: list, pids: list[int]) -> list[float]:
    """PSS (MiB) of `pids` once `JOBS` jobs went through `procs`' workers."""
    throughput(AnalysisClient(url, queue=queue), [single(i) for i in range(JOBS)])
    time.sleep(0.5)
    return [memory(pid)["pss"] / 1024 for pid in pids]


def main() -> None:
    header(f"memory per worker: PSS after {JOBS} jobs, TWL06 as installed")
    with redis_server() as (url, folder):
        lexicon = f"twl06@english={installed_twl06(folder)}"
        lone = start_worker(url, "m1", "m1", lexicon=lexicon)
        (alone,) = after_jobs(url, "m1", [lone], [lone.pid])
        stop([lone])
        print(f"one worker alone:                  PSS {alone:.1f} MiB")

        apart = [start_worker(url, "m4", f"m4-{i}", lexicon=lexicon) for i in range(4)]
        sizes = after_jobs(url, "m4", apart, [w.pid for w in apart])
        stop(apart)
        extra = (sum(sizes) - alone) / 3
        print(
            f"4 workers started apart:          PSS {', '.join(f'{s:.1f}' for s in sizes)} "
            f"MiB (sum {sum(sizes):.1f}); each past the first {extra:.1f} MiB"
        )

        parent = start_worker(url, "mf", "mf", lexicon=lexicon, extra=("--workers", "4"))
        time.sleep(2.0)
        kids = children(parent.pid)
        assert len(kids) == 4, kids
        sizes = after_jobs(url, "mf", [parent], [parent.pid, *kids])
        stop([parent])
        extra = (sum(sizes) - alone) / 3
        print(
            f"4 workers forked (--workers 4):   parent {sizes[0]:.1f}, workers "
            f"{', '.join(f'{s:.1f}' for s in sizes[1:])} MiB (sum {sum(sizes):.1f}); "
            f"each past the first {extra:.1f} MiB"
        )


if __name__ == "__main__":
    main()
