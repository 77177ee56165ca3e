"""The pre-endgame (1 to 4 tiles in the bag) against a brute force written here again: every
way of dealing the unseen tiles (each tile a distinct object: which of them the bag holds and
in what order it is drawn), each side's modelled move while the bag holds tiles, and the
exact endgame once it is empty (the solver, which test_endgame holds to the plain minimax of
tests/endgame_reference.py on 1,100 endgames; a solve here owns no table shared with the
pre-endgame's). Rulesets written for the test: English
letters and board, three-tile racks, with and without exchanges from a small bag."""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import combinations, permutations

import pytest

from anchor.engine import Board, InputError, Ruleset, Solver, WorkLimitError
from anchor.engine.notation import format_rack, parse_rack
from anchor.engine.preendgame import check_stages, solve_preendgame

from .conftest import data_path

MINI = """
name = "mini"
title = "English letters, three-tile racks, more of the common letters"
rows = 15
cols = 15
rack_size = 3
bingo_bonus = 10
centre = "8H"
total_tiles = 37
{extra}
tiles = '''
A 3 1
B 1 3
C 1 3
D 1 2
E 3 1
F 1 4
G 1 2
H 1 4
I 2 1
J 1 8
K 1 5
L 1 1
M 1 3
N 2 1
O 2 1
P 1 3
Q 1 10
R 2 1
S 2 1
T 2 1
U 1 1
V 1 4
W 1 4
X 1 8
Y 1 4
Z 1 10
? 1 0
'''
premiums = '''
{grid}
'''
"""


@pytest.fixture(scope="module", params=["bag-of-3", "bag-of-1"])
def mini(request, default_english, english) -> Solver:
    """The three-tile ruleset: an exchange needs a rack's worth in the bag (3), or, like
    Эрудит, one tile; exchanges are candidates and modelled moves either way."""
    extra = "exchange_min_bag = 1" if request.param == "bag-of-1" else ""
    text = MINI.format(extra=extra, grid="\n".join(english.premiums))
    rules = Ruleset.from_toml(text, source="mini.toml")
    return Solver(default_english, rules)


def positions(solver: Solver, seeds: range):
    """(board, rack to move, the tiles it cannot see, bag size, lead) from self-played games,
    stopped when the bag holds 1 to 4 tiles (the size picked at random for each game)."""
    rules = solver.rules
    for seed in seeds:
        rng = random.Random(seed)
        want = rng.randint(1, 4)
        bag = [0] + [rules.index(c) for c, n in rules.counts.items() for _ in range(n)]
        rng.shuffle(bag)
        racks = [[bag.pop() for _ in range(3)] for _ in range(2)]
        board, side, scores = Board.empty(rules), 0, [0, 0]
        while len(bag) > want:
            moves = solver.generate_moves(board, format_rack(rules, tuple(racks[side])), limit=3)
            if not len(moves):
                break
            move = moves[rng.randrange(len(moves))]
            for _, _, letter in move.placed:
                racks[side].remove(0 if letter.islower() else rules.index(letter))
            board = board.apply(move.placed)
            scores[side] += move.score
            while len(racks[side]) < 3 and bag:
                racks[side].append(bag.pop())
            side = 1 - side
        if len(bag) != want:
            continue
        unseen = tuple(sorted([*racks[1 - side], *bag]))
        lead = scores[side] - scores[1 - side]
        yield board, tuple(sorted(racks[side])), unseen, want, lead


def tiles_of(rules, text: str) -> tuple[int, ...]:
    """A bag's letters as sorted tile numbers (a bag may hold more than a rack)."""
    return tuple(sorted(0 if ch == "?" else rules.index(ch) for ch in text))


def _without(rack, gone):
    left = list(rack)
    for t in gone:
        left.remove(t)
    return tuple(sorted(left))


