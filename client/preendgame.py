"""A pre-endgame spread over the worker fleet: each stage's field dealt out to `parts` jobs
(job j values every parts-th candidate from the j-th, as threads share a stage in one
process), the answers ranked here, and the next stage's field (the top n by chance of
winning, then mean) sent out as moves by notation. Each job has its own endgame table, so a
proven value and the best play are what one process finds; depth-limited values may differ
a little (a table remembers what its own searches met)."""

from __future__ import annotations

import time
from dataclasses import replace

from . import protocol as p
from .client import AnalysisClient, ServiceError


class PreendgameError(ServiceError):
    """A job of the split answered an error."""


def _rank(play: dict) -> tuple:
    """The engine's order (engine/preendgame.py, _rank_key): chance of winning, mean, move."""
    return (-(play["wins"] + play["ties"] / 2), -play["mean"], play["move"])


def solve(
    client: AnalysisClient, request: p.PreendgameRequest, parts: int = 1, timeout: float = 3600
) -> p.PreendgameResult:
    """The answer to `request`, each stage split over `parts` jobs."""
    if (
        not isinstance(parts, int)
        or isinstance(parts, bool)
        or not 1 <= parts <= p.MAX_PREENDGAME_PARTS
    ):
        raise ValueError(f"parts must be 1..{p.MAX_PREENDGAME_PARTS}, not {parts!r}")
    if parts == 1:
        return _checked(client.analyze(request, timeout=timeout))
    stages = request.stages or p.PREENDGAME_STAGES
    known: dict[str, dict] = {}  # each move's deepest finished stage
    order: list[str] = []  # the ranking so far
    ran, nodes, solves, budget_hit = [], 0, 0, False
    first: p.PreendgameResult | None = None
    for number, (plies, keep) in enumerate(stages, 1):
        only = () if number == 1 else tuple(order[:keep])
        if number > 1 and len(only) < 2 and number < len(stages):
            continue
        jobs = min(parts, len(only)) if only else parts
        asked = [
            replace(request, stages=((plies, keep),), only=only, parts=jobs, part=j)
            for j in range(jobs)
        ]
        started = time.perf_counter()
        try:
            answers = [_checked(r) for r in client.analyze_many(asked, timeout=timeout)]
        except PreendgameError as exc:
            if number == 1 or "[timeout]" not in str(exc):
                raise
            budget_hit = True
            break
        first = first or answers[0]
        nodes += sum(a.nodes for a in answers)
        solves += sum(a.solves for a in answers)
        plays = [pl for a in answers for pl in a.plays]
        ran.append([plies, len(plays), round(time.perf_counter() - started, 6)])
        for pl in plays:
            pl = {**pl, "stage": number}
            if pl["cut"] and pl["move"] in known:  # its earlier stage stands, with the bound
                pl = {**known[pl["move"]], "cut": True, "win_bound": pl["win_bound"]}
            known[pl["move"]] = pl
        finished = sorted((pl for pl in plays if not pl["cut"]), key=_rank)
        names = [pl["move"] for pl in finished]
        order = names + [m for m in order if m not in names]
        if number == 1:
            order += [pl["move"] for pl in plays if pl["cut"]]
    if first is None:
        raise PreendgameError("the pre-endgame's first stage answered nothing")
    merged = [known[m] for m in order if m in known]
    return p.PreendgameResult(
        merged, first.unseen, first.bag, all(pl["exact"] for pl in merged), nodes, solves,
        round(sum(s[2] for s in ran), 6), ran, budget_hit,
    )  # fmt: skip


def _checked(result: dict) -> p.PreendgameResult:
    found = p.read_result(result, p.PreendgameResult)
    if isinstance(found, p.Failure):
        raise PreendgameError(f"{found.message or 'the pre-endgame failed'} [{found.code}]")
    return found
