"""One hard endgame spread over the worker fleet (or solved in-process when the client is
embedded), with the answer one search gives. Two ways:

- **together** (the default): `parts` copies of the whole request. Workers forked from one
  `anchor worker --workers N` search one endgame on one table in memory they share
  (engine/peers.py), the first proof ending every search: two such workers took 0.53 of
  one's time (bench/endgame_fleet.py). Copies landing on workers of different machines
  each solve it alone: no faster than one, never slower. Every copy answers the same exact
  value and line.
- **root**: the root's plays are numbered in a canonical order (a function of the position
  alone, so every worker numbers them alike). Round one searches play 0, the static best,
  alone: its value is a floor. Round two splits the other plays `parts` ways, each job
  searching its share against that floor, so plays that cannot beat it are only bounded.
  The answer is the highest value, ties going to the play first in canonical order, with
  that play's canonical line: exactly what one process finds (engine/endgame.c,
  canonical_line). Machines need share nothing, but each job has its own table (the parts
  searched 1.7x one search's positions) and one root play can hold most of the work.
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


SPLITS = ("together", "root")


def solve(
    client: AnalysisClient,
    request: p.EndgameRequest,
    parts: int = 1,
    timeout: float = 3600,
    split: str = "together",
) -> p.EndgameResult:
    """The answer to `request` from `parts` jobs: searched together (each job the whole
    endgame) or with the root's plays split after the first (module docstring)."""
    if not isinstance(parts, int) or isinstance(parts, bool) or not 1 <= parts <= 1024:
        raise ValueError(f"parts must be 1..1024, not {parts!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if parts == 1 or (split == "together" and client.embedded):  # no peers in one process:
        return _checked(client.analyze(request, timeout=timeout))  # its threads share instead
    if split == "together":
        return first_answer(
            [_checked(r) for r in client.analyze_many([request] * parts, timeout=timeout)]
        )
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


def first_answer(results: list[p.EndgameResult]) -> p.EndgameResult:
    """The answer of jobs that each searched the whole endgame: an exact one (they agree),
    else the deepest (ties: the first); nodes summed, seconds the longest job's."""
    order = max(range(len(results)), key=lambda i: (results[i].exact, results[i].depth, -i))
    best = results[order]
    return replace(
        best,
        nodes=sum(r.nodes for r in results),
        seconds=round(max(r.seconds for r in results), 6),
        parts=len(results),
    )


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
