"""Simulation against what the opponent probably kept (issue 48): the board before a play,
each iteration's tile order (an explaining leave first, the rest as the uniform draw
shuffles them), the same answer in-process, split into jobs, pooled and across a real
fleet, the `empty` flag and its uniform fallback, the CLI, annotation and the inferring
self-play seat."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from anchor.client import protocol as p
from anchor.client.client import AnalysisClient
from anchor.client.simulation import SimulationJob, run_simulation, simulate
from anchor.engine import InputError, Ruleset, Solver, parse_cgp
from anchor.engine.gcg import PLAY, read_gcg, replay
from anchor.engine.inference import board_before, infer, infer_last
from anchor.engine.leaves import Leaves
from anchor.engine.seeding import shuffle_tiles
from anchor.engine.simulate import (
    SimPlayer,
    Simulation,
    candidates,
    iterate,
    tile_order,
    unseen_tiles,
)
from anchor.worker.runner import LexiconRegistry, run_request

from .conftest import data_path
from .service import TWL06

ENGLISH = Ruleset.load("english")
# Doug vs Emely after Emely's F2 VOX (39), Doug to move
CGP = "15/5V9/4JO9/4AX9/4V10/4E10/2GALE9/3WINDY7/4N10/15/15/15/15/15/15 ADEIOST/ 148/55 0"
RACK = "ADEIOST"
LAST = "F2 VOX"
KLV2 = data_path("kwg", "TWL06.klv2")
REGISTRY = LexiconRegistry({"twl06": str(TWL06)}, leave_paths={"twl06": str(KLV2)})


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


@pytest.fixture(scope="module")
def leaves() -> Leaves:
    return Leaves.open(KLV2, ENGLISH)


@pytest.fixture(scope="module")
def position():
    return parse_cgp(ENGLISH, CGP)


@pytest.fixture(scope="module")
def vox(solver, leaves, position):
    """What Emely kept with VOX, as Doug reads it."""
    return infer_last(solver, position.board, RACK, leaves, LAST, 39)


def record_turns():
    """(board before, play) of the English records' plays."""
    out = []
    for path in sorted(data_path("gcg").rglob("*.gcg"))[:8]:
        try:
            turns = list(replay(read_gcg(path), ENGLISH))
        except Exception:  # noqa: BLE001 - a record the English rules cannot replay
            continue
        out += [(t.board, t.play) for t in turns if t.event.kind == PLAY and t.play is not None]
    return out


def test_the_board_before_a_play_is_the_board_less_its_tiles():
    turns = record_turns()
    assert len(turns) > 100
    for before, play in turns:
        after = before.apply(play.placed)
        assert board_before(after, play.notation).cells == before.cells, play.notation


@pytest.mark.parametrize(
    "play, words",
    [
        ("F2 VOW", "holds 'X', not 'W'"),
        ("F2 (VOX)", "lays no tile"),
        ("F2 V(OX", "unbalanced"),
        ("F2 VOXX", "holds nothing"),
        ("O14 VOX", "O14 holds nothing"),
        ("F2", "expected a coordinate and a word"),
        ("F2 V1X", "not a letter"),
        ("F2 V.X", "lays"),
    ],
)
def test_a_play_not_on_the_board_is_refused_naming_the_square(position, play, words):
    if play == "F2 V.X":  # a '.' stands for a tile played through: V and X are laid
        assert board_before(position.board, play).cells != position.board.cells
        return
    with pytest.raises(InputError, match=words):
        board_before(position.board, play)


@pytest.mark.parametrize("play", ["8D WINDY", "E3 JAVE(LI)N", "E3 JAVELIN"])
def test_a_play_that_was_not_the_last_move_is_refused(position, play):
    """Taken off, an earlier play (or one written with a played-through letter as laid)
    leaves tiles that no game could hold: not through the centre, or cut off from it."""
    with pytest.raises(InputError, match="cannot have been the last move"):
        board_before(position.board, play)


def test_the_inference_read_after_the_play_is_the_one_read_before_it(solver, leaves, position, vox):
    before = board_before(position.board, LAST)
    direct = infer(solver, before, leaves, LAST, score=39, observer=RACK)
    assert vox == direct
    assert not vox.empty and vox.kept.racks > 100 and vox.move == LAST


