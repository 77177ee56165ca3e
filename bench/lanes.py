"""Priority lanes: the latency of a bot's best-move request while the fleet is saturated
with archive annotation, against the same request on an idle fleet.

Two workers serve `interactive,batch`. The batch lane is kept full of annotation jobs
(one recorded game each, ../shared/data/gcg). Single best-move requests (a bench board, a
rack a bag could give, limit 1) are sent one at a time, as a game server's bot does:

- idle: nothing else queued;
- one FIFO: the requests queued behind the annotations (what one queue did before lanes);
- lanes: the requests in the interactive lane;
- lanes + 1 interactive-only worker: a third worker started with `--lane interactive`.

    python bench/lanes.py [REQUESTS]     (default 400; the FIFO case sends a tenth of them)
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from random import Random

from common import DATA, header
from service import BENCH, ENGLISH, TWL06, fleet, start_worker, stop

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.engine import parse_cgp
from anchor.engine.legality import random_rack
from anchor.worker.runner import LexiconRegistry, run_request

BACKLOG = 60  # annotation jobs kept waiting in the batch lane


def games() -> list[bytes]:
    """Annotation requests for every record TWL06 can annotate."""
    local = LexiconRegistry({"twl06": str(TWL06)})
    out = []
    for path in sorted((DATA / "gcg").rglob("*.gcg")):
        req = p.AnnotateRequest(gcg=path.read_text(errors="replace"), lexicon="twl06", top=5)
        try:
            if run_request(req, local).get("ok"):
                out.append(p.encode_request(req))
        except p.ProtocolError:  # a record of another language or a broken one
            continue
    return out


def best_move(i: int) -> p.Request:
    board = BENCH[i % 6]
    rack = random_rack(parse_cgp(ENGLISH, board).board, Random(i))
    return p.Request(lexicon="twl06", positions=(p.Position(cgp=board, rack=rack, limit=1),))


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1e3, samples[max(0, int(len(samples) * 0.99) - 1)] * 1e3


def measure(client: AnalysisClient, n: int) -> tuple[float, float]:
    samples = []
    for i in range(n):
        started = time.perf_counter()
        assert client.analyze(best_move(i), timeout=120)["ok"]
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


class Backlog:
    """Keeps BACKLOG annotation jobs waiting in the batch lane until stopped."""

    def __init__(self, url: str, queue: str, payloads: list[bytes]):
        self.client = AnalysisClient(url, queue=queue, lane=p.BATCH, job_timeout=120)
        self.payloads = payloads
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        lane = self.client.queue
        i = 0
        while not self.done.is_set():
            while lane.count < BACKLOG:
                self.client.submit(self.payloads[i % len(self.payloads)])
                i += 1
            time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 10
        while self.client.queue.count < BACKLOG and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    header("lanes: best-move latency, idle fleet vs fleet saturated with annotation")
    payloads = games()
    local = LexiconRegistry({"twl06": str(TWL06)})
    times = []
    for payload in payloads[:20]:
        started = time.perf_counter()
        run_request(p.decode_request(payload), local)
        times.append(time.perf_counter() - started)
    one = statistics.median(times) * 1e3
    print(f"{len(payloads)} annotation jobs (games); one takes {one:.1f} ms in-process (median)")
    rows = []
    with fleet("lanes", 2) as url:
        interactive = AnalysisClient(url, queue="lanes")
        measure(interactive, 30)  # warm
        rows.append(("idle, 2 workers", *measure(interactive, n)))
        with Backlog(url, "lanes", payloads):
            fifo = AnalysisClient(url, queue="lanes", lane=p.BATCH)
            behind = measure(fifo, max(20, n // 10))
            rows.append(("one FIFO queue (behind the annotations)", *behind))
            rows.append(("interactive lane, 2 workers", *measure(interactive, n)))
            extra = start_worker(url, "lanes", "lanes-i", extra=("--lane", "interactive"))
            try:
                reserved = measure(interactive, n)
                rows.append(("interactive lane, + 1 interactive-only worker", *reserved))
            finally:
                stop([extra])
    with fleet("lanes", 2, extra=("--nice", "10")) as url:
        interactive = AnalysisClient(url, queue="lanes")
        extra = start_worker(url, "lanes", "lanes-i", extra=("--lane", "interactive"))
        try:
            measure(interactive, 30)
            with Backlog(url, "lanes", payloads):
                rows.append(("  the same, the 2 workers at --nice 10", *measure(interactive, n)))
        finally:
            stop([extra])
    idle_p99 = rows[0][2]
    print(f"{'':48} {'p50 ms':>8} {'p99 ms':>8} {'p99/idle':>9}")
    for name, p50, p99 in rows:
        print(f"{name:48} {p50:8.2f} {p99:8.2f} {p99 / idle_p99:9.2f}")


if __name__ == "__main__":
    main()
