"""Self-play: seeded and reproducible, rules of the game's end, the policy hook, the
invariant checks catching a lying policy, GCG records, and `anchor selfplay`."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.client import protocol as p
from anchor.client.cli import main
from anchor.engine import Lexicon, Ruleset, Solver
from anchor.engine._movegen import shuffled
from anchor.engine.gcg import read_gcg, replay
from anchor.engine.moves import Move
from anchor.engine.seeding import seed_key, shuffle_tiles
from anchor.engine.selfplay import Greedy, InvariantError, play_game

from .conftest import DEFAULT_KWG

ENGLISH = Ruleset.load("english")


@pytest.fixture(scope="module")
def solver(default_english) -> Solver:
    return Solver(default_english, ENGLISH)


def test_seeded_games_are_reproducible(solver):
    a, b, c = play_game(solver, 5), play_game(solver, 5), play_game(solver, 6)
    assert a.to_gcg() == b.to_gcg() and a.scores == b.scores
    assert c.to_gcg() != a.to_gcg()


def test_game_end_and_rack_adjustment(solver):
    """The ruleset's end of game (English, NASPA: going out earns twice the other rack,
    which keeps its score; six scoreless turns cost each side its own tiles)."""
    for seed in range(1, 30):
        game = play_game(solver, seed)
        last = game.turns[-1]
        if game.end == "out":
            assert game.racks[last.player] == ""
            others = sum(
                ENGLISH.values.get(ch, 0)
                for i, r in enumerate(game.racks)
                for ch in r
                if i != last.player
            )
            assert game.adjustments[last.player] == 2 * others
            assert all(a == 0 for i, a in enumerate(game.adjustments) if i != last.player)
        else:
            assert all(t.move.score == 0 for t in game.turns[-6:])
            own = [sum(ENGLISH.values.get(ch, 0) for ch in r) for r in game.racks]
            assert game.adjustments == [-v for v in own]
        assert game.scores == [
            t + a for t, a in zip(_last_totals(game), game.adjustments, strict=True)
        ]


def _last_totals(game):
    totals = [0] * len(game.players)
    for t in game.turns:
        totals[t.player] = t.total
    return totals


def test_policy_hook_and_scoreless_end(solver):
    def never_plays(solver, board, rack, bag_size):
        return None  # exchange while the bag allows, else pass

    game = play_game(solver, 3, policies=[never_plays, Greedy()])
    assert game.end == "scoreless" or game.end == "out"
    assert all(t.move.kind != "play" for t in game.turns if t.player == 0)
    assert any(t.move.kind == "exchange" for t in game.turns if t.player == 0)


def test_a_lying_policy_is_caught(solver):
    def lies(solver, board, rack, bag_size):
        best = solver.best_move(board, rack)
        return (
            None
            if best is None
            else Move(best.score + 1, best.row, best.col, best.direction, best.word, best.placed)
        )

    with pytest.raises(InvariantError, match="score_play says"):
        play_game(solver, 1, policies=[lies, lies])

    def cheats(solver, board, rack, bag_size):
        best = solver.best_move(board, rack)
        if best is None:
            return None
        r, c, _ = best.placed[0]
        return Move(
            best.score,
            best.row,
            best.col,
            best.direction,
            best.word,
            ((r, c, "Q" if best.placed[0][2] != "Q" else "Z"), *best.placed[1:]),
        )

    with pytest.raises(InvariantError, match="illegal"):
        play_game(solver, 2, policies=[cheats, cheats])


def test_players_and_bad_arguments(solver):
    assert len(play_game(solver, 4, players=3).players) == 3
    with pytest.raises(Exception, match="cannot play"):
        play_game(solver, 1, players=1)


def test_cli_selfplay_writes_gcg_that_replays(tmp_path, capsys, default_english):
    assert main(["selfplay", "--games", "6", "--seed", "11", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "6 english games" in out and "games/s" in out and "per-turn generation: median" in out
    assert "average score per game" in out and "peak RSS" in out
    files = sorted(tmp_path.glob("*.gcg"))
    assert [f.name for f in files] == sorted(f"english-{s}.gcg" for s in range(11, 17))
    for path in files:
        game = read_gcg(path)
        for turn in replay(game, ENGLISH):
            if turn.score is not None:
                assert turn.score.total == turn.event.score


def test_cli_selfplay_names_files_by_the_ruleset_given_as_a_file(tmp_path):
    from .conftest import ROOT

    ruleset = ROOT / "engine" / "rulesets" / "erudit.toml"
    kwg = ROOT / "dictionaries" / "build" / "erudit.kwg"
    args = ["selfplay", "--games", "1", "--ruleset", str(ruleset), "--lexicon", str(kwg)]
    assert main([*args, "--out", str(tmp_path)]) == 0
    assert [f.name for f in tmp_path.iterdir()] == ["erudit-1.gcg"]  # seeds start at 1


def test_records_false_leaves_out_the_gcg_and_nothing_else(default_english):
    from anchor.worker.runner import LexiconRegistry, run

    registry = LexiconRegistry({"english": str(DEFAULT_KWG)})
    asked = p.SelfPlayRequest(seed=21, games=3, policies=("score",))
    with_records = run(asked, registry).games
    without = run(p.SelfPlayRequest(seed=21, games=3, policies=("score",), records=False), registry)
    assert all(g.gcg.startswith("#") for g in with_records)
    assert [g.gcg for g in without.games] == ["", "", ""]
    fields = ("seed", "policies", "scores", "turns", "end", "plays")
    for a, b in zip(with_records, without.games, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]


def test_cli_selfplay_asks_for_records_only_to_write_them(tmp_path, monkeypatch, capsys):
    from anchor.client.client import AnalysisClient

    sent = []
    analyze_many = AnalysisClient.analyze_many

    def recording(self, requests, **kwargs):
        sent.extend(requests)
        return analyze_many(self, requests, **kwargs)

    monkeypatch.setattr(AnalysisClient, "analyze_many", recording)
    assert main(["selfplay", "--games", "2"]) == 0
    assert main(["selfplay", "--games", "2", "--out", str(tmp_path)]) == 0
    assert [r.records for r in sent] == [False, True]
    assert len(list(tmp_path.glob("*.gcg"))) == 2


def test_selfplay_requests_are_validated():
    ok = p.decode_request(p.pack({"v": 1, "kind": "selfplay", "games": 3, "seed": 9}))
    assert ok == p.SelfPlayRequest(seed=9, games=3)
    assert p.decode_request(p.encode_request(ok)) == ok
    for fields, code in [
        ({"games": 0}, p.BAD_VALUE),
        ({"games": 101}, p.BAD_VALUE),
        ({"players": 5}, p.BAD_VALUE),
        ({"seed": -1}, p.BAD_VALUE),
        ({"check": 1}, p.WRONG_TYPE),
        ({"records": "no"}, p.WRONG_TYPE),
        ({"cgp": "x"}, p.UNKNOWN_FIELD),
    ]:
        with pytest.raises(p.ProtocolError) as info:
            p.decode_request(p.pack({"v": 1, "kind": "selfplay", **fields}))
        assert info.value.code == code


def test_twl06_selfplay_with_a_lexicon_path(capsys):
    lexicon = str(DEFAULT_KWG)
    assert main(["selfplay", "--games", "2", "--lexicon", lexicon, "--players", "4"]) == 0
    assert "2 english games, 4 players" in capsys.readouterr().out
    assert isinstance(Lexicon.open(lexicon, ENGLISH), Lexicon)


def test_win_rate_counts_draws_half_and_gives_the_wilson_interval():
    from anchor.engine.match import Outcome, WinRate, wilson, win_rate

    games = [
        Outcome((400, 350), ("equity", "score")),
        Outcome((300, 300), ("score", "equity")),
        Outcome((200, 380), ("equity", "score")),
        Outcome((310, 290), ("score", "score")),  # equity not seated: skipped
    ]
    result = win_rate(games, "equity")
    assert (result.wins, result.games) == (1.5, 3) and result.rate == 0.5
    assert win_rate(games, "score").wins == 1.5
    low, high = wilson(50, 100)
    assert round(low, 4) == 0.4038 and round(high, 4) == 0.5962  # the textbook value
    assert result == WinRate("equity", 1.5, 3, *wilson(1.5, 3))
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_training_loop_fits_what_the_games_show(russian):
    from anchor.engine import Lexicon, Solver
    from anchor.engine.match import Outcome
    from anchor.engine.selfplay import EquityPlayer, Greedy, play_game
    from anchor.engine.training import LeaveModel, train

    from .conftest import ROOT

    solver = Solver(Lexicon.open(ROOT / "dictionaries" / "build" / "russian.kwg", russian))
    calls = []

    def play(games, seed, policies, alternate, model):
        calls.append((games, seed, policies, alternate))
        out = []
        for i in range(games):
            seated = list(policies) * 2 if len(policies) == 1 else list(policies)
            if alternate and i % 2:
                seated.reverse()
            game = play_game(
                solver, seed + i, policies=[EquityPlayer(model) if p == "equity" else Greedy()
                                            for p in seated], check=False,
            )  # fmt: skip
            out.append(Outcome(tuple(game.scores), tuple(seated), game.to_gcg()))
        return out

    said = []
    model = train(russian, play, games=6, iterations=2, seed=5, eval_games=2, say=said.append)
    assert isinstance(model, LeaveModel) and any(abs(v) > 0 for v in model.params)
    assert [c[2] for c in calls] == [
        ("score",),
        ("equity", "score"),
        ("equity",),
        ("equity", "score"),
    ]
    assert calls[0][1] == 5 + 100_000 and calls[1][3] is True
    assert said[0].startswith("iteration 1: 6 games (score players)")
    assert "equity player won" in said[1] and "of 2 games" in said[1]


def _equity_leaves(name: str, rules: Ruleset, tmp_path):
    """TWL06's leaves for English; elsewhere a leave model's (random but fixed values for
    every leave of up to 6 tiles), written as KLV2 and opened like any leave file."""
    import random

    from anchor.engine.leaves import Leaves
    from anchor.engine.training import LeaveModel

    from .conftest import data_path

    if name == "english":
        return Leaves.open(data_path("kwg", "TWL06.klv2"), rules)
    rng = random.Random(5)
    model = LeaveModel(rules, [rng.uniform(-8, 8) for _ in range(2 * (rules.size + 1))])
    path = tmp_path / f"{name}.klv2"
    path.write_bytes(model.to_klv2(6))
    return Leaves.open(path, rules)


@pytest.mark.parametrize(
    "name, games, policy",
    [("english", 40, "equity"), ("russian", 12, "equity"), ("erudit", 12, "equity"),
     ("english", 20, "score"), ("russian", 10, "score"), ("erudit", 10, "score")],
)  # fmt: skip
def test_the_c_game_loop_plays_the_checked_python_games(name, games, policy, tmp_path):
    """play_game(check=False) with two equity (or two Greedy) players runs in the C core;
    it plays exactly the games the Python loop plays with every invariant checked (plays
    legal and scored right, tiles conserved): move for move, rack for rack, score for
    score, to the same end, in three rulesets (Эрудит: four scoreless turns and no
    going-out bonus)."""
    from anchor.engine import selfplay
    from anchor.engine.selfplay import EquityPlayer

    from .conftest import ROOT, data_path

    rules = Ruleset.load(name)
    kwg = (
        data_path("kwg", "TWL06.kwg")
        if name == "english"
        else ROOT / "dictionaries" / "build" / f"{name}.kwg"
    )
    solver = Solver(Lexicon.open(kwg, rules), rules)
    leaves = _equity_leaves(name, rules, tmp_path)
    kinds = set()
    ends = set()

    def seats():
        if policy == "score":
            return [Greedy(), Greedy()]
        return [EquityPlayer(leaves), EquityPlayer(leaves)]

    for seed in range(games):
        assert selfplay._native(seats())
        checked = play_game(solver, seed, policies=seats(), check=True)
        native = play_game(solver, seed, policies=seats(), check=False)
        want = [
            (t.player, t.rack, t.move.kind, t.move.notation, t.move.score, t.total)
            for t in checked.turns
        ]
        got = [
            (t.player, t.rack, t.move.kind, t.move.notation, t.move.score, t.total)
            for t in native.turns
        ]
        assert got == want, (name, seed)
        assert (native.scores, native.end, native.racks, native.adjustments) == (
            checked.scores,
            checked.end,
            checked.racks,
            checked.adjustments,
        ), (name, seed)
        assert native.board.cells == checked.board.cells
        assert native.plays_generated == checked.plays_generated
        assert len(native.move_times) == len(native.turns)
        kinds |= {t.move.kind for t in native.turns}
        ends.add(native.end)
    if name == "english" and policy == "equity":
        assert kinds == {"play", "exchange", "pass"} and "out" in ends, (kinds, ends)
    if name == "erudit" and policy == "equity":  # random leave values: exchanges, 4 scoreless
        assert "scoreless" in ends, ends


def test_a_native_game_past_its_budget_is_a_work_limit_not_a_crash():
    """The job's time running out inside the C game loop is the caller's timeout
    (WorkLimitError, which the runner answers as `timeout`), as in the Python loop."""
    from anchor.engine.errors import WorkLimitError

    solver = Solver(Lexicon.open(DEFAULT_KWG, ENGLISH), ENGLISH)
    with pytest.raises(WorkLimitError, match="ran past"):
        play_game(solver, 1, check=False, budget=lambda: 1e-6)


def test_build_lexicon_writes_the_gaddag_unless_told_not_to(tmp_path):
    """`anchor build-lexicon` as the README gives it: the GADDAG by default (the generator
    takes it), the DAWG alone with --no-gaddag."""
    words = tmp_path / "words.txt"
    words.write_text("CAT\nCATS\nAT\nACT\nTAC\n")
    for flag, has in (([], True), (["--no-gaddag"], False)):
        out = tmp_path / f"w{len(flag)}.kwg"
        assert main(["build-lexicon", "--words", str(words), "--out", str(out), *flag]) == 0
        solver = Solver(Lexicon.open(out, ENGLISH), ENGLISH)
        assert bool(solver._generator.gaddag) == has


@settings(max_examples=300, deadline=None)
@given(
    seed=st.one_of(
        st.integers(-(2**40), 2**40),
        st.integers(-(2**300), 2**300),
        st.builds(lambda s, i: f"{s}:{i}", st.integers(0, 2**40), st.integers(0, 10**6)),
        st.text(max_size=40),
    ),
    items=st.binary(max_size=300),
)
def test_the_bag_is_shuffled_as_pythons_random_shuffles_it(seed, items):
    """The C core's shuffle (engine/shuffle.c) keeps a seed's game (an int seed) and a
    simulation's iteration (a "SEED:I" text) what they were when random.Random(seed)
    .shuffle made the bag: same Mersenne Twister, same seeding (an int's absolute value, a
    text's bytes and their SHA-512, as 32-bit words), same rejection sampling."""
    expected = list(items)
    random.Random(seed).shuffle(expected)
    assert shuffle_tiles(seed, items) == bytes(expected)
    assert shuffled(seed_key(seed), items) == bytes(expected)


def test_shuffled_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="32-bit words"):
        shuffled(b"abc", b"xyz")
    with pytest.raises(ValueError, match="65535"):
        shuffled(b"\0\0\0\0", bytes(70000))
