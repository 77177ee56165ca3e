"""Monte Carlo simulation: iterations that split and merge exactly, playouts checked
against the generator by hand, the protocol's bounds, and the fleet giving the same
answer as one process."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.simulation import SimulationJob, simulate
from anchor.engine import Board, Ruleset, Solver, parse_cgp
from anchor.engine.errors import InputError
from anchor.engine.leaves import Leaves
from anchor.engine.notation import parse_rack
from anchor.engine.simulate import (
    RANKS,
    Simulation,
    _turn,
    candidates,
    iterate,
    prune,
    summarize,
    unseen_tiles,
    win_chances,
)
from anchor.worker import pooled
from anchor.worker.runner import LexiconRegistry

from .conftest import data_path
from .service import TWL06

ENGLISH = Ruleset.load("english")
# Doug vs Emely before Doug's fifth turn, with a rack that has several good plays
CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADEIOST/ 148/55 0"
KLV2 = data_path("kwg", "TWL06.klv2")


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


@pytest.fixture(scope="module")
def leaves() -> Leaves:
    return Leaves.open(KLV2, ENGLISH)


@pytest.fixture(scope="module")
def position():
    return parse_cgp(ENGLISH, CGP)


def test_iterations_split_and_merge_exactly(solver, leaves, position):
    chosen = candidates(solver, position.board, "ADEIOST", leaves, 4)
    whole = iterate(solver, position.board, "ADEIOST", leaves, chosen, 2, 9, range(0, 12))
    parts = [
        iterate(solver, position.board, "ADEIOST", leaves, chosen, 2, 9, r)
        for r in (range(0, 5), range(5, 6), range(6, 12))
    ]
    for c in range(len(chosen)):
        assert whole[c] == parts[0][c] + parts[1][c] + parts[2][c]
    again = iterate(solver, position.board, "ADEIOST", leaves, chosen, 2, 9, range(0, 12))
    assert again == whole  # deterministic for a seed
    other = iterate(solver, position.board, "ADEIOST", leaves, chosen, 2, 10, range(0, 12))
    assert other != whole  # and the seed matters


def test_a_one_ply_playout_is_the_candidate_minus_the_best_reply(solver, leaves, position):
    """The oracle: draw the opponent's rack as the simulation does, find their best reply
    by equity with the generator directly, and add up the value by hand."""
    rack = "ADEIOST"
    chosen = candidates(solver, position.board, rack, leaves, 3)
    unseen = unseen_tiles(ENGLISH, position.board, rack)
    assert len(unseen) == 100 - position.board.tile_count() - 7
    values = iterate(solver, position.board, rack, leaves, chosen, 1, 5, range(3, 6))
    for j, i in enumerate(range(3, 6)):
        order = list(unseen)
        random.Random(f"5:{i}").shuffle(order)
        theirs = order[:7]
        for c, candidate in enumerate(chosen):
            move = candidate.move
            board = position.board.apply(move.placed)
            kept = Counter(rack)
            for _r, _c, ch in move.placed:
                kept["?" if ch.islower() else ch] -= 1
            kept += Counter()
            text = "".join(sorted(theirs, key=lambda ch: (ch == "?", ch)))
            reply = solver.generate_moves(
                board, text, limit=1, rank="equity", leaves=leaves, include_exchanges=True
            )[0]
            their_kept = Counter(theirs)
            for _r, _c, ch in reply.placed:
                their_kept["?" if ch.islower() else ch] -= 1
            for ch in reply.exchanged:
                their_kept[ch] -= 1
            their_kept += Counter()

            def value(k: Counter) -> float:
                tiles = [0 if ch == "?" else ENGLISH.letter_index[ch] for ch in k.elements()]
                return leaves.value(tiles) if tiles and len(tiles) < 7 else 0.0

            expected = move.score - reply.score + value(kept) - value(their_kept)
            assert values[c][j] == pytest.approx(expected), (candidate.notation, i)


def test_pruning_keeps_the_leader_and_drops_the_clearly_worse():
    values = [[10.0, 11.0, 9.0, 10.0] * 10, [0.0, 1.0, -1.0, 0.0] * 10, [9.5, 10.5, 9.0, 11.0] * 10]
    alive = prune(values, [True, True, True], 0.99)
    assert alive == [True, False, True]
    stats = summarize(
        [type("C", (), {"notation": n, "score": 0, "equity": 0.0})() for n in "abc"],
        values,
        lead=-10,
        pruned=[not a for a in alive],
    )
    assert [s.notation for s in stats] == ["a", "c", "b"] and stats[-1].pruned
    assert stats[0].mean == pytest.approx(10.0)
    assert stats[0].win_rate == pytest.approx(0.5)  # a tie counts half


def test_ranking_by_chance_of_winning():
    """rank="win" orders by win rate, then mean: behind by 10, a play that ties every
    time (mean 10, win rate 0.5) ranks below one that wins three times in four and loses
    big once (mean -16, win rate 0.75); by spread the other way round."""
    chosen = [type("C", (), {"notation": n, "score": 0, "equity": 0.0})() for n in "ab"]
    values = [[10.0] * 4, [12.0, 12.0, 12.0, -100.0]]
    by_spread = summarize(chosen, values, lead=-10)
    by_win = summarize(chosen, values, lead=-10, rank="win")
    assert [s.notation for s in by_spread] == ["a", "b"]
    assert [s.notation for s in by_win] == ["b", "a"]
    assert by_win[0].win_rate == pytest.approx(0.75) and by_win[1].win_rate == pytest.approx(0.5)
    dropped = summarize(chosen, values, lead=-10, pruned=[False, True], rank="win")
    assert [s.notation for s in dropped] == ["a", "b"]  # a dropped play stays last
    with pytest.raises(InputError, match="rank must be one of spread, win"):
        summarize(chosen, values, rank="wins")
    with pytest.raises(InputError, match="rank must be one of spread, win, not 'best'"):
        Simulation(rank="best")


def test_a_simulation_ranking_by_win_prunes_by_win():
    """The rounds drop what falls behind on the statistic ranked by: behind by 10, a
    play that always ties loses to one that wins three times in four when ranking by
    chance of winning, and the other way round by spread."""
    pattern = {0: [10.0], 1: [12.0, 12.0, 12.0, -100.0]}

    def play_round(iterations, live):
        return [[pattern[c][i % len(pattern[c])] for i in iterations] for c in live or (0, 1)]

    def chances(c, v):
        return win_chances(v, None, -10, None, 2)

    for rank, survivor in (("spread", 0), ("win", 1)):
        settings = Simulation(iterations=400, round_size=40, confidence=0.99, rank=rank)
        values, alive = settings.rounds(play_round, chances)
        assert [i for i, ok in enumerate(alive) if ok] == [survivor]
        assert len(values[0]) == len(values[1]) == 40  # decided after the first round


@pytest.mark.parametrize("rank", RANKS)
def test_the_client_split_equals_the_engine_run(solver, leaves, position, magpie_twl06, rank):
    """Uneven jobs (7 iterations each, rounds of 30) merge into the engine's answer."""
    settings = Simulation(candidates=5, plies=2, iterations=90, seed=3, round_size=30,
                          confidence=0.9, rank=rank)  # fmt: skip
    local = settings.run(solver, position.board, "ADEIOST", leaves, lead=148 - 55)
    registry = LexiconRegistry({"twl06": str(TWL06)}, search=True)
    client = AnalysisClient(registry=registry)
    job = SimulationJob(CGP, lexicon="twl06", leaves=str(KLV2))
    merged = simulate(client, job, settings, per_job=7)
    assert merged == local
    assert any(s.pruned for s in local) and sum(not s.pruned for s in local) >= 1


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"plies": 7}, "'plies' must be 1..6"),
        ({"iterations": 0}, "'iterations' must be 1..10000"),
        ({"candidates": 51}, "'candidates' must be 1..50"),
        ({"only": [3], "candidates": 3}, "'only' must list candidate numbers 0..2"),
        ({"cgp": None}, "needs 'cgp'"),
        ({"surprise": 1}, "unknown"),
    ],
)
def test_simulate_requests_are_bounded(fields, message):
    request = {"v": 1, "kind": "simulate", "cgp": CGP, **fields}
    if fields.get("cgp", "") is None:
        del request["cgp"]
    with pytest.raises(p.ProtocolError, match=message):
        p.decode_request(p.pack(request))
    ok = p.decode_request(p.encode_request(p.SimulateRequest(CGP, only=(0, 2), seed=7)))
    assert ok == p.SimulateRequest(CGP, only=(0, 2), seed=7)


