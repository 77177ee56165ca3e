from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Ruleset, RulesetError
from anchor.engine.rules import builtin_names

ENGLISH_TOML = Ruleset.load("english").source


def english_text() -> str:
    from importlib import resources

    return resources.files("anchor.engine.rulesets").joinpath("english.toml").read_text("utf-8")


def test_builtins_are_listed():
    assert {"english", "russian", "erudit"} <= set(builtin_names())


def test_english_totals(english):
    assert (english.rows, english.cols, english.rack_size, english.bingo_bonus) == (15, 15, 7, 50)
    assert english.total_tiles == 100 and english.blanks == 2
    assert sum(english.counts.values()) == 98
    assert sum(english.values[c] * english.counts[c] for c in english.alphabet) == 187
    assert english.values["Q"] == 10 and english.values["K"] == 5 and english.counts["E"] == 12
    assert english.centre == (7, 7) and english.multipliers(7, 7) == (1, 2)
    assert english.multipliers(0, 0) == (1, 3) and english.multipliers(1, 5) == (3, 1)


def test_premium_layout_is_symmetric(english):
    g = english.premiums
    n = english.rows
    for r in range(n):
        for c in range(n):
            assert g[r][c] == g[c][r] == g[n - 1 - r][c] == g[r][n - 1 - c]
    assert sum(row.count("T") for row in g) == 8
    assert sum(row.count("D") for row in g) == 17  # centre included
    assert sum(row.count("t") for row in g) == 12
    assert sum(row.count("d") for row in g) == 24


def test_russian_totals(russian):
    assert len(russian.alphabet) == 33 and "Ё" in russian.alphabet
    assert russian.alphabet.index("Ё") == russian.alphabet.index("Е") + 1
    assert russian.total_tiles == 104 and russian.blanks == 2 and russian.bingo_bonus == 50
    assert russian.multipliers(*russian.centre) == (1, 2)


def test_erudit_totals(erudit):
    assert "Ё" not in erudit.alphabet and len(erudit.alphabet) == 32
    assert erudit.fold == {"Ё": "Е"}
    assert erudit.total_tiles == 131 and erudit.blanks == 3
    assert sum(erudit.counts.values()) == 128
    assert erudit.bingo_bonus == 15
    assert erudit.multipliers(*erudit.centre) == (1, 1)


def test_builtin_files_cite_a_source():
    from importlib import resources

    for name in builtin_names():
        text = resources.files("anchor.engine.rulesets").joinpath(f"{name}.toml").read_text("utf-8")
        assert "Source" in text, name


def test_user_file_loads_like_a_builtin(tmp_path, english):
    path = tmp_path / "mine.toml"
    path.write_text(english_text(), encoding="utf-8")
    mine = Ruleset.load(path)
    assert mine == english
    assert Ruleset.load(str(path)) == english


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace("T..d...T...d..T\n.D.", "T..d...T...d..\n.D.", 1),
            "row 1 has 14 squares",
        ),
        (lambda t: t.replace("E 12 1", "E 13 1"), "sum to 101"),
        (lambda t: t.replace("B 2 3", "A 2 3"), "letter 'A' is listed twice"),
        (lambda t: t.replace("rack_size = 7", "rack_size = 0"), "'rack_size' is 0"),
        (lambda t: t.replace('centre = "8H"', 'centre = "Z99"'), "'centre'"),
        (lambda t: t.replace('centre = "8H"', 'centre = "\u00b2H"'), "'centre'"),  # not int()'s
        (lambda t: t.replace("? 2 0", "? 2 5"), "a blank scores 0"),
        (lambda t: t.replace("A 9 1", "a 9 1"), "must be an uppercase letter"),
        (lambda t: t.replace("A 9 1", "A nine 1"), "whole numbers"),
        (lambda t: t.replace("rows = 15", 'rows = "15"'), "'rows' must be int"),
        (lambda t: t.replace("rows = 15\n", ""), "'rows' is missing"),
        (lambda t: "foo = 1\n" + t, "unknown field(s) foo"),
        (lambda t: t + "\nfoo = 1\n", "unknown field(s) in [end]: foo"),
        (lambda t: t.replace("going_out = 2", "going_out = 11"), "[end] going_out is 11"),
        (lambda t: t.replace("stuck_loses_own = false", "stuck_loses_own = 0"), "true or false"),
        (lambda t: t.replace("scoreless_turns = 6", "scoreless_turns = 0"), "1..100"),
        (lambda t: t.replace('name = "english"', 'name = "english'), "not valid TOML"),
        (lambda t: t.replace('name = "english"', 'name = "a\\nb #lexicon x"'), "one line of"),
        (lambda t: t.replace('name = "english"', f'name = "{"q" * 65}"'), "at most 64 printable"),
        (lambda t: t.replace("T..d...T...d..T\n", "T..d...T...d..X\n", 1), "unknown square"),
        (lambda t: t.replace("rows = 15", "rows = 14"), "'premiums' has 15 rows"),
    ],
)
def test_malformed_rulesets_name_the_problem(edit, message):
    text = edit(english_text())
    with pytest.raises(RulesetError) as info:
        Ruleset.from_toml(text, source="mine.toml")
    assert message in str(info.value)
    assert "mine.toml" in str(info.value)


