from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import ACROSS, DOWN, Board, Lexicon, Ruleset, Solver, score_play, validate_play
from anchor.engine.notation import make_play

from .conftest import data_path

ENGLISH = Ruleset.load("english")


def board_with(rows_at: dict[int, str], rules: Ruleset = ENGLISH) -> Board:
    rows = ["." * rules.cols] * rules.rows
    for r, text in rows_at.items():
        rows[r] = text
    return Board.from_rows(rules, rows)


def test_first_play_with_a_blank_on_the_centre():
    # 8E WoRD: W4 + o0 + R1 + D2 (on the centre, a double-word square) = 7 x2 = 14
    s = score_play(Board.empty(ENGLISH), "8E WoRD")
    assert s.total == 14 and s.bingo == 0 and len(s.words) == 1
    w = s.words[0]
    assert (w.letter_sum, w.word_multiplier, w.word) == (7, 2, "WoRD")
    assert [t.points for t in w.tiles] == [4, 0, 1, 2]


def test_premiums_count_only_under_new_tiles_and_bingo():
    # 1A ABSOLUT(E): A on the triple word (1A), O on the double letter (1D); the E on the
    # triple word at 1H was already there, so it adds 1 point and no multiplier.
    # (1+3+1+1*2+1+1+1) + 1 = 11, x3 = 33, plus 50 for seven tiles = 83
    board = board_with({0: ".......E......."})
    s = score_play(board, "1A ABSOLUTE")
    assert s.words[0].letter_sum == 11 and s.words[0].word_multiplier == 3
    assert s.bingo == 50 and s.total == 83


def test_word_premiums_multiply():
    # 2B across to 2N covers both double-word squares of row 2: x4.
    # Row 2 is .D...t...t...D. : C and... letters on 2F and 2J are tripled.
    s = score_play(Board.empty(ENGLISH), "2B ABCDEFGHIJKLM")
    # values A1 B3 C3 D2 E1(2F, x3) F4 G2 H4 I1(2J, x3) J8 K5 L1 M3
    letter_sum = 1 + 3 + 3 + 2 + 3 + 4 + 2 + 4 + 3 + 8 + 5 + 1 + 3
    assert s.words[0].word_multiplier == 4
    assert s.total == letter_sum * 4 + 0  # 13 tiles is not a seven-tile bingo


def test_single_tile_scores_both_words():
    # CAT on 8G-8I and an A on 7J. An S on 8J makes CATS (3+1+1+1=6) and AS (1+1=2).
    board = board_with({6: ".........A.....", 7: "......CAT......"})
    across = score_play(board, "8J S")
    down = score_play(board, "J7 (A)S")
    assert across.total == down.total == 8
    assert sorted(w.word for w in across.words) == ["AS", "CATS"]
    assert sorted(w.word for w in down.words) == ["AS", "CATS"]
    assert down.words[0].main and down.words[0].word == "AS"


def test_cross_words_use_new_tile_premiums():
    # CAT on 8G-8I. AX on 9H-9I: 9H is plain, 9I a double letter (row 9: ..d...d.d...d..).
    # Main word AX: 1 + 8x2 = 17. Cross-words: (A)A down from 8H: 1 + 1 = 2;
    # (T)X down from 8I: 1 + 8x2 = 17 (the new X keeps its letter premium). Total 36.
    board = board_with({7: "......CAT......"})
    s = score_play(board, "9H AX")
    assert {w.word: w.score for w in s.words} == {"AX": 17, "AA": 2, "TX": 17}
    assert s.total == 36


def test_breakdown_lists_every_tile():
    s = score_play(Board.empty(ENGLISH), "8H QI")
    assert [
        (t.letter, t.new, t.value, t.letter_multiplier, t.word_multiplier) for t in s.breakdown
    ] == [
        ("Q", True, 10, 1, 2),
        ("I", True, 1, 1, 1),
    ]
    assert "total 22" in s.describe()


# ------------------------------------------------------------------ validation
@pytest.fixture(scope="module")
def small_lexicon() -> Lexicon:
    return Lexicon.build(["CAT", "CATS", "AS", "AT", "QI", "WORD", "WORDS", "TA", "ZA"], ENGLISH)


def test_valid_play(small_lexicon):
    board = board_with({7: "......CAT......"})
    v = Solver(small_lexicon).validate_play(board, "8J S", rack="S")
    assert v.ok and v.errors == () and v.score.total == 6 and v.words == ("CATS",)


