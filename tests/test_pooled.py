"""Pooled simulations (PROTOCOL.md): jobs that each run the whole simulation and share its
rounds' pieces. Whatever the jobs do (run together, one after another, die holding a
claim, run out of time, lose Redis, read a stranger's entries, are given up) the answer is
the engine's own, and no piece is played twice unless one went missing."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import msgpack
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.simulation import PoolProgress, SimulationJob, simulate
from anchor.engine import Ruleset, Solver, parse_cgp
from anchor.engine.errors import AnchorError
from anchor.engine.leaves import Leaves
from anchor.engine.simulate import CandidateStats, Simulation
from anchor.worker import pooled
from anchor.worker.exchange import MemoryExchange, RedisExchange, RedisPools
from anchor.worker.runner import Deadline, LexiconRegistry, run

from .conftest import data_path
from .service import TWL06

ENGLISH = Ruleset.load("english")
CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADEIOST/ 148/55 0"
KLV2 = data_path("kwg", "TWL06.klv2")
LEAD = 148 - 55


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


@pytest.fixture(scope="module")
def leaves() -> Leaves:
    return Leaves.open(KLV2, ENGLISH)


@pytest.fixture(scope="module")
def registry() -> LexiconRegistry:
    return LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})


class Recorded(MemoryExchange):
    """A pool in memory that keeps what was published: (thread, round, piece, claimed)."""

    def __init__(self) -> None:
        super().__init__()
        self.published: list[tuple[int, int, int, bool]] = []

    def publish(self, round_no, piece, blob, pieces, claim):
        self.published.append((threading.get_ident(), round_no, piece, claim))
        return super().publish(round_no, piece, blob, pieces, claim)

    def __call__(self, key: str, cap: int) -> Recorded:  # pools that always give this one
        return self


def request_for(settings: Simulation, pieces: int, pool: str = "t") -> p.SimulateRequest:
    return p.SimulateRequest(
        CGP, lexicon="twl06", leaves="twl06", candidates=settings.candidates,
        plies=settings.plies, seed=settings.seed, iterations=settings.iterations, pool=pool,
        round_size=settings.round_size, confidence=settings.confidence or 0,
        rank=settings.rank, pieces=pieces,
    )  # fmt: skip


def stats_of(result: p.SimulateResult) -> list[CandidateStats]:
    assert result.complete and not result.values
    return [CandidateStats(*row) for row in result.summary]


def engine_run(solver, leaves, settings: Simulation):
    return settings.run(solver, parse_cgp(ENGLISH, CGP).board, "ADEIOST", leaves, lead=LEAD)


def pieces_of(settings: Simulation, pieces: int, rounds: int) -> int:
    """The pieces of the first `rounds` rounds (a round has no more than its iterations)."""
    sizes = [min(settings.round_size, settings.iterations - r * settings.round_size)
             for r in range(rounds)]  # fmt: skip
    return sum(min(pieces, size) for size in sizes)


SETTINGS = [
    Simulation(candidates=6, plies=2, iterations=120, seed=5, round_size=30, confidence=0.9),
    Simulation(
        candidates=5, plies=1, iterations=90, seed=2, round_size=40, confidence=0.95, rank="win"
    ),  # fmt: skip
    Simulation(candidates=3, plies=2, iterations=7, seed=9, round_size=3, confidence=None),
]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("pieces", [1, 4, 64])
def test_one_pooled_job_is_the_engine_run(solver, leaves, registry, settings, pieces):
    """One job alone plays every piece of every round, each once, and answers what the
    engine does (pieces may outnumber a round's iterations: 64 over rounds of 3)."""
    exchange = Recorded()
    result = run(request_for(settings, pieces), registry, pools=exchange)
    assert result.complete
    assert stats_of(result) == engine_run(solver, leaves, settings)
    played = [(r, i) for _, r, i, _ in exchange.published]
    assert len(played) == len(set(played))
    rounds = {r for r, _ in played}
    assert len(played) == pieces_of(settings, pieces, len(rounds))


@pytest.mark.parametrize("settings", SETTINGS[:2])
def test_jobs_on_threads_share_the_rounds(solver, leaves, registry, settings):
    """Three jobs of one pool at once: each piece played once, by whichever job claimed
    it, and all three answer the same, the engine's answer."""
    exchange = Recorded()
    request = request_for(settings, 6)
    results: list[p.SimulateResult] = []

    def job() -> None:
        results.append(run(request, registry, pools=exchange))

    threads = [threading.Thread(target=job) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(r == results[0] for r in results)
    assert stats_of(results[0]) == engine_run(solver, leaves, settings)
    played = [(r, i) for _, r, i, _ in exchange.published]
    assert len(played) == len(set(played))


def test_a_late_job_reads_the_rounds_and_plays_nothing(registry):
    """The untaken share: a job that starts after the others finished (one worker, two
    jobs) finds every round in the pool and answers at once, playing nothing."""
    settings = SETTINGS[0]
    exchange = Recorded()
    first = run(request_for(settings, 2), registry, pools=exchange)
    count = len(exchange.published)
    assert run(request_for(settings, 2), registry, pools=exchange) == first
    assert len(exchange.published) == count


def test_a_piece_claimed_by_a_dead_job_is_played_after_the_patience(
    solver, leaves, registry, monkeypatch
):
    """A job that claimed a piece and died: the job waiting for it plays it after the
    patience, and the answer is unchanged."""
    monkeypatch.setattr(pooled, "PATIENCE", 0.05)
    settings = SETTINGS[0]
    exchange = Recorded()
    assert exchange.claim(0) == 0  # the dead job's claim of round 0's first piece
    result = run(request_for(settings, 3), registry, pools=exchange)
    assert stats_of(result) == engine_run(solver, leaves, settings)
    unclaimed = [(r, i) for _, r, i, claimed in exchange.published if not claimed]
    assert unclaimed == [(0, 0)]


def test_a_job_waiting_for_a_piece_plays_ahead_and_keeps_the_survivors(
    solver, leaves, registry, monkeypatch
):
    """While a partner's piece of round 0 is awaited, the job plays the first iterations
    of the round-1 piece it already claimed, for the candidates then alive; round 1 then
    uses them for the candidates pruning kept, and the answer is the engine's."""
    settings = SETTINGS[0]
    request = request_for(settings, 2)
    alone = Recorded()
    run(request, registry, pools=alone)
    partner_piece = alone.pieces(0, 0.0)[0][0]  # what the partner will publish, late
    exchange = Recorded()
    assert exchange.claim(0) == 0  # the partner holds piece 0 of round 0
    timer = threading.Timer(0.5, exchange.publish, (0, 0, partner_piece, 2, False))
    steps = []
    real = pooled._Sharer._play_ahead

    def counted(self, ahead):
        steps.append((ahead.round_no, ahead.piece, ahead.done))
        return real(self, ahead)

    monkeypatch.setattr(pooled._Sharer, "_play_ahead", counted)
    timer.start()
    try:
        result = run(request, registry, pools=exchange)
    finally:
        timer.cancel()
    assert steps and steps[0] == (1, 0, 0)
    expected = engine_run(solver, leaves, settings)
    assert stats_of(result) == expected
    # some candidates were dropped after round 0: ahead played them, round 1 did not keep them
    assert any(e.pruned and e.iterations == settings.round_size for e in expected)


class Stopping:
    """A deadline that runs out after `calls` questions (the engine asks before each
    iteration): a job stopped mid-round, whatever the machine's speed."""

    def __init__(self, calls: int):
        self.calls = calls
        self.seconds = 1.0

    def budget(self) -> float:
        self.calls -= 1
        if self.calls < 0:
            raise self.expired()
        return 1.0

    def expired(self) -> p.ProtocolError:
        return Deadline(1.0).expired()


def test_a_job_out_of_time_leaves_its_rounds_for_the_next(solver, leaves, registry):
    """A job stopped by its time cap answers `complete: false` with the rounds merged so
    far; the same job sent again goes on from the pool and ends at the engine's answer."""
    settings = SETTINGS[0]
    exchange = Recorded()
    request = request_for(settings, 2)
    partial = run(request, registry, deadline=Stopping(45), pools=exchange)
    assert not partial.complete and partial.summary == []
    assert 0 < partial.merged < settings.iterations
    played = len(exchange.published)
    result = run(request, registry, pools=exchange)
    assert result.complete
    assert stats_of(result) == engine_run(solver, leaves, settings)
    assert len(exchange.published) > played


def test_the_client_sends_a_stopped_simulation_again(solver, leaves, registry, monkeypatch):
    """Embedded or fleet, the client sends the pool's jobs again while each sending gets
    further, and says what to do when one cannot finish a round."""
    settings = SETTINGS[0]
    client = AnalysisClient(registry=registry)
    real = pooled._Sharer._play
    plays = {"left": 3}

    def few(self, run_, now):  # three pieces a job, then its time is up
        plays["left"] -= 1
        if plays["left"] < 0:
            raise pooled.OutOfTime
        return real(self, run_, now)

    sent = []
    analyze_many = client.analyze_many

    def counted(requests, **kwargs):
        plays["left"] = 3
        sent.append(len(requests))
        return analyze_many(requests, **kwargs)

    monkeypatch.setattr(pooled._Sharer, "_play", few)
    monkeypatch.setattr(client, "analyze_many", counted)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    assert simulate(client, job, settings) == engine_run(solver, leaves, settings)
    assert len(sent) > 1

    def none(self, run_, now):
        raise pooled.OutOfTime

    monkeypatch.setattr(pooled._Sharer, "_play", none)
    with pytest.raises(AnchorError, match="ran out of time before they finished a round"):
        simulate(client, job, settings)


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_strangers_entries_in_the_pool_are_skipped(solver, leaves, registry, server, monkeypatch):
    """Anyone may write to Redis: entries of the wrong shape under the pool's key (bad
    fields, bytes that are no msgpack, values of the wrong length or type, far too many
    bytes) are skipped and their pieces played here; a well-formed piece of other
    candidates is refused by name."""
    settings = SETTINGS[0]
    request = request_for(settings, 2, pool="strangers")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key, key + ":claims")
    good_shape = [[0.0] * 15 for _ in range(6)], [[0] * 15 for _ in range(6)]
    for fields in (
        {"x": 1},
        {"r": "zero", "i": 0, "b": b"x"},
        {"r": -1, "i": 0, "b": b"x"},
        {"r": 0, "i": 0, "b": b"\xc1\xc1"},
        {"r": 0, "i": 0, "b": msgpack.packb(["stamp", [[1.0]], [[0]]])},
        {"r": 0, "i": 1, "b": msgpack.packb([b"12345678", [["a"] * 15] * 6, good_shape[1]])},
        {"r": 0, "i": 1, "b": msgpack.packb({"a": 1})},
        {"r": 0, "i": 99, "b": msgpack.packb([b"1", *good_shape])},
        {"r": 0, "i": 0, "b": msgpack.packb([b"12345678", [[0.0] * 10**6], [[0]]])},
    ):
        conn.xadd(key, fields)
    unpacked = []
    unpackb = msgpack.unpackb

    def measured(blob, **kwargs):
        unpacked.append(len(blob))
        return unpackb(blob, **kwargs)

    monkeypatch.setattr(pooled.msgpack, "unpackb", measured)
    result = run(request, registry, pools=RedisPools(conn))
    assert stats_of(result) == engine_run(solver, leaves, settings)
    assert all(n < 10**5 for n in unpacked)  # the stranger's 9 MB piece was not unpacked
    conn.xadd(key.replace("strangers", "other"), {"r": 0, "i": 0, "b": b""})  # no effect
    wrong = replace(request, pool="wrong")
    wrong_key = p.pool_key(wrong)
    blob = msgpack.packb([b"12345678", *good_shape])
    conn.xadd(wrong_key, {"r": 0, "i": 0, "b": blob, "m": seal(conn, wrong_key, 0, 0, blob)})
    with pytest.raises(p.ProtocolError, match="different lexica"):  # another worker's, sealed
        run(wrong, registry, pools=RedisPools(conn))


def seal(conn, key: str, round_no: int, piece: int, blob: bytes) -> bytes:
    """An entry's seal as a worker makes it (exchange.RedisExchange._seal)."""
    exchange = RedisExchange(conn, key, 10)
    return exchange._seal(round_no, piece, blob)


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_forged_values_under_the_pool_cannot_become_the_answer(solver, leaves, registry, server):
    """Entries with the right stamp and shape but values a stranger chose made both jobs
    answer what the stranger liked (issue 46, item 4): without the workers' seal they are
    played here; with a seal made under another secret, too."""
    settings = SETTINGS[0]
    request = request_for(settings, 2, pool="forged")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key, key + ":claims")
    honest = run(request, registry, pools=RedisPools(conn))
    entries = conn.xrange(key)
    assert entries
    conn.delete(key, key + ":claims")
    # the same pieces (their stamp is computable from the request), every value 500,
    # sealed wrong or not at all
    for _, fields in entries:
        stamp, values, ends = msgpack.unpackb(fields[b"b"])
        forged = msgpack.packb([stamp, [[500.0] * len(v) for v in values], ends])
        conn.xadd(key, {"r": fields[b"r"], "i": fields[b"i"], "b": forged})
        conn.xadd(key, {"r": fields[b"r"], "i": fields[b"i"], "b": forged, "m": b"x" * 16})
    result = run(request, registry, pools=RedisPools(conn))
    assert stats_of(result) == stats_of(honest) == engine_run(solver, leaves, settings)


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_junk_in_the_pools_stream_costs_a_bounded_read(registry, server):
    """100,000 entries of 2 KiB under a pool's key took a worker from 52 to 478 MiB and
    the answer from 9 s to 31 s (issue 46, item 4): the stream is read 64 entries at a
    time, and past the pool's own size in junk the job goes on alone."""
    import tracemalloc

    settings = SETTINGS[0]
    request = request_for(settings, 2, pool="junk")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key, key + ":claims")
    with conn.pipeline(transaction=False) as pipe:
        for n in range(20_000):
            pipe.xadd(key, {"r": 0, "i": n % 2, "b": b"j" * 2048})
        pipe.execute()
    tracemalloc.start()
    try:
        result = run(request, registry, pools=RedisPools(conn))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.summary and result.complete
    assert peak < 8 << 20, peak  # the 40 MiB of junk was never held at once


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
@pytest.mark.parametrize("count", [-1000, 10**15])
def test_a_claim_counter_set_by_a_stranger_sends_the_job_on_alone(
    solver, leaves, registry, server, caplog, count
):
    """`HSET <pool>:claims 0 -1000` made the job answer `internal` (a negative piece), and
    10**15 in every round made it wait out the patience for each piece; a counter no job
    wrote now sends the job on alone at once, with the engine's own answer."""
    settings = SETTINGS[0]
    request = request_for(settings, 2, pool="claims")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key, key + ":claims")
    conn.hset(key + ":claims", mapping={str(r): count for r in range(8)})
    with caplog.at_level("WARNING", logger="anchor.exchange"):
        result = run(request, registry, pools=RedisPools(conn))
    assert stats_of(result) == engine_run(solver, leaves, settings)
    assert any("which no job wrote" in getattr(r, "error", "") for r in caplog.records)
    assert pooled.LATE_PIECE not in caplog.text


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_a_stop_mark_set_from_outside_ends_the_simulation_with_a_clear_error(
    server, queue, workers, monkeypatch
):
    """`SET <pool>:stop 1` by a stranger left the client sending the jobs again for 150 s;
    the jobs now say they were stopped and the client says so at once."""
    workers(None, "--leaves", f"twl06={KLV2}")
    client = AnalysisClient(server.url, queue=queue)
    conn = server.client()
    real = client.analyze_many

    def stop_first(requests, **kwargs):  # the stranger sets the stop mark as the jobs go out
        conn.set(p.pool_stop_key(p.pool_key(requests[0])), 1, ex=60)
        return real(requests, **kwargs)

    monkeypatch.setattr(client, "analyze_many", stop_first)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    started = time.monotonic()
    with pytest.raises(AnchorError, match="the simulation was stopped"):
        simulate(client, job, SETTINGS[0])
    assert time.monotonic() - started < 30


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_jobs_through_redis_share_and_a_late_one_plays_nothing(registry, server):
    """Two jobs on threads through Redis, then a third: each piece in the stream once."""
    settings = SETTINGS[1]
    request = request_for(settings, 4, pool="shared")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key, key + ":claims")
    results: list[p.SimulateResult] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(run(request, registry, pools=RedisPools(conn)))
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = conn.xrange(key)
    assert len(entries) == len({(e[b"r"], e[b"i"]) for _, e in entries})
    results.append(run(request, registry, pools=RedisPools(conn)))
    assert len(conn.xrange(key)) == len(entries)
    assert results[0] == results[1] == results[2] and results[0].complete
    assert 0 < conn.ttl(key) <= 3600 and 0 < conn.ttl(key + ":claims") <= 3600


