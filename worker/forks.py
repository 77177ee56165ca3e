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
STOPS = (signal.SIGTERM, signal.SIGINT)  # forwarded to the workers


def supervise(
    count: int,
    serve: Callable[[int], int],
    orphaned: Callable[[], None] | None = None,
    ended: Callable[[int], None] | None = None,
) -> int:
    """Fork `count` workers, each running serve(index) in its own process, until every
    one has ended; the exit status is 0 when each ended with 0 (or was stopped by the
    signal forwarded to it), else the first other. A worker refused its configuration
    (status 2) stops the others: a pool short of a worker is not what was asked for.
    `orphaned` runs in a worker that ends after its parent died (killed outright): what the
    parent would have released at its exit (the lexicon snapshots) is released there.
    `ended(index)` runs in the parent when worker `index` has ended, before any restart: what
    it held in memory shared with the others (its endgame peers' slots) is let go."""
    gc.collect()  # what is garbage by now goes before the rest is frozen and shared
    gc.freeze()  # what is loaded by now is shared; keep the collector off its pages
    children: dict[int, tuple[int, float]] = {}  # pid -> (index, started)
    due: dict[int, float] = {}  # index -> when a dead worker is started again
    delays = [0.0] * count
    stop = {"signal": 0}  # the signal forwarded, once one came

    def forward(signum, _frame) -> None:
        stop["signal"] = stop["signal"] or signum
        due.clear()  # no worker is started again once stopping
        for pid in list(children):
            _kill(pid, signum)

    def start(index: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        # held back across the fork: one landing in between would run the parent's handler
        # in the child (and be lost there); now it waits for the handler it should meet
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        pid = os.fork()
        if pid == 0:  # the worker: serve, then leave without the parent's atexit handlers
            for sig, handler in previous.items():  # a stop while it starts: its own kind
                signal.signal(sig, handler)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
            _stop_with(parent)
            status = 70
            try:
                status = serve(index)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                log.exception("worker %d failed", index + 1)
            finally:
                if orphaned is not None and os.getppid() != parent:
                    try:
                        orphaned()
                    except Exception:
                        log.exception("releasing what the parent held failed")
                logging.shutdown()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children[pid] = (index, time.monotonic())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # a stop held back reaches it now
        if stop["signal"]:  # the stop came before this one was counted
            _kill(pid, stop["signal"])

    previous = {sig: signal.signal(sig, forward) for sig in STOPS}
    status = 0
    try:
        for index in range(count):
            if stop["signal"]:
                break
            start(index)
        log.info("workers started", extra={"workers": len(children), "pids": sorted(children)})
        while children or due:
            # with no restart due, sleep in wait() until a worker ends (or a stop comes);
            # with one due, look in every twentieth of a second, starting it on time
            pid, raw = (0, 0)
            if children:
                pid, raw = os.waitpid(-1, os.WNOHANG if due else 0)
            if pid == 0:
                now = time.monotonic()
                for index in [i for i, when in due.items() if when <= now]:
                    del due[index]
                    start(index)
                if due:
                    time.sleep(0.05)
                continue
            index, started = children.pop(pid, (None, 0.0))
            if index is None:
                continue
            if ended is not None:
                ended(index)
            code = os.waitstatus_to_exitcode(raw)
            if stop["signal"] and code in (0, -signal.SIGTERM, -signal.SIGINT):
                continue  # stopped as asked
            if code in (0, 2) or stop["signal"]:
                status = status or code
                if code == 2 and not stop["signal"]:
                    log.error("a worker was refused its configuration; stopping the others",
                              extra={"worker": index + 1})  # fmt: skip
                    forward(signal.SIGTERM, None)
                continue
            lived = time.monotonic() - started
            delays[index] = 0.0 if lived > QUICK_DEATH else min(MAX_DELAY, delays[index] * 2 or 1.0)
            log.warning(
                "a worker died; starting it again",
                extra={"worker": index + 1, "pid": pid, "status": code, "delay": delays[index]},
            )
            due[index] = time.monotonic() + delays[index]
        return status
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


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
