"""The wire protocol and the RQ path, fast: strict decoding of every bad input, and a
whole enqueue -> SimpleWorker -> result round trip on fakeredis."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import msgpack
import pytest
from fakeredis import FakeRedis
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.protocol.serializer import MsgpackSerializer, Packed
from anchor.worker.runner import LexiconRegistry, run_request

from .conftest import DEFAULT_KWG, data_path

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]


def request(**fields) -> bytes:
    return p.pack({"v": 1, **fields})


BAD_INPUTS = [
    ("empty payload", b"", p.MALFORMED),
    ("garbage bytes", b"\xc1\xff\x00garbage", p.MALFORMED),
    ("two objects", p.pack({"v": 1}) + p.pack({"v": 1}), p.MALFORMED),
    ("truncated", p.pack({"v": 1, "cgp": "15/15"})[:-3], p.MALFORMED),
    ("not a map", p.pack([1, 2, 3]), p.NOT_A_MAP),
    ("no version", p.pack({"cgp": BENCH[0]}), p.MISSING_FIELD),
    ("version 2", request(v=2, cgp=BENCH[0]), p.UNSUPPORTED_VERSION),
    ("version as text", request(v="1", cgp=BENCH[0]), p.UNSUPPORTED_VERSION),
    ("unknown field", request(cgp=BENCH[0], colour="red"), p.UNKNOWN_FIELD),
    ("wrong type", request(cgp=15), p.WRONG_TYPE),
    ("rack as number", request(cgp=BENCH[0], rack=7), p.WRONG_TYPE),
    ("negative limit", request(cgp=BENCH[0], limit=-1), p.BAD_VALUE),
    ("bool limit", request(cgp=BENCH[0], limit=True), p.WRONG_TYPE),
    ("bad mode", request(cgp=BENCH[0], mode="diagonal"), p.BAD_VALUE),
    ("both cgp and rows", request(cgp=BENCH[0], rows=["."]), p.MISSING_FIELD),
    ("neither cgp nor rows", request(rack="AB"), p.MISSING_FIELD),
    ("int map key", msgpack.packb({1: 2}), p.MALFORMED),
    ("non-UTF-8 string", b"\x82\xa1v\x01\xa3cgp\xa3\xff\xfe\xfd", p.BAD_ENCODING),
    ("deeply nested", b"\x81\xa1a" * 5000 + b"\xc0", p.MALFORMED),
    ("100 MB payload", b"\x00" * (100 << 20), p.PAYLOAD_TOO_LARGE),
    ("batch too large", request(kind="batch", positions=[{"cgp": "15"}] * 1001), p.BATCH_TOO_LARGE),
    ("batch without positions", request(kind="batch"), p.MISSING_FIELD),
    ("batch with cgp", request(kind="batch", cgp=BENCH[0], positions=[]), p.UNKNOWN_FIELD),
    ("options not a map", request(cgp=BENCH[0], options=[1]), p.WRONG_TYPE),
    ("unknown option", request(cgp=BENCH[0], options={"colour": True}), p.UNKNOWN_FIELD),
    ("option not bool", request(cgp=BENCH[0], options={"breakdown": 1}), p.WRONG_TYPE),
    ("long cgp", request(cgp="1" * 5000), p.BAD_VALUE),
]
ENGINE_ERRORS = [
    ("board of the wrong size", request(cgp="15/15/15 AB/ 0/0 0"), p.BAD_POSITION),
    (
        "letter outside the alphabet",
        request(rows=["." * 15] * 14 + ["Ж" + "." * 14], rack="A"),
        p.BAD_POSITION,
    ),
    ("rack of 20 tiles", request(cgp=BENCH[0].split()[0], rack="A" * 20), p.BAD_RACK),
    ("rack with digits", request(cgp=BENCH[0].split()[0], rack="AB1"), p.BAD_RACK),
    ("no rack", request(cgp=BENCH[0].split()[0]), p.MISSING_FIELD),
    ("unknown ruleset", request(cgp=BENCH[0], ruleset="klingon"), p.UNKNOWN_RULESET),
    ("ruleset file path", request(cgp=BENCH[0], ruleset="/etc/passwd.toml"), p.UNKNOWN_RULESET),
    ("unknown lexicon", request(cgp=BENCH[0], lexicon="nope"), p.UNKNOWN_LEXICON),
    ("lexicon as a path", request(cgp=BENCH[0], lexicon="/etc/passwd"), p.UNKNOWN_LEXICON),
]


@pytest.mark.parametrize("name, payload, code", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_requests_get_their_code(name, payload, code):
    with pytest.raises(p.ProtocolError) as info:
        p.decode_request(payload)
    assert info.value.code == code
    assert info.value.to_result()["error"]["code"] == code


@pytest.fixture(scope="module")
def registry() -> LexiconRegistry:
    return LexiconRegistry(
        {"english": str(DEFAULT_KWG), "twl06": str(data_path("kwg", "TWL06.kwg"))}
    )


@pytest.mark.parametrize("name, payload, code", ENGINE_ERRORS, ids=[b[0] for b in ENGINE_ERRORS])
def test_engine_level_errors_get_their_code(registry, name, payload, code):
    with pytest.raises(p.ProtocolError) as info:
        run_request(p.decode_request(payload), registry)
    assert info.value.code == code, info.value.message


def test_round_trip_of_requests():
    req = p.Request(
        ruleset="english",
        lexicon="twl06",
        positions=(p.Position(cgp=BENCH[0], limit=5), p.Position(rows=("." * 15,) * 15, rack="AB")),
        batch=True,
        options=p.Options(breakdown=True),
    )
    assert p.decode_request(p.encode_request(req)) == req
    single = p.Request(positions=(p.Position(cgp=BENCH[1], rack="QI", mode="down"),))
    assert p.decode_request(p.encode_request(single)) == single


def test_results_single_and_batch(registry):
    single = run_request(
        p.decode_request(request(cgp=BENCH[0], lexicon="twl06", limit=3)), registry
    )
    assert single["ok"] and single["v"] == 1 and len(single["moves"]) == 3
    assert "total" not in single  # a limit lets the search skip plays, so it cannot count them
    assert single["moves"][0] == [
        "H10 (G)RILLS",
        24,
        9,
        7,
        "down",
        "GRILLS",
        [[10, 7, "R"], [11, 7, "I"], [12, 7, "L"], [13, 7, "L"], [14, 7, "S"]],
    ]
    assert set(single["timings"]) == {"generate_us", "total_us"}
    batch = run_request(
        p.decode_request(
            request(
                kind="batch",
                lexicon="twl06",
                limit=1,
                options={"breakdown": True},
                positions=[{"cgp": c} for c in BENCH[:3]] + [{"cgp": "15/15"}],
            )
        ),
        registry,
    )
    assert batch["ok"] and [r["ok"] for r in batch["results"]] == [True, True, True, False]
    assert [len(r["moves"]) for r in batch["results"][:3]] == [1, 1, 1]
    assert not any("total" in r for r in batch["results"])
    assert batch["results"][3]["error"]["code"] == p.BAD_POSITION
    breakdown = batch["results"][0]["moves"][0][7]
    assert breakdown == {"words": [["GRILLS", "H10", 24]], "bingo": 0}
    p.pack(batch)  # every result packs


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_decoder_only_raises_protocol_errors(data):
    try:
        p.decode_request(data)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5000)
    | st.text(max_size=20)
    | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(p.wire_keys("analyze")) + ["x"]), values, max_size=6))
def test_fuzz_structured_requests(registry, fields):
    payload = p.pack({"v": 1, **fields})
    try:
        result = run_request(p.decode_request(payload), registry)
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES
        return
    assert result["ok"] is True


def test_serializer_refuses_what_it_cannot_pack():
    assert MsgpackSerializer.loads(MsgpackSerializer.dumps(("f", None, [b"x"], {}))) == [
        "f",
        None,
        [b"x"],
        {},
    ]
    with pytest.raises(TypeError):
        MsgpackSerializer.dumps({"x": object()})
    result = {"v": 1, "ok": True, "moves": [["8D WORD", 20]]}
    packed = Packed(p.pack(result))
    assert MsgpackSerializer.dumps(packed) == bytes(packed)  # a job's packing is stored as is
    assert MsgpackSerializer.loads(MsgpackSerializer.dumps(packed)) == result
    assert MsgpackSerializer.dumps(b"\x01") != b"\x01"  # plain bytes are packed as binary


def fake_worker(conn, registry, **limits):
    """An AnchorWorker on fakeredis's queue 'anchor', with `limits` over the defaults."""
    from anchor.worker.guard import AnchorJob
    from anchor.worker.queues import AnchorQueue
    from anchor.worker.worker import AnchorWorker

    queue = AnchorQueue(
        "anchor", connection=conn, serializer=MsgpackSerializer, job_class=AnchorJob
    )
    return AnchorWorker(
        [queue],
        connection=conn,
        serializer=MsgpackSerializer,
        registry=registry,
        limits=p.Limits(**limits),
    )


