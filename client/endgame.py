"""One hard endgame spread over the worker fleet (or solved in-process when the client is
embedded), with the answer one search gives.

The root's plays are numbered in a canonical order (a function of the position alone, so
every worker numbers them alike). Round one searches play 0, the static best, alone: its
value is a floor. Round two splits the other plays `parts` ways, each job searching its
share against that floor, so plays that cannot beat it are only bounded. The answer is the
highest value, ties going to the play first in canonical order, with that play's canonical
line: exactly what one process finds (engine/endgame.c, canonical_line).
"""

from __future__ import annotations

from dataclasses import replace

from . import protocol as p
from .client import AnalysisClient, ServiceError


class EndgameError(ServiceError):
    """A job of the split answered an error."""


def _checked(result: dict) -> p.EndgameResult:
    found = p.read_result(result, p.EndgameResult)
    if isinstance(found, p.Failure):
        raise EndgameError(f"{found.message or 'the endgame failed'} [{found.code}]")
    return found


def solve(
    client: AnalysisClient, request: p.EndgameRequest, parts: int = 1, timeout: float = 3600
) -> p.EndgameResult:
    """The answer to `request`, split over `parts` jobs after the first play."""
    if not isinstance(parts, int) or isinstance(parts, bool) or not 1 <= parts <= 1024:
        raise ValueError(f"parts must be 1..1024, not {parts!r}")
    if parts == 1:
        return _checked(client.analyze(request, timeout=timeout))
    lead = _checked(
        client.analyze(replace(request, first=0, last=1, parts=1, part=0), timeout=timeout)
    )
    floor = lead.value if lead.exact else None  # a guess is no bound
    rest = [
        _checked(r)
        for r in client.analyze_many(
            [
                replace(request, first=1, last=None, parts=parts, part=i, floor=floor)
                for i in range(parts)
            ],
            timeout=timeout,
        )
    ]
    return merge([lead, *rest])


def merge(results: list[p.EndgameResult]) -> p.EndgameResult:
    """The answer of the parts of one endgame: the best value (ties: the first play in
    canonical order) and its line; exact when every part was."""
    live = [r for r in results if not r.no_plays and not r.below_floor]
    best = max(live, key=lambda r: (r.value, -r.root))
    return replace(
        best,
        depth=max(r.depth for r in results),
        exact=all(r.exact for r in results),
        nodes=sum(r.nodes for r in results),
        seconds=round(sum(r.seconds for r in results), 6),
        parts=len(results),
    )
