"""The game position (engine/position.py) and the rules that depend on the bag, through
every interface: the engine, the protocol's runner (the worker's and embedded mode's), and
the CLI. Each fault of issue 45 is one test here."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.client import protocol as p
from anchor.client.cli import main
from anchor.engine import Board, Position, PositionError, RackError, Ruleset, Solver
from anchor.engine.analysis import AnalysisOptions, analyze
from anchor.worker.runner import LexiconRegistry, run_request

from .conftest import DEFAULT_KWG, ROOT, data_path

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
JOSH2 = BENCH[0]  # both racks known, 56 tiles in the bag
THREE_IN_BAG = (  # 83 tiles on the board, the mover's 7, the opponent's 7: 3 in the bag
    "BEDEL10/R1R9U2/O1IT1Q5OM2/W1BIDI4YUM2/N2XI5AT3/E3G4T1R3/S1VOILE2OKA3/T3T1DISPACED1/"
    "9AWE1O1/9Z1s1FA/14R/13GO/13AH/3JUVIE4UTA/INRO3FLENCHES GILNNNP/ 300/300 0"
)
WORDS_Q_S = "15/15/15/15/15/15/15/4WORDS6/15/15/15/15/15/15/15 Q/S 100/100 5"
TWL06 = str(data_path("kwg", "TWL06.kwg"))
LEAVES = data_path("kwg", "TWL06.klv2")
ERUDIT_KWG = ROOT / "dictionaries" / "build" / "erudit.kwg"


@pytest.fixture(scope="module")
def registry() -> LexiconRegistry:
    return LexiconRegistry(
        {"english": str(DEFAULT_KWG), "twl06": TWL06, "erudit": str(ERUDIT_KWG)},
        rulesets={"erudit": "erudit"},
        leave_paths={"twl06": str(LEAVES)},
    )


def run(registry, **fields) -> dict:
    return run_request(p.decode_request(p.pack({"v": 1, **fields})), registry)


def code_of(registry, **fields) -> str:
    with pytest.raises(p.ProtocolError) as info:
        run(registry, **fields)
    return info.value.code


# ------------------------------------------------------------------ the bag


def test_bag_and_unseen_follow_the_distribution(english):
    position = Position.from_cgp(english, THREE_IN_BAG)
    assert sum(position.unseen()) == 100 - 83 - 7
    assert position.bag_size() == 3  # the opponent holds a full rack
    assert not position.can_exchange()
    josh = Position.from_cgp(english, JOSH2)
    on_board = sum(1 for c in josh.board.cells if c)
    assert josh.bag_size() == 100 - on_board - 14 == 56
    assert josh.can_exchange()
    words = Position.from_cgp(english, WORDS_Q_S)
    assert words.bag_size() == 100 - 5 - 7 - 7  # racks are full while the bag holds tiles


def test_racks_written_short_do_not_grow_the_bag(english):
    """While the bag holds tiles every rack is full: a rack given in part (the opponent's
    two known tiles, the mover's "GI" to see what GI can do) leaves the bag as it is."""
    three = Position.from_cgp(english, THREE_IN_BAG)
    unseen = [english.alphabet[t - 1] for t, n in enumerate(three.unseen()) if t for _ in range(n)]
    assert three.with_racks(opponent="".join(unseen[:2])).bag_size() == 3
    assert three.with_racks(rack="GI").bag_size() == 3
    assert not three.with_racks(opponent="".join(unseen[:2])).can_exchange()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["english", "russian", "erudit"]), st.booleans())