class Reference:
    """The model played out literally, one deal of distinct tiles at a time."""

    def __init__(self, solver: Solver):
        self.solver, self.rules = solver, solver.rules
        self.ends: dict = {}  # endgames met before (deals share them)
        self.turns: dict = {}  # modelled turns met before, by the exact order of the bag

    def endgame(self, board, mover, other, scoreless) -> int:
        key = (board.cells, mover, other, scoreless)
        if key not in self.ends:
            rules = self.rules
            found = self.solver.solve_endgame(
                board, format_rack(rules, mover), format_rack(rules, other),
                scoreless_turns=scoreless,
            )  # fmt: skip
            assert found.exact
            self.ends[key] = found.value
        return self.ends[key]

    def modelled(self, board, rack, bag_size):
        """The first of every move ranked by score (the whole list, exchanges the bag allows
        and the pass included)."""
        rules = self.rules
        moves = self.solver.generate_moves(
            board, format_rack(rules, rack), include_exchanges=True,
            max_exchange=rules.max_exchange(bag_size),
        )  # fmt: skip
        return moves[0]

    def turn(self, board, mover, other, order, scoreless, move=None) -> list:
        """The spreads `mover` gains to the end, as (spread, weight) pairs, the bag drawn in
        `order` (an exchange puts tiles back and the bag is shaken: every order of the new
        bag, each as likely)."""
        rules, end = self.rules, self.rules.end
        if move is None:
            if not order:
                return [(self.endgame(board, mover, other, scoreless), 1.0)]
            key = (board.cells, mover, other, tuple(order), scoreless)
            if key not in self.turns:
                move = self.modelled(board, mover, len(order))
                self.turns[key] = self.turn(board, mover, other, order, scoreless, move)
            return self.turns[key]
        if move.kind == "play":
            laid = [0 if ch.islower() else rules.index(ch) for _, _, ch in move.placed]
            drawn, rest = order[: len(laid)], order[len(laid) :]
            rack = tuple(sorted(_without(mover, laid) + tuple(drawn)))
            below = self.turn(board.apply(move.placed), other, rack, rest, 0)
            return [(move.score - s, w) for s, w in below]
        if scoreless + 1 >= end.scoreless_turns:
            if not end.scoreless_loses_own:
                return [(0, 1.0)]
            mine = sum(rules.tile_values[t] for t in mover)
            return [(sum(rules.tile_values[t] for t in other) - mine, 1.0)]
        if move.kind == "pass":
            return [(-s, w) for s, w in self.turn(board, other, mover, order, scoreless + 1)]
        thrown = parse_rack(rules, move.exchanged)
        drawn, rest = order[: len(thrown)], order[len(thrown) :]
        rack = tuple(sorted(_without(mover, thrown) + tuple(drawn)))
        bags = list(permutations(rest + list(thrown)))
        return [
            (-s, w / len(bags))
            for bag in bags
            for s, w in self.turn(board, other, rack, list(bag), scoreless + 1)
        ]

    def outcomes(self, board, rack, unseen, k, lead, move) -> dict:
        """{bag as sorted tiles: [ways, mean spread, wins, ties]} over every deal."""
        found = defaultdict(list)
        for chosen in combinations(range(len(unseen)), k):
            bag = [unseen[i] for i in chosen]
            other = tuple(sorted(unseen[i] for i in range(len(unseen)) if i not in chosen))
            orders = list(permutations(bag))
            spreads = [
                (s, w / len(orders))
                for order in orders
                for s, w in self.turn(board, rack, other, list(order), 0, move)
            ]
            found[tuple(sorted(bag))].append(spreads)
        out = {}
        for bag, deals in found.items():
            spreads = [(s, w / len(deals)) for deal in deals for s, w in deal]
            out[bag] = [
                len(deals),
                sum(s * w for s, w in spreads),
                sum(w for s, w in spreads if lead + s > 0),
                sum(w for s, w in spreads if lead + s == 0),
            ]
        return out


