"""The move generator on real positions: counts checked against the oracle, every play
validated and rescored independently, MAGPIE's expected plays, API contract, bad input."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Board, InputError, Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine._movegen import RECORD_SIZE

from .conftest import data_path
from .oracle import all_plays

ENGLISH = Ruleset.load("english")
# Plays found with TWL06 on ../shared/data/bench/positions.cgp (player to move's rack).
# Each count was checked against tests/oracle.py with the whole TWL06 list (2026-11-22);
# the first six are re-checked by test_bench_positions_match_the_oracle below.
BENCH_COUNTS = [275, 94, 296, 1714, 5408, 330, 158_705]


def bench_positions():
    lines = data_path("bench", "positions.cgp").read_text().splitlines()
    return [parse_cgp(ENGLISH, ln) for ln in lines if ln.strip() and not ln.startswith("#")]


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


@pytest.fixture(scope="module")
def twl06_set(twl06_words) -> set[str]:
    return {w.upper() for w in twl06_words}


def test_bench_counts(solver):
    positions = bench_positions()
    assert [len(solver.generate_moves(p.board, p.racks[0])) for p in positions] == BENCH_COUNTS


@pytest.mark.parametrize("index", range(6))
def test_bench_positions_match_the_oracle(solver, twl06_set, index):
    pos = bench_positions()[index]
    got = {frozenset(m.placed): m.score for m in solver.generate_moves(pos.board, pos.racks[0])}
    assert got == all_plays(pos.board, pos.racks[0], twl06_set)


def test_every_play_validates_and_rescores(solver):
    for i, pos in enumerate(bench_positions()):
        rack = pos.racks[0]
        moves = solver.generate_moves(pos.board, rack)
        picked = range(len(moves)) if i < 6 else random.Random(1).sample(range(len(moves)), 3000)
        for k in picked:
            m = moves[k]
            check = solver.validate_play(pos.board, m.notation, rack=rack)
            assert check.ok, (m.notation, check.errors)
            assert check.score.total == m.score, m.notation
            assert solver.validate_play(pos.board, list(m.placed), rack=rack).score.total == m.score


def magpie_cgp(name: str) -> Board:
    for line in data_path("cgp", "magpie_test_constants_cgp.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry["name"] == name:
            return Board.from_cgp(ENGLISH, entry["cgp"])
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name, rack, play, score, best",
    [
        ("VS_ED", "AAEIRST", "5B AIR(GLOWS)", 12, False),
        ("VS_ED", "AAEIRST", "5C RE(GLOWS)", 11, False),
        ("VS_MATT", "A", "15C A(VENGED)", 12, True),
        ("VS_MATT", "A", "1L (F)A", 5, False),
        ("VS_JEREMY", "DDESW??", "14B hEaDW(OR)DS", 106, True),
        ("VS_OXY", "ABEOPXZ", "A1 OX(Y)P(HEN)B(UT)AZ(ON)E", 1780, True),
        ("FRAWZEY_CGP", "GONOPOR", "15A GONOPOR(E)", 86, True),
    ],
)
def test_plays_magpie_expects(solver, name, rack, play, score, best):
    # ../shared/data/cgp/expected_moves_from_magpie_move_gen_test.tsv (scores do not
    # depend on the lexicon; these words are all in TWL06)
    moves = solver.generate_moves(magpie_cgp(name), rack)
    found = {m.notation: m.score for m in moves}
    assert found[play] == score
    if best:
        assert moves[0].notation == play and moves[0].score == score


def test_best_opening_with_a_blank(solver):
    best = solver.best_move(magpie_cgp("EMPTY_CGP"), "DEGORV?")
    assert best.score == 80 and len(best.placed) == 7 and best.row == 7


def test_limit_returns_the_top_without_ranking_the_rest(solver):
    pos = bench_positions()[4]
    everything = solver.generate_moves(pos.board, pos.racks[0])
    for n in (0, 1, 2, 10, 100, len(everything), len(everything) + 5):
        top = solver.generate_moves(pos.board, pos.racks[0], limit=n)
        assert len(top) == min(n, len(everything))
        assert [m.notation for m in top] == [m.notation for m in everything[:n]]
        # best-first skips what cannot rank; it knows the count only when it skipped nothing
        assert top.total in (None, len(everything)) and top.generated <= len(everything)
        assert (top.total is None) == (n < len(everything))
    assert solver.best_move(pos.board, pos.racks[0]) == everything[0]


def test_ranking_is_deterministic(solver):
    pos = bench_positions()[3]
    a = [m.notation for m in solver.generate_moves(pos.board, pos.racks[0])]
    b = [m.notation for m in solver.generate_moves(pos.board, pos.racks[0])]
    assert a == b


def test_modes(solver):
    for pos in bench_positions()[:6]:
        rack = pos.racks[0]
        both = solver.generate_moves(pos.board, rack)
        across = solver.generate_moves(pos.board, rack, mode="across")
        down = solver.generate_moves(pos.board, rack, mode="down")
        assert {m.direction for m in across} <= {"across"}
        assert {m.direction for m in down} <= {"down"}
        lone_both_ways = {frozenset(m.placed) for m in across if len(m.placed) == 1} & {
            frozenset(m.placed) for m in down if len(m.placed) == 1
        }
        assert len(both) == len(across) + len(down) - len(lone_both_ways)
        keys = {frozenset(m.placed) for m in both}
        assert keys == {frozenset(m.placed) for m in list(across) + list(down)}


def test_lone_tile_forming_two_words_is_one_play(solver):
    board = Board.from_rows(
        ENGLISH, ["." * 15] * 6 + [".........A....."] + ["......CAT......"] + ["." * 15] * 7
    )
    moves = solver.generate_moves(board, "S")
    keys = [frozenset(m.placed) for m in moves]
    assert len(keys) == len(set(keys))
    (cats,) = [m for m in moves if m.placed == ((7, 9, "S"),)]
    assert cats.score == 8 and cats.direction == "across"


def test_move_fields_and_lazy_list(solver):
    pos = bench_positions()[0]
    moves = solver.generate_moves(pos.board, pos.racks[0])
    assert len(moves) == 275 and "MoveList" in repr(moves)
    m = moves[0]
    assert (m.notation, m.score, m.row, m.col, m.direction) == ("H10 (G)RILLS", 24, 9, 7, "down")
    assert m.word == "GRILLS" and m.placed == (
        (10, 7, "R"),
        (11, 7, "I"),
        (12, 7, "L"),
        (13, 7, "L"),
        (14, 7, "S"),
    )
    assert moves[-1] == moves[len(moves) - 1] and moves[:3] == [moves[0], moves[1], moves[2]]
    with pytest.raises(IndexError):
        moves[275]
    assert m.to_dict()["placed"][0] == [10, 7, "R"]
    assert moves.scores()[:2] == [24, 22]


def test_exchanges_and_pass(solver):
    pos = bench_positions()[0]
    moves = solver.generate_moves(pos.board, "AABC?", include_exchanges=True)
    extra = [m for m in moves if m.kind != "play"]
    # distinct non-empty sub-multisets of AABC?: 3*2*2*2 - 1 = 23, then the pass
    assert len(extra) == 24 and extra[-1].notation == "-" and extra[-1].kind == "pass"
    assert {m.notation for m in extra if m.kind == "exchange"} >= {"-A", "-AA", "-AABC?", "-?"}
    assert all(m.score == 0 for m in extra)
    assert len(moves) == len(solver.generate_moves(pos.board, "AABC?")) + 24


def test_empty_rack_and_empty_lexicon(solver):
    pos = bench_positions()[0]
    assert len(solver.generate_moves(pos.board, "")) == 0
    assert solver.best_move(pos.board, "") is None
    empty = Solver(Lexicon.build([], ENGLISH))
    assert len(empty.generate_moves(pos.board, "AEINRST")) == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rack": "AEINRSTU"}, "at most 7"),
        ({"rack": "AE1"}, "not a letter"),
        ({"rack": "AEЖ"}, "not a letter"),
        ({"rack": "AE", "mode": "sideways"}, "mode must be one of"),
        ({"rack": "AE", "limit": -1}, "limit must be"),
        ({"rack": "AE", "limit": 2.5}, "limit must be"),
        ({"rack": "AE", "limit": True}, "limit must be"),
        ({"rack": "AE", "mode": ["across"]}, "mode must be one of"),  # unhashable: no TypeError
        ({"rack": "AE", "rank": "win"}, "rank must be"),
        ({"rack": "AE", "rank": "equity"}, "needs leave values"),
        ({"rack": "AE", "leaves": "x.klv2"}, "only with rank='equity'"),
        ({"rack": "AE", "rank": "equity", "leaves": 3}, "leaves must be Leaves"),
        ({"rack": "AE", "budget": "1"}, "budget must be"),
        ({"rack": "AE", "budget": float("nan")}, "budget must be"),
    ],
)
def test_bad_input_is_refused_before_c(solver, kwargs, message):
    with pytest.raises(InputError, match=message):
        solver.generate_moves(bench_positions()[0].board, **kwargs)


def test_racks_parsed_once_give_the_same_plays_and_errors(solver):
    """Racks are parsed once per text and kept: a repeated rack finds the same plays, a bad
    one is refused every time (never kept), and a non-string is refused, not looked up."""
    board = bench_positions()[0].board
    first = [m.notation for m in solver.generate_moves(board, "AEINRS?")]
    assert [m.notation for m in solver.generate_moves(board, "AEINRS?")] == first
    assert [m.notation for m in solver.generate_moves(board, "aeinrs?")] == first
    for _ in range(2):
        with pytest.raises(InputError, match="not a letter"):
            solver.generate_moves(board, "AE1")
    with pytest.raises(InputError, match="a rack must be text"):
        solver.generate_moves(board, ["A", "E"])


def test_board_of_another_ruleset_is_refused(solver, russian):
    with pytest.raises(InputError, match="this solver plays english"):
        solver.generate_moves(Board.empty(russian), "AB")


def test_c_entry_checks_its_arguments(solver):
    gen = solver._generator
    rack = bytes(27)
    for cells, rk, mode, message in [
        (bytes(224), rack, 3, "224 cells"),
        (bytes([27]) + bytes(224), rack, 3, "invalid byte"),
        (bytes([0x80]) + bytes(224), rack, 3, "invalid byte"),
        (bytes(225), bytes(26), 3, "27 counts"),
        (bytes(225), bytes([8]) + bytes(26), 3, "at most 7"),
        (bytes(225), rack, 0, "mode"),
    ]:
        with pytest.raises(ValueError, match=message):
            gen.generate(cells, rk, mode, -1)
    records, total, complete = gen.generate(bytes(225), bytes([2]) + bytes(26), 3, -1)
    # two blanks: every 2-letter word
    assert complete and total > 0 and len(records) == total * RECORD_SIZE


@settings(max_examples=300, deadline=None)
@given(
    cells=st.lists(st.integers(0, 255), min_size=225, max_size=225),
    rack=st.lists(st.integers(0, 3), min_size=27, max_size=27),
    mode=st.integers(-1, 4),
    limit=st.integers(-1, 50),
)
def test_fuzz_c_entry(solver, cells, rack, mode, limit):
    """Arbitrary bytes straight into C: a ValueError or a well-formed answer, never a crash."""
    try:
        records, found, complete = solver._generator.generate(
            bytes(cells), bytes(rack), mode, limit
        )
    except ValueError:
        return
    assert len(records) % RECORD_SIZE == 0 and len(records) // RECORD_SIZE <= found
    assert complete or limit >= 0


@settings(max_examples=200, deadline=None)
@given(
    cells=st.lists(
        st.one_of(
            st.just(0), st.just(0), st.integers(1, 26), st.integers(1, 26).map(lambda t: t | 0x80)
        ),
        min_size=225,
        max_size=225,
    ),
    rack=st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ?", max_size=7),
)
def test_fuzz_garbage_boards_never_break_the_rules(solver, cells, rack):
    """Boards full of non-words: every play found still validates and scores the same."""
    board = Board(ENGLISH, bytes(cells))
    moves = solver.generate_moves(board, rack, limit=40)
    for m in moves:
        check = solver.validate_play(board, list(m.placed), rack=rack)
        assert check.ok and check.score.total == m.score, (m.notation, check.errors)


def test_top_n_in_bounded_memory_is_the_full_rankings_head(solver):
    """With a limit the generator keeps the best N records found so far in a heap, and a
    later play that cannot beat the Nth is dropped: the head of the full ranking, ties
    and all, for score and for equity, on the two-blank position (158,705 plays)."""
    from anchor.engine.leaves import Leaves

    pos = bench_positions()[6]
    rack = pos.racks[0]
    full = solver.generate_moves(pos.board, rack)
    names = [m.notation for m in full]
    for n in (1, 7, 2047, 2048, 5000, 70_000):
        top = solver.generate_moves(pos.board, rack, limit=n)
        assert full.total == 158_705 and top.total is None and top.generated < 158_705
        assert [m.notation for m in top] == names[:n], n
    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), solver.rules)
    by_equity = solver.generate_moves(pos.board, rack, rank="equity", leaves=leaves)
    for n in (1, 10, 3000):
        top = solver.generate_moves(pos.board, rack, limit=n, rank="equity", leaves=leaves)
        assert [m.notation for m in top] == [m.notation for m in by_equity[:n]]
        assert top.equities() == by_equity.equities()[:n]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.integers(0, 10_000), st.integers(0, 300))
def test_top_n_matches_the_full_ranking_on_random_racks(solver, index, seed, n):
    from anchor.engine.legality import random_rack

    board = bench_positions()[index].board
    rack = random_rack(board, random.Random(seed))
    if seed % 3 == 0:
        rack = rack[:5] + "?"
    full = solver.generate_moves(board, rack)
    top = solver.generate_moves(board, rack, limit=n)
    assert top.total in (None, full.total)
    assert [m.notation for m in top] == [m.notation for m in full[:n]]


def test_a_time_budget_stops_the_search(solver):
    from anchor.engine import WorkLimitError

    pos = bench_positions()[6]
    with pytest.raises(WorkLimitError, match="longer than"):
        solver.generate_moves(pos.board, pos.racks[0], budget=0.0005)
    best = solver.generate_moves(pos.board, pos.racks[0], limit=1, budget=60)
    assert best[0].score == 122
    gen = solver._generator
    for kwargs, message in [({"budget": -1.0}, "budget"), ({"budget": float("nan")}, "budget")]:
        with pytest.raises(ValueError, match=message):
            gen.generate(bytes(225), bytes(27), 3, -1, **kwargs)
    with pytest.raises(ValueError, match="limit"):
        gen.generate(bytes(225), bytes(27), 3, -2)


def plays_of(moves) -> list:
    return [(m.notation, m.score) for m in moves]


def test_a_board_asked_about_again_is_prepared_once_with_the_same_plays(magpie_twl06):
    """The generator keeps the passes of a board that comes twice in a row (one position,
    several racks), prepared for every letter: the third call and later reuse them. Every
    call, first to last, across boards, modes, limits and ranks, gives what a generator
    that never saw the board gives."""
    from anchor.engine.leaves import Leaves

    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)
    cached = Solver(magpie_twl06, ENGLISH)
    rng = random.Random(8)
    positions = bench_positions()[:6]
    racks = ["AEINRST", "CGILLRS", "QI", "EILNOR?", "??", "VVWXYZU", ""]
    for step in range(120):
        pos = positions[rng.choice((0, 0, 1, 2, step % 6))]  # runs of one board, then others
        rack = rng.choice(racks + [pos.racks[0]])
        mode = rng.choice(("both", "across", "down"))
        limit = rng.choice((None, 1, 5))
        rank = rng.choice(({}, {"rank": "equity", "leaves": leaves}))
        fresh = Solver(magpie_twl06, ENGLISH)
        want = fresh.generate_moves(pos.board, rack, mode=mode, limit=limit, **rank)
        got = cached.generate_moves(pos.board, rack, mode=mode, limit=limit, **rank)
        assert plays_of(got) == plays_of(want), f"step {step}: {rack} {mode} {limit} {rank}"
        assert got.equities() == want.equities()


def test_threads_sharing_a_generator_get_their_own_boards_plays(solver):
    """Threads calling one generator at once, on the same board and on others: the board
    kept between calls is read and written with the GIL held, so each call gets its
    board's plays."""
    from concurrent.futures import ThreadPoolExecutor

    positions = bench_positions()[:4]
    want = [plays_of(solver.generate_moves(p.board, p.racks[0], limit=3)) for p in positions]
    picks = [random.Random(i).choice((0, 0, 0, 1, 2, 3)) for i in range(400)]

    def call(i: int) -> bool:
        pos = positions[i]
        return plays_of(solver.generate_moves(pos.board, pos.racks[0], limit=3)) == want[i]

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(call, picks))