def test_bag_racks_and_board_account_for_every_tile(seed, name, known):
    """The set is the board + the mover's rack + the opponent's (known, or a full rack)
    + the bag, on boards that real draws fill."""
    import random

    rules = Ruleset.load(name)
    rng = random.Random(seed)
    pool = [t for t, n in enumerate(Position.of(Board.empty(rules), "").unseen()) for _ in range(n)]
    rng.shuffle(pool)
    placed = rng.randrange(0, len(pool) - 14)
    board = _board_of(rules, [t for t in pool[:placed] if t])  # blanks stay off this board
    blanks_on = sum(1 for t in pool[:placed] if not t)
    letters = "?" + "".join(rules.alphabet)
    rack = "".join(letters[t] for t in pool[placed : placed + 7])
    opponent = "".join(letters[t] for t in pool[placed + 7 : placed + 14]) if known else None
    position = Position.of(board, rack, opponent).check()
    on_board = placed - blanks_on
    left = rules.total_tiles - on_board - 7
    assert sum(position.unseen()) == left
    assert position.bag_size() == left - 7
    assert position.can_exchange() == (left - 7 >= rules.exchange_min_bag)


def _board_of(rules: Ruleset, tiles: list[int]) -> Board:
    """The tiles laid row by row from the top left, down through the centre column so the
    group is connected; only the census matters to the bag."""
    grid = [["."] * rules.cols for _ in range(rules.rows)]
    row0, col0 = rules.centre
    # the centre column from the centre outwards, then the columns beside it, nearest first
    squares = sorted(
        ((r, c) for r in range(rules.rows) for c in range(rules.cols)),
        key=lambda rc: (abs(rc[1] - col0), abs(rc[0] - row0) if rc[1] == col0 else rc[0]),
    )
    for (r, c), t in zip(squares, tiles, strict=False):
        grid[r][c] = rules.alphabet[t - 1]
    return Board.from_rows(rules, ["".join(row) for row in grid])


def test_exchange_rule_is_ruleset_data():
    english, russian, erudit = (Ruleset.load(n) for n in ("english", "russian", "erudit"))
    assert english.exchange_min_bag == russian.exchange_min_bag == 7
    assert erudit.exchange_min_bag == 1
    assert [english.max_exchange(b) for b in (0, 6, 7, 50)] == [0, 0, 7, 7]
    assert [erudit.max_exchange(b) for b in (0, 1, 3, 50)] == [0, 1, 3, 7]
    text = (ROOT / "engine" / "rulesets" / "english.toml").read_text()
    bad = text.replace("exchange_min_bag = 7", "exchange_min_bag = 0")
    with pytest.raises(Exception, match="exchange_min_bag"):
        Ruleset.from_toml(bad)


# -------------------------------------------------------------- exchanges


def _exchanges(rows: list) -> list[str]:
    return [r[0] for r in rows if r[0].startswith("-") and r[0] != "-"]


def test_no_exchange_with_three_in_the_bag_through_the_protocol(registry):
    by_score = run(registry, cgp=THREE_IN_BAG, lexicon="twl06", options={"exchanges": True})
    names = [m[0] for m in by_score["moves"]]
    assert _exchanges(by_score["moves"]) == [] and names.count("-") == 1
    by_equity = run(
        registry, cgp=THREE_IN_BAG, lexicon="twl06", rank="equity", leaves="twl06",
        options={"exchanges": True}, limit=5,
    )  # fmt: skip
    assert not by_equity["moves"][0][0].startswith("-")
    assert _exchanges(by_equity["moves"]) == []


def test_exchanges_offered_while_the_bag_allows(registry):
    full = run(registry, cgp=JOSH2, lexicon="twl06", options={"exchanges": True})
    assert (
        len(_exchanges(full["moves"])) == 2**5 * 3 - 1
    )  # CGILLRS: each letter in or out, the L twice, 0 to 2; less the pass


def test_empty_bag_by_score_offers_only_the_pass(registry):
    endgame = real_endgame("line31")
    result = run(registry, cgp=endgame, lexicon="twl06", options={"exchanges": True})
    assert _exchanges(result["moves"]) == [] and [m[0] for m in result["moves"]].count("-") == 1


