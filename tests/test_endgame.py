"""The endgame solver against an independent reference (tests/endgame_reference.py): plain
minimax over the rules as each ruleset writes them, on endgames from self-played games in
English, Russian Scrabble and Эрудит (racks of 1-4 tiles, blanks included, sides that are
stuck and must pass, positions where both must, both sides holding the same letters)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from anchor.engine import (
    Board,
    EndgameTable,
    InputError,
    Lexicon,
    Ruleset,
    Solver,
    WorkLimitError,
)
from anchor.engine.notation import format_rack
from anchor.engine.position import parse_cgp

from .conftest import ROOT
from .endgame_reference import (
    TooBig,
    endgames,
    minimax,
    played_board,
    stuck_endgame,
    twin_endgame,
)

BUILD = ROOT / "dictionaries" / "build"
REFERENCE_NODES = 1200  # positions the reference may visit for one endgame


@pytest.fixture(scope="module")
def solvers() -> dict[str, Solver]:
    out = {}
    for name in ("english", "russian", "erudit"):
        path = BUILD / f"{name}.kwg"
        if not path.exists():
            pytest.fail(f"{path} is missing: `make test` builds it (anchor lexicon install {name})")
        rules = Ruleset.load(name)
        out[name] = Solver(Lexicon.open(path, rules), rules)
    return out


def compare(solver: Solver, board: Board, mover, other, scoreless: int, seen: dict) -> bool:
    """Whether the solver's value equals the reference's (None: too big for the reference)."""
    rules = solver.rules
    try:
        expected = minimax(solver, board, mover, other, scoreless, [REFERENCE_NODES])
    except TooBig:
        return False
    got = solver.solve_endgame(
        board, format_rack(rules, mover), format_rack(rules, other), scoreless_turns=scoreless
    )
    assert got.exact, (board.to_cgp(), mover, other)
    assert got.value == expected, (
        f"{rules.name}: {board.to_cgp()} {format_rack(rules, mover)}/{format_rack(rules, other)} "
        f"scoreless {scoreless}: solver {got.value}, reference {expected}"
    )
    # one table kept across every solve of the test (games, boards, both sides to move),
    # searched by two threads: what it holds from other positions and what the other
    # thread writes never change a value or a line
    kept = solver.solve_endgame(
        board, format_rack(rules, mover), format_rack(rules, other), scoreless_turns=scoreless,
        table=seen["table"], threads=2,
    )  # fmt: skip
    assert kept.exact and (kept.value, kept.moves) == (got.value, got.moves), board.to_cgp()
    seen["count"] += 1
    seen["blank"] += 0 in mover or 0 in other
    seen["sizes"].add((len(mover), len(other)))
    seen["scoreless"].add(scoreless)
    mover_stuck = not len(solver.generate_moves(board, format_rack(rules, mover)))
    other_stuck = not len(solver.generate_moves(board, format_rack(rules, other)))
    seen["stuck"] += mover_stuck or other_stuck
    seen["both stuck"] += mover_stuck and other_stuck
    return True


@pytest.mark.parametrize(
    "name, wanted, seed", [("english", 400, 1), ("russian", 350, 2), ("erudit", 350, 3)]
)
def test_solver_equals_plain_minimax(solvers, name, wanted, seed):
    """>= 1,000 endgames in all (400 + 350 + 350), each value equal to the reference's."""
    solver = solvers[name]
    rng = random.Random(seed)
    seen = {
        "table": EndgameTable(1),
        "twins": 0,
        "count": 0,
        "blank": 0,
        "stuck": 0,
        "both stuck": 0,
        "sizes": set(),
        "scoreless": set(),
    }
    while seen["count"] < wanted:
        positions = list(endgames(solver, rng))
        # from the game's end backwards: the earlier a position, the larger its tree
        for board, mover, other, scoreless in reversed(positions):
            if not compare(solver, board, mover, other, scoreless, seen):
                break
        if positions:
            board = positions[-1][0]
            stuck = stuck_endgame(solver, board, rng)
            if stuck:
                compare(solver, board, *stuck, 0, seen)
        for _ in range(2):
            board = played_board(solver, rng, rng.randint(4, 12))
            twins = twin_endgame(solver, board, rng)
            if twins and compare(solver, board, *twins, 0, seen):
                seen["twins"] += 1
    assert seen["blank"] >= 5, seen
    assert seen["stuck"] >= 20 and seen["both stuck"] >= 5, seen
    assert {(1, 1), (4, 1), (1, 4)} <= seen["sizes"] or {(1, 1), (3, 2), (2, 3)} <= seen["sizes"]
    assert len(seen["scoreless"]) >= 2, seen  # starting after a pass too
    assert seen["twins"] >= 15, seen


