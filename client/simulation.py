"""A Monte Carlo simulation spread over the worker fleet (or run in-process when the
client is embedded): each round's iterations are split into `simulate` jobs, their
values merged in iteration order, and the candidates pruned with the very rule the
engine uses, so the answer equals engine.simulate.Simulation.run for the same settings."""

from __future__ import annotations

from dataclasses import dataclass

from anchor.engine import AnchorError, Ruleset, parse_cgp
from anchor.engine.simulate import Candidate, CandidateStats, Simulation, prune, summarize

from . import protocol as p
from .client import AnalysisClient, Progress


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
    per_job: int = 100,
    timeout: float = 3600,
    progress: bool = False,
) -> list[CandidateStats]:
    """The simulation's statistics per candidate, best first."""
    if not 1 <= per_job <= p.MAX_SIM_ITERATIONS:
        raise AnchorError(f"iterations per job must be 1..{p.MAX_SIM_ITERATIONS}, not {per_job}")
    position = parse_cgp(Ruleset.load(job.ruleset), job.cgp)
    lead = position.scores[0] - max(position.scores[1:], default=0) if position.scores else 0
    chosen: list[Candidate] | None = None
    values: list[list[float]] = []
    alive: list[bool] = []
    bar = Progress(settings.iterations, what="iterations") if progress else None
    for start in range(0, settings.iterations, settings.round_size):
        stop = min(start + settings.round_size, settings.iterations)
        live = tuple(c for c, ok in enumerate(alive) if ok) if chosen else ()
        requests = [
            p.SimulateRequest(
                job.cgp,
                job.ruleset,
                job.lexicon,
                job.leaves,
                job.rack,
                settings.candidates,
                settings.plies,
                settings.seed,
                first,
                min(per_job, stop - first),
                live,
            )  # fmt: skip
            for first in range(start, stop, per_job)
        ]
        results = client.analyze_many(requests, timeout=timeout)
        for result in results:
            if not result["ok"]:
                error = result["error"]
                raise AnchorError(f"{error['message']} [{error['code']}]")
        table = results[0]["candidates"]
        if any(r["candidates"] != table for r in results):
            raise AnchorError("the workers disagree on the candidates (different lexica?)")
        if chosen is None:
            chosen = [Candidate(n, s, e, None) for n, s, e in table]
            values = [[] for _ in chosen]
            alive = [True] * len(chosen)
        elif [[c.notation, c.score, round(c.equity, 3)] for c in chosen] != table:
            raise AnchorError("the candidates changed between rounds (a lexicon was replaced?)")
        for result in results:
            for c, vals in zip(result["only"], result["values"], strict=True):
                values[c].extend(vals)
        if bar:
            bar.step(stop - start)
        if settings.confidence is not None and sum(alive) > 1:
            alive = prune(values, alive, settings.confidence)
        if sum(alive) == 1:
            break
    if bar:
        bar.close()
    return summarize(chosen or [], values, lead, [not a for a in alive])