def recording(client: AnalysisClient) -> list[list]:
    """The requests each analyze_many call of `client` sends, from now on."""
    sent: list[list] = []
    analyze_many = client.analyze_many

    def counted(requests, **kwargs):
        sent.append(list(requests))
        return analyze_many(requests, **kwargs)

    client.analyze_many = counted
    return sent


def test_the_fleet_gives_the_same_answer(server, queue, workers, solver, leaves, position):
    workers(None, "--leaves", f"twl06={KLV2}")
    workers(None, "--leaves", f"twl06={KLV2}")
    settings = Simulation(candidates=4, plies=2, iterations=40, seed=11, round_size=20)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    client = AnalysisClient(server.url, queue=queue)
    fleet = simulate(client, job, settings, per_job=5)
    assert fleet == settings.run(solver, position.board, "ADEIOST", leaves, lead=93)
    # by default the whole simulation goes out as one pool of a job per worker serving
    # the queue, each round cut into a piece per job; every piece is played once
    assert client.capacity() == 2
    sent = recording(client)
    assert simulate(client, job, settings) == fleet
    assert len(sent) == 1 and len(sent[0]) == 2 and sent[0][0] == sent[0][1]
    request = sent[0][0]
    assert request.pool and request.pieces == 2 and request.iterations == 40
    entries = server.client().xrange(p.pool_key(request))
    assert sorted((int(e[b"r"]), int(e[b"i"])) for _, e in entries) == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
    ]