def test_erudit_exchanges_no_more_tiles_than_the_bag_holds(erudit):
    """Эрудит sets no minimum: with 3 in the bag an exchange puts back at most 3."""
    from anchor.engine import Lexicon

    solver = Solver(Lexicon.open(ERUDIT_KWG, erudit), erudit)
    rack = "АБВГДЕЖ"
    pool = [
        t for t, n in enumerate(Position.of(Board.empty(erudit), rack).unseen()) for _ in range(n)
    ]
    letters = [t for t in pool if t]
    full = Position.of(Board.empty(erudit), rack)
    ranked = analyze(solver, full, AnalysisOptions(exchanges=True))
    assert max(len(n) - 1 for n in _exchanges(ranked.rows)) == 7
    board = _board_of(erudit, letters[: len(pool) - 7 - 3])  # the blanks stay unseen
    position = Position.of(board, rack)
    assert position.bag_size() == 3
    ranked = analyze(solver, position, AnalysisOptions(exchanges=True))
    assert {len(n) - 1 for n in _exchanges(ranked.rows)} == {1, 2, 3} and ranked.bag == 3


def test_cli_analyze_offers_no_exchange_with_three_in_the_bag(capsys):
    args = ["analyze", "--cgp", THREE_IN_BAG, "--lexicon", TWL06, "--exchanges", "--json"]
    assert main(args) == 0
    moves = json.loads(capsys.readouterr().out)
    assert [m["notation"] for m in moves].count("-") == 1
    assert not [m for m in moves if m["notation"].startswith("-") and m["notation"] != "-"]
    assert main([*args, "--leaves", str(LEAVES), "--top", "3"]) == 0
    best = json.loads(capsys.readouterr().out)
    assert best[0]["notation"] == "H8 (I)NN"


# ---------------------------------------------------------------- endgames


def real_endgame(name: str) -> str:
    from .test_endgame import real_endgames

    return real_endgames()[name]


@pytest.mark.parametrize("cgp", [JOSH2, WORDS_Q_S], ids=["josh2-56-in-bag", "words-q-s"])
def test_endgame_refuses_a_bag_with_tiles(registry, cgp, capsys):
    assert code_of(registry, kind="endgame", cgp=cgp, lexicon="twl06") == p.BAD_POSITION
    with pytest.raises(p.ProtocolError, match="needs an empty bag"):
        run(registry, kind="endgame", cgp=cgp, lexicon="twl06")
    assert main(["endgame", "--cgp", cgp, "--lexicon", TWL06]) == 2
    assert "an endgame needs an empty bag" in capsys.readouterr().err


def test_endgame_with_the_opponents_rack_left_out_uses_the_unseen_tiles(registry):
    cgp = real_endgame("line31")
    both = run(registry, kind="endgame", cgp=cgp, lexicon="twl06")
    board, racks = cgp.split()[0], cgp.split()[1]
    one = run(registry, kind="endgame", cgp=f"{board} {racks.split('/')[0]}/ 0/0 0",
              lexicon="twl06")  # fmt: skip
    assert one["value"] == both["value"] and one["exact"]


def test_preendgame_bag_rule_is_the_positions(registry):
    with pytest.raises(p.ProtocolError, match="needs 1 to 4 tile") as info:
        run(registry, kind="preendgame", cgp=JOSH2, lexicon="twl06")
    assert info.value.code == p.BAD_POSITION


# ---------------------------------------------------------------- rack codes

IMPOSSIBLE_RACKS = ["AEINRSTU", "A???", "E" * 14, "AB1", "AЖ"]


@pytest.mark.parametrize("rack", IMPOSSIBLE_RACKS)
def test_impossible_racks_are_bad_rack_in_every_kind(registry, rack):
    board = JOSH2.split()[0]
    assert code_of(registry, cgp=board, rack=rack) == p.BAD_RACK
    assert code_of(registry, cgp=f"{board} {rack}/ 0/0 0") == p.BAD_RACK
    for kind in ("endgame", "preendgame", "simulate"):
        assert code_of(registry, kind=kind, cgp=JOSH2, rack=rack, lexicon="twl06") in (
            p.BAD_RACK
        ), kind


def test_cli_names_the_rack_fault(capsys):
    assert main(["analyze", "--rack", "A???", "--lexicon", TWL06]) == 2
    assert "3 blanks" in capsys.readouterr().err