@pytest.mark.parametrize("pid", ["\u00b2", "99999999999999999999999", "-1", "", "0x10"])
def test_a_registration_anyone_wrote_is_taken_over(registry, pid):
    """A worker registration under this worker's name (Redis is open to any writer) with a
    pid no process can have, this host's name and no heartbeat: taken over, never a crash."""
    import socket

    conn = FakeRedis()
    worker = fake_worker(conn, registry)
    conn.hset(worker.key, mapping={"hostname": socket.gethostname(), "pid": pid})
    worker.register_birth()
    assert conn.hget(worker.key, "pid") == str(os.getpid()).encode()


def test_jobs_through_rq_on_fakeredis(registry):
    """Client -> RQ queue -> AnchorWorker (SimpleWorker, burst) -> result stream -> client."""
    from anchor.worker.metrics import METRICS

    conn = FakeRedis()
    client = AnalysisClient(connection=conn)
    good = [
        client.submit(p.Request(lexicon="twl06", positions=(p.Position(cgp=c),))) for c in BENCH[:6]
    ]
    bad = [client.submit(payload) for _, payload, _ in BAD_INPUTS[:6]]
    before = METRICS.value("anchor_jobs_done_total")
    fake_worker(conn, registry).work(burst=True)
    totals = [client.result(job, timeout=1)["total"] for job in good]
    assert totals == [275, 94, 296, 1714, 5408, 330]
    codes = [client.result(job, timeout=1)["error"]["code"] for job in bad]
    assert codes == [code for _, _, code in BAD_INPUTS[:6]]
    assert METRICS.value("anchor_jobs_done_total") == before + 6
    text = METRICS.render().decode()
    assert "anchor_analysis_seconds_count" in text
    assert "# HELP anchor_jobs_done_total jobs answered" in text
    assert "process_resident_memory_bytes" in text


