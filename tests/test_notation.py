from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import ACROSS, DOWN, Board, InputError, Ruleset, parse_play, parse_rack
from anchor.engine.notation import format_rack, parse_coordinate

ENGLISH = Ruleset.load("english")


def board_with(rows_at: dict[int, str]) -> Board:
    rows = ["." * 15] * 15
    for r, text in rows_at.items():
        rows[r] = text
    return Board.from_rows(ENGLISH, rows)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("8D", (7, 3, ACROSS)),
        ("D8", (7, 3, DOWN)),
        ("8d", (7, 3, ACROSS)),
        ("h2", (1, 7, DOWN)),
        ("15O", (14, 14, ACROSS)),
        ("A1", (0, 0, DOWN)),
    ],
)
def test_coordinates(text, expected):
    assert parse_coordinate(text, ENGLISH) == expected


@pytest.mark.parametrize("text", ["", "8", "DD", "88", "16A", "A16", "P1", "0A", "8-D", "8DD"])
def test_bad_coordinates(text):
    with pytest.raises(InputError):
        parse_coordinate(text, ENGLISH)


def test_played_through_spellings_are_one_play():
    board = board_with({7: "......CAT......"})
    a = parse_play(board, "G8 (C)AT")
    assert a.direction == DOWN and a.placed == ((8, 6, "A"), (9, 6, "T"))
    spellings = ["8F SCATTER", "8F S(CAT)TER", "8F S...TER", "8F S(C)A(T)TER", "8f S.A.TER"]
    plays = [parse_play(board, s) for s in spellings]
    assert len({p for p in plays}) == 1
    p = plays[0]
    assert p.word == "SCATTER" and p.row == 7 and p.col == 5
    assert p.placed == ((7, 5, "S"), (7, 9, "T"), (7, 10, "E"), (7, 11, "R"))
    assert p.notation == "8F S(CAT)TER"


def test_main_word_extends_over_adjacent_tiles():
    board = board_with({7: "......CAT......"})
    p = parse_play(board, "8J S")
    assert p.word == "CATS" and p.notation == "8G (CAT)S"
    down = parse_play(board, "J8 S")
    assert down.word == "S" and down.notation == "J8 S"


def test_blank_is_lowercase():
    p = parse_play(Board.empty(ENGLISH), "8D WoRD")
    assert p.placed[1] == (7, 4, "o") and p.word == "WoRD"


@pytest.mark.parametrize(
    "text, message",
    [
        ("8D", "coordinate and a word"),
        ("8D WORD EXTRA", "coordinate and a word"),
        ("8L WORDS", "runs off the board"),
        ("8G (X)AT", "already holds 'C'"),
        ("8G CAT", "places no tiles"),
        ("8G (CAT", "without ')'"),
        ("8G CAT)S", "without '('"),
        ("9A (A)B", "is empty"),
        ("9A A.B", "is empty"),
        ("8J 5", "not a letter"),
        ("Z9 AB", "off the 15x15 board"),
    ],
)
def test_bad_plays(text, message):
    board = board_with({7: "......CAT......"})
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_play(board, text)


def test_racks():
    assert parse_rack(ENGLISH, "AEINRS?") == (1, 5, 9, 14, 18, 19, 0)
    assert parse_rack(ENGLISH, "aeinrs?") == parse_rack(ENGLISH, "AEINRS?")
    assert parse_rack(ENGLISH, "") == ()
    assert format_rack(ENGLISH, (0, 19, 1)) == "AS?"
    with pytest.raises(InputError, match="at most 7"):
        parse_rack(ENGLISH, "AAAAAAAA")
    with pytest.raises(InputError, match="'1' is not a letter"):
        parse_rack(ENGLISH, "A1")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_fuzz_play_parser_raises_only_input_errors(text):
    board = board_with({7: "......CAT......"})
    try:
        play = parse_play(board, text)
    except InputError:
        return
    assert play.placed and all(board.cell(r, c) == 0 for r, c, _ in play.placed)
