from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Board, InputError, Ruleset, parse_cgp

from .conftest import data_path

ENGLISH = Ruleset.load("english")


ENGLISH_LEXICA = re.compile(r"-?lex (CSW|NWL|TWL|ECWL|America)")


def is_english(cgp: str) -> bool:
    """CGPs name their lexicon (`lex CSW21;`); others (FRA20, DISC2...) are not English."""
    standard = cgp.split()[0].count("/") == 14  # the data also holds 21x21 boards
    return standard and ("lex " not in cgp or bool(ENGLISH_LEXICA.search(cgp)))


def all_cgps(english_only: bool = True) -> list[str]:
    """CGPs from the shared data; English ones unless asked (others carry `ld LANG;`)."""
    lines = []
    for name in ("macondo_test_cgp.jsonl", "magpie_test_constants_cgp.jsonl"):
        for line in data_path("cgp", name).read_text().splitlines():
            if line.strip():
                cgp = json.loads(line)["cgp"]
                if english_only and not is_english(cgp):
                    continue
                lines.append(cgp)
    for line in data_path("bench", "positions.cgp").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            lines.append(line)
    return lines


def test_every_shared_cgp_round_trips(english):
    cgps = all_cgps()
    assert len(cgps) > 40
    for cgp in cgps:
        board = Board.from_cgp(english, cgp)
        assert board.to_cgp() == cgp.split()[0]
        assert Board.from_rows(english, board.to_rows()) == board
        assert board.transpose().transpose() == board


def test_malformed_row_in_shared_data_is_reported(english):
    # Macondo's French pre-endgame test position has a 14-square third row.
    broken = [c for c in all_cgps(english_only=False) if "8A1E1DO" in c]
    assert broken
    with pytest.raises(InputError, match=r"row 3 \('8A1E1DO'\) has 14 squares"):
        Board.from_cgp(english, broken[0])


def test_full_cgp_fields(english):
    line = data_path("bench", "positions.cgp").read_text().splitlines()[3]
    pos = parse_cgp(english, line)
    assert pos.racks == ("CGILLRS", "EFNNOOU")
    assert pos.scores == (98, 167) and pos.zero_turns == 0
    assert pos.to_cgp() == line
    withops = parse_cgp(
        english, "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 A/B 0/0 0 lex NWL20; lm -2;"
    )
    assert dict(withops.options) == {"lex": "NWL20", "lm": "-2"}


def test_rows_blanks_and_letters(english):
    rows = ["." * 15] * 15
    rows[7] = ".......WoRD...."
    board = Board.from_rows(english, rows)
    assert board.letter_at(7, 8) == "o" and board.letter_at(7, 7) == "W"
    assert board.cell(7, 8) == 0x80 | english.index("O")
    assert board.tiles() == {"W": 1, "?": 1, "R": 1, "D": 1}
    assert board.to_cgp() == "15/15/15/15/15/15/15/7WoRD4/15/15/15/15/15/15/15"
    t = board.transpose()
    assert t.letter_at(8, 7) == "o" and t.letter_at(7, 7) == "W"


def test_apply_adds_tiles_without_touching_the_original(english):
    board = Board.empty(english)
    after = board.apply([(7, 7, "H"), (7, 8, "i")])
    assert board.is_empty() and after.tile_count() == 2
    assert after.to_rows()[7] == ".......Hi......"
    with pytest.raises(InputError, match="already occupied"):
        after.apply([(7, 7, "A")])
    with pytest.raises(InputError, match="off the board"):
        after.apply([(15, 0, "A")])


def test_render_shows_coordinates_and_premiums(english):
    text = Board.from_cgp(english, all_cgps()[0]).render()
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGHIJKLMNO")
    assert lines[1].startswith("  1 ")
    assert "=" in lines[15] and "triple word" in lines[-1]


@pytest.mark.parametrize(
    "rows, message",
    [
        (["." * 15] * 14, "14 rows"),
        (["." * 15] * 14 + ["." * 14], "row 15 has 14 squares"),
        (["." * 15] * 14 + ["." * 7 + "1" + "." * 7], "'1' is not a letter"),
        (["." * 15] * 14 + ["." * 7 + "Ж" + "." * 7], "'Ж' is not a letter of the english"),
    ],
)
def test_bad_rows(english, rows, message):
    with pytest.raises(InputError, match=message):
        Board.from_rows(english, rows)


@pytest.mark.parametrize(
    "cgp, message",
    [
        ("", "empty"),
        ("15/15", "2 rows"),
        ("/".join(["15"] * 14 + ["16"]), "bad run"),
        ("/".join(["15"] * 14 + ["14"]), "14 squares"),
        ("/".join(["15"] * 14 + ["7[CH]7"]), "multi-character"),
        ("/".join(["15"] * 14 + ["7!7"]), "'!' is not a letter"),
        ("/".join(["15"] * 14 + ["0AAAAAAAAAAAAAAA"]), "bad run"),
        ("/".join(["15"] * 14 + ["7\u00b27"]), "not a letter"),  # a digit to isdigit, not int
    ],
)
def test_bad_cgp(english, cgp, message):
    with pytest.raises(InputError, match=message):
        Board.from_cgp(english, cgp)


def test_bad_cells_rejected(english):
    with pytest.raises(InputError, match="invalid byte"):
        Board(english, bytes([0x80]) + bytes(224))
    with pytest.raises(InputError, match="invalid byte"):
        Board(english, bytes([27]) + bytes(224))
    with pytest.raises(InputError, match="225"):
        Board(english, bytes(10))


def test_cyrillic_board(russian):
    rows = ["." * 15] * 15
    rows[7] = "......СЛоВО...."
    board = Board.from_rows(russian, rows)
    assert board.to_cgp().split("/")[7] == "6СЛоВО4"
    assert Board.from_cgp(russian, board.to_cgp()) == board


cells = st.lists(
    st.one_of(st.just(0), st.integers(1, 26), st.integers(1, 26).map(lambda t: t | 0x80)),
    min_size=225,
    max_size=225,
)


@settings(max_examples=200, deadline=None)
@given(cells)
def test_random_boards_round_trip(cell_list):
    board = Board(ENGLISH, bytes(cell_list))
    assert Board.from_cgp(ENGLISH, board.to_cgp()) == board
    # the CGP field is the rows with every run of empty squares written as its length
    runs = re.sub(r"\.+", lambda m: str(len(m.group())), "/".join(board.to_rows()))
    assert board.to_cgp() == runs
    assert Board.from_rows(ENGLISH, board.to_rows()) == board
    assert board.transpose().transpose() == board
    t = board.transpose()
    for r in range(15):
        for c in range(15):
            assert t.cell(c, r) == board.cell(r, c)


CGP_ROW_CHARS = st.sampled_from("0123456789155AEQZaez?.[]/ \u00b2\u0663\u0416")


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=300)
    | st.lists(st.text(CGP_ROW_CHARS, max_size=18), min_size=14, max_size=16).map("/".join)
)
def test_fuzz_cgp_parser_raises_only_input_errors(text):
    try:
        Board.from_cgp(ENGLISH, text)
    except InputError:
        pass
    try:
        parse_cgp(ENGLISH, text)
    except InputError:
        pass