def test_every_candidates_outcomes_equal_the_brute_force(mini):
    """Solved to the end with nothing cut, each candidate's outcome for every bag (its
    weight, mean spread, wins, ties) and its totals equal the brute force; the ranking is by
    the chance of winning, then the mean."""
    solver, rules = mini, mini.rules
    reference = Reference(solver)
    checked, sizes, kinds = 0, set(), set()
    for board, rack, unseen, k, lead in positions(solver, range(150)):
        text = format_rack(rules, rack)
        found = solve_preendgame(
            solver, board, text, candidates=4, lead=lead, stages=((None, 6),), cut=False
        )
        assert found.bag == k and sorted(found.unseen.replace("?", "")) == sorted(
            rules.letter(t) for t in unseen if t
        )
        assert any(p.move.kind == "pass" for p in found.plays)
        for play in found.plays:
            want = reference.outcomes(board, rack, unseen, k, lead, play.move)
            got = {tiles_of(rules, o.bag): o for o in play.outcomes}
            assert set(got) == set(want), (board.to_cgp(), text, play.move.notation)
            for bag, (ways, mean, wins, ties) in want.items():
                o = got[bag]
                assert o.count == ways and o.exact
                assert o.value == pytest.approx(mean, abs=1e-9), (
                    board.to_cgp(), text, play.move.notation, bag,
                )  # fmt: skip
                assert (o.wins, o.ties) == (pytest.approx(wins), pytest.approx(ties))
            ways = sum(w[0] for w in want.values())
            assert play.mean == pytest.approx(sum(w[0] * w[1] for w in want.values()) / ways)
            assert play.wins == pytest.approx(sum(w[0] * w[2] for w in want.values()) / ways)
            assert play.exact and play.modelled == (
                play.move.kind != "play" or len(play.move.placed) < k
            )
            checked += 1
            sizes.add(k)
            kinds.add(play.move.kind)
        keys = [(-p.win_rate, -p.mean, p.move.notation) for p in found.plays]
        assert keys == sorted(keys)
    assert checked >= 100 and sizes == {1, 2, 3, 4}, (checked, sizes)
    assert "pass" in kinds and "exchange" in kinds


def test_cutting_keeps_the_best_play_and_bounds_the_rest(mini):
    """Dropping candidates that cannot win as often as the best finished one changes
    nothing at the top: the same best play, chance and mean; each dropped one's bound is
    below the best's chance, and its full value (uncut) is too."""
    solver, rules = mini, mini.rules
    for board, rack, _, _, lead in positions(solver, range(60, 90)):
        text = format_rack(rules, rack)
        whole = solve_preendgame(solver, board, text, candidates=6, lead=lead,
                                 stages=((None, 7),), cut=False)  # fmt: skip
        fast = solve_preendgame(solver, board, text, candidates=6, lead=lead,
                                stages=((1, 7), (None, 7)))  # fmt: skip
        best = whole.plays[0]
        assert fast.plays[0].win_rate == pytest.approx(best.win_rate)
        assert fast.plays[0].mean == pytest.approx(
            max(p.mean for p in whole.plays if p.win_rate == pytest.approx(best.win_rate))
        )
        values = {p.move.notation: p for p in whole.plays}
        for play in fast.plays:
            if play.cut:
                assert play.win_bound < best.win_rate
                assert values[play.move.notation].win_rate < best.win_rate