def test_a_rack_the_set_cannot_hold_with_the_board_is_bad_position(registry):
    """Z is on JOSH2's board once; the set has one: a rack with a Z is a board+rack fault."""
    assert code_of(registry, cgp=JOSH2.split()[0], rack="ZAB") == p.BAD_POSITION


def test_nan_table_mb_is_bad_value(registry):
    for value in (math.nan, math.inf):
        with pytest.raises(p.ProtocolError) as info:
            p.decode_request(p.pack({"v": 1, "kind": "endgame", "cgp": JOSH2, "table_mb": value}))
        assert info.value.code == p.BAD_VALUE


# ------------------------------------------------------------------- Ё


def test_erudit_reads_yo_as_ye_on_every_input(erudit, registry, capsys):
    ye = Position.of(Board.empty(erudit), "ЕЛКАИНО")
    yo = Position.of(Board.empty(erudit), "ЁЛКАИНО")
    assert yo.racks == ye.racks and yo.tiles() == ye.tiles()
    rows = ["." * 15] * 7 + ["......ЁЖ......."] + ["." * 15] * 7
    assert Board.from_rows(erudit, rows) == Board.from_rows(
        erudit, [r.replace("Ё", "Е") for r in rows]
    )
    blank = Board.from_rows(erudit, [r.replace("Ё", "ё") for r in rows])
    assert blank.cell(7, 6) & 0x80
    cgp = Position.from_cgp(erudit, "15/15/15/15/15/15/15/6ЁЖ7/15/15/15/15/15/15/15 ЁЛКАИНО/ 0/0 0")
    assert cgp.rack == "ЕЛКАИНО"
    by_yo = run(registry, ruleset="erudit", lexicon="erudit", rows=rows, rack="ЁЛКАИНО", limit=5)
    by_ye = run(registry, ruleset="erudit", lexicon="erudit", rows=rows, rack="ЕЛКАИНО", limit=5)
    assert by_yo["moves"] == by_ye["moves"] and by_yo["moves"]
    assert main(["analyze", "--ruleset", "erudit", "--lexicon", str(ERUDIT_KWG),
                 "--rack", "ЁЛКАИНО", "--top", "2"]) == 0  # fmt: skip
    assert "Rack" in capsys.readouterr().out


def test_erudit_plays_and_records_with_yo(erudit):
    from anchor.engine import Lexicon, parse_play

    solver = Solver(Lexicon.open(ERUDIT_KWG, erudit), erudit)
    board = Board.empty(erudit)
    play = parse_play(board, "8H ЁЖ")
    assert play.word == "ЕЖ"
    assert solver.validate_play(board, "8H ЁЖ", rack="ЁЖ").ok
    assert solver.score_play(board, "8H ЁЖ").total == solver.score_play(board, "8H ЕЖ").total


def test_position_check_names_the_fault(english):
    board = Position.from_cgp(english, JOSH2).board
    with pytest.raises(RackError, match="3 blanks"):
        Position.of(board, "A???").check()
    with pytest.raises(RackError, match="opponent's"):
        Position.of(board, "AB", "????").check()
    with pytest.raises(PositionError, match="Zs"):
        Position.of(board, "ZAB").check()
    with pytest.raises(PositionError, match="with the opponent's rack"):
        Position.of(board, "AB", "Z").check()
    with pytest.raises(PositionError, match="empty bag"):
        Position.from_cgp(english, JOSH2).endgame()


def test_embedded_client_applies_the_bag_rules(registry):
    """The client's in-process mode runs the same runner: no exchange with 3 in the bag, an
    endgame with tiles in the bag refused with its code."""
    from anchor.client.client import AnalysisClient

    client = AnalysisClient(registry=registry)
    request = p.Request(
        lexicon="twl06",
        positions=(p.Position(cgp=THREE_IN_BAG),),
        options=p.Options(exchanges=True),
    )
    found = p.answer(client.analyze(request), p.Analysis)
    assert _exchanges(found.moves) == [] and [m[0] for m in found.moves].count("-") == 1
    with pytest.raises(p.ProtocolError) as info:
        p.answer(client.analyze(p.EndgameRequest(cgp=JOSH2, lexicon="twl06")), p.EndgameResult)
    assert info.value.code == p.BAD_POSITION


