"""A KWG's GADDAG may pick the left parts of anchors with tiles after them: the same plays in
the same order as the prefix-tree walk, whatever the GADDAG holds.

The oracle is the same file with its GADDAG pointer cleared (node 1), which the generator
then searches with the DAWG alone: every play, order, score and total must match on the
bench positions, every turn of the English game records, and self-play boards with random
racks, blanks included (GADDAG-led where two or more board tiles follow the anchor, with
blanks on the rack or not). A GADDAG lacking a path the DAWG's words need is not used; one
holding paths of words the DAWG lacks is used, and finds only the DAWG's words.
"""

from __future__ import annotations

import random
import struct
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anchor.engine import Board, Lexicon, Ruleset, Solver, parse_cgp
from anchor.engine.gcg import read_gcg, replay
from anchor.engine.leaves import Leaves
from anchor.engine.legality import random_rack
from anchor.engine.selfplay import play_game

from .conftest import data_path
from .test_gcg import english_files

ARC = 0x3FFFFF
RULES = Ruleset.load("english")


def nodes_of(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def bytes_of(nodes: list[int]) -> bytes:
    return struct.pack(f"<{len(nodes)}I", *nodes)


def without_gaddag(data: bytes) -> bytes:
    nodes = nodes_of(data)
    nodes[1] &= ~ARC
    return bytes_of(nodes)


@cache
def twl06_bytes() -> bytes:
    return data_path("kwg", "TWL06.kwg").read_bytes()


@cache
def solvers() -> tuple[Solver, Solver]:
    """(with the GADDAG, without it), over the same graph."""
    data = twl06_bytes()
    return tuple(Solver(Lexicon.from_bytes(d, RULES), RULES) for d in (data, without_gaddag(data)))


@cache
def leaves() -> Leaves:
    return Leaves.open(data_path("kwg", "TWL06.klv2"), RULES)


def assert_same(board: Board, rack: str, **options) -> int:
    led, walked = solvers()
    a = led.generate_moves(board, rack, **options)
    b = walked.generate_moves(board, rack, **options)
    assert [m.notation for m in a] == [m.notation for m in b], rack
    assert a.scores() == b.scores()
    assert a.equities() == b.equities()
    if "limit" not in options:
        assert a.total == b.total == len(a)
    else:  # None when the search skipped plays, which either may do where the other did not
        every = len(walked.generate_moves(board, rack))
        assert a.total in (None, every) and b.total in (None, every)
    return len(a)


def test_the_gaddag_is_used_only_when_there_is_one():
    led, walked = solvers()
    assert led._generator.gaddag and not walked._generator.gaddag
    built = Lexicon.build(["CAT", "CATS", "AT"], RULES)  # built without one: no GADDAG
    assert not Solver(built, RULES)._generator.gaddag
    both = Lexicon.build(["CAT", "CATS", "AT"], RULES, gaddag=True)
    assert Solver(both, RULES)._generator.gaddag  # covers the DAWG: the load check says so


def test_our_builder_writes_magpies_twl06_byte_for_byte():
    """Lexicon.build with its GADDAG, on the TWL06 word list: the very file MAGPIE ships
    (DAWG and GADDAG, 830,481 nodes), so the format is the one every engine reads."""
    words = data_path("wordlists", "twl06.txt").read_text().split()
    built = Lexicon.build(words, RULES, gaddag=True)
    assert built.to_bytes() == data_path("kwg", "TWL06.kwg").read_bytes()


@settings(max_examples=40, deadline=None)
@given(
    st.sets(st.text(alphabet="ACEINRST", min_size=2, max_size=7), min_size=1, max_size=80),
    st.text(alphabet="ACEINRST?", min_size=1, max_size=7),
)
def test_a_built_gaddag_finds_what_the_dawg_alone_finds(words, rack):
    """On any word list the builder's GADDAG passes the load check and leaves every play,
    score and order as the DAWG alone gives them (it only picks left parts)."""
    with_g = Solver(Lexicon.build(words, RULES, gaddag=True), RULES)
    without = Solver(Lexicon.build(words, RULES), RULES)
    assert with_g._generator.gaddag
    board = Board.empty(RULES)
    first = without.generate_moves(board, rack, limit=1)
    if len(first):  # a board with that play on it, so anchors have tiles after them
        board = board.apply(first[0].placed)
    for kwargs in ({}, {"limit": 3}):
        a = with_g.generate_moves(board, rack, **kwargs)
        b = without.generate_moves(board, rack, **kwargs)
        assert [(m.notation, m.score) for m in a] == [(m.notation, m.score) for m in b]


def test_bench_positions_all_plays_and_best_first():
    lines = data_path("bench", "positions.cgp").read_text().splitlines()
    for line in (ln for ln in lines if ln.strip() and not ln.startswith("#")):
        pos = parse_cgp(RULES, line)
        rack = pos.racks[0]
        assert assert_same(pos.board, rack) > 0
        for n in (1, 3, 10):
            assert_same(pos.board, rack, limit=n)
            assert_same(pos.board, rack, limit=n, rank="equity", leaves=leaves())


def test_every_recorded_turn():
    checked = 0
    for path in english_files():
        for turn in replay(read_gcg(path), RULES):
            if turn.event.rack:
                assert_same(turn.board, turn.event.rack)
                assert_same(turn.board, turn.event.rack, limit=1, rank="equity", leaves=leaves())
                checked += 1
    assert checked > 200


@cache
def self_play_boards() -> tuple[Board, ...]:
    led, _ = solvers()
    boards = []
    for seed in (3, 4):
        board = Board.empty(RULES)
        for turn in play_game(led, seed, check=False).turns:
            boards.append(board)
            if turn.move.placed:
                board = board.apply(turn.move.placed)
    return tuple(boards)


def test_self_play_boards_with_random_racks_and_blanks():
    rng = random.Random(7)
    plays = 0
    for board in self_play_boards():
        for blanks in (0, 0, 1, 2):
            rack = random_rack(board, rng).replace("?", "")[: 7 - blanks] + "?" * blanks
            plays += assert_same(board, rack)
            assert_same(board, rack, limit=5)
    assert plays > 10_000


def test_racks_with_blanks_have_their_left_parts_picked_too():
    """With a blank the GADDAG's paths open to every letter at each step, but the two or more
    board tiles after a GADDAG-led anchor still close most of them: there each prefix is
    tried with the rack's letter first and then a blank as it, as the walk tries them.
    Every play and order, and the best-first heads by equity (whose skipped prefixes with
    one blank or two must be the walk's), match the DAWG alone."""
    rng = random.Random(19)
    plays = 0
    for board in self_play_boards():
        for blanks in (1, 2):
            rack = random_rack(board, rng).replace("?", "")[: 7 - blanks] + "?" * blanks
            plays += assert_same(board, rack)
            for n in (1, 3):
                assert_same(board, rack, limit=n, rank="equity", leaves=leaves())
    assert plays > 10_000


def corrupt(data: bytes, change) -> bytes:
    nodes = nodes_of(data)
    change(nodes)
    return bytes_of(nodes)


def test_a_gaddag_missing_paths_is_not_used():
    """Cutting the arc under one letter of the GADDAG's root list removes every path through
    it: the check at load finds the DAWG's words need them, and the search goes without."""

    def cut(nodes: list[int]) -> None:
        root = nodes[1] & ARC
        nodes[root + 4] &= ~ARC  # the fifth letter of the root list: nothing below it

    solver = Solver(Lexicon.from_bytes(corrupt(twl06_bytes(), cut), RULES), RULES)
    assert not solver._generator.gaddag
    _, walked = solvers()
    pos = parse_cgp(RULES, data_path("bench", "positions.cgp").read_text().splitlines()[-1])
    a = solver.generate_moves(pos.board, pos.racks[0], limit=10)
    b = walked.generate_moves(pos.board, pos.racks[0], limit=10)
    assert [m.notation for m in a] == [m.notation for m in b]


def test_a_gaddag_of_more_words_finds_only_the_dawgs():
    """A file whose GADDAG holds every TWL06 word over a DAWG of a third of them: the GADDAG
    covers the DAWG, so it is used, and every play is still the small lexicon's."""
    words = data_path("wordlists", "twl06.txt").read_text().split()
    small = Lexicon.build(words[::3], RULES).to_bytes()
    dawg, big = nodes_of(small), nodes_of(twl06_bytes())
    shift = len(dawg) - 2

    def moved(node: int) -> int:
        return node + shift if node & ARC else node

    merged = [dawg[0], moved(big[1]), *dawg[2:], *(moved(n) for n in big[2:])]
    led = Solver(Lexicon.from_bytes(bytes_of(merged), RULES), RULES)
    walked = Solver(Lexicon.from_bytes(small, RULES), RULES)
    assert led._generator.gaddag and not walked._generator.gaddag
    lexicon = {w.upper() for w in words[::3]}
    rng = random.Random(5)
    checked = 0
    for path in english_files()[:6]:
        for turn in replay(read_gcg(path), RULES):
            rack = turn.event.rack or random_rack(turn.board, rng)
            a = led.generate_moves(turn.board, rack)
            b = walked.generate_moves(turn.board, rack)
            assert [m.notation for m in a] == [m.notation for m in b]
            assert all(move.word.upper() in lexicon for move in a)
            checked += len(a)
    assert checked > 1_000


if __name__ == "__main__":
    pytest.main([__file__])
