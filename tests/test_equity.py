"""Equity ranking: KLV2 leave files (MAGPIE's TWL06.klv2), leave lookups checked by a
round trip through our own writer, equities recomputed independently, the equity player."""

from __future__ import annotations

import itertools
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.client import protocol as p
from anchor.engine import InputError, LexiconError, Ruleset, Solver, parse_cgp
from anchor.engine.leaves import Leaves
from anchor.engine.notation import format_rack, parse_rack
from anchor.engine.selfplay import EquityPlayer, Greedy, play_game
from anchor.worker.runner import LexiconRegistry, run_request

from .conftest import data_path

ENGLISH = Ruleset.load("english")


@pytest.fixture(scope="module")
def leaves() -> Leaves:
    return Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH)


@pytest.fixture(scope="module")
def solver(magpie_twl06) -> Solver:
    return Solver(magpie_twl06, ENGLISH)


def tiles(text: str) -> list[int]:
    return [0 if ch == "?" else ENGLISH.letter_index[ch] for ch in text]


def test_reads_magpies_klv2(leaves):
    assert len(leaves) == 914_624
    known = {"?": 28.873, "??": 42.942, "S": 8.501, "Q": -6.149, "QU": 3.029, "ERS": 16.737}
    for leave, value in known.items():
        assert leaves.value(tiles(leave)) == pytest.approx(value, abs=1e-3)
    assert leaves.value([]) == 0.0
    assert leaves.value(tiles("SR")) == leaves.value(tiles("RS"))  # a multiset


def leave_values(top_tile: int, max_size: int):
    """Made-up leave files: leaves of 1-6 tiles numbered 0..top_tile, float32 values."""
    return st.dictionaries(
        st.lists(st.integers(0, top_tile), min_size=1, max_size=6).map(lambda t: tuple(sorted(t))),
        st.floats(-50, 50, allow_nan=False, width=32),
        min_size=1,
        max_size=max_size,
    )


@settings(max_examples=60, deadline=None)
@given(leave_values(26, 80))
def test_write_and_read_back_every_leave(values):
    back = Leaves(Leaves.to_bytes(values), ENGLISH)
    assert len(back) == len(values)
    for leave, value in values.items():
        assert back.value(leave) == pytest.approx(value)
    assert back.index((25, 25, 25, 25, 25, 25, 25)) is None


def leave_table_entries(leaves: Leaves, rack: list[int]):
    """(table value, the leave's own value) for every sub-multiset of `rack` used: the C
    table read by its mixed-radix keys, against Leaves.value of the tiles kept."""
    steps, values = leaves.table(tuple(rack))
    step = struct.unpack(f"={len(steps) // 2}H", steps)
    table = struct.unpack(f"={len(values) // 4}f", values)
    counts = {t: rack.count(t) for t in set(rack)}
    for used in itertools.product(*(range(n + 1) for n in counts.values())):
        key = sum(u * step[t] for u, t in zip(used, counts, strict=True))
        kept = [t for u, (t, n) in zip(used, counts.items(), strict=True) for _ in range(n - u)]
        yield table[key], leaves.value(kept)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 26), max_size=7))
def test_leave_table_holds_every_leave_of_the_rack(leaves, rack):
    for got, want in leave_table_entries(leaves, rack):
        assert got == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 26), max_size=7))
def test_leave_table_gives_the_best_leave_per_tiles_played(leaves, rack):
    """After the 64 key steps, the table's first part holds the best leave left by playing
    k tiles, and by playing k tiles a blank among them (-inf where none): the generator's
    equity bounds take them from there, so one too low would drop plays."""
    steps, values = leaves.table(tuple(rack))
    best = struct.unpack("=17f", steps[128:196])
    best_blank = struct.unpack("=17f", steps[196:264])
    assert len(steps) == 264
    step = struct.unpack("=64H", steps[:128])
    table = struct.unpack(f"={len(values) // 4}f", values)
    counts = {t: rack.count(t) for t in set(rack)}
    want = [float("-inf")] * 17
    want_blank = [float("-inf")] * 17
    for used in itertools.product(*(range(n + 1) for n in counts.values())):
        value = table[sum(u * step[t] for u, t in zip(used, counts, strict=True))]
        played = sum(used)
        want[played] = max(want[played], value)
        if counts.get(0) and used[list(counts).index(0)]:
            want_blank[played] = max(want_blank[played], value)
    assert list(best) == want
    assert list(best_blank) == want_blank