def real_endgames() -> dict[str, str]:
    """Macondo's test positions that are real endgames (both racks, every tile placed)."""
    import json

    from .conftest import data_path

    rules = Ruleset.load("english")
    out = {}
    for line in data_path("cgp", "macondo_test_cgp.jsonl").read_text().splitlines():
        entry = json.loads(line)
        cgp = " ".join(entry["cgp"].split()[:4])
        try:
            pos = parse_cgp(rules, cgp)
        except InputError:
            continue
        tiles = pos.board.tile_count() + sum(len(r) for r in pos.racks)
        if len(pos.racks) == 2 and all(pos.racks) and tiles == 100:
            out.setdefault(entry["name"], cgp)
    return out


QUICK = ("line31", "line201", "line459", "line92", "line94", "line164", "line26")


@pytest.fixture(scope="module")
def twl06_solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06)


def test_value_and_line_whatever_the_table_size_depth_schedule_and_split(twl06_solver):
    """The canonical line: one value and one line, with a table of 1,024 entries or of
    millions, searched to the end or to just the depth that proves it, and split."""
    from anchor.engine.endgame import Split

    solver, rules = twl06_solver, twl06_solver.rules
    positions = real_endgames()
    assert set(QUICK) <= set(positions)
    kept = EndgameTable(0.25)  # every position, twice, through one small table
    for name in QUICK * 2:
        pos = parse_cgp(rules, positions[name])
        args = (pos.board, pos.racks[0], pos.racks[1])
        whole = solver.solve_endgame(*args)
        assert whole.exact, name
        tiny = solver.solve_endgame(*args, table_mb=0.016)
        shallow = solver.solve_endgame(*args, plies=whole.depth)
        warm = solver.solve_endgame(*args, table=kept)
        threads = [solver.solve_endgame(*args, threads=n, table_mb=1) for n in (2, 3)]
        for other in (tiny, shallow, warm, *threads):
            assert other.exact and (other.value, other.moves) == (whole.value, whole.moves), name
        # the line adds up: scores alternate, and the end of the game settles the racks
        assert whole.moves and whole.best == whole.moves[0]
        # split: the first play alone, then the rest in 2 parts against its value
        lead = solver.solve_endgame_part(*args, split=Split(0, 1))
        rest = [
            solver.solve_endgame_part(*args, split=Split(1, None, 2, k, lead.endgame.value))
            for k in range(2)
        ]
        live = [r for r in (lead, *rest) if not r.no_plays and not r.below_floor]
        best = max(live, key=lambda r: (r.endgame.value, -r.root))
        assert (best.endgame.value, best.endgame.moves) == (whole.value, whole.moves), name


def test_the_line_adds_up_to_the_value(twl06_solver):
    """value = the scores along the line, each side's in turn, plus the end: going out
    (twice the other rack in English) or two passes (each side loses its own tiles)."""
    solver, rules = twl06_solver, twl06_solver.rules
    positions = real_endgames()
    for name in QUICK:
        pos = parse_cgp(rules, positions[name])
        solved = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1])
        racks = [list(pos.racks[0]), list(pos.racks[1])]
        spread, side, passes = 0, 0, 0
        for move in solved.moves:
            sign = 1 if side == 0 else -1
            spread += sign * move.score
            for _, _, letter in move.placed:
                racks[side].remove("?" if letter.islower() else letter)
            passes = passes + 1 if move.kind == "pass" else 0
            if not racks[side]:
                other = sum(rules.values.get(ch, 0) for ch in racks[1 - side])
                spread += sign * rules.end.out_bonus(other)
                break
            side = 1 - side
        else:
            assert passes == 2, name
            own = [sum(rules.values.get(ch, 0) for ch in r) for r in racks]
            spread += own[1] - own[0]
        assert spread == solved.value, (name, [str(m) for m in solved.moves])