class Broken:
    """A Redis connection that fails every call, as a full or vanished Redis does."""

    def pipeline(self, *a, **k):
        raise RedisConnectionError("gone")

    def register_script(self, *a, **k):
        raise RedisConnectionError("gone")

    def xread(self, *a, **k):
        raise RedisConnectionError("gone")


def test_a_job_that_loses_redis_goes_on_alone(solver, leaves, registry):
    settings = SETTINGS[0]
    exchange = RedisExchange(Broken(), "anchor:pool:x:y", 100)
    result = run(request_for(settings, 3), registry, pools=lambda key, cap: exchange)
    assert not exchange.shared
    assert stats_of(result) == engine_run(solver, leaves, settings)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"pool": "a b"}, "'pool' may hold only"),
        ({"pool": "x" * 65}, "'pool' must be 1..64"),
        ({"pool": "x", "first": 3}, "'first' must be 0"),
        ({"pool": "x", "only": [1]}, "'only' empty"),
        ({"pool": "x", "pieces": 65}, "'pieces' must be 1..64"),
        ({"pool": "x", "confidence": 1}, "'confidence' must be 0..0.999999"),
        ({"pool": "x", "rank": "luck"}, "'rank' must be one of"),
        ({"pool": "x", "round_size": 0}, "'round_size' must be 1..10000"),
    ],
)
def test_pooled_requests_are_bounded(fields, message):
    request = {"v": 1, "kind": "simulate", "cgp": CGP, **fields}
    with pytest.raises(p.ProtocolError, match=message):
        p.decode_request(p.pack(request))
    ok = p.SimulateRequest(CGP, pool="a-Z_9", pieces=4, confidence=0, rank="win")
    assert p.decode_request(p.encode_request(ok)) == ok