@settings(max_examples=60, deadline=None)
@given(leave_values(5, 40), st.lists(st.integers(0, 6), max_size=7))
def test_leave_table_of_a_sparse_file(values, rack):
    """A file listing few leaves: most walks through the graph stop early, and every leave
    it lacks is worth 0."""
    sparse = Leaves(Leaves.to_bytes(values), ENGLISH)
    for got, want in leave_table_entries(sparse, rack):
        assert got == want


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda b: b[:-4], "truncated"),
        (lambda b: b[:6], "only 6 bytes"),
        (lambda b: struct.pack("<I", 10**6) + b[4:], "do not fit"),
        (lambda b: b[:8] + b"\xff\xff\xff\xff" + b[12:], "unusable"),
        (lambda b: b[:-4] + struct.pack("<f", float("nan")), "#2 is nan, not a finite number"),
        (lambda b: b[:-8] + struct.pack("<f", float("-inf")) + b[-4:], "#1 is -inf"),
    ],
)
def test_bad_leave_files_are_refused(tmp_path, mutate, message):
    good = Leaves.to_bytes({(1,): 1.0, (1, 2): 2.0, (0,): 25.0})
    path = tmp_path / "bad.klv2"
    path.write_bytes(mutate(good))
    with pytest.raises(LexiconError, match=message):
        Leaves.open(path, ENGLISH)


def test_a_kwg_is_not_a_klv(tmp_path):
    with pytest.raises(LexiconError, match="not a KLV2 file"):
        Leaves.open(data_path("kwg", "TWL06.kwg"), ENGLISH)


def bench():
    lines = data_path("bench", "positions.cgp").read_text().splitlines()
    return [parse_cgp(ENGLISH, ln) for ln in lines if ln.strip() and not ln.startswith("#")]


def test_equity_is_score_plus_the_leave_kept(solver, leaves):
    for pos in bench():
        rack = pos.racks[0]
        moves = solver.generate_moves(pos.board, rack, rank="equity", leaves=leaves)
        assert len(moves) == len(solver.generate_moves(pos.board, rack))
        equities = moves.equities()
        assert equities == sorted(equities, reverse=True)
        sample = (
            range(len(moves))
            if len(moves) < 6000
            else random.Random(3).sample(range(len(moves)), 3000)
        )
        for i in sample:
            m = moves[i]
            kept = list(parse_rack(ENGLISH, rack))
            for _r, _c, ch in m.placed:
                kept.remove(0 if ch.islower() else ENGLISH.letter_index[ch])
            assert m.equity == pytest.approx(m.score + leaves.value(kept), abs=1e-3)


def test_equity_limit_and_exchanges(solver, leaves):
    pos = bench()[0]
    full = solver.generate_moves(
        pos.board, "AABC?", rank="equity", leaves=leaves, include_exchanges=True
    )
    top = solver.generate_moves(
        pos.board, "AABC?", rank="equity", leaves=leaves, include_exchanges=True, limit=12
    )
    assert [m.notation for m in top] == [m.notation for m in full[:12]]
    assert full.equities() == sorted(full.equities(), reverse=True)
    swaps = {m.notation: m.equity for m in full if m.kind == "exchange"}
    assert swaps["-AABC"] == pytest.approx(leaves.value([0]))  # keeps the blank
    with pytest.raises(InputError, match="needs leave values"):
        solver.generate_moves(pos.board, "AB", rank="equity")
    with pytest.raises(InputError, match="rank must be"):
        solver.generate_moves(pos.board, "AB", rank="luck")


def test_equity_player_keeps_every_invariant(solver, leaves):
    for seed in (1, 2, 3):
        game = play_game(solver, seed, policies=[EquityPlayer(leaves), Greedy()], check=True)
        assert game.end in ("out", "scoreless")


def test_equity_through_the_protocol(leaves):
    registry = LexiconRegistry(
        {"twl06": str(data_path("kwg", "TWL06.kwg"))},
        leave_paths={"twl06": str(data_path("kwg", "TWL06.klv2"))},
    )
    cgp = bench()[0]
    payload = p.pack(
        {"v": 1, "lexicon": "twl06", "cgp": cgp.to_cgp(), "rank": "equity", "limit": 2}
    )
    result = run_request(p.decode_request(payload), registry)
    moves = p.move_dicts(result)
    assert [m["notation"] for m in moves] == ["D9 G(A)LLIC", "D9 G(A)RLIC"]
    assert moves[0]["equity"] == pytest.approx(28.001, abs=1e-3)
    with pytest.raises(p.ProtocolError) as info:
        run_request(
            p.decode_request(
                p.pack(
                    {
                        "v": 1,
                        "lexicon": "twl06",
                        "cgp": cgp.to_cgp(),
                        "rank": "equity",
                        "leaves": "nope",
                    }
                )
            ),
            registry,
        )
    assert info.value.code == p.UNKNOWN_LEAVES
    with pytest.raises(p.ProtocolError) as info:
        p.decode_request(p.pack({"v": 1, "cgp": "x", "rank": "luck"}))
    assert info.value.code == p.BAD_VALUE