def test_budget_answers_the_deepest_search_completed(twl06_solver):
    solver, rules = twl06_solver, twl06_solver.rules
    pos = parse_cgp(rules, real_endgames()["line27"])  # AEEIRUW/V: minutes to prove
    found = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], budget_s=0.3)
    assert not found.exact and found.depth >= 1 and found.moves and found.seconds < 5
    again = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], plies=found.depth)
    assert again.value == found.value and not again.exact


def test_deterministic_and_bad_input_refused(twl06_solver):
    solver, rules = twl06_solver, twl06_solver.rules
    pos = parse_cgp(rules, real_endgames()["line31"])
    a = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1])
    b = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1])
    assert (a.value, a.moves, a.nodes, a.depth) == (b.value, b.moves, b.nodes, b.depth)
    for kwargs, words in (
        ({"plies": 0}, "plies must be"),
        ({"budget_s": -1}, "budget_s must be"),
        ({"table_mb": 0}, "table_mb must be"),
        ({"scoreless_turns": 6}, "scoreless turns must be 0..5"),
        ({"threads": 0}, "threads must be 1..64"),
        ({"threads": 65}, "threads must be 1..64"),
        ({"threads": True}, "threads must be 1..64"),
        ({"table": bytearray(1 << 20)}, "table must be an endgame Table"),
    ):
        with pytest.raises(InputError, match=words):
            solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], **kwargs)
    with pytest.raises(InputError, match="the game is over"):
        solver.solve_endgame(pos.board, pos.racks[0], "")
    with pytest.raises(InputError, match="the english set has 1"):
        solver.solve_endgame(pos.board, "ZZ", "Q")


def test_protocol_bounds_equal_the_engines_and_bad_requests_are_refused():
    from anchor.client import protocol as p
    from anchor.engine.endgame import MAX_PLIES

    assert p.MAX_ENDGAME_PLIES == MAX_PLIES
    good = {"v": 1, "kind": "endgame", "cgp": "15/15 A/B 0/0 0"}
    assert p.parse_request(good) == p.EndgameRequest(cgp="15/15 A/B 0/0 0")
    request = p.EndgameRequest(cgp="x", parts=3, part=2, floor=-7, seconds=1.5)
    assert p.decode_request(p.encode_request(request)) == request
    for change, code in (
        ({"plies": 0}, p.BAD_VALUE),
        ({"plies": "9"}, p.WRONG_TYPE),
        ({"part": 1}, p.BAD_VALUE),  # part must be below parts (1)
        ({"seconds": True}, p.WRONG_TYPE),
        ({"bogus": 1}, p.UNKNOWN_FIELD),
        ({"cgp": None}, p.MISSING_FIELD),
        ({"rack": "A" * 65}, p.BAD_VALUE),
    ):
        with pytest.raises(p.ProtocolError) as err:
            p.parse_request({**good, **change})
        assert err.value.code == code, change