def test_the_pool_key_names_the_whole_request():
    """Jobs asking for different simulations never share a pool, whatever its name."""
    one = request_for(SETTINGS[0], 2, pool="same")
    assert p.pool_key(one) == p.pool_key(replace(one))
    for change in ({"seed": 6}, {"pieces": 3}, {"leaves": "other"}, {"pool": "else"}):
        assert p.pool_key(replace(one, **change)) != p.pool_key(one)
    assert p.pool_key(one).startswith("anchor:pool:same:")


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda results: results[0].pop("summary"), "without its summary rows"),
        (lambda results: results[0]["summary"][0].__setitem__(3, True), "without its summary"),
        (lambda results: results[1]["summary"].pop(), "the workers disagree"),
    ],
)
def test_the_client_refuses_pooled_answers_it_cannot_trust(registry, monkeypatch, tamper, message):
    """A worker of another version (no summary, or rows of the wrong types) or jobs of
    one pool that answer differently are a clear error, not a traceback or a wrong table."""
    client = AnalysisClient(registry=registry, threads=2)
    real = client.analyze_many

    def tampered(requests, **kwargs):
        out = real(requests, **kwargs)
        tamper(out)
        return out

    monkeypatch.setattr(client, "analyze_many", tampered)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    with pytest.raises(AnchorError, match=message):
        simulate(client, job, Simulation(candidates=3, plies=1, iterations=4, round_size=4))


