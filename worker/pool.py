"""A round of a simulation shared by its jobs (SimulateRequest.pool): each job plays its
own share of the round's iterations from the front and then takes what is still untaken
of the others' shares from the back, so a worker that finishes early helps one that drew
costlier iterations instead of waiting for it at the round's end.

A share's claims are one Redis integer, `front * PACK + back`: its owner adds to the front
count, a helper to the back count, each with one INCRBY that returns both. Claims are
decided by the value a claimant gets back, so they never overlap: the owner's claim is
cut at the back's end as it stood then, a helper's at the front's. A claim that Redis
cannot take (away, full) ends the job's claiming; the client fills in any iteration
nobody played (a job whose worker died) with a job of its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis import Redis

log = logging.getLogger("anchor.worker")

PACK = 1 << 32  # above anything the back count reaches: claims stop where the ends meet
TTL = 3600  # seconds a round's claims are kept: past any job's time cap


def share_ranges(first: int, iterations: int, shares: int) -> list[range]:
    """The round's iterations [first, first + iterations) in `shares` runs as even as can
    be (the first ones one longer): the client's split and the workers' alike."""
    size, extra = divmod(iterations, shares)
    out, at = [], first
    for k in range(shares):
        n = size + (k < extra)
        out.append(range(at, at + n))
        at += n
    return out


@dataclass(frozen=True, slots=True)
class Pool:
    """The claims of one round, `name`, on the worker's Redis."""

    connection: Redis
    name: str

    def take(self, share: int, size: int, count: int, front: bool) -> tuple[range, int] | None:
        """Claim `count` iterations of share `share` (`size` of them), from its front (its
        owner) or its back (a helper): the indices within the share that this claim got
        (empty when the two ends have met) and how many are still untaken after it. None
        when Redis did not answer: the caller claims no more."""
        key = f"anchor:pool:{self.name}:{share}"
        try:
            with self.connection.pipeline(transaction=False) as pipe:
                pipe.incrby(key, count * PACK if front else count)
                pipe.expire(key, TTL)
                value = int(pipe.execute()[0])
        except Exception as exc:  # Redis away or full: play on with what is claimed
            log.warning("pool claim failed", extra={"pool": self.name, "error": str(exc)[:200]})
            return None
        ahead, behind = divmod(value, PACK)
        end = size - behind  # the back's start: every index from here on is a helper's
        if front:
            got = range(max(0, ahead - count), max(0, min(ahead, end)))
        else:
            got = range(max(end, ahead, 0), max(0, min(end + count, size)))
        return got, max(0, end - ahead)


def claims(pool: Pool, share: int, ranges: list[range]):
    """The iterations this job plays, a run at a time: its own share from the front, two
    thirds of what is left at a time (a claim costs a round trip, ~0.2 ms: four or five
    for a share of 50, the last ones small, where a helper may come), then the others'
    from the back: one iteration first (the answer tells how many are left), then half of
    what is left, the owner playing on with the other half."""
    own = ranges[share]
    left = len(own)
    while left > 0:
        got = pool.take(share, len(own), max(min(2, left), (2 * left + 2) // 3), front=True)
        if got is None:
            return
        run, left = got
        if not run:
            break
        yield own[run.start : run.stop]
    for k in [*range(share + 1, len(ranges)), *range(share)]:
        other = ranges[k]
        left = 2 if other else 0
        while left > 0:
            got = pool.take(k, len(other), max(1, left // 2), front=False)
            if got is None:
                return
            run, left = got
            if not run:
                break
            yield other[run.start : run.stop]