def test_cli_endgame_prints_the_value_and_line(capsys):
    from anchor.client.cli import main

    from .conftest import data_path

    cgp = real_endgames()["line31"]
    kwg = str(data_path("kwg", "TWL06.kwg"))
    assert main(["endgame", "--cgp", cgp, "--lexicon", kwg]) == 0
    out = capsys.readouterr().out
    assert "value -56 for FV: solved" in out and "15A AD(Z)" in out
    assert main(["endgame", "--cgp", cgp, "--lexicon", kwg, "--parts", "2"]) == 0
    out = capsys.readouterr().out  # in one process: one search, said so
    assert "s in-process (--parts 2 asks workers" in out and "over 2 jobs" not in out
    assert main(["endgame", "--cgp", cgp, "--lexicon", kwg, "--parts", "2", "--split", "root"]) == 0
    assert "over 3 jobs" in capsys.readouterr().out  # the lead, then two parts
    assert main(["endgame", "--cgp", cgp, "--lexicon", kwg, "--parts", "2", "--json"]) == 0
    result = __import__("json").loads(capsys.readouterr().out)
    assert result["value"] == -56 and result["exact"] and result["moves"][-1] == ["15A AD(Z)", 39]
    # the opponent's rack left out: with the bag empty it is what the mover cannot see
    assert main(["endgame", "--cgp", cgp.split()[0] + " FV/ 0/0 0", "--lexicon", kwg]) == 0
    assert "value -56 for FV: solved" in capsys.readouterr().out
    assert main(["endgame", "--cgp", cgp.split()[0] + " / 0/0 0", "--lexicon", kwg]) == 2
    assert "an endgame needs the racks" in capsys.readouterr().err


def test_static_players_go_out_and_the_endgame_player_solves(twl06_solver):
    """With the bag empty the equity player ranks by score plus the going-out adjustment
    (doug_v_emely turn 26: ?FS against EGOP goes out with 14L (K)aFS, not 8K (I)F keeping
    S? as leave values said), and the endgame policy plays the solver's best."""
    from anchor.engine.gcg import read_gcg, replay
    from anchor.engine.leaves import Leaves
    from anchor.engine.selfplay import EndgamePlayer, EquityPlayer, play_game

    from .conftest import data_path

    solver, rules = twl06_solver, twl06_solver.rules
    game = read_gcg(next(data_path("gcg").rglob("doug_v_emely.gcg")))
    turn = list(replay(game, rules))[26]
    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), rules)
    assert EquityPlayer(leaves)(solver, turn.board, "?FS", 0).notation == "14L (K)aFS"
    player = EndgamePlayer(EquityPlayer(leaves), seconds=5)
    assert player(solver, turn.board, "?FS", 0).notation == "14L (K)aFS" and player.solved == 1
    played = play_game(solver, 3, policies=[player, EquityPlayer(leaves)], check=True)
    assert played.end in ("out", "scoreless") and player.solved >= 2


def test_analysis_by_equity_ranks_an_empty_bag_by_endgame_value():
    """`analyze --rank equity` on doug_v_emely turn 26 (bag empty): going out first, worth
    21 + 2 x 7; leave values would rank it 38th."""
    from anchor.client import protocol as p
    from anchor.engine.gcg import read_gcg, replay
    from anchor.worker.runner import LexiconRegistry, run_request

    from .conftest import data_path

    rules = Ruleset.load("english")
    game = read_gcg(next(data_path("gcg").rglob("doug_v_emely.gcg")))
    board = list(replay(game, rules))[26].board
    registry = LexiconRegistry(
        {"twl06": str(data_path("kwg", "TWL06.kwg"))},
        leave_paths={"twl06": str(data_path("kwg", "TWL06.klv2"))},
    )
    request = p.Request(
        lexicon="twl06",
        positions=(p.Position(cgp=f"{board.to_cgp()} ?FS/ 0/0 0", limit=3),),
        rank="equity",
        leaves="twl06",
        options=p.Options(exchanges=True),
    )
    result = run_request(request, registry)
    assert [m[0] for m in result["moves"]] == ["14L (K)aFS", "M9 FaS", "M9 FeS"]
    assert result["equities"] == [35.0, 28.0, 28.0] and result["total"] == 363


