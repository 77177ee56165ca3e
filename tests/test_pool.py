"""A simulation round shared by its jobs (worker/pool.py): however the claims of owners
and helpers interleave, every iteration of the round is claimed exactly once, and a job
that cannot reach Redis stops claiming instead of failing."""

from __future__ import annotations

from fakeredis import FakeRedis
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.worker.pool import Pool, claims, share_ranges


@given(st.integers(0, 10**6), st.integers(1, 10_000), st.integers(1, 64))
def test_shares_split_a_round_evenly_and_whole(first, iterations, shares):
    ranges = share_ranges(first, iterations, shares)
    assert len(ranges) == shares
    assert [i for r in ranges for i in r] == list(range(first, first + iterations))
    assert max(map(len, ranges)) - min(map(len, ranges)) <= 1


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 60),
    st.lists(st.tuples(st.booleans(), st.integers(1, 70)), min_size=1, max_size=80),
)
def test_claims_of_one_share_never_overlap_and_leave_nothing_between(size, steps):
    """An owner claiming from the front and helpers from the back, in any order and any
    amounts: no index is claimed twice, what a claim says is left is what is left, and a
    last claim of everything takes exactly the rest."""
    pool = Pool(FakeRedis(), "round")
    taken: list[int] = []
    for front, count in steps:
        got = pool.take(0, size, count, front=front)
        assert got is not None
        run, left = got
        assert all(0 <= i < size for i in run)
        taken.extend(run)
        assert left == size - len(set(taken))
    rest, left = pool.take(0, size, size, front=True)
    taken.extend(rest)
    assert left == 0 and sorted(taken) == list(range(size))  # each once, none missing


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 200),
    st.integers(1, 6),
    st.lists(st.integers(0, 5), min_size=1, max_size=400),
)
def test_jobs_claiming_in_turn_play_every_iteration_once(iterations, shares, turns):
    """`shares` jobs of one round, each taking its next run when `turns` says (any
    interleaving): together they play each iteration of the round exactly once."""
    shares = min(shares, iterations)
    ranges = share_ranges(100, iterations, shares)
    conn = FakeRedis()
    jobs = [claims(Pool(conn, "r"), k, ranges) for k in range(shares)]
    played: list[int] = []
    live = set(range(shares))
    for turn in [*turns, *list(range(shares)) * (iterations + 2)]:
        k = turn % shares
        if k not in live:
            continue
        run = next(jobs[k], None)
        if run is None:
            live.discard(k)
        else:
            assert len(run) > 0
            played.extend(run)
        if not live:
            break
    assert sorted(played) == list(range(100, 100 + iterations))


def test_a_job_that_loses_redis_stops_claiming():
    class Gone:
        def pipeline(self, transaction=True):
            raise ConnectionError("Redis went away")

    assert Pool(Gone(), "r").take(0, 10, 5, front=True) is None
    assert list(claims(Pool(Gone(), "r"), 0, share_ranges(0, 20, 2))) == []


def test_claims_expire_with_the_round():
    conn = FakeRedis()
    Pool(conn, "r").take(1, 10, 3, front=False)
    assert 0 < conn.ttl("anchor:pool:r:1") <= 3600