@pytest.mark.service  # redis-server and a worker (not in `make test-fast`)
def test_one_worker_takes_every_piece_of_a_pool_of_two(server, queue, workers, solver, leaves,
                                                       position):  # fmt: skip
    """The untaken share: with one worker and two jobs, the first job claims every piece
    (nothing waits for a job still queued) and the second reads the finished rounds."""
    worker = workers(None, "--leaves", f"twl06={KLV2}")
    settings = Simulation(candidates=4, plies=2, iterations=40, seed=12, round_size=20)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    client = AnalysisClient(server.url, queue=queue)
    client.capacity = lambda: 2
    sent = recording(client)
    assert simulate(client, job, settings) == settings.run(
        solver, position.board, "ADEIOST", leaves, lead=93
    )
    assert pooled.LATE_PIECE not in worker.log.read_text()  # no round waited out its patience
    assert len(sent) == 1 and len(sent[0]) == 2
    entries = server.client().xrange(p.pool_key(sent[0][0]))
    assert len(entries) == 4


def test_a_simulating_player_keeps_every_invariant(solver, leaves):
    """A whole game with the simulating player in one seat, every rule checked every turn
    (tiles conserved, plays legal and scored right), and the game is deterministic."""
    from anchor.engine.selfplay import EquityPlayer, play_game
    from anchor.engine.simulate import SimPlayer

    def game():
        sim = SimPlayer(leaves, Simulation(candidates=3, plies=1, iterations=6, round_size=3))
        return play_game(solver, 4, policies=[sim, EquityPlayer(leaves)], check=True)

    first, second = game(), game()
    assert first.end in ("out", "scoreless") and len(first.turns) > 10
    assert first.to_gcg() == second.to_gcg()


def test_a_policy_that_asks_is_told_its_lead(solver, leaves):
    """play_game passes `lead` (own score minus the best other) to a policy with
    `wants_lead`, and not to one without; the simulating player ranking by chance of
    winning still plays legal, deterministic games."""
    from anchor.engine.selfplay import EquityPlayer, Greedy, play_game
    from anchor.engine.simulate import SimPlayer

    seen = []

    class Told(Greedy):
        wants_lead = True

        def __call__(self, solver, board, rack, bag_size, lead):
            seen.append(lead)
            return super().__call__(solver, board, rack, bag_size)

    game = play_game(solver, 3, players=3, policies=[Told(), Greedy(), Greedy()], check=True)
    scores = [0, 0, 0]
    expected = []
    for turn in game.turns:
        if turn.player == 0:
            expected.append(scores[0] - max(scores[1:]))
        scores[turn.player] = turn.total
    assert seen == expected and any(x < 0 for x in seen) and any(x > 0 for x in seen)

    def sim_game():
        settings = Simulation(candidates=3, plies=1, iterations=6, round_size=3, rank="win")
        sim = SimPlayer(leaves, settings)
        return play_game(solver, 4, policies=[EquityPlayer(leaves), sim], check=True)

    assert sim_game().to_gcg() == sim_game().to_gcg()


def test_annotation_ranks_each_play_by_simulation(solver, leaves):
    """The play made is always among the simulated candidates, its sim_rank is its place
    in the simulated list, and the whole annotation is deterministic for a seed."""
    from pathlib import Path

    from anchor.engine.annotate import annotate_game
    from anchor.engine.gcg import read_gcg

    path = next(Path(data_path("gcg")).rglob("doug_v_emely.gcg"))
    sim = Simulation(candidates=3, plies=1, iterations=6, round_size=3)
    first = annotate_game(read_gcg(path), solver, top=3, leaves=leaves, sim=sim)
    again = annotate_game(read_gcg(path), solver, top=3, leaves=leaves, sim=sim)
    assert first == again
    simulated = [t for t in first["turns"] if "sim" in t]
    assert len(simulated) >= 20
    for turn in simulated:
        names = [row[0] for row in turn["sim"]]
        assert turn["played"] in names and names.index(turn["played"]) + 1 == turn["sim_rank"]
        assert 3 <= len(names) <= 4  # the top 3, and the play made when not among them
        assert all(row[3] >= 3 for row in turn["sim"])  # every one simulated a round at least
        assert all(0 <= row[5] <= 1 for row in turn["sim"])  # the chance of winning
    # the win rates start from the mover's recorded lead before each move
    totals: dict[int, int] = {}
    checked = 0
    for turn in first["turns"]:
        others = [t for seat, t in totals.items() if seat != turn["player"]]
        lead = turn["recorded_total"] - turn["recorded_score"] - max(others, default=0)
        totals[turn["player"]] = turn["recorded_total"]
        if "sim" in turn and abs(lead) >= 60:
            made = next(row for row in turn["sim"] if row[0] == turn["played"])
            assert (made[5] > 0.6) if lead > 0 else (made[5] < 0.4), (lead, made)
            checked += 1
    assert checked >= 3