def test_leave_model_fit_table_and_klv2(russian):
    from anchor.engine.training import LeaveModel, fit

    model = LeaveModel(russian)
    assert model.value([1, 1, 2]) == 0.0
    # synthetic data: keeping tile 1 is followed by +10, tile 2 by -10, two 1s by +12
    data = [((1,), 40)] * 200 + [((2,), 20)] * 200 + [((1, 1), 42)] * 200 + [((3,), 30)] * 400
    fitted = fit(russian, data, ridge=1.0)
    assert fitted.value([1]) > 5 and fitted.value([2]) < -5
    assert fitted.value([1, 1]) < 2 * fitted.value([1])  # a duplicate is worth less
    steps, values = fitted.table((1, 1, 2))
    back = Leaves(fitted.to_klv2(max_size=3), russian)
    assert back.value([1, 2]) == pytest.approx(fitted.value([1, 2]), abs=1e-4)
    assert len(back) == 34 + 583 + 6725  # every 1-3 tile leave the distribution allows
    assert back.index([0, 0, 0]) is None  # two blanks in Russian Scrabble, not three


def test_observations_from_a_selfplay_record(russian):
    from anchor.engine import Lexicon
    from anchor.engine.training import observations

    from .conftest import ROOT

    solver = Solver(Lexicon.open(ROOT / "dictionaries" / "build" / "russian.kwg", russian), russian)
    game = play_game(solver, 4, check=False)
    obs = observations(game.to_gcg(), russian)
    assert len(obs) == len(game.turns) - 2  # each player's last turn has no next turn
    by_player = {0: [], 1: []}
    for t in game.turns:
        by_player[t.player].append(t.move.score)
    assert sorted(y for _, y in obs) == sorted(by_player[0][1:] + by_player[1][1:])
    assert all(len(leave) <= russian.rack_size for leave, _ in obs)


@settings(max_examples=100, deadline=None)
@given(
    rack=st.lists(st.integers(0, 33), min_size=0, max_size=7),
    params=st.lists(st.floats(-20, 20, allow_nan=False), min_size=68, max_size=68),
)
def test_model_table_matches_model_values(russian, rack, params):
    """The C generator reads the table by mixed-radix key: every key must hold the value
    of the leave that using that sub-multiset keeps."""
    import array
    from collections import Counter
    from itertools import product

    from anchor.engine.training import LeaveModel

    model = LeaveModel(russian, params)
    steps, values = (
        array.array("H", b) if i == 0 else array.array("f", b)
        for i, b in enumerate(model.table(tuple(rack)))
    )
    have = Counter(rack)
    distinct = sorted(have)
    for used in product(*(range(have[t] + 1) for t in distinct)):
        key = sum(u * steps[t] for u, t in zip(used, distinct, strict=True))
        kept = [t for u, t in zip(used, distinct, strict=True) for _ in range(have[t] - u)]
        assert values[key] == pytest.approx(model.value(kept), abs=1e-3)


def _exchanges_by_definition(rack: tuple[int, ...], leaves):
    """The reference: itertools.combinations of the sorted rack, deduplicated, each
    valued with Leaves.value of the tiles kept, stable-sorted by equity; pass last."""
    from itertools import combinations

    ordered = sorted(rack, key=lambda t: (t == 0, t))
    out, seen = [], set()
    for size in range(1, len(ordered) + 1):
        for combo in combinations(ordered, size):
            if combo not in seen:
                seen.add(combo)
                kept = list(ordered)
                for t in combo:
                    kept.remove(t)
                out.append((combo, leaves.value(kept) if leaves else None))
    out.append(((), leaves.value(ordered) if leaves else None))
    if leaves:
        out.sort(key=lambda item: -item[1])
    return [(format_rack(ENGLISH, c) if c else "-", e) for c, e in out]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 26), min_size=1, max_size=7), st.booleans(), st.integers(1, 130))
def test_exchanges_match_their_definition(rack, with_leaves, limit):
    """The count-vector enumeration with table lookups gives exactly the list the
    definition gives (order, equities, ties), whole and cut to any limit."""
    from anchor.engine.moves import exchanges

    leaves = Leaves.open(data_path("kwg", "TWL06.klv2"), ENGLISH) if with_leaves else None
    want = _exchanges_by_definition(tuple(rack), leaves)
    got = [
        (m.exchanged if m.kind == "exchange" else "-", m.equity)
        for m in exchanges(ENGLISH, tuple(rack), leaves)
    ]
    assert got == want
    for n in (limit, 1):  # 1: the best-play path, which never lists the others
        cut = exchanges(ENGLISH, tuple(rack), leaves, n)
        assert [(m.exchanged if m.kind == "exchange" else "-", m.equity) for m in cut] == want[:n]