def test_stages_rank_and_narrow(mini):
    """Each stage values the top of the one before: the last stage's plays come first, each
    says its stage and depth, the candidates it dropped say so, and only a play whose every
    endgame ended within the depth is called exact."""
    solver, rules = mini, mini.rules
    seen = 0
    depth = {1: 1, 2: 2, 3: None}
    for board, rack, _, _, lead in positions(solver, range(90, 120)):
        found = solve_preendgame(solver, board, format_rack(rules, rack), candidates=8,
                                 lead=lead, stages=((1, 8), (2, 4), (None, 2)))  # fmt: skip
        valued = [n for _, n, _ in found.stages]
        assert len(valued) == 3 and valued[1] <= 4 and valued[2] <= 2
        assert valued[0] == len(found.plays) and found.plays[0].stage == 3
        kept = [p.stage for p in found.plays if not p.cut]
        assert kept == sorted(kept, reverse=True)
        for p in found.plays:
            assert p.plies == depth[p.stage]
            assert p.exact == all(o.exact for o in p.outcomes)
            assert not p.cut or p.stage == 2 and p.win_bound < found.plays[0].win_rate
        seen += 1
    assert seen >= 3


def test_bad_arguments_and_positions_are_refused(mini):
    solver, rules = mini, mini.rules
    board, rack, _, _, _ = next(positions(solver, range(100, 200)))
    text = format_rack(rules, rack)
    for stages in ((), ((0, 3),), ((2, 0),), ((2, 3), (None, 5)), [[2]], "2", ((True, 3),)):
        with pytest.raises(InputError):
            check_stages(stages)
    for bad in (0, 101, True, 2.5):
        with pytest.raises(InputError):
            solve_preendgame(solver, board, text, candidates=bad)
    with pytest.raises(InputError):
        solve_preendgame(solver, board, text, budget_s=float("nan"))
    with pytest.raises(InputError, match="pre-endgame needs 1 to 4"):
        solve_preendgame(solver, Board.empty(rules), text)


def test_a_budget_keeps_the_last_stage_finished(twl06_preendgame):
    """A budget too small for the deep stages answers with the first stage's values and
    says the time ran out; too small for the first stage, it is a WorkLimitError."""
    solver, board, rack, lead = twl06_preendgame
    found = solve_preendgame(solver, board, rack, candidates=6, lead=lead,
                             stages=((1, 6), (None, 6)), budget_s=1.0)  # fmt: skip
    assert found.budget_hit and found.plays
    assert all(p.stage == 1 or p.cut or p.exact for p in found.plays)
    with pytest.raises(WorkLimitError):
        solve_preendgame(solver, board, rack, stages=((None, 32),), budget_s=0.001)


@pytest.fixture(scope="module")
def twl06_preendgame(magpie_twl06, english):
    """The CLI's example: one tile in the bag, a 7-tile rack against 7 tiles unseen."""
    from anchor.client.cli import PREENDGAME_CGP
    from anchor.engine.position import parse_cgp

    pos = parse_cgp(english, PREENDGAME_CGP.strip("'"))
    return Solver(magpie_twl06, english), pos.board, pos.racks[0], pos.lead


# ------------------------------------------------------------- protocol and annotation

RECORD = data_path("gcg", "macondo", "preendgame", "testdata", "issue_476.gcg")


@pytest.fixture(scope="module")
def registry():
    from anchor.worker.registry import LexiconRegistry

    return LexiconRegistry(
        {"twl06": str(data_path("kwg", "TWL06.kwg"))},
        leave_paths={"twl06": str(data_path("kwg", "TWL06.klv2"))},
    )


def run(registry, **fields) -> dict:
    from anchor.client import protocol as p
    from anchor.worker.runner import run_request

    return run_request(p.decode_request(p.pack({"v": 1, **fields})), registry)