def test_a_wait_ends_at_once_on_a_piece_the_job_has_not_got():
    """A piece published between a job's look and its wait is not waited past: the wait is
    for a piece the job lacks, not for the next publication (threads sharing a pool in
    memory waited out the whole patience on such a race, 2 s a round)."""
    exchange = MemoryExchange()
    exchange.publish(0, 1, b"late", 2, claim=False)
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(exchange.pieces(0, 60.0, have={0})))
    waiter.start()
    waiter.join(10)
    assert not waiter.is_alive() and got == [{1: [b"late"]}]
    exchange.publish(1, 0, b"mine", 2, claim=False)
    assert exchange.pieces(1, 0.01, have={0}) == {0: [b"mine"]}  # nothing new: a short wait


class Steps:
    """A progress bar that keeps its steps."""

    def __init__(self) -> None:
        self.steps: list[int] = []

    def step(self, n: int) -> None:
        self.steps.append(n)


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_the_progress_bar_counts_each_published_piece_once(server):
    """The client's bar follows the pool's stream: each piece's iterations once, whoever
    published it and however often; what is not a piece of this simulation adds nothing."""
    settings = Simulation(iterations=250, round_size=100)
    request = request_for(settings, 3, pool="progress")
    key = p.pool_key(request)
    conn = server.client()
    conn.delete(key)
    bar = Steps()
    watch = PoolProgress(conn, request, bar)
    watch.read()  # no stream yet: nothing
    for fields in (
        {"r": 0, "i": 0, "b": b""},  # 34 iterations (100 in 34, 33, 33)
        {"r": 0, "i": 0, "b": b"again"},  # played twice: counted once
        {"r": 2, "i": 1, "b": b""},  # the last round holds 50: 17, 17, 16
        {"r": 2, "i": 3, "b": b""},  # no such piece
        {"r": 3, "i": 0, "b": b""},  # no such round
        {"r": "x", "i": 0, "b": b""},
        {"junk": 1},
    ):
        conn.xadd(key, fields)
    watch.read()
    assert bar.steps == [34, 17] and watch.counted == 51
    conn.xadd(key, {"r": 0, "i": 2, "b": b""})
    watch.start()
    watch.finish()  # a last look happens only on the thread's schedule: read once more
    watch.read()
    assert watch.counted == 51 + 33 and not watch.is_alive()


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_a_fleet_simulation_with_a_progress_bar_answers_the_same(
    server, queue, workers, solver, leaves
):
    workers(None, "--leaves", f"twl06={KLV2}")
    settings = Simulation(candidates=4, plies=1, iterations=60, seed=3, round_size=20)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    client = AnalysisClient(server.url, queue=queue)
    assert simulate(client, job, settings, progress=True) == engine_run(solver, leaves, settings)