def test_embedded_client_answers_like_the_worker(registry):
    embedded = AnalysisClient(registry=registry)
    req = p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[2], limit=10),))
    a = embedded.analyze(req)
    b = run_request(req, registry)
    assert a["moves"] == b["moves"] and len(a["moves"]) == 10
    whole = p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[2]),))
    assert embedded.analyze(whole)["total"] == run_request(whole, registry)["total"] == 296
    many = embedded.analyze_many([req, req])
    assert [m["moves"] for m in many] == [a["moves"], a["moves"]]


def test_an_unpackable_result_fails_the_job_loudly(registry, monkeypatch):
    """RQ would store the placeholder 'Unserializable return value'; the job function
    packs its result first, so the job fails and the client hears why."""
    from anchor.client.client import ServiceError
    from anchor.worker import jobs

    monkeypatch.setattr(jobs, "run", lambda *args: p.Analysis([object()]))
    conn = FakeRedis()
    client = AnalysisClient(connection=conn, retries=0)
    job = client.submit(p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),)))
    fake_worker(conn, registry).work(burst=True)
    with pytest.raises(ServiceError, match="can not serialize"):
        client.result(job, timeout=1)


@pytest.mark.parametrize("rank", ["score", "equity"])
def test_result_size_bound_is_never_below_the_packed_size(registry, rank):
    """The result-size cap is checked with a bound instead of packing every position
    twice: the bound must never undercount, whatever the options."""
    from anchor.worker.analysis import _packed_bound
    from anchor.worker.runner import run

    if rank == "equity":
        registry.leave_paths["twl06"] = str(data_path("kwg", "TWL06.klv2"))
    for i, cgp in enumerate(BENCH[:6]):
        for options in (p.Options(), p.Options(breakdown=True, exchanges=True)):
            position = p.Position(cgp=cgp, limit=None if i % 2 else 20)
            request = p.Request(lexicon="twl06", positions=(position,), options=options, rank=rank)
            result = run(request, registry)
            assert _packed_bound(result) >= len(p.pack(result.to_entry()))


