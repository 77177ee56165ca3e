"""The generator against the brute-force oracle: the same plays, once each, same scores."""

from __future__ import annotations

import random
import struct
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Board, Lexicon, LexiconError, Ruleset, Solver, validate_play
from anchor.engine.board import cell_text
from anchor.engine.lexicon import ACCEPTS, END

from .graphs import reshape
from .oracle import all_plays

TINY_TOML = """
name = "tiny"
rows = 9
cols = 9
rack_size = 7
bingo_bonus = 50
centre = "5E"
total_tiles = 100
tiles = '''
A 9 1
B 2 3
C 2 3
D 4 2
E 12 1
F 2 4
G 3 2
H 2 4
I 9 1
J 1 8
K 1 5
L 4 1
M 2 3
N 6 1
O 8 1
P 2 3
Q 1 10
R 6 1
S 4 1
T 6 1
U 4 1
V 2 4
W 2 4
X 1 8
Y 2 4
Z 1 10
? 2 0
'''
premiums = '''
T...D...T
.t.....t.
..d...d..
D..D.D..D
....D....
D..D.D..D
..d...d..
.t.....t.
T...D...T
'''
"""

TINY = Ruleset.from_toml(TINY_TOML, source="tiny")
ENGLISH = Ruleset.load("english")
BAG = "".join(ch * n for ch, n in ENGLISH.counts.items()) + "??"


def word_sample(twl06_words: list[str], seed: int, n: int) -> set[str]:
    rng = random.Random(seed)
    twos = [w.upper() for w in twl06_words if len(w) == 2]
    longer = [w.upper() for w in twl06_words if 3 <= len(w) <= 7]
    return set(twos) | set(rng.sample(longer, n))


def random_board(
    rules: Ruleset, lexicon: Lexicon, words: list[str], rng: random.Random, plays: int
) -> Board:
    """A board built only from valid plays (checked by validate_play, not the generator)."""
    board = Board.empty(rules)
    attempts = 0
    while plays and attempts < 4000:
        attempts += 1
        word = rng.choice(words)
        across = rng.random() < 0.5
        r = rng.randrange(rules.rows)
        c = rng.randrange(rules.cols)
        dr, dc = (0, 1) if across else (1, 0)
        if not board.in_bounds(r + dr * (len(word) - 1), c + dc * (len(word) - 1)):
            continue
        placed = []
        ok = True
        for i, ch in enumerate(word):
            rr, cc = r + dr * i, c + dc * i
            cell = board.letter_at(rr, cc)
            if cell is None:
                placed.append((rr, cc, ch.lower() if rng.random() < 0.08 else ch))
            elif cell.upper() != ch:
                ok = False
                break
        if not ok or not placed:
            continue
        if validate_play(board, placed, lexicon).ok:
            board = board.apply(placed)
            plays -= 1
    return board


def compare(solver: Solver, board: Board, rack: str, words: set[str]) -> int:
    moves = solver.generate_moves(board, rack)
    got: dict[frozenset, int] = {}
    for m in moves:
        key = frozenset(m.placed)
        assert key not in got, f"duplicate play {m.notation} on\n{board.render()}"
        got[key] = m.score
    expected = all_plays(board, rack, words)
    missing = {k: v for k, v in expected.items() if k not in got}
    extra = {k: v for k, v in got.items() if k not in expected}
    wrong = {
        k: (got[k], expected[k]) for k in got.keys() & expected.keys() if got[k] != expected[k]
    }
    detail = (
        f"rack {rack}\n{board.render()}\nmissing {list(missing.items())[:5]}\n"
        f"extra {list(extra.items())[:5]}\nwrong {list(wrong.items())[:5]}"
    )
    assert not missing and not extra and not wrong, detail
    assert moves.scores() == sorted(moves.scores(), reverse=True)
    return len(got)


@pytest.fixture(scope="module")
def tiny_setup(twl06_words):
    words = word_sample(twl06_words, 1, 300)
    lexicon = Lexicon.build(words, TINY)
    return Solver(lexicon, TINY), lexicon, words


def random_rack(rng: random.Random, blanks_ok: bool = True) -> str:
    bag = BAG if blanks_ok else BAG.replace("?", "")
    size = rng.choice([1, 2, 3, 4, 5, 6, 7, 7, 7])
    return "".join(rng.sample(bag, size))


def test_oracle_tiny_boards_many_positions(tiny_setup):
    solver, lexicon, words = tiny_setup
    word_list = sorted(words)
    rng = random.Random(2026)
    total = 0
    for i in range(1500):
        board = random_board(
            TINY, lexicon, word_list, rng, plays=rng.choice([0, 1, 2, 4, 6, 9, 14])
        )
        total += compare(solver, board, random_rack(rng, blanks_ok=i % 3 == 0), words)
    assert total > 5000  # the comparison covered plenty of plays


def test_oracle_full_size_english(twl06_words):
    words = word_sample(twl06_words, 2, 400)
    lexicon = Lexicon.build(words, ENGLISH)
    solver = Solver(lexicon, ENGLISH)
    word_list = sorted(words)
    rng = random.Random(7)
    for i in range(150):
        board = random_board(ENGLISH, lexicon, word_list, rng, plays=rng.choice([0, 3, 8, 15, 25]))
        compare(solver, board, random_rack(rng, blanks_ok=i % 4 == 0), words)