def test_annotate_with_simulation_through_the_protocol():
    gcg = next(data_path("gcg").rglob("doug_v_emely.gcg")).read_text()
    with pytest.raises(p.ProtocolError, match="'sim_iterations' needs 'leaves'"):
        p.decode_request(p.encode_request(p.AnnotateRequest(gcg, sim_iterations=5)))
    with pytest.raises(p.ProtocolError, match="'sim_iterations' must be 0..2000"):
        p.decode_request(p.encode_request(p.AnnotateRequest(gcg, leaves="x", sim_iterations=2001)))
    sim = {"sim_iterations": 4, "sim_candidates": 2, "sim_plies": 1, "seed": 3}
    request = p.AnnotateRequest(gcg, lexicon="twl06", top=2, leaves=str(KLV2), **sim)
    assert p.decode_request(p.encode_request(request)) == request
    registry = LexiconRegistry({"twl06": str(TWL06)}, search=True)
    result = AnalysisClient(registry=registry).analyze(request)
    assert result["ok"], result
    turns = [t for t in p.answer(result, p.AnnotateResult).annotation["turns"] if "sim" in t]
    assert turns and all(t["sim"][t["sim_rank"] - 1][0] == t["played"] for t in turns)
    by_win = replace(request, sim_rank_by="win", sim_iterations=8, sim_candidates=4)
    assert p.decode_request(p.encode_request(by_win)) == by_win
    result = AnalysisClient(registry=registry).analyze(by_win)
    turns = [t for t in p.answer(result, p.AnnotateResult).annotation["turns"] if "sim" in t]
    for t in turns:  # notation, mean, stdev, iterations, dropped, win rate (rounded)
        rows = t["sim"]
        assert [row[4] for row in rows] == sorted(row[4] for row in rows)
        kept = [row[5] for row in rows if not row[4]]
        assert all(a >= b - 0.0005 for a, b in zip(kept, kept[1:], strict=False))
        assert rows[t["sim_rank"] - 1][0] == t["played"]
    assert any(t["sim"][0][5] > t["sim"][1][5] for t in turns if not t["sim"][1][4])
    for wrong in (p.AnnotateRequest(gcg, leaves="x", sim_iterations=2, sim_rank_by="most"),
                  p.SelfPlayRequest(policies=("sim",), sim_rank_by="most")):  # fmt: skip
        with pytest.raises(p.ProtocolError, match="'sim_rank_by' must be one of spread, win"):
            p.decode_request(p.encode_request(wrong))
    with pytest.raises(p.ProtocolError, match="'sim_rank_by' must be a string"):
        p.decode_request(p.pack({"v": 1, "kind": "selfplay", "sim_rank_by": 3}))
    with pytest.raises(p.ProtocolError) as long:  # a stranger's long value is not echoed whole
        p.decode_request(
            p.pack({"v": 1, "kind": "annotate", "gcg": gcg, "sim_rank_by": "w" * 5000})
        )
    assert len(long.value.message) < 120
    play = p.SelfPlayRequest(policies=("sim", "equity"), leaves="twl06", sim_rank_by="win")
    assert p.decode_request(p.encode_request(play)) == play


def test_simulation_prefers_another_play_than_static_equity(solver, leaves):
    """A position from the shared records (cel_only.gcg) where the static best, 12C AZUKI
    (41 points, equity 43.5), is not the best: 12B HAIKU (34, equity 41.7) keeps E and Z
    for the next turn. A long run (2,000 iterations of 8 candidates, 2 plies, another
    seed) gave HAIKU 49.8 ± 0.7 against AZUKI 40.1 ± 0.7; a short one must agree."""
    cgp = (
        "15/15/2ADMITS7/2DEADEN7/2SERENE7/2OPIATE7/2RENTER7/F1BREEDS7/OUS12/X14/YEH12/"
        "15/15/15/15 AEHIKUZ/ 0/0 0"
    )
    pos = parse_cgp(ENGLISH, cgp)
    stats = Simulation(candidates=8, plies=2, iterations=200, round_size=50).run(
        solver, pos.board, pos.racks[0], leaves
    )
    static = max(stats, key=lambda s: s.equity)
    assert static.notation == "12C AZUKI"
    assert stats[0].notation == "12B HAIKU" and not stats[0].pruned
    assert static.mean < stats[0].mean - 5