def test_endgame_fills_a_partial_opponent_rack(registry):
    cgp = real_endgame("line31")
    board, racks = cgp.split()[0], cgp.split()[1].split("/")
    both = run(registry, kind="endgame", cgp=cgp, lexicon="twl06")
    part = run(registry, kind="endgame", cgp=f"{board} {racks[0]}/{racks[1][:2]} 0/0 0",
               lexicon="twl06")  # fmt: skip
    assert part["value"] == both["value"] and part["moves"] == both["moves"]


@pytest.mark.parametrize("kind", ["endgame", "preendgame", "simulate"])
def test_every_kind_reads_the_cgps_opcodes(registry, kind):
    cgp = JOSH2 if kind == "simulate" else real_endgame("line31")
    assert code_of(registry, kind=kind, cgp=f"{cgp} foo bar;") == p.BAD_POSITION
    assert code_of(registry, kind=kind, cgp=f"{cgp} ld german;") == p.BAD_POSITION
    assert code_of(registry, kind=kind, cgp=f"{cgp} lex NWL99;") == p.UNKNOWN_LEXICON


def test_endgame_takes_the_cgps_scoreless_turns(registry):
    cgp = real_endgame("line31")
    head = " ".join(cgp.split()[:3])
    asked = {"kind": "endgame", "lexicon": "twl06", "plies": 3}
    from_cgp = run(registry, cgp=f"{head} 1", **asked)
    given = run(registry, cgp=f"{head} 0", scoreless=1, **asked)
    none = run(registry, cgp=f"{head} 0", **asked)
    assert from_cgp["nodes"] == given["nodes"] and from_cgp["value"] == given["value"]
    assert (from_cgp["nodes"], from_cgp["value"]) != (none["nodes"], none["value"])


@pytest.mark.parametrize("kind", ["endgame", "preendgame", "simulate"])
def test_an_empty_rack_is_bad_rack_in_every_kind(registry, kind):
    board = JOSH2.split()[0]
    assert code_of(registry, kind=kind, cgp=f"{board} / 0/0 0", lexicon="twl06") == p.BAD_RACK
    assert code_of(registry, kind=kind, cgp=JOSH2, rack="  ", lexicon="twl06") == p.BAD_RACK


def test_preendgame_checks_the_opponents_rack(registry):
    one_in_bag = Position.from_cgp(Ruleset.load("english"), real_endgame("line31"))
    assert one_in_bag.bag_size() == 0  # (the pre-endgame's own bag check comes after the racks)
    cgp = real_endgame("line31").split()
    assert code_of(registry, kind="preendgame", cgp=f"{cgp[0]} {cgp[1].split('/')[0]}/ZZZ 0/0 0",
                   lexicon="twl06") == p.BAD_RACK  # fmt: skip


@pytest.mark.parametrize(
    "tail",
    ["9" * 400 + "/0 0", "0/0 " + "9" * 30, "١٢/0 0", "0/0 -1"],
    ids=["score", "turns", "digits", "negative"],
)
def test_cgp_numbers_are_bounded(registry, tail):
    board, rack = JOSH2.split()[:2]
    assert code_of(registry, cgp=f"{board} {rack} {tail}") == p.BAD_POSITION


def test_gcg_scores_are_bounded(registry):
    gcg = "#player1 a A\n#player2 b B\n>a: AEINRST 8H RAIN +" + "9" * 400 + " 8\n"
    assert code_of(registry, kind="annotate", gcg=gcg, lexicon="twl06") == p.BAD_GAME


def test_cli_score_checks_the_position(capsys):
    board = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15"
    assert main(["score", "--cgp", board, "--lexicon", TWL06, "--rack", "???", "8H (CAT)s"]) == 2
    assert "3 blanks" in capsys.readouterr().err
    assert main(["score", "--cgp", "CAT12/" + "15/" * 13 + "15", "--no-lexicon", "1D S"]) == 2
    assert "centre" in capsys.readouterr().err