def test_the_request_answers_as_the_engine_and_refuses_bad_stages(registry, twl06_preendgame):
    """Through the runner: the stages as asked (0 is to the end), plays as maps in the
    engine's order with their outcomes; stages that grow, run past the endgame's depth or
    value none are bad_value."""
    from anchor.client import protocol as p
    from anchor.client.cli import PREENDGAME_CGP

    solver, board, rack, lead = twl06_preendgame
    cgp = PREENDGAME_CGP.strip("'")
    got = run(registry, kind="preendgame", cgp=cgp, lexicon="twl06", candidates=6,
              stages=[[1, 6], [2, 3]])  # fmt: skip
    want = solve_preendgame(solver, board, rack, candidates=6, lead=lead, stages=((1, 6), (2, 3)))
    assert [pl["move"] for pl in got["plays"]] == [pl.move.notation for pl in want.plays]
    assert [pl["mean"] for pl in got["plays"]] == [pl.mean for pl in want.plays]
    assert got["bag"] == 1 and [s[:2] for s in got["stages"]] == [[1, 7], [2, 3]]
    top = got["plays"][0]
    assert sum(o[1] for o in top["outcomes"]) == 8 and top["plies"] == 2
    for stages in ([[65, 3]], [[2, 3], [2, 5]], [[2, 0]], [[2]], [[2, 3, 4]], [["2", 3]]):
        with pytest.raises(p.ProtocolError) as info:
            run(registry, kind="preendgame", cgp=cgp, lexicon="twl06", stages=stages)
        assert info.value.code in (p.BAD_VALUE, p.WRONG_TYPE), stages
    # candidates named in `only` are those moves, each spelled as a move list writes it;
    # one the rack cannot make is named back, not dropped
    top = [pl["move"] for pl in got["plays"][:2]]
    named = run(registry, kind="preendgame", cgp=cgp, lexicon="twl06", stages=[[1, 6]],
                only=[*top, "-"])  # fmt: skip
    assert {pl["move"] for pl in named["plays"]} == {*top, "-"}
    with pytest.raises(p.ProtocolError) as info:
        run(registry, kind="preendgame", cgp=cgp, lexicon="twl06", only=[top[0], "8H ZZZ", "-QQ"])
    assert info.value.code == p.BAD_POSITION  # as every engine refusal of the request
    assert "'8H ZZZ', '-QQ' are not moves of rack" in info.value.message
    assert "with 1 in the bag no exchange is allowed" in info.value.message
    with pytest.raises(p.ProtocolError) as info:  # each move named once, as first written
        run(registry, kind="preendgame", cgp=cgp, lexicon="twl06",
            only=["8H ZZZ", " 8H ZZZ", "-QA", "-AQ", "8H ZZZ "])  # fmt: skip
    assert "only: '8H ZZZ', '-QA' are not moves of rack" in info.value.message
    with pytest.raises(p.ProtocolError) as info:  # no exchange named: no word of exchanges
        run(registry, kind="preendgame", cgp=cgp, lexicon="twl06", only=["8H ZZZ"])
    assert "exchange is allowed" not in info.value.message
    assert repr(top[0]) not in info.value.message


def test_annotation_values_the_turns_with_one_to_four_in_the_bag(registry):
    """`preendgame` on an annotation: exactly the turns with 1 to 4 tiles in the bag (a
    known rack) carry it, the play made among the moves valued, with its rank."""
    from anchor.engine.gcg import parse_gcg

    text = RECORD.read_text(encoding="utf-8")
    got = run(registry, kind="annotate", gcg=text, lexicon="twl06", leaves="twl06",
              preendgame=True, preendgame_stages=[[1, 6], [2, 2]])  # fmt: skip
    turns = got["annotation"]["turns"]
    valued = [t for t in turns if "preendgame" in t]
    rules = Ruleset.load("english")
    for t in turns:
        bag = len(t.get("unseen", "")) - rules.rack_size
        analysed = t.get("analysed") and t.get("legal")
        assert ("preendgame" in t) == bool(analysed and 1 <= bag <= 4), t["index"]
    assert len(valued) >= 2 and parse_gcg(text, source="issue_476.gcg")
    for t in valued:
        advice = t["preendgame"]
        assert advice["made"][0] == t["played"] and advice["made_rank"] >= 1
        assert advice["best"][0][0] == advice["made"][0] or advice["made_rank"] > 1