def test_heartbeats_between_short_jobs_are_spaced(registry, monkeypatch):
    """RQ heartbeats before and after every dequeue and after every job; back to back, a
    worker refreshes its key at most once per HEARTBEAT_EVERY, unless asked to keep it
    alive longer than the last refresh did, or through a pipeline (no round trip)."""
    from anchor.worker import worker as worker_main

    conn = FakeRedis()
    worker = fake_worker(conn, registry)
    clock = [1000.0]
    monkeypatch.setattr(worker_main.time, "monotonic", lambda: clock[0])
    sent = []
    monkeypatch.setattr(conn, "hset", lambda *a, **k: sent.append("hset"))
    worker.heartbeat()
    assert sent == ["hset"]
    clock[0] += 0.3
    worker.heartbeat()
    worker.heartbeat()
    assert sent == ["hset"]  # spaced: the key was refreshed 0.3 s ago
    worker.heartbeat(timeout=worker.worker_ttl + 600)  # longer than the last one: sent
    assert len(sent) == 2
    clock[0] += worker_main.HEARTBEAT_EVERY
    worker.heartbeat()
    assert len(sent) == 3  # a second later: sent again


def test_a_game_server_imports_the_client_without_the_engine():
    """`anchor.client.protocol` and `anchor.client.client` load neither the engine nor its
    C extension: a game server that only sends requests carries none of it."""
    import subprocess
    import sys

    probe = (
        "import sys, anchor.client.protocol, anchor.client.client; "
        "print(sorted(m for m in sys.modules if m.startswith(('anchor.engine', 'anchor.worker'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_protocols_simulation_bounds_are_the_engines():
    from anchor.engine import simulate

    assert p.MAX_SIM_CANDIDATES == simulate.MAX_CANDIDATES
    assert p.MAX_SIM_PLIES == simulate.MAX_PLIES
    assert p.SIM_RANKS == simulate.RANKS


def test_sigterm_during_maintenance_stops_the_worker(registry, monkeypatch):
    """RQ's SIGTERM handler raises StopRequested wherever an idle worker is; maintenance
    must let it through (it swallowed it, and the worker ran on until SIGKILL)."""
    from rq.exceptions import StopRequested

    worker = fake_worker(FakeRedis(), registry)

    def interrupted(*args, **kwargs):
        raise StopRequested()

    monkeypatch.setattr(worker, "clean_registries", interrupted)
    with pytest.raises(StopRequested):
        worker.run_maintenance_tasks()
    monkeypatch.setattr(worker, "clean_registries", lambda: 1 / 0)
    worker.run_maintenance_tasks()  # any other failure is logged and waits for the next round
    monkeypatch.setattr(worker, "clean_registries", lambda: None)
    monkeypatch.setattr(worker, "register_again", interrupted)  # the check before cleaning
    with pytest.raises(StopRequested):  # it was logged as "could not check" and lost
        worker.run_maintenance_tasks()


def test_sigterm_while_registering_stops_the_worker_at_its_first_turn(registry, monkeypatch):
    """RQ registers a worker before it installs its SIGTERM handler; a SIGTERM in between
    killed the worker with its registration alive. Now the handler is in place first and
    the stop is taken at the work loop's first turn: no job taken, registration dead."""
    import signal

    conn = FakeRedis()
    worker = fake_worker(conn, registry)
    request = p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),))
    job = AnalysisClient(connection=conn).submit(request)
    births = []

    def register_then_signalled():
        type(worker).register_birth(worker)
        births.append(conn.exists(worker.key))
        os.kill(os.getpid(), signal.SIGTERM)  # handled before the next bytecode

    monkeypatch.setattr(worker, "register_birth", register_then_signalled)
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert worker.work(burst=False) is False  # returns: nothing run, not blocked waiting
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert births == [1] and worker.stopping
    assert conn.hget(worker.key, "death") is not None or not conn.exists(worker.key)
    assert conn.hget(f"rq:job:{job.id}", "status") == b"queued"  # it waits for another worker