def test_self_play_with_a_simulating_seat(capsys):
    """`anchor selfplay --policy sim --policy equity`: the protocol carries the sim
    settings, games are deterministic, and the command reports each policy's win rate."""
    request = p.SelfPlayRequest(
        lexicon="twl06", seed=5, games=2, policies=("sim", "equity"), leaves="twl06",
        alternate=True, sim_iterations=6, sim_candidates=3, sim_plies=1,
    )  # fmt: skip
    assert p.decode_request(p.encode_request(request)) == request
    with pytest.raises(p.ProtocolError, match="'sim_iterations' must be 1..2000"):
        p.decode_request(p.encode_request(p.SelfPlayRequest(policies=("sim",), sim_iterations=0)))
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    client = AnalysisClient(registry=registry)
    first, again = client.analyze(request), client.analyze(request)
    assert first["ok"]
    first, again = p.answer(first, p.SelfPlayResult), p.answer(again, p.SelfPlayResult)
    same = [(g.gcg, g.scores) for g in first.games]
    assert same == [(g.gcg, g.scores) for g in again.games]  # times aside
    assert [g.policies for g in first.games] == [["equity", "sim"], ["sim", "equity"]]
    from anchor.client.cli import main

    argv = ["selfplay", "--lexicon", str(TWL06), "--leaves", str(KLV2), "--games", "2",
            "--policy", "sim", "--policy", "equity", "--alternate", "--sim-iterations", "4",
            "--sim-candidates", "2", "--sim-plies", "1", "--no-check"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "sim player won" in out and "equity player won" in out


@pytest.mark.parametrize("kind", ["simulate", "annotate", "selfplay"])
def test_simulation_work_stops_at_the_servers_time_cap(kind):
    """The most a request may ask (10,000 iterations of 50 candidates, 6 plies; 2,000 a
    turn when annotating or playing) would take hours: the job's time cap ends it, as
    `timeout`, within moments of the cap (checked before every iteration)."""
    import time

    gcg = next(data_path("gcg").rglob("doug_v_emely.gcg")).read_text()
    heavy = {
        "simulate": p.SimulateRequest(CGP, lexicon="twl06", leaves="twl06", candidates=50,
                                      plies=6, iterations=10_000),
        "annotate": p.AnnotateRequest(gcg, lexicon="twl06", leaves="twl06",
                                      sim_iterations=2000, sim_candidates=50, sim_plies=6),
        "selfplay": p.SelfPlayRequest(lexicon="twl06", leaves="twl06", policies=("sim",),
                                      sim_iterations=2000, sim_candidates=50, sim_plies=6),
    }[kind]  # fmt: skip
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    started = time.monotonic()
    with pytest.raises(p.ProtocolError) as caught:
        from anchor.worker.runner import run_request

        run_request(p.decode_request(p.encode_request(heavy)), registry, p.Limits(job_seconds=1))
    assert caught.value.code == p.TIMEOUT
    assert time.monotonic() - started < 8


FIELD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.sampled_from([CGP, "15/15", "", "x" * 5000, "AEINRST", "twl06", "english", "?", 2**63]),
    st.lists(st.integers(-2, 60), max_size=4),
    st.text(max_size=12),
)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(["simulate", "annotate", "selfplay"]),
    st.dictionaries(
        st.sampled_from(
            sorted(p.wire_keys("simulate") | p.wire_keys("annotate") | p.wire_keys("selfplay"))
            + ["x"]
        ),
        FIELD_VALUES,
        max_size=7,
    ),
)
def test_fuzz_simulation_requests(kind, fields):
    """Any map a stranger enqueues as a simulation, annotation or self-play request is
    answered or refused with a protocol error; never an exception, never past the cap."""
    import time

    from anchor.worker.runner import run_request

    base = {"simulate": {"cgp": CGP}, "annotate": {}, "selfplay": {"games": 1}}[kind]
    payload = p.pack({"v": 1, "kind": kind, "lexicon": "twl06", "leaves": "twl06",
                      **base, **fields})  # fmt: skip
    started = time.monotonic()
    try:
        result = run_request(p.decode_request(payload), FUZZ_REGISTRY, p.Limits(job_seconds=0.5))
    except p.ProtocolError as exc:
        assert exc.code in p.ERROR_CODES
    else:
        assert result["ok"] is True
        p.pack(result)
    assert time.monotonic() - started < 5


FUZZ_REGISTRY = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})


class WithoutGraph:
    """Leave values with no KLV2 graph behind them (like a training model): the
    simulation then plays out in Python, engine.simulate._playout, the reference."""

    def __init__(self, leaves: Leaves):
        self._leaves = leaves

    def table(self, tiles):
        return self._leaves.table(tiles)

    def value(self, tiles):
        return self._leaves.value(tiles)