@pytest.mark.parametrize("name", ["english", "russian", "erudit"])
def test_playouts_that_empty_the_bag_equal_the_reference(solvers, name):
    """Positions with 1-3 tiles in the bag: the playouts empty it, and from then on both
    sides play by score plus the ruleset's going-out adjustment (Эрудит: none), with no
    leave values at the end. The C core equals the Python reference (engine.simulate)."""
    from anchor.engine.leaves import Leaves
    from anchor.engine.simulate import candidates, iterate

    from .test_simulate import WithoutGraph

    solver = solvers[name]
    rules = solver.rules
    rng = random.Random(name)
    tiles = range(rules.size + 1)
    values = {(a,): rng.uniform(-8, 8) for a in tiles}
    values.update({(a, b): rng.uniform(-10, 10) for a in tiles for b in tiles if a <= b})
    leaves = Leaves(Leaves.to_bytes(values), rules)
    tried = 0
    for seed in range(40):
        bag = [0] * rules.blanks + [
            rules.index(c) for c, n in rules.counts.items() for _ in range(n)
        ]
        random.Random(seed).shuffle(bag)
        racks = [[bag.pop() for _ in range(rules.rack_size)] for _ in range(2)]
        board, side = Board.empty(rules), 0
        while len(bag) > 3:
            moves = solver.generate_moves(board, format_rack(rules, tuple(racks[side])), limit=1)
            if not len(moves):
                break
            for _, _, letter in moves[0].placed:
                racks[side].remove(0 if letter.islower() else rules.index(letter))
            board = board.apply(moves[0].placed)
            while len(racks[side]) < rules.rack_size and bag:
                racks[side].append(bag.pop())
            side = 1 - side
        if not 1 <= len(bag) <= 3:
            continue
        rack = format_rack(rules, tuple(racks[side]))
        chosen = candidates(solver, board, rack, leaves, 5)
        fast = iterate(solver, board, rack, leaves, chosen, 4, seed, range(3))
        slow = iterate(solver, board, rack, WithoutGraph(leaves), chosen, 4, seed, range(3))
        assert fast == slow, (name, seed)
        tried += 1
        if tried == 4:
            break
    assert tried == 4


def test_a_node_cap_answers_alike_on_every_machine(twl06_solver):
    """max_nodes stops the search like a time budget, but at the same place every time: the
    deepest completed iteration, not proven, identical twice; the cap lifts for the line of
    a proven value."""
    solver, rules = twl06_solver, twl06_solver.rules
    pos = parse_cgp(rules, real_endgames()["line27"])
    a = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], max_nodes=50_000)
    b = solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], max_nodes=50_000)
    assert not a.exact and (a.value, a.moves, a.depth, a.nodes) == (
        b.value,
        b.moves,
        b.depth,
        b.nodes,
    )
    assert 50_000 < a.nodes < 60_000
    quick = parse_cgp(rules, real_endgames()["line31"])
    capped = solver.solve_endgame(quick.board, quick.racks[0], quick.racks[1], max_nodes=300_000)
    whole = solver.solve_endgame(quick.board, quick.racks[0], quick.racks[1])
    assert capped.exact and (capped.value, capped.moves) == (whole.value, whole.moves)
    with pytest.raises(WorkLimitError, match="positions"):
        solver.solve_endgame(pos.board, pos.racks[0], pos.racks[1], max_nodes=1)
    # threads share the cap: every one stops (no hang), the answer is the deepest iteration
    # the first thread completed, unproven; or, when even its first did not finish, refused
    for cap in (1, 50_000):
        try:
            shared = solver.solve_endgame(
                pos.board, pos.racks[0], pos.racks[1], max_nodes=cap, threads=2
            )
        except WorkLimitError:
            assert cap == 1
            continue
        assert not shared.exact and shared.nodes < 2 * cap + 10_000


def test_self_play_ends_games_by_each_rulesets_rules(solvers):
    """Эрудит: no adjustment for tiles left, four scoreless turns end it; Russian (the box
    rules): going out earns the other rack once, and the other side loses it."""
    from anchor.engine.selfplay import play_game

    for seed in range(1, 9):
        game = play_game(solvers["erudit"], seed)
        assert game.adjustments == [0, 0]
        if game.end == "scoreless":
            assert all(t.move.score == 0 for t in game.turns[-4:])
        game = play_game(solvers["russian"], seed)
        rules = solvers["russian"].rules
        own = [sum(rules.values.get(ch, 0) for ch in r) for r in game.racks]
        if game.end == "out":
            out = game.turns[-1].player
            assert (
                game.adjustments[out] == own[1 - out] and game.adjustments[1 - out] == -own[1 - out]
            )
        else:
            assert game.adjustments == [-v for v in own]


