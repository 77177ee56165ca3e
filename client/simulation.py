"""A Monte Carlo simulation spread over the worker fleet (or run in-process when the
client is embedded): each round's iterations are split into `simulate` jobs, their
values merged in iteration order, and the candidates pruned with the very rule the
engine uses, so the answer equals engine.simulate.Simulation.run for the same settings."""

from __future__ import annotations

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
from .client import AnalysisClient, Progress

MAX_SHARES = 64  # jobs a round is split into by default, however many workers are listed


@dataclass(frozen=True, slots=True)
class SimulationJob:
    """Where and what to simulate."""

    cgp: str
    ruleset: str = "english"
    lexicon: str | None = None
    leaves: str | None = None
    rack: str | None = None


def simulate(
    client: AnalysisClient,
    job: SimulationJob,
    settings: Simulation,
    per_job: int | None = None,
    timeout: float = 3600,
    progress: bool = False,
) -> list[CandidateStats]:
    """The simulation's statistics per candidate, best first. Each round's iterations go
    out as jobs of `per_job` iterations; None: split evenly over what the client can run
    at once (the workers serving its queue, or its threads), so every one has a share of
    every round. The answer is the same for any split."""
    if per_job is not None and not 1 <= per_job <= p.MAX_SIM_ITERATIONS:
        raise AnchorError(f"iterations per job must be 1..{p.MAX_SIM_ITERATIONS}, not {per_job}")
    # anyone may register a worker name: a few dozen shares is as fine as any split gets
    shares = min(client.capacity(), MAX_SHARES) if per_job is None else 0
    position = parse_cgp(Ruleset.load(job.ruleset), job.cgp)
    lead = position.scores[0] - max(position.scores[1:], default=0) if position.scores else 0
    tables: list[list] = []
    bar = Progress(settings.iterations, what="iterations") if progress else None
    ends: dict[int, list[int]] = {}  # by candidate: tiles unplayed at each playout's end

    def request(first: int, count: int, live, **shared) -> p.SimulateRequest:
        return p.SimulateRequest(
            job.cgp, job.ruleset, job.lexicon, job.leaves, job.rack, settings.candidates,
            settings.plies, settings.seed, first, count, tuple(live or ()), **shared,
        )  # fmt: skip

    def play_round(iterations: range, live: list[int] | None) -> list[list[float]]:
        """One round as jobs; their values merged in iteration order. Split over the
        workers, the round is one pool (worker/pool.py): each job has a share and helps
        with the others' once its own is done, so no worker idles while another finishes."""
        n = min(shares, len(iterations))
        if per_job is None and n > 1 and not client.embedded:
            pool = _round_name()
            requests = [
                request(iterations.start, len(iterations), live, pool=pool, share=k, shares=n)
                for k in range(n)
            ]
        else:
            size = per_job or max(1, -(-len(iterations) // shares))
            size = min(size, p.MAX_SIM_ITERATIONS)
            requests = [
                request(first, min(size, iterations.stop - first), live)
                for first in range(iterations.start, iterations.stop, size)
            ]
        pieces: list[_Piece] = []
        only: list[int] | None = None
        while requests:
            results = [_share(r) for r in client.analyze_many(requests, timeout=timeout)]
            for req, result in zip(requests, results, strict=True):
                _check_share(result, tables, only)
                only = list(result.only)
                pieces.extend(_pieces(req, result))
            # iterations nobody played (a job's worker died holding them): jobs of their own
            requests = [request(r.start, len(r), live) for r in _gaps(pieces, iterations)]
        pieces.sort(key=lambda piece: piece.run.start)
        merged: list[list[float]] = [[] for _ in only or ()]
        for piece in pieces:
            for k, c in enumerate(only or ()):
                merged[k].extend(piece.values[k])
                ends.setdefault(c, []).extend(piece.unplayed[k])
        if bar:
            bar.step(len(iterations))
        return merged

    model = model_for(Ruleset.load(job.ruleset))

    def chances(c: int, v: list[float]) -> list[float]:
        return win_chances(v, ends.get(c, []), lead, model, settings.plies)

    values, alive = settings.rounds(play_round, chances)
    if bar:
        bar.close()
    chosen = [Candidate(n, s, e, None) for n, s, e in (tables[0] if tables else [])]
    unplayed = [ends.get(c, []) for c in range(len(chosen))]
    pruned = [not a for a in alive]
    return summarize(chosen, values, lead, pruned, unplayed, model, settings.plies, settings.rank)


def _share(result: dict) -> p.SimulateResult:
    """One job's share of the simulation; AnchorError when it failed."""
    found = p.read_result(result, p.SimulateResult)
    if isinstance(found, p.Failure):
        raise AnchorError(f"{found.message} [{found.code}]")
    return found


def _check_share(result: p.SimulateResult, tables: list, only: list[int] | None) -> None:
    """A share's answer must fit the others (AnchorError otherwise): the same candidates
    and the same ones simulated, a value and a tile count for each of those and each
    iteration it played."""
    if tables and tables[0] != result.candidates or only is not None and only != result.only:
        raise AnchorError(
            "the workers disagree on the candidates (different lexica, or one replaced?)"
        )
    if not tables:
        tables.append(result.candidates)
    values, left = result.values, result.unplayed
    if not (
        isinstance(values, list) and isinstance(left, list) and isinstance(result.done, list)
        and len(values) == len(left) == len(result.only)
        and all(len(v) == len(u) for v, u in zip(values, left, strict=True))
    ):  # fmt: skip
        raise AnchorError(
            "a worker answered a simulation without values and unplayed tiles for "
            "every candidate (a worker of another version?)"
        )


@dataclass(frozen=True, slots=True)
class _Piece:
    """A run of iterations one job played: each simulated candidate's values and unplayed
    tiles for them."""

    run: range
    values: list[list[float]]
    unplayed: list[list[int]]


def _pieces(req: p.SimulateRequest, result: p.SimulateResult) -> list[_Piece]:
    """One answer cut into the runs it says it played (in its order), else the request's
    own; AnchorError when they do not add up to its values."""
    try:
        runs = [range(int(a), int(a) + int(n)) for a, n in result.done]
    except (TypeError, ValueError):
        raise AnchorError("a worker answered a simulation with unreadable runs") from None
    runs = runs or [range(req.first, req.first + req.iterations)]
    total = sum(len(r) for r in runs)
    if any(len(r) <= 0 for r in runs) or any(len(v) != total for v in result.values):
        raise AnchorError("a worker's simulation values do not match the iterations it names")
    out, at = [], 0
    for run in runs:
        end = at + len(run)
        values = [v[at:end] for v in result.values]
        out.append(_Piece(run, values, [u[at:end] for u in result.unplayed]))
        at = end
    return out


def _gaps(pieces: list[_Piece], iterations: range) -> list[range]:
    """The runs of `iterations` no piece covers; AnchorError when two pieces overlap or
    one lies outside the round."""
    runs = sorted((piece.run for piece in pieces), key=lambda r: r.start)
    gaps, at = [], iterations.start
    for run in runs:
        if run.start < at or run.stop > iterations.stop:
            raise AnchorError(f"iteration {max(run.start, at)} came back twice or out of its round")
        if run.start > at:
            gaps.append(range(at, run.start))
        at = run.stop
    if at < iterations.stop:
        gaps.append(range(at, iterations.stop))
    return gaps


def _round_name() -> str:
    """A name for one round's pool, which no other round shares."""
    return uuid.uuid4().hex