def opening_positions(solver: Solver, seed: int, turns: int):
    """(board, rack) before each of the first `turns` moves of a game where both sides
    take the top-scoring play, drawn from a seeded bag."""
    rules = solver.rules
    rng = random.Random(seed)
    bag = [ch for ch, n in rules.counts.items() for _ in range(n)] + ["?"] * rules.blanks
    rng.shuffle(bag)
    racks = [[bag.pop() for _ in range(rules.rack_size)] for _ in range(2)]
    board = Board.empty(rules)
    out = []
    for turn in range(turns):
        rack = racks[turn % 2]
        out.append((board, "".join(rack)))
        moves = solver.generate_moves(board, "".join(rack), limit=1)
        if not len(moves):
            break
        board = board.apply(moves[0].placed)
        for _r, _c, ch in moves[0].placed:
            rack.remove("?" if ch.islower() else ch)
        while len(rack) < rules.rack_size and bag:
            rack.append(bag.pop())
    return out


@pytest.fixture(scope="module")
def cyrillic():
    """Solvers and made-up leave values (every leave of 1 or 2 tiles) for Russian and
    Эрудит, whose real leave files nobody has trained yet."""
    from .test_russian import lexicon_for

    out = {}
    for name in ("russian", "erudit"):
        rules = Ruleset.load(name)
        rng = random.Random(name)
        tiles = range(rules.size + 1)
        values = {(a,): rng.uniform(-8, 8) for a in tiles}
        values.update({(a, b): rng.uniform(-10, 10) for a in tiles for b in tiles if a <= b})
        out[name] = (Solver(lexicon_for(name), rules), Leaves(Leaves.to_bytes(values), rules))
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3), st.sampled_from(["english", "russian", "erudit"]))
def test_playouts_in_c_equal_the_python_reference(solver, leaves, cyrillic, seed, plies, name):
    """The C playouts (playout.h) give exactly the values of the Python reference on the
    same draws: plays, exchanges and passes, blanks, going out, every ruleset."""
    game_solver, game_leaves = (solver, leaves) if name == "english" else cyrillic[name]
    positions = opening_positions(game_solver, seed, 6)
    board, rack = positions[seed % len(positions)]
    chosen = candidates(game_solver, board, rack, game_leaves, 6)
    args = (board, rack)
    fast_left: list[list[int]] = []
    slow_left: list[list[int]] = []
    fast = iterate(game_solver, *args, game_leaves, chosen, plies, seed, range(3), None, fast_left)
    slow = iterate(game_solver, *args, WithoutGraph(game_leaves), chosen, plies, seed, range(3),
                   None, slow_left)  # fmt: skip
    assert fast == slow
    assert fast_left == slow_left  # the tiles unplayed where each playout stopped, too
    on_board = board.tile_count()
    total = game_solver.rules.total_tiles
    for c, candidate in enumerate(chosen):  # at most every tile not yet down, less the play's
        assert all(0 <= n <= total - on_board - len(candidate.move.placed) for n in fast_left[c])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["english", "russian", "erudit"]))
def test_boards_laid_tile_by_tile_equal_boards_prepared_whole(solver, leaves, cyrillic, seed, name):
    """A playout keeps its board's cross-sets and anchors by working out again only what
    each move's tiles touch; with check=True the C core compares them after every move
    with the board prepared whole, and raises when they differ. Eight plies from
    positions of a game's first turns, the empty board among them, every ruleset."""
    game_solver, game_leaves = (solver, leaves) if name == "english" else cyrillic[name]
    rules = game_solver.rules
    positions = opening_positions(game_solver, seed, 8)
    board, rack = positions[seed % len(positions)]
    chosen = candidates(game_solver, board, rack, game_leaves, 6)
    counts = bytearray(rules.size + 1)
    for tile in parse_rack(rules, rack):
        counts[tile] += 1
    order = [0 if ch == "?" else rules.letter_index[ch] for ch in unseen_tiles(rules, board, rack)]
    random.Random(seed).shuffle(order)
    nodes, below, values = game_leaves.graph()
    game_solver._generator.playouts(
        cells=board.cells, rack=bytes(counts), candidates=[_turn(rules, c.move) for c in chosen],
        order=bytes(order), plies=8, graph=nodes, counts=below, values=values, check=True,
    )  # fmt: skip


@pytest.mark.parametrize("line", range(7))
def test_replies_searched_only_on_the_lines_a_candidate_changed_are_exact(solver, leaves, line):
    """The opponent's first reply is searched on a candidate's board only where the
    candidate changed it, its best play elsewhere taken from one search of the position
    (playout.c's reply_search): every value equals the Python reference, which searches
    every board whole, on the bench positions (blanks, exchanges, every candidate)."""
    cgp = data_path("bench", "positions.cgp").read_text().split("\n")
    cgp = [ln for ln in cgp if ln.strip() and not ln.startswith("#")][line]
    pos = parse_cgp(ENGLISH, cgp)
    rack = pos.racks[0]
    chosen = candidates(solver, pos.board, rack, leaves, 15)
    left_fast: list[list[int]] = []
    left_slow: list[list[int]] = []
    fast = iterate(solver, pos.board, rack, leaves, chosen, 2, 3, range(4), None, left_fast)
    slow = iterate(solver, pos.board, rack, WithoutGraph(leaves), chosen, 2, 3, range(4), None,
                   left_slow)  # fmt: skip
    assert fast == slow and left_fast == left_slow