@pytest.mark.service  # a real redis-server (not in `make test-fast`)
def test_a_simulation_the_client_gives_up_stops_its_jobs(registry, server, monkeypatch):
    """A client that stops waiting (Ctrl-C, its timeout) sets the pool's stop mark: jobs
    stop at their next claim and answer `complete: false`, instead of playing on."""
    settings = SETTINGS[0]
    conn = server.client()
    request = request_for(settings, 2, pool="given-up")
    conn.delete(p.pool_key(request), p.pool_key(request) + ":claims")
    conn.set(p.pool_stop_key(p.pool_key(request)), 1)
    result = run(request, registry, pools=RedisPools(conn))
    assert not result.complete and result.merged == 0 and not conn.exists(p.pool_key(request))

    request = replace(request, pool="given-up-later")
    played = []
    real = pooled._Sharer._play

    def then_stop(self, run_, now, timed=True):
        played.append(run_)
        if len(played) == 3:
            conn.set(p.pool_stop_key(p.pool_key(request)), 1)
        return real(self, run_, now, timed)

    monkeypatch.setattr(pooled._Sharer, "_play", then_stop)
    result = run(request, registry, pools=RedisPools(conn))
    assert not result.complete and 0 < result.merged < settings.iterations
    assert len(played) == 3

    client = AnalysisClient(server.url, queue="nobody-serves-this")
    sent = []

    def interrupted(requests, **kwargs):
        sent.append(requests[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(client, "analyze_many", interrupted)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    with pytest.raises(KeyboardInterrupt):
        simulate(client, job, settings)
    assert conn.ttl(p.pool_stop_key(p.pool_key(sent[0]))) > 0