def test_each_iteration_starts_the_opponents_rack_with_an_explaining_leave(solver, position, vox):
    unseen = unseen_tiles(ENGLISH, position.board, RACK)
    tiles = bytes(0 if ch == "?" else ENGLISH.letter_index[ch] for ch in unseen)
    explaining = {leave: draws for leave, draws in vox.explaining()}
    seen: Counter = Counter()
    size = len(next(iter(explaining)))
    for i in range(3000):
        order = tile_order(5, i, tiles, vox)
        assert sorted(order) == sorted(tiles)  # the same tiles, reordered
        leave = tuple(sorted(order[:size]))
        assert leave in explaining
        seen[leave] += 1
        assert order == tile_order(5, i, tiles, vox)  # a function of (seed, iteration)
    # drawn by their draws: the likeliest leave comes up about as often as its chance says
    total = sum(explaining.values())
    top = max(explaining, key=explaining.get)
    expected = 3000 * explaining[top] / total
    assert abs(seen[top] - expected) < 5 * expected**0.5 + 2
    # without an inference, or with an empty one, the uniform order of every simulation
    assert tile_order(5, 7, tiles) == shuffle_tiles("5:7", tiles)


def test_an_inference_of_another_position_is_refused(solver, leaves, position, vox):
    tiles = bytes([1] * 20)  # twenty A's: not what the opponent's leaves hold
    with pytest.raises(InputError, match="another position or another watcher"):
        for i in range(50):
            tile_order(1, i, tiles, vox)


def test_simulating_against_the_inference_changes_the_answer(solver, leaves, position, vox):
    chosen = candidates(solver, position.board, RACK, leaves, 3)
    uniform = iterate(solver, position.board, RACK, leaves, chosen, 2, 9, range(30))
    inferred = iterate(solver, position.board, RACK, leaves, chosen, 2, 9, range(30),
                       inference=vox)  # fmt: skip
    assert uniform != inferred
    parts = [iterate(solver, position.board, RACK, leaves, chosen, 2, 9, r, inference=vox)
             for r in (range(0, 11), range(11, 30))]  # fmt: skip
    assert [a + b for a, b in zip(*parts, strict=True)] == inferred  # splits merge exactly


def test_in_process_split_and_pooled_give_the_engines_answer(solver, leaves, position, vox):
    settings = Simulation(candidates=4, plies=2, iterations=60, seed=3, round_size=20,
                          confidence=0.9)  # fmt: skip
    local = settings.run(solver, position.board, RACK, leaves, 148 - 55, None, vox)
    assert local != settings.run(solver, position.board, RACK, leaves, 148 - 55)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06", infer_play=LAST, infer_score=39)
    one = run_simulation(AnalysisClient(registry=REGISTRY), job, settings)
    assert one.stats == local
    assert one.inferred["kept"]["racks"] == vox.kept.racks and not one.inferred["empty"]
    assert len(one.inferred["leaves"]) == 5
    split = simulate(AnalysisClient(registry=REGISTRY, threads=2), job, settings, per_job=7)
    assert split == local
    pooled = simulate(AnalysisClient(registry=REGISTRY, threads=2), job, settings)
    assert pooled == local


@pytest.mark.service  # redis-server and workers (not in `make test-fast`)
def test_the_fleet_simulates_against_the_inference_as_one_process(
    server, queue, workers, solver, leaves, position, vox
):
    workers(None, "--leaves", f"twl06={KLV2}")
    workers(None, "--leaves", f"twl06={KLV2}")
    settings = Simulation(candidates=4, plies=2, iterations=40, seed=11, round_size=20)
    local = settings.run(solver, position.board, RACK, leaves, 93, None, vox)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06", infer_play=LAST)
    client = AnalysisClient(server.url, queue=queue)
    pooled = run_simulation(client, job, settings)
    assert pooled.stats == local and pooled.inferred["move"] == LAST
    assert simulate(client, job, settings, per_job=5) == local


def test_an_empty_inference_is_flagged_and_draws_uniformly(solver, leaves, position):
    """A margin below zero explains no play (each rack's own best is worth at least as
    much): the answer says so and equals the uniform simulation."""
    settings = Simulation(candidates=3, plies=1, iterations=20, seed=2, round_size=20)
    job = SimulationJob(CGP, lexicon="twl06", leaves="twl06", infer_play=LAST,
                        infer_margin=-200)  # fmt: skip
    answer = run_simulation(AnalysisClient(registry=REGISTRY), job, settings)
    assert answer.inferred["empty"] is True
    assert answer.stats == settings.run(solver, position.board, RACK, leaves, 93)


@pytest.mark.parametrize(
    "fields, code, words",
    [
        ({"infer_play": LAST, "infer_exchanged": 2}, p.BAD_VALUE, "together"),
        ({"infer_score": 39}, p.BAD_VALUE, "give both"),
        ({"infer_play": "F2 VOX", "infer_score": 40}, p.BAD_POSITION, "scores 39"),
        ({"infer_play": "F2 VOW"}, p.BAD_POSITION, "holds 'X'"),
        ({"infer_exchanged": 7}, p.BAD_POSITION, None),
    ],
)
def test_bad_inferences_are_refused_with_their_reason(fields, code, words):
    request = {"v": 1, "kind": "simulate", "cgp": CGP, "lexicon": "twl06", "leaves": "twl06",
               "candidates": 2, "iterations": 2, **fields}  # fmt: skip
    try:
        result = run_request(p.decode_request(p.pack(request)), REGISTRY, p.Limits())
    except p.ProtocolError as exc:
        assert exc.code == code and (words is None or words in exc.message), exc.message
    else:  # an exchange of 7 here is allowed: the bag held plenty
        assert words is None and result["ok"] and result["inferred"]["exchanged"] == 7


