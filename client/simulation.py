"""A Monte Carlo simulation spread over the worker fleet (or run in-process when the
client is embedded), answering what engine.simulate.Simulation.run answers for the same
settings: as pooled jobs that share the rounds among themselves (worker/pooled.py), or
with each round's iterations split into `simulate` jobs, their values merged here in
iteration order and the candidates pruned with the very rule the engine uses."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass

from anchor.engine import AnchorError, Ruleset, parse_cgp
from anchor.engine.simulate import (
    Candidate,
    CandidateStats,
    Simulation,
    summarize,
    win_chances,
)
from anchor.engine.winpct import model_for

from . import protocol as p
from .client import AnalysisClient, Progress, redis_errors

MAX_SHARES = 64  # jobs a round is split into by default, however many workers are listed
POOL_PIECES_PER_JOB = 1  # a pooled round's pieces per job (2 measured slower: more calls)
PROGRESS_EVERY = 0.25  # seconds between looks at a pool's stream, for the progress bar


@dataclass(frozen=True, slots=True)
class SimulationJob:
    """Where and what to simulate; with `infer_play` (the opponent's last play, on the
    board, scoring `infer_score`) or `infer_exchanged` (their exchange of that many tiles),
    the opponent's racks are drawn from what that move says they kept."""

    cgp: str
    ruleset: str = "english"
    lexicon: str | None = None
    leaves: str | None = None
    rack: str | None = None
    infer_play: str | None = None
    infer_score: int | None = None
    infer_exchanged: int = 0
    infer_margin: float = 5.0

    def request(self, settings: Simulation, **share) -> p.SimulateRequest:
        """The simulate request of this job and `settings`, for the share given."""
        return p.SimulateRequest(
            self.cgp, self.ruleset, self.lexicon, self.leaves, self.rack,
            settings.candidates, settings.plies, settings.seed,
            infer_play=self.infer_play, infer_score=self.infer_score,
            infer_exchanged=self.infer_exchanged, infer_margin=self.infer_margin, **share,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimulationAnswer:
    """A simulation's statistics per candidate, best first, and what its inference found
    (the `infer` answer's map, five leaves; None without one)."""

    stats: list[CandidateStats]
    inferred: dict | None = None


def simulate(
    client: AnalysisClient,
    job: SimulationJob,
    settings: Simulation,
    per_job: int | None = None,
    timeout: float = 3600,
    progress: bool = False,
) -> list[CandidateStats]:
    """The simulation's statistics per candidate, best first (run_simulation's)."""
    return run_simulation(client, job, settings, per_job, timeout, progress).stats


def run_simulation(
    client: AnalysisClient,
    job: SimulationJob,
    settings: Simulation,
    per_job: int | None = None,
    timeout: float = 3600,
    progress: bool = False,
) -> SimulationAnswer:
    """The simulation's answer. By default the simulation goes out whole, as one pooled
    job per worker serving the queue (or per thread in-process), sharing every round; with
    `per_job`, or a simulation of more iterations than a job may run, each round goes out
    as jobs of `per_job` iterations (split over the workers when None). The answer is the
    same either way."""
    if per_job is not None and not 1 <= per_job <= p.MAX_SIM_ITERATIONS:
        raise AnchorError(f"iterations per job must be 1..{p.MAX_SIM_ITERATIONS}, not {per_job}")
    position = parse_cgp(Ruleset.load(job.ruleset), job.cgp)  # a bad CGP fails here, not in a job
    # anyone may register a worker name: a few dozen shares is as fine as any split gets
    shares = min(client.capacity(), MAX_SHARES) if per_job is None else 0
    # (forked processes share no memory: they take the rounds as jobs, as before)
    if (
        per_job is None
        and settings.iterations <= p.MAX_SIM_ITERATIONS
        and not (client.embedded and client.processes)
    ):
        return _pooled(client, job, settings, shares, timeout, progress)
    tables: list[list] = []
    inferred: list[dict | None] = []
    bar = Progress(settings.iterations, what="iterations") if progress else None
    ends: dict[int, list[int]] = {}  # by candidate: tiles unplayed at each playout's end

    def play_round(iterations: range, live: list[int] | None) -> list[list[float]]:
        """One round as jobs of `size` iterations; their values merged in order."""
        size = per_job or max(1, -(-len(iterations) // shares))
        size = min(size, p.MAX_SIM_ITERATIONS)
        requests = [
            job.request(
                settings,
                first=first,
                iterations=min(size, iterations.stop - first),
                only=tuple(live or ()),
            )
            for first in range(iterations.start, iterations.stop, size)
        ]
        results = [_share(r) for r in client.analyze_many(requests, timeout=timeout)]
        if not inferred:
            inferred.append(results[0].inferred)
        table = results[0].candidates
        if any(r.candidates != table for r in results) or tables and tables[0] != table:
            raise AnchorError(
                "the workers disagree on the candidates (different lexica, or one replaced?)"
            )
        tables.append(table)
        for result in results:
            values, left = result.values, result.unplayed
            if not (
                isinstance(values, list) and isinstance(left, list)
                and len(values) == len(left) == len(result.only)
                and all(len(v) == len(u) for v, u in zip(values, left, strict=True))
            ):  # fmt: skip
                raise AnchorError(
                    "a worker answered a simulation without values and unplayed tiles for "
                    "every candidate (a worker of another version?)"
                )
        merged: list[list[float]] = [[] for _ in results[0].only]
        for result in results:
            for k, vals in enumerate(result.values):
                merged[k].extend(vals)
            for c, left in zip(result.only, result.unplayed, strict=True):
                ends.setdefault(c, []).extend(left)
        if bar:
            bar.step(len(iterations))
        return merged

    model = model_for(Ruleset.load(job.ruleset))
    lead = position.lead

    def chances(c: int, v: list[float]) -> list[float]:
        return win_chances(v, ends.get(c, []), lead, model, settings.plies)

    values, alive = settings.rounds(play_round, chances)
    if bar:
        bar.close()
    chosen = [Candidate(n, s, e, None) for n, s, e in (tables[0] if tables else [])]
    unplayed = [ends.get(c, []) for c in range(len(chosen))]
    pruned = [not a for a in alive]
    stats = summarize(chosen, values, lead, pruned, unplayed, model, settings.plies, settings.rank)
    return SimulationAnswer(stats, inferred[0] if inferred else None)


def _pooled(
    client: AnalysisClient,
    job: SimulationJob,
    settings: Simulation,
    shares: int,
    timeout: float,
    progress: bool,
) -> SimulationAnswer:
    """The whole simulation as `shares` jobs of one pool, each round cut into pieces they
    claim (PROTOCOL.md, pooled simulations): a round costs the jobs a few Redis calls
    instead of a job each. A job stopped by the server's time cap leaves its rounds in the pool;
    the same jobs sent again go on from there, as long as each sending gets further."""
    request = job.request(
        settings, iterations=settings.iterations, pool=uuid.uuid4().hex,
        round_size=settings.round_size, confidence=settings.confidence or 0, rank=settings.rank,
        pieces=min(p.MAX_POOL_PIECES, POOL_PIECES_PER_JOB * shares),
    )  # fmt: skip
    bar = Progress(settings.iterations, what="iterations") if progress else None
    watch = PoolProgress(client.connection, request, bar) if bar and not client.embedded else None
    if watch:
        watch.start()
    reached = 0
    try:
        while True:
            sent = client.analyze_many([request] * shares, timeout=timeout)
            results = [_share(r) for r in sent]
            done = [r for r in results if r.complete]
            if not done and any(r.stopped for r in results):
                raise AnchorError(
                    "the simulation was stopped: its pool's stop mark "
                    f"({p.pool_stop_key(p.pool_key(request))}) was set by someone other than "
                    "this client; run it again (it gets a new pool)"
                )
            got = max(r.merged for r in results)
            if bar and not watch and got > reached:
                bar.step(got - reached)
            if done:
                break
            if got <= reached:
                raise AnchorError(
                    "the simulation's jobs ran out of time before they finished a round: ask "
                    "the server for a longer time cap (worker --max-job-seconds), or "
                    "simulate less (fewer candidates, plies or iterations a round)"
                )
            reached = got
    except BaseException:  # Ctrl-C, a timeout, Redis gone: nobody will read the answer
        if not client.embedded:
            _give_up(client, request)
        raise
    finally:
        if watch:
            watch.finish()
        if bar:
            bar.close()
    try:
        answers = [[_stats(row) for row in r.summary] for r in done]
        if not all(answers):
            raise ValueError("no summary")
    except (TypeError, ValueError):
        raise AnchorError(
            "a worker answered a pooled simulation without its summary rows (a worker of "
            "another version?)"
        ) from None
    if any(
        a != answers[0] or r.candidates != done[0].candidates
        for a, r in zip(answers, done, strict=True)
    ):
        raise AnchorError(
            "the workers disagree on the simulation (different lexica, or one replaced?)"
        )
    return SimulationAnswer(answers[0], done[0].inferred)


def _give_up(client: AnalysisClient, request: p.SimulateRequest) -> None:
    """Set the pool's stop mark, so its jobs stop at their next claim."""
    try:
        client.connection.set(p.pool_stop_key(p.pool_key(request)), 1, ex=p.POOL_TTL)
    except redis_errors().RedisError:
        pass  # Redis gone: the jobs will end at their time cap


class PoolProgress(threading.Thread):
    """Steps a progress bar by the iterations of each piece a pool's jobs publish (they
    answer only at the end): reads the pool's stream every PROGRESS_EVERY seconds, each
    piece counted once, entries it cannot read skipped."""

    def __init__(self, connection, request: p.SimulateRequest, bar) -> None:
        super().__init__(daemon=True, name="pool-progress")
        self.connection = connection
        self.request = request
        self.bar = bar
        self.key = p.pool_key(request)
        self.seen: set[tuple[int, int]] = set()
        self.counted = 0
        self._last: bytes | str = "0-0"
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(PROGRESS_EVERY):
            self.read()

    def finish(self) -> None:
        self._done.set()
        self.join()

    def read(self) -> None:
        """Count the pieces published since the last read."""
        try:
            got = self.connection.xread({self.key: self._last}, count=1000)
        except redis_errors().RedisError:
            return  # progress is a courtesy: the jobs' answers are what count
        for _, entries in got or ():
            for entry_id, fields in entries:
                self._last = entry_id
                size = self._size(fields)
                if size:
                    self.counted += size
                    self.bar.step(size)

    def _size(self, fields: dict) -> int:
        """The iterations of the piece an entry holds; 0 if seen or not one of this pool."""
        try:
            piece = int(fields[b"r"]), int(fields[b"i"])
        except (KeyError, ValueError, TypeError):
            return 0
        request = self.request
        start = piece[0] * request.round_size
        if piece in self.seen or piece[0] < 0 or piece[1] < 0 or start >= request.iterations:
            return 0
        stop = min(start + request.round_size, request.iterations)
        runs = p.split_round(range(start, stop), request.pieces)
        if piece[1] >= len(runs):
            return 0
        self.seen.add(piece)
        return len(runs[piece[1]])


def _stats(row: list) -> CandidateStats:
    """A summary row, checked: [notation, score, equity, iterations, mean, stdev, win_rate,
    pruned]."""
    notation, score, equity, iterations, mean, stdev, win_rate, pruned = row
    kinds = (str, int, float, int, float, float, float, bool)
    fields = (notation, score, equity, iterations, mean, stdev, win_rate, pruned)
    if not all(
        isinstance(v, k) and (k is not int or type(v) is int)
        for v, k in zip(fields, kinds, strict=True)
    ):
        raise TypeError("a summary row of the wrong types")
    return CandidateStats(*fields)


def _share(result: dict) -> p.SimulateResult:
    """One job's share of the simulation; AnchorError when it failed."""
    found = p.read_result(result, p.SimulateResult)
    if isinstance(found, p.Failure):
        raise AnchorError(f"{found.message} [{found.code}]")
    return found