@pytest.mark.parametrize(
    "rows, play, rack, message",
    [
        ({}, "8A QI", None, "must cover the centre square 8H"),
        ({}, "8H Q", None, "at least two letters"),
        ({7: "......CAT......"}, "1A QI", None, "not connected"),
        ({7: "......CAT......"}, "8J Q", None, "not in the lexicon: CATQ"),
        ({7: "......CAT......"}, "8J S", "QI", "tile S is not in rack 'QI'"),
        ({7: "......CAT......"}, "8J S", "Q?", "write it lowercase: 's'"),
        ({7: "......CAT......"}, "8J s", "Q", "uses 1 blank(s) but rack 'Q' holds 0"),
        ({7: "......CAT......"}, "8G XAT", None, "already holds 'C'"),
        ({7: "......CAT......"}, "8L WORDS", None, "runs off the board"),
        ({7: "......CAT......"}, "8J S", "AEIOU?1", "not a letter"),
    ],
)
def test_invalid_plays_name_the_problem(small_lexicon, rows, play, rack, message):
    v = validate_play(board_with(rows), play, small_lexicon, rack)
    assert not v.ok
    assert any(message in e for e in v.errors), v.errors


def test_placed_tiles_input(small_lexicon):
    board = board_with({7: "......CAT......"})
    ok = validate_play(board, [(7, 9, "S")], small_lexicon)
    assert ok.ok and ok.play.word == "CATS"
    down = validate_play(board, [(8, 6, "A"), (9, 6, "T")], small_lexicon)
    assert down.ok and down.play.direction == DOWN and down.words == ("CAT",)
    bad = {
        "not in one line": [(8, 0, "A"), (9, 1, "B")],
        "gap: square": [(8, 3, "A"), (8, 5, "B")],
        "occupied by C": [(7, 6, "S")],
        "given twice": [(8, 6, "S"), (8, 6, "S")],
        "off the board": [(15, 0, "S")],
        "places no tiles": [],
        "not a letter": [(8, 6, "1")],
    }
    for message, tiles in bad.items():
        v = validate_play(board, tiles, small_lexicon)
        assert not v.ok and any(message in e for e in v.errors), (message, v.errors)


def test_every_problem_is_reported_at_once(small_lexicon):
    v = validate_play(board_with({7: "......CAT......"}), "1A ZQ", small_lexicon, rack="AB")
    text = " | ".join(v.errors)
    assert "tile Q is not in rack" in text and "tile Z is not in rack" in text
    assert "not connected" in text and "not in the lexicon: ZQ" in text


# ------------------------------------------------- property: transposition
def bench_boards() -> list[Board]:
    lines = data_path("bench", "positions.cgp").read_text().splitlines()
    return [Board.from_cgp(ENGLISH, ln) for ln in lines if ln.strip() and not ln.startswith("#")]


BOARDS = bench_boards()


@st.composite
def board_and_play(draw):
    board = draw(st.sampled_from(BOARDS))
    direction = draw(st.sampled_from([ACROSS, DOWN]))
    r = draw(st.integers(0, 14))
    c = draw(st.integers(0, 14))
    n = draw(st.integers(1, 7))
    dr, dc = (0, 1) if direction == ACROSS else (1, 0)
    placed = []
    while len(placed) < n and board.in_bounds(r, c):
        if not board.cell(r, c):
            letter = draw(st.sampled_from(ENGLISH.alphabet))
            if draw(st.booleans()) and draw(st.booleans()):
                letter = letter.lower()
            placed.append((r, c, letter))
        r, c = r + dr, c + dc
    if not placed:
        placed = None
    return board, placed, direction


@settings(max_examples=300, deadline=None)
@given(board_and_play())
def test_score_is_the_same_on_the_transposed_board(case):
    board, placed, direction = case
    if placed is None:
        return
    play = make_play(board, placed, direction)
    flipped_dir = DOWN if direction == ACROSS else ACROSS
    t_play = make_play(board.transpose(), [(c, r, ch) for r, c, ch in placed], flipped_dir)
    a, b = score_play(board, play), score_play(board.transpose(), t_play)
    assert a.total == b.total
    assert sorted(w.word for w in a.words) == sorted(w.word for w in b.words)
    # the total is the sum of the words plus the bingo, and a blank never scores
    assert a.total == sum(w.score for w in a.words) + a.bingo
    assert all(t.value == 0 for t in a.breakdown if t.letter.islower())