def dense_graph(letters: int, levels: int, padding: int = 0) -> bytes:
    """A KWG where every string of 2..levels of the first `letters` letters is a word, each
    level one list every node of the level above shares: small, but with far more runs of
    four letters below each node than a lexicon has. `padding` nodes no word reaches come
    first, which changes nothing but the graph's size."""
    first = 2 + padding
    nodes = [END | first, END] + [(1 << 24) | END] * padding
    for level in range(levels):
        below = first + letters * (level + 1) if level < levels - 1 else 0
        for tile in range(1, letters + 1):
            last = END if tile == letters else 0
            nodes.append((tile << 24) | (ACCEPTS if level else 0) | last | below)
    return struct.pack(f"<{len(nodes)}I", *nodes)


def test_the_letter_run_filters_find_what_the_unfiltered_search_finds():
    """Beside tiles, only letters whose runs with them occur in some word are tried, and
    before tiles no more letters than words have before their first run. A graph too
    costly to read the runs from gets neither; the same graph made larger by nodes no word
    reaches gets both. The same plays, in the same order, prove the filters drop none."""
    words = {"".join(p) for n in (2, 3, 4) for p in product("ABCDEFGH", repeat=n)}
    unfiltered = Solver(Lexicon.from_bytes(dense_graph(8, 4), TINY), TINY)
    filtered = Solver(Lexicon.from_bytes(dense_graph(8, 4, padding=200), TINY), TINY)
    assert set(unfiltered.lexicon) == set(filtered.lexicon) == words
    assert not unfiltered._generator.letter_runs and filtered._generator.letter_runs
    assert not unfiltered._generator.run_reach and filtered._generator.run_reach
    rng = random.Random(11)
    word_list = sorted(w for w in words if len(w) > 2)
    for plays in (1, 3, 6):
        board = random_board(TINY, filtered.lexicon, word_list, rng, plays)
        for rack in ("ABCDEFG", "AAB?", "H", "HGFE?"):
            expected = [(m.notation, m.score) for m in unfiltered.generate_moves(board, rack)]
            got = [(m.notation, m.score) for m in filtered.generate_moves(board, rack)]
            assert got == expected and expected


def test_graphs_of_any_shape_give_exactly_their_words_plays():
    """Lexicon files built by others may share lists anywhere and hold nodes no word reaches;
    the letter-run and reach tables are read off whatever graph passes the check. Graphs
    made by moving arcs, letters and word ends of a built one, each against the brute-force
    oracle on its own word list, on a board with tiles (where the tables are read)."""
    base = Lexicon.build(["AA", "AB", "ABA", "BA", "CAB", "CABS", "ABS", "BASS", "SCAB"], ENGLISH)
    data = base.to_bytes()
    nodes = list(struct.unpack(f"<{len(data) // 4}I", data))
    board = Board.empty(ENGLISH).apply([(7, 6, "C"), (7, 7, "A"), (7, 8, "B"), (8, 8, "A")])
    rng = random.Random(5)
    checked = 0
    while checked < 60:
        mutated = reshape(nodes, rng)
        try:
            lexicon = Lexicon.from_bytes(struct.pack(f"<{len(mutated)}I", *mutated), ENGLISH)
        except LexiconError:
            continue
        words = {w for w in lexicon if len(w) > 1}
        compare(Solver(lexicon, ENGLISH), board, "".join(rng.sample("ABCSAB??", 6)), words)
        checked += 1


def test_first_move_covers_the_centre(tiny_setup):
    solver, _lexicon, words = tiny_setup
    board = Board.empty(TINY)
    moves = solver.generate_moves(board, "AEINRST")
    assert len(moves) > 0
    for m in moves:
        assert (4, 4) in {(r, c) for r, c, _ in m.placed}
    assert compare(solver, board, "AEINRS?", words) > len(moves)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 10**9), plays=st.integers(0, 12), rack=st.text("ABCDEILNORST?", max_size=7)
)
def test_oracle_property(tiny_setup, seed, plays, rack):
    solver, lexicon, words = tiny_setup
    rng = random.Random(seed)
    board = random_board(TINY, lexicon, sorted(words), rng, plays)
    compare(solver, board, rack, words)


def python_fields(moves) -> list[tuple]:
    """MoveList.fields() the slow way: a Move per entry (the decoding the oracle checks)."""
    return [m.fields() for m in moves]


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 10**9), plays=st.integers(0, 12), rack=st.text("ABCDEILNORST?", max_size=7)
)
def test_records_decoded_in_c_match_the_moves(tiny_setup, seed, plays, rack):
    """The C decoder behind MoveList.fields() gives every play's notation, word and tiles
    exactly as the Move objects do; lists=True is the same, as lists."""
    solver, lexicon, words = tiny_setup
    board = random_board(TINY, lexicon, sorted(words), random.Random(seed), plays)
    for limit in (None, 3):
        moves = solver.generate_moves(board, rack, limit=limit, include_exchanges=limit == 3)
        assert moves.fields() == python_fields(moves)
        as_lists = [[*f[:6], [list(sq) for sq in f[6]]] for f in python_fields(moves)]
        assert moves.fields(lists=True) == as_lists


def test_the_record_decoder_refuses_what_is_not_a_record(tiny_setup):
    solver, _lexicon, _words = tiny_setup
    board = Board.empty(TINY)
    text = cell_text(TINY)
    with pytest.raises(ValueError, match="32 bytes"):
        solver._generator.describe(b"\x00" * 31, board.cells, text)
    bad = struct.pack("=iBBBB24s", 5, 8, 8, 0, 5, b"\x01" * 24)  # runs off a 9x9 board
    with pytest.raises(ValueError, match="not a play on this board"):
        solver._generator.describe(bad, board.cells, text)
    unknown = struct.pack("=iBBBB24s", 5, 0, 0, 0, 2, bytes([1, 99]) + bytes(22))
    with pytest.raises(ValueError, match="no text for cell byte 99"):
        solver._generator.describe(unknown, board.cells, text)