def _dequeued(conn, registry):
    """A worker on fakeredis and a job it has taken from the queue but not yet started (its
    id in the lane's intermediate list, as RQ's dequeue leaves it)."""
    worker = fake_worker(conn, registry)
    queue = worker.queues[0]
    job_id = (
        AnalysisClient(connection=conn)
        .submit(p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[0]),)))
        .id
    )
    conn.lmove(queue.key, queue.intermediate_queue_key, "LEFT", "RIGHT")
    return worker, queue, queue.fetch_job(job_id)


def _between_read_and_write(monkeypatch, action):
    """Run `action` once, right after the next LPOS a WATCHing pipeline makes: between
    the look and the transaction, where a racing client would land."""
    from redis.client import Pipeline

    done = []
    original = Pipeline.lpos

    def lpos(self, *args, **kwargs):
        found = original(self, *args, **kwargs)
        if not done:
            done.append(True)
            action()
        return found

    monkeypatch.setattr(Pipeline, "lpos", lpos)


def test_a_claim_and_a_put_back_of_one_job_exclude_each_other(registry, monkeypatch):
    """Maintenance putting a stranded id back and a worker starting it: whichever commits
    first wins, the other finds the id gone; the job is never lost nor started twice. (The
    claim is one script: nothing lands between its look and its writes.)"""
    from anchor.worker.queues import _put_back

    conn = FakeRedis()
    worker, queue, job = _dequeued(conn, registry)
    assert _put_back(conn, queue.intermediate_queue_key, queue.key, job.id.encode())
    assert worker._claim(job, queue) is None  # put back first: not started here
    assert conn.lrange(queue.key, 0, -1) == [job.id.encode()]
    assert conn.llen(queue.intermediate_queue_key) == 0
    assert conn.hget(job.key, "status") != b"started"
    assert conn.zcard(job.started_job_registry.key) == 0

    conn = FakeRedis()
    worker, queue, job = _dequeued(conn, registry)
    _between_read_and_write(monkeypatch, lambda: worker._claim(job, queue))
    assert not _put_back(conn, queue.intermediate_queue_key, queue.key, job.id.encode())
    assert conn.llen(queue.key) == 0 and conn.llen(queue.intermediate_queue_key) == 0
    assert conn.hget(job.key, "status") == b"started"


@pytest.mark.parametrize("stray", ["x", "list"])
def test_a_stray_claim_mark_neither_stops_a_claim_nor_a_put_back(registry, stray):
    """Anyone may write to Redis: a string or a key of another type where a job's claim
    mark goes (INCR on it failed inside the claim's transaction, and the worker with it)."""
    from anchor.worker.queues import _put_back, claim_mark

    conn = FakeRedis()
    worker, queue, job = _dequeued(conn, registry)
    if stray == "list":
        conn.rpush(claim_mark(job.id), "a", "b")
    else:
        conn.set(claim_mark(job.id), b"\xff not a number")
    assert worker._claim(job, queue) is not None
    assert conn.hget(job.key, "status") == b"started"

    conn = FakeRedis()
    worker, queue, job = _dequeued(conn, registry)
    conn.rpush(claim_mark(job.id), "a")
    assert _put_back(conn, queue.intermediate_queue_key, queue.key, job.id.encode())
    assert conn.lrange(queue.key, 0, -1) == [job.id.encode()]