def test_playouts_near_the_end_of_the_game(solver, leaves):
    """Seven tiles unseen (all on the opponent's rack) and two on ours: a play using both
    goes out at once and is worth its score plus twice the opponent's tiles; every value
    matches the reference, over several plies."""
    cgp = (
        "15/15/2ADMITS7/2DEADEN7/2SERENE7/2OPIATE7/2RENTER7/F1BREEDS7/OUS12/X14/YEH12/"
        "15/15/15/15 EH/ 0/0 0"
    )
    pos = parse_cgp(ENGLISH, cgp)
    unseen = unseen_tiles(ENGLISH, pos.board, "EH")
    cells = bytearray(pos.board.cells)  # the rest of the bag, parked in columns J..O
    parking = [r * 15 + c for c in range(9, 15) for r in range(15)]
    spare = [ch for ch in unseen if ch != "?"][: len(unseen) - 7]
    for square, ch in zip(parking, spare, strict=False):
        cells[square] = ENGLISH.letter_index[ch]
    board = Board(ENGLISH, bytes(cells))
    theirs = unseen_tiles(ENGLISH, board, "EH")
    assert len(theirs) == 7
    chosen = candidates(solver, board, "EH", leaves, 8)
    left: list[list[int]] = []
    fast = iterate(solver, board, "EH", leaves, chosen, 4, 3, range(4), None, left)
    slow = iterate(solver, board, "EH", WithoutGraph(leaves), chosen, 4, 3, range(4))
    assert fast == slow
    doubled = 2 * sum(ENGLISH.values.get(ch, 0) for ch in theirs)
    out = [c for c, cand in enumerate(chosen) if len(cand.move.placed) == 2]
    assert out, [c.notation for c in chosen]
    for c in out:
        assert fast[c] == [chosen[c].score + doubled] * 4
        assert left[c] == [0] * 4  # the game is over: nothing left to play


def test_the_playout_core_refuses_what_it_cannot_play(solver, leaves, position):
    """playouts() trusts nothing from Python: every bad candidate, tile or size is a
    ValueError naming it, never a crash or a wrong answer."""
    gen = solver._generator
    nodes, below, values = leaves.graph()
    counts = bytearray(ENGLISH.size + 1)
    for ch in "ADEIOST":
        counts[ENGLISH.letter_index[ch]] += 1
    none = bytes(ENGLISH.size + 1)
    order = bytes(range(1, 27)) * 3
    base = {"cells": position.board.cells, "rack": bytes(counts), "order": order, "plies": 2,
            "graph": nodes, "counts": below, "values": values}  # fmt: skip
    good = (0, 10, bytes([14, 14, ENGLISH.letter_index["A"]]), none)
    values, unplayed = gen.playouts(candidates=[good], **base)
    assert len(values) == len(unplayed) == 1 and unplayed[0] > 0
    taken = next(i for i, c in enumerate(position.board.cells) if c)
    bad_candidates = {
        "kind must be": (5, 0, b"", none),
        "places 1..rack size": (0, 3, b"", none),
        "off the board": (0, 3, bytes([15, 0, 1]), none),
        "not a tile": (0, 3, bytes([0, 0, 27]), none),
        "taken square": (0, 3, bytes([taken // 15, taken % 15, 1]), none),
        "does not hold": (0, 3, bytes([0, 0, ENGLISH.letter_index["Z"]]), none),
        "puts some": (1, 0, b"", none),
        "counts": (1, 0, b"", b"\x01"),
    }
    for message, candidate in bad_candidates.items():
        with pytest.raises(ValueError, match=message):
            gen.playouts(candidates=[candidate], **base)
    for change, message in [
        ({"order": bytes([30])}, "not a tile"),
        ({"plies": 65}, "plies 0..64"),
        ({"order": bytes(5000)}, "at most 4096"),
        ({"counts": below[:-1]}, "do not fit"),
        ({"cells": b"\x00" * 10}, "board cells"),
        ({"rack": bytes([9]) + bytes(ENGLISH.size)}, "rack holds 9"),
    ]:
        with pytest.raises(ValueError, match=message):
            gen.playouts(candidates=[good], **{**base, **change})


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-1, 3), st.integers(-5, 200), st.binary(max_size=24),
                  st.binary(min_size=27, max_size=27)),
        max_size=4,
    ),
    st.binary(max_size=120),
    st.integers(0, 4),
)  # fmt: skip
def test_fuzz_the_playout_core(solver, leaves, position, turns, order, plies):
    """Arbitrary candidates and tile orders: a value per candidate or a ValueError."""
    nodes, below, values = leaves.graph()
    counts = bytearray(ENGLISH.size + 1)
    for ch in "ADEIOST":
        counts[ENGLISH.letter_index[ch]] += 1
    try:
        out = solver._generator.playouts(
            position.board.cells, bytes(counts), turns, order, plies, nodes, below, values
        )
    except ValueError:
        return
    values, unplayed = out
    assert len(values) == len(unplayed) == len(turns)
    assert all(isinstance(v, float) for v in values) and all(n >= 0 for n in unplayed)


