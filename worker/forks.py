"""Several workers from one preloaded process (`anchor worker --workers N`).

Each worker process holds the interpreter, the imports and the opened lexica; started
apart, four workers hold four private copies of all that (~31 MiB each, BENCHMARKS.md).
Forked from one parent that loaded them and froze its objects out of the cyclic
collector (gc.freeze: a collection would otherwise write to every object's header and
copy the pages), they share those pages and each pays only for what its jobs touch.

The parent only supervises: it forwards SIGTERM and SIGINT to the workers and waits for
them (each finishes its job first); a worker that dies (killed, a crash) is started again
from the parent's state, one that ends by itself (--burst, --max-jobs: status 0) or is
refused its configuration (status 2) is not.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Callable

log = logging.getLogger("anchor.worker")
QUICK_DEATH = 5.0  # seconds: a worker dying sooner than this is restarted after a delay
MAX_DELAY = 30.0


def supervise(count: int, serve: Callable[[int], int]) -> int:
    """Fork `count` workers, each running serve(index) in its own process, until every
    one has ended; the exit status is 0 when each ended with 0, else the first other."""
    gc.collect()  # what is garbage by now goes before the rest is frozen and shared
    gc.freeze()  # what is loaded by now is shared; keep the collector off its pages
    children: dict[int, tuple[int, float]] = {}  # pid -> (index, started)
    delays = [0.0] * count
    stopping = False

    def forward(signum, _frame) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def start(index: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: serve, then leave without the parent's atexit handlers
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _stop_with(parent)
            status = 70
            try:
                status = serve(index)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                log.exception("worker %d failed", index + 1)
            finally:
                logging.shutdown()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children[pid] = (index, time.monotonic())

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for index in range(count):
            start(index)
        log.info("workers started", extra={"workers": count, "pids": sorted(children)})
        status = 0
        while children:
            try:
                pid, raw = os.wait()
            except ChildProcessError:
                break
            index, started = children.pop(pid, (None, 0.0))
            if index is None:
                continue
            code = os.waitstatus_to_exitcode(raw)
            if code in (0, 2) or stopping:
                status = status or code
                continue
            lived = time.monotonic() - started
            delays[index] = 0.0 if lived > QUICK_DEATH else min(MAX_DELAY, delays[index] * 2 or 1.0)
            log.warning(
                "a worker died; starting it again",
                extra={"worker": index + 1, "pid": pid, "status": code, "delay": delays[index]},
            )
            _sleep_unless(lambda: stopping, delays[index])
            if not stopping:
                start(index)
        return status
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop_with(parent: int) -> None:
    """Have this worker sent SIGTERM when its parent dies (Linux's PR_SET_PDEATHSIG): a
    parent killed outright must not leave its workers serving on as orphans nobody will
    stop. It finishes its job first, like any SIGTERM."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _sleep_unless(stop: Callable[[], bool], seconds: float) -> None:
    end = time.monotonic() + seconds
    while not stop() and time.monotonic() < end:
        time.sleep(min(0.1, end - time.monotonic()))