def test_threads_give_the_same_proven_answer(mini):
    """Candidates valued on two and three threads (a solver and a table each): every
    proven value equal to one thread's, and with the cut the same best play and chance."""
    solver, rules = mini, mini.rules
    seen = 0
    for board, rack, _, _, lead in positions(solver, range(120, 150)):
        text = format_rack(rules, rack)
        one = solve_preendgame(solver, board, text, candidates=6, lead=lead,
                               stages=((None, 7),), cut=False)  # fmt: skip
        for threads in (2, 3):
            many = solve_preendgame(solver, board, text, candidates=6, lead=lead,
                                    stages=((None, 7),), cut=False, threads=threads)  # fmt: skip
            assert [(p.move.notation, p.mean, p.wins, p.ties) for p in many.plays] == [
                (p.move.notation, p.mean, p.wins, p.ties) for p in one.plays
            ]
            cut = solve_preendgame(solver, board, text, candidates=6, lead=lead,
                                   stages=((None, 7),), threads=threads)  # fmt: skip
            assert cut.plays[0].win_rate == pytest.approx(one.plays[0].win_rate)
        seen += 1
    assert seen >= 4


class SplitClient:
    """A client whose jobs the engine answers in this process on the test's ruleset, as
    a worker would (worker.runner's conversion): the fleet's split without Redis."""

    def __init__(self, solver: Solver, board: Board, rack: str, lead: int):
        self.solver, self.board, self.rack, self.lead = solver, board, rack, lead
        self.asked: list = []

    def analyze(self, request, timeout=None) -> dict:
        return self.analyze_many([request])[0]

    def analyze_many(self, requests, timeout=None) -> list[dict]:
        from anchor.worker.runner import preendgame_result

        out = []
        for r in requests:
            self.asked.append(r)
            found = solve_preendgame(
                self.solver, self.board, self.rack, candidates=r.candidates, lead=self.lead,
                stages=tuple((plies or None, n) for plies, n in r.stages), cut=r.cut,
                only=r.only, part=r.part, parts=r.parts,
            )  # fmt: skip
            out.append(preendgame_result(found).to_wire(0))
        return out


def test_a_split_over_jobs_answers_as_one_process(mini):
    """Each stage dealt out to 2 and 3 jobs and ranked by the client: with the endgames
    solved to the end, every move's values equal one process's, in the same order; with
    a shallow first stage, the same moves reach the last stage and the same best play."""
    from anchor.client import preendgame as split
    from anchor.client import protocol as p

    solver, rules = mini, mini.rules
    seen = 0
    for board, rack, _, _, lead in positions(solver, range(150, 260)):
        text = format_rack(rules, rack)
        for stages in (((None, 7),), ((1, 7), (None, 3))):
            one = solve_preendgame(solver, board, text, candidates=6, lead=lead, stages=stages,
                                   cut=False)  # fmt: skip
            for parts in (2, 3):
                client = SplitClient(solver, board, text, lead)
                request = p.PreendgameRequest(
                    cgp="-", candidates=6, cut=False,
                    stages=tuple((plies or 0, n) for plies, n in stages),
                )  # fmt: skip
                got = split.solve(client, request, parts=parts)
                assert [pl["move"] for pl in got.plays] == [pl.move.notation for pl in one.plays]
                for pl, want in zip(got.plays, one.plays, strict=True):
                    if want.plies is None:
                        assert pl["mean"] == want.mean and pl["stage"] == want.stage
                assert all(r.parts == parts or r.only for r in client.asked)
        seen += 1
    assert seen >= 4


def test_a_scoreless_count_past_the_limit_and_parts_in_the_cli_are_handled(mini, tmp_path):
    """A game over by scoreless turns has no pre-endgame; `--parts` answers in-process."""
    solver, rules = mini, mini.rules
    board, rack, _, _, _ = next(positions(solver, range(100, 200)))
    limit = rules.end.scoreless_turns
    with pytest.raises(InputError, match="scoreless turns"):
        solve_preendgame(solver, board, format_rack(rules, rack), scoreless=limit)