def test_the_servers_cap_of_racks_bounds_a_simulations_inference():
    request = p.SimulateRequest(CGP, "english", "twl06", "twl06", candidates=2, iterations=2,
                                infer_play=LAST)  # fmt: skip
    with pytest.raises(p.ProtocolError) as caught:
        run_request(request, REGISTRY, p.Limits(infer_racks=1000))
    assert caught.value.code == p.LIMIT_TOO_LARGE and "1,000 racks" in caught.value.message


def test_cli_simulates_against_the_inference(capsys):
    from anchor.client.cli import main

    kwg = str(data_path("kwg", "TWL06.kwg"))
    plain = ["analyze", "--cgp", CGP, "--lexicon", kwg, "--leaves", str(KLV2)]
    args = [*plain, "--sim", "--sim-iterations", "40", "--sim-candidates", "3"]
    assert main([*args, "--infer", LAST]) == 0
    out = capsys.readouterr().out
    assert "leaves explain F2 VOX" in out and "likeliest" in out
    assert main([*args, "--infer", LAST, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["inferred"]["move"] == LAST and len(answer["candidates"]) == 3
    assert main([*args, "--infer", "exchange 3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inferred"]["exchanged"] == 3
    assert main([*args, "--infer", LAST, "--margin", "-500"]) == 0
    assert "no rack explains F2 VOX" in capsys.readouterr().out
    assert main([*args, "--infer", "-"]) == 2
    assert "'exchange N'" in capsys.readouterr().err
    for given, words in (([*plain, "--infer", LAST], "add --sim"),
                         ([*args, "--infer-score", "39"], "add --infer MOVE")):  # fmt: skip
        with pytest.raises(SystemExit) as stopped:
            main(given)
        assert stopped.value.code == 2 and words in capsys.readouterr().err


def test_annotation_shows_what_each_player_probably_kept(solver, leaves):
    from anchor.engine.annotate import annotate_game

    game = read_gcg(data_path("gcg", "macondo", "puzzles", "testdata", "well_played_game.gcg"))
    sim = Simulation(candidates=3, plies=1, iterations=10, round_size=10)
    found = annotate_game(game, solver, 3, leaves, sim=sim, infer_racks=20_000)
    turns = found["turns"]
    events = list(replay(game, ENGLISH))
    read = [t for t in turns if "inferred" in t and "racks" in t["inferred"]]
    assert len(read) >= 8
    for t in read[:6]:  # each as infer() reads it with the next recorded rack as the watcher's
        i = t["index"]
        reply = next(e for e in events[i + 1 :] if e.event.player_index != t["player"])
        direct = infer(solver, events[i].board, leaves, events[i].play, observer=reply.event.rack)
        assert t["inferred"]["racks"] == direct.kept.racks
        assert t["inferred"]["leaves"] == [[k.leave, round(k.chance, 4)] for k in direct.leaves[:5]]
        assert turns[i + 1].get("sim_inferred") is True  # the reply simulated against it
    capped = [t for t in turns if "why" in t.get("inferred", {})]
    assert any("20,000 racks" in t["inferred"]["why"] for t in capped)  # a short play's
    plain = annotate_game(game, solver, 3, leaves, sim=sim)
    assert not any("inferred" in t for t in plain["turns"])


def test_annotate_requests_infer_only_with_leaves():
    with pytest.raises(p.ProtocolError, match="'infer_racks' needs 'leaves'"):
        p.decode_request(p.pack({"v": 1, "kind": "annotate", "gcg": "", "infer_racks": 10}))


def test_the_inferring_seat_infers_and_keeps_every_invariant(solver, leaves):
    from anchor.engine.selfplay import play_game

    settings = Simulation(candidates=3, plies=1, iterations=8, round_size=8, seed=4)
    seat = SimPlayer(leaves, settings, infer_racks=5_000)
    game = play_game(solver, 4, policies=[seat, SimPlayer(leaves, settings)], check=True)
    assert game.end in ("out", "scoreless")
    assert seat.inferred > 0 and seat.inferred + seat.uniform >= 5


def test_selfplay_requests_take_the_inferring_policy():
    request = p.SelfPlayRequest("english", "twl06", seed=3, games=1, check=False,
                                policies=("siminfer", "sim"), leaves="twl06", sim_iterations=5,
                                sim_candidates=2, sim_plies=1, sim_infer_racks=2_000)  # fmt: skip
    result = run_request(p.decode_request(p.encode_request(request)), REGISTRY, p.Limits())
    (game,) = result["games"]
    assert game["policies"] == ["siminfer", "sim"] and game["turns"] > 10


def test_a_random_record_turns_leave_is_sampled_from_explaining_racks(solver, leaves):
    """Hypothesis-free spot check over record turns: every sampled leave explains."""
    rng = random.Random(1)
    for before, play in rng.sample(record_turns(), 6):
        if len(play.placed) < 3:
            continue  # a short play reads many racks: slow for a spot check
        found = infer(solver, before, leaves, play)
        if found.empty:
            continue
        explaining = {leave for leave, _ in found.explaining()}
        for _ in range(20):
            assert found.sample(rng) in explaining


@pytest.mark.service  # redis-server and workers (not in `make test-fast`)
def test_an_inference_dealt_out_to_the_fleet_is_the_one_process_answer(
    server, queue, workers, capsys
):
    """`anchor infer --parts 2` through two workers: each judges its chunks of racks, the
    client merges them into what one process answers."""
    from anchor.client.cli import main

    workers(None, "--leaves", f"twl06={KLV2}", "--max-infer-racks", "9000")
    workers(None, "--leaves", f"twl06={KLV2}", "--max-infer-racks", "9000")
    board = CGP.split()[0]
    before = board_before(parse_cgp(ENGLISH, CGP).board, LAST).to_cgp().split()[0]
    cgp = f"{before} /{RACK} 55/148 0"
    args = ["infer", "--cgp", cgp, "--play", LAST, "--lexicon", "twl06", "--leaves", "twl06",
            "--json", "--redis-url", server.url, "--queue", queue]  # fmt: skip
    assert main([*args, "--parts", "2"]) == 0
    fleet = json.loads(capsys.readouterr().out)["inference"]
    local = infer(Solver(TWL06_LEXICON(), ENGLISH), parse_cgp(ENGLISH, cgp).board,
                  Leaves.open(KLV2, ENGLISH), LAST, observer=RACK).to_dict(15)  # fmt: skip
    assert fleet == local and fleet["tried"] > 9000  # more than one worker would take
    assert main(args) == 2  # whole, it is over each worker's cap
    refused = capsys.readouterr().err
    assert "limit_too_large" in refused and "`parts`" in refused
    assert board != before


def TWL06_LEXICON():  # noqa: N802 - the lexicon the workers serve, opened here
    from anchor.engine import Lexicon

    return Lexicon.open(TWL06, ENGLISH)


def test_after_an_exchange_every_explaining_rack_is_drawn(solver, leaves, position):
    """A rack whose best move was another, within the margin, explains an exchange too: it
    is drawn keeping its best exchange of that many tiles, not left out (the leaves listed,
    MAGPIE's, are those of the racks whose best move it was)."""
    found = infer_last(solver, position.board, RACK, leaves, exchanged=1)
    assert not found.empty and found.racks.draws > found.kept.draws
    every = found.explaining()  # a leave once for each rack that keeps it
    assert sum(d for _, d in every) == found.racks.draws and len(every) == found.racks.racks
    drawn = {leave for leave, _ in every}
    assert all(len(leave) == 6 for leave in drawn)
    rng = random.Random(2)
    assert all(found.sample(rng) in drawn for _ in range(200))


def test_a_model_cannot_read_moves():
    with pytest.raises(p.ProtocolError, match="'siminfer' reads moves with leave values"):
        p.decode_request(p.pack({"v": 1, "kind": "selfplay", "policies": ["siminfer", "equity"],
                                 "model": [0.0] * 54}))  # fmt: skip
    from anchor.engine.training import LeaveModel

    with pytest.raises(InputError, match="leave values"):
        SimPlayer(LeaveModel(ENGLISH), Simulation(), infer_racks=10)


def test_self_play_names_each_failure_once_with_its_count():
    """A run whose jobs hit the server's time cap says so once, with how many did."""
    from anchor.client.games import _games
    from anchor.engine import AnchorError

    late = {"v": 1, "ok": False, "error": {"code": "timeout", "message": "too slow"}}
    odd = {"v": 1, "ok": False, "error": {"code": "bad_value", "message": "odd"}}
    with pytest.raises(AnchorError) as caught:
        _games([late, late, odd, {"v": 1, "ok": True, "games": []}])
    text = str(caught.value)
    assert text.startswith("3 of 4 jobs failed")
    assert text.count("too slow") == 1 and "(2 jobs)" in text and "odd [bad_value]" in text