def test_a_claim_and_a_store_are_one_round_trip_each(registry, monkeypatch):
    """A claim was WATCH, LPOS and MULTI/EXEC, a store WATCH, HMGET, ZSCORE and
    MULTI/EXEC, and a claim retried whenever another worker's claim changed what it
    watched: now each is one script call, whatever other workers do meanwhile."""
    from anchor.worker.atomic import STORE

    conn = FakeRedis()
    worker, queue, job = _dequeued(conn, registry)
    other = AnalysisClient(connection=conn).submit(
        p.Request(lexicon="twl06", positions=(p.Position(cgp=BENCH[1]),))
    )
    conn.lmove(queue.key, queue.intermediate_queue_key, "LEFT", "RIGHT")
    assert worker._claim(queue.fetch_job(other.id), queue) is not None
    conn.script_load(STORE)  # as any earlier job would have
    sent = []
    original = type(conn).execute_command

    def execute_command(self, *args, **kwargs):
        sent.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(conn), "execute_command", execute_command)
    execution = worker._claim(job, queue)
    assert execution is not None and sent == ["EVALSHA"]
    assert conn.hget(job.key, "status") == b"started"
    sent.clear()
    job.ended_at = job.started_at = datetime.now(timezone.utc)
    worker.handle_job_success(job, queue, job.started_job_registry, execution)
    assert sent == ["EVALSHA"]
    assert conn.hget(job.key, "status") == b"finished"
    assert conn.zcard(job.started_job_registry.key) == 1  # the other job's, still running


def test_protocol_md_holds_every_declared_table():
    """Each request kind and each result has its table in PROTOCOL.md, equal to what its
    declaration makes; a field added to a declaration and not documented fails here."""
    from anchor.client.protocol import doc as protocol_doc

    from .conftest import ROOT

    text = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    declared = set(protocol_doc.REQUESTS) | set(protocol_doc.RESULTS) | set(protocol_doc.OTHERS)
    assert protocol_doc.marked(text) == declared
    assert protocol_doc.render(text) == text, "run python -m anchor.client.protocol.doc"
    assert "| `table_mb` | a number | 1..65,536 | nil |" in text  # a row as a reader sees it
    assert set(p.KINDS) <= set(protocol_doc.REQUESTS) | {"batch"}


def test_every_kind_round_trips_and_refuses_what_its_declaration_refuses():
    """Decoding follows the declaration: each field's default, type and range, for every
    kind (the declared bounds are the only ones, so a field the table shows as 1..50 takes
    50 and refuses 51)."""
    required = {"cgp": "15/15 A/B 0/0 0", "gcg": "#player1 a A\n#player2 b B\n"}
    for kind, cls in p.KINDS.items():
        if kind == "batch":
            continue
        base = {
            "v": 1,
            "kind": kind,
            **{k: required[k] for k in ("cgp", "gcg") if k in cls.field_names()},
        }
        if kind == "analyze":
            base["cgp"] = required["cgp"]
        base.update(
            {
                "annotate": {"leaves": "x"},
                "endgame": {"parts": 1024},
                "preendgame": {"parts": 64, "stages": [[2, 8]]},  # a split runs one stage
            }.get(kind, {})
        )
        decoded = p.parse_request(base)
        assert p.parse_request(decoded.encode()) == decoded, kind
        for name, spec, _ in cls.wire_fields():
            if spec.low is None or str in spec.types or list in spec.types:
                continue
            edges = [(spec.low, True), (spec.low - 1, False)]
            if spec.high is not None:
                edges += [(spec.high, True), (spec.high + 1, False)]
            for value, ok in edges:
                value = value if float in spec.types else int(value)
                fields = {**base, name: value}
                try:
                    p.parse_request(fields)
                    assert ok, (kind, name, value)
                except p.ProtocolError as exc:
                    assert not ok and exc.code == p.BAD_VALUE, (kind, name, value, exc.message)