def test_annotation_marks_an_exchange_the_bag_forbids(registry):
    """A recorded exchange with 3 tiles in the bag is not legal (English needs 7)."""
    board = Position.from_cgp(Ruleset.load("english"), THREE_IN_BAG).board
    assert Position.of(board, "GILNNNP").bag_size() == 3
    from anchor.engine.annotate import _exchange_fault
    from anchor.engine.gcg import EXCHANGE, Event

    class Turn:
        pass

    turn = Turn()
    turn.board = board
    turn.event = Event(EXCHANGE, "a", "GILNNNP", 0, 300, 1, "", tiles="NNP")
    english = Ruleset.load("english")
    tiles = tuple(english.index(c) for c in "GILNNNP")
    assert "3 tile(s) in the bag" in _exchange_fault(turn, tiles, english)
    turn.event = Event(EXCHANGE, "a", "GILNNNP", 0, 300, 1, "", tiles="ZZ")
    assert "not on the rack" in _exchange_fault(turn, tiles, english)
    roomy = Position.from_cgp(english, JOSH2).board
    turn.board, turn.event = roomy, Event(EXCHANGE, "a", "CGILLRS", 0, 98, 1, "", tiles="CG")
    assert _exchange_fault(turn, tuple(english.index(c) for c in "CGILLRS"), english) is None


def test_cli_rank_equity_finds_the_leaves_beside_a_lexicon_file(capsys):
    args = ["analyze", "--cgp", BENCH[3], "--lexicon", TWL06, "--rank", "equity", "--top", "1"]
    assert main(args) == 0
    assert "equity" in capsys.readouterr().out


@pytest.mark.parametrize(
    "asked, cap, used",
    [(None, 1, 1), (8, 2, 2), (None, 3, 3), (2, 4, 2), (5, None, 5), (None, None, 1)],
)
def test_endgame_threads_are_what_the_server_allows(registry, monkeypatch, asked, cap, used):
    """A request's `threads` may only lower the server's endgame_threads (nil: the cap);
    with no cap (embedded) it is what the request asks, one by default. The answer is the
    same for any number."""
    seen = []
    original = Solver.solve_endgame_part

    def spy(self, *args, **search):
        seen.append(search["threads"])
        return original(self, *args, **search)

    monkeypatch.setattr(Solver, "solve_endgame_part", spy)
    fields = {"v": 1, "kind": "endgame", "cgp": real_endgame("line31"), "lexicon": "twl06"}
    if asked is not None:
        fields["threads"] = asked
    limits = p.Limits.unbounded() if cap is None else p.Limits(endgame_threads=cap)
    answer = run_request(p.decode_request(p.pack(fields)), registry, limits)
    assert seen == [used] and answer["value"] == -56 and answer["exact"]


def test_endgame_threads_cap_reads_the_environment():
    from argparse import Namespace

    from anchor.worker.main import limits_from

    assert limits_from(Namespace(), {"ANCHOR_MAX_ENDGAME_THREADS": "4"}).endgame_threads == 4
    with pytest.raises(ValueError, match="endgame_threads must be 1..64"):
        limits_from(Namespace(), {"ANCHOR_MAX_ENDGAME_THREADS": "0"})
    with pytest.raises(p.ProtocolError):
        p.decode_request(p.pack({"v": 1, "kind": "endgame", "cgp": "x", "threads": 65}))


def test_cli_endgame_on_search_threads_answers_as_one(capsys):
    """`anchor endgame --search-threads 2` (as the README's command table writes it): the
    same proven value and line as one thread; a count past 64 is refused."""
    cgp = real_endgame("line31")
    answers = []
    for threads in ("1", "2"):
        assert main(["endgame", "--cgp", cgp, "--lexicon", TWL06, "--search-threads", threads,
                     "--json"]) == 0  # fmt: skip
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0]["value"] == answers[1]["value"] == -56
    assert answers[0]["moves"] == answers[1]["moves"] and answers[1]["exact"]
    with pytest.raises(SystemExit):
        main(["endgame", "--cgp", cgp, "--lexicon", TWL06, "--search-threads", "65"])
    assert "too many" in capsys.readouterr().err