def test_unknown_name_lists_builtins():
    with pytest.raises(RulesetError, match="built-ins are .*english"):
        Ruleset.load("klingon")


def test_missing_file():
    with pytest.raises(RulesetError, match="cannot read ruleset file"):
        Ruleset.load("/nonexistent/rules.toml")


def test_transposed_non_square_ruleset():
    text = english_text()
    lines = text.split('premiums = """')[1].split('"""')[0].strip().splitlines()
    narrow = "\n".join(line[:10] for line in lines)
    text = text.replace("cols = 15", "cols = 10").replace(
        text.split('premiums = """')[1].split('"""')[0], "\n" + narrow + "\n"
    )
    rules = Ruleset.from_toml(text)
    t = rules.transposed()
    assert (t.rows, t.cols) == (10, 15)
    assert t.centre == (7, 7)
    assert all(t.premiums[c][r] == rules.premiums[r][c] for r in range(15) for c in range(10))
    assert t.transposed() == rules


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_ruleset_text_is_refused_clearly(text):
    try:
        Ruleset.from_toml(text, source="fuzz.toml")
    except RulesetError as exc:
        assert "fuzz.toml" in str(exc)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3000), st.text(min_size=1, max_size=3))
def test_fuzz_edits_of_a_real_ruleset(position, insert):
    text = english_text()
    edited = text[:position] + insert + text[position + len(insert) :]
    try:
        rules = Ruleset.from_toml(edited, source="edited.toml")
    except RulesetError:
        return
    assert rules.total_tiles == sum(rules.counts.values()) + rules.blanks


def test_rules_whose_scores_could_overflow_are_refused_at_load():
    """Quadruple word squares everywhere and a 900-point Z: a play could score far beyond
    what the generator ranks exactly, so loading the rules fails, saying why and by how
    much (the generator's own check, _movegen.check_rules, run at load)."""
    text = english_text()
    grid = text.split('premiums = """')[1].split('"""')[0]
    quad = "\n".join("Q" * 15 for _ in range(15))
    huge = text.replace(grid, "\n" + quad + "\n").replace("Z 1 10", "Z 1 900")
    with pytest.raises(
        RulesetError, match=r"huge.toml: .* up to \d{8,} points; scores must stay below 16777216"
    ):
        Ruleset.from_toml(huge, source="huge.toml")
    Ruleset.from_toml(text.replace("Z 1 10", "Z 1 900"), source="ok.toml")  # plain premiums pass


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("Z 1 10", "Z 1 1001", "1001 points; a tile may be worth 0..1000"),
        (
            "bingo_bonus = 50",
            "bingo_bonus = 100001",
            "'bingo_bonus' is 100001; it must be 0..100000",
        ),
        ("rack_size = 7", "rack_size = 17", "'rack_size' is 17; it must be 1..16"),
    ],
)
def test_ruleset_limits_are_the_generators(old, new, message):
    from anchor.engine import _movegen

    assert (_movegen.MAX_TILE_VALUE, _movegen.MAX_BINGO, _movegen.MAX_RACK) == (1000, 100000, 16)
    with pytest.raises(RulesetError, match=re.escape(message)):
        Ruleset.from_toml(english_text().replace(old, new), source="x.toml")


def test_a_set_of_more_tiles_than_the_c_core_shuffles_is_refused():
    from anchor.engine import _movegen

    assert _movegen.MAX_TILES == 65535
    text = (
        english_text()
        .replace("E 12 1", "E 65500 1")
        .replace("total_tiles = 100", "total_tiles = 65588")
    )
    with pytest.raises(RulesetError, match="65588 tiles; a set may have at most 65,535"):
        Ruleset.from_toml(text, source="x.toml")


def test_a_generator_cannot_be_initialised_twice(english):
    from anchor.engine import Lexicon, Solver

    solver = Solver(Lexicon.build(["ZA", "AZ"], english), english)
    with pytest.raises(TypeError, match="already initialised"):
        solver._generator.__init__(solver.lexicon.buffer, *english.generator_args())
    assert len(solver.generate_moves(solver_board(english), "AZ")) > 0


def solver_board(rules):
    from anchor.engine import Board

    return Board.empty(rules)