def test_playouts_stop_at_their_budget(solver, leaves):
    """A budget too small for one playout ends the first iteration inside the C core (it
    looks at the clock between plies, and inside long searches): a WorkLimitError, or the
    caller's own error when its budget function raises once the time is up."""
    from anchor.engine.errors import WorkLimitError

    board = Board.empty(ENGLISH)
    chosen = candidates(solver, board, "AEINS??", leaves, 10)
    asked = []

    def budget():  # never says the time is up itself
        asked.append(1)
        return 1e-6

    with pytest.raises(WorkLimitError, match="time budget"):
        iterate(solver, board, "AEINS??", leaves, chosen, 6, 1, range(100), budget)
    assert len(asked) == 2  # before the first iteration, then once more on the timeout

    def strict():
        if asked:
            raise TimeoutError("the caller's own")
        asked.append(1)
        return 1e-6

    asked.clear()
    with pytest.raises(TimeoutError, match="caller's own"):
        iterate(solver, board, "AEINS??", leaves, chosen, 6, 1, range(100), strict)


def test_threads_in_process_give_the_same_answer(solver, leaves, position, capsys):
    """Embedded analyze_many on several threads (the C core releases the GIL) returns the
    results of one thread, in request order; so does `anchor analyze --sim --threads`."""
    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    settings = Simulation(candidates=5, plies=2, iterations=60, seed=4, round_size=30)
    one = simulate(AnalysisClient(registry=registry), job, settings, per_job=7)
    three = simulate(AnalysisClient(registry=registry, threads=3), job, settings, per_job=7)
    assert one == three == settings.run(solver, position.board, "ADEIOST", leaves, lead=93)
    with pytest.raises(ValueError, match="threads must be"):
        AnalysisClient(registry=registry, threads=0)
    from anchor.client.cli import main

    argv = ["analyze", "--lexicon", str(TWL06), "--leaves", str(KLV2), "--cgp", CGP, "--sim",
            "--sim-candidates", "4", "--sim-iterations", "40", "--sim-plies", "1"]  # fmt: skip
    tables = []
    for threads in ("1", "2"):
        assert main([*argv, "--threads", threads]) == 0
        out = capsys.readouterr().out.splitlines()
        assert f"{threads} thread" in out[0] and "by mean spread" in out[0]
        tables.append(out[1:])
    assert tables[0] == tables[1]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["notation"] for r in rows][:1] == [
        tables[0][1].split()[1] + " " + tables[0][1].split()[2]
    ]
    assert all(0 <= r["win_rate"] <= 1 and r["iterations"] >= 1 for r in rows)
    assert main([*argv, "--json", "--sim-rank-by", "win", "--confidence", "0"]) == 0
    rows = json.loads(capsys.readouterr().out)
    keys = [(-r["win_rate"], -r["mean"]) for r in rows]
    assert keys == sorted(keys) and len(rows) == 4


def test_the_client_refuses_a_simulation_answer_it_cannot_merge(monkeypatch):
    """A worker of another version (no `unplayed`) or a short list is a clear error, not
    a traceback or a wrong merge."""
    from anchor.engine.errors import AnchorError

    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    client = AnalysisClient(registry=registry)
    real = client.analyze_many

    def older(requests, **kwargs):
        out = real(requests, **kwargs)
        for result in out:
            del result["unplayed"]
        return out

    monkeypatch.setattr(client, "analyze_many", older)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    settings = Simulation(candidates=3, plies=1, iterations=4, round_size=4)
    with pytest.raises(AnchorError, match="another version"):
        simulate(client, job, settings, per_job=2)


def test_a_flood_of_listed_workers_does_not_shred_the_rounds():
    """Anyone may register worker names on the queue: the default split stops at
    MAX_SHARES jobs a round, and the answer is the one any split gives."""
    from anchor.client.simulation import MAX_SHARES

    registry = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})
    client = AnalysisClient(registry=registry)
    client.capacity = lambda: 10**6
    sent = []
    analyze_many = client.analyze_many

    def counted(requests, **kwargs):
        sent.append(len(requests))
        return analyze_many(requests, **kwargs)

    client.analyze_many = counted
    settings = Simulation(candidates=3, plies=1, iterations=256, seed=3, round_size=128)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06")
    got = simulate(client, job, settings)
    assert sent and max(sent) <= MAX_SHARES
    assert got == simulate(AnalysisClient(registry=registry), job, settings, per_job=128)