@pytest.mark.parametrize("name, seed", [("english", 5), ("russian", 6), ("erudit", 7)])
def test_best_by_endgame_value_is_the_static_choice(solvers, name, seed):
    """The best-first empty-bag choice (engine/endgame.py: the going-out adjustment as a
    leave value) picks what ranking every play and reading them in score order picks,
    ties included: racks of 1 to 7 tiles with blanks on boards of played games, against
    opponent racks worth 0 to 60 (a bonus too small or too large to matter, and between)."""
    from anchor.engine.endgame import best_by_endgame_value, static_choice

    solver = solvers[name]
    rules = solver.rules
    rng = random.Random(seed)
    bag = [t for t in range(1, rules.size + 1) for _ in range(rules.counts[rules.alphabet[t - 1]])]
    bag += [0] * rules.blanks
    checked = went_out = ties = 0
    while checked < 150 or (ties < 5 and rules.end.out_bonus(1) and checked < 1500):
        board = played_board(solver, rng, rng.randint(2, 14))
        for size in (1, 2, 3, 5, 7):
            rack = format_rack(rules, rng.sample(bag, min(size, rules.rack_size)))
            points = rng.choice((0, 3, 12, 60))
            every = solver.generate_moves(board, rack)
            held = len(solver._rack(rack)[0])
            out = [m.score for m in every if len(m.placed) == held]
            factor = rules.end.out_bonus(1)
            if out and factor and every[0].score > max(out) and rng.random() < 0.8:
                gap = every[0].score - max(out)  # a bonus that ties going out with the top
                if gap % factor == 0:
                    points = gap // factor
                    ties += 1
            index = static_choice(every, rules, held, points)
            got = best_by_endgame_value(solver, board, rack, points)
            if index is None:
                assert got is None, (board.to_cgp(), rack)
                continue
            want = every[index]
            assert got is not None and (got.notation, got.score) == (want.notation, want.score), (
                board.to_cgp(),
                rack,
                points,
                got,
                want,
            )
            checked += 1
            went_out += len(want.placed) == held
    assert went_out >= 10  # the bonus decided some of them
    assert ties >= 5 or not rules.end.out_bonus(1)  # going out worth the top: the score decides


def test_a_request_budget_too_small_says_the_engines_reason(monkeypatch):
    """A work limit the request's own `seconds` set is reported with the engine's words; one
    that met the job's deadline is the job's timeout, as for every kind."""
    from anchor.client import protocol as p
    from anchor.engine import WorkLimitError
    from anchor.worker import runner

    def slow(*_args, **_kwargs):
        raise WorkLimitError("the endgame search did not finish its first iteration within 0.001 s")

    monkeypatch.setattr(runner, "run_endgame", slow)
    request = p.EndgameRequest(cgp=real_endgames()["line31"], seconds=0.001)
    with pytest.raises(p.ProtocolError) as info:
        runner.run(request, runner.LexiconRegistry(), deadline=runner.Deadline(30))
    assert info.value.code == p.TIMEOUT
    assert "first iteration within 0.001 s: the request allowed 0.001 s" in info.value.message
    # a job limit shorter than a tenth of a second: the request's still the tighter one
    with pytest.raises(p.ProtocolError) as info:
        runner.run(request, runner.LexiconRegistry(), p.Limits(job_seconds=0.05))
    assert "first iteration within 0.001 s: the request allowed 0.001 s" in info.value.message
    for looser in (replace(request, seconds=None), replace(request, seconds=60.0)):
        with pytest.raises(p.ProtocolError) as info:  # the job's limit ran out first
            runner.run(looser, runner.LexiconRegistry(), deadline=runner.Deadline(30))
        assert info.value.code == p.TIMEOUT
        assert "needed more than the 30 s it was given" in info.value.message
