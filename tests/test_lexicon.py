from __future__ import annotations

import random
import struct
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anchor.engine import Lexicon, LexiconError, Ruleset
from anchor.engine.lexicon import ACCEPTS, ARC_MASK, END, LexiconWarning

from .conftest import data_path

ENGLISH = Ruleset.load("english")
SMALL = ["AA", "AAH", "AB", "ABA", "BA", "BAA", "BAH", "CAB", "CABS", "HA", "HAH", "ZA"]


def nodes_of(lexicon: Lexicon) -> list[int]:
    data = lexicon.to_bytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def pack(nodes: list[int]) -> bytes:
    return struct.pack(f"<{len(nodes)}I", *nodes)


def test_magpie_twl06_reads_exactly_the_word_list(magpie_twl06, twl06_words):
    assert len(magpie_twl06) == len(twl06_words) == 178_691
    assert list(magpie_twl06) == sorted(w.upper() for w in twl06_words)


def test_build_matches_the_dawg_of_another_engine(twl06, magpie_twl06):
    ours, theirs = nodes_of(twl06), nodes_of(magpie_twl06)
    # Node 0 (DAWG root pointer) and the whole DAWG part are identical; node 1 points to
    # MAGPIE's GADDAG, which a DAWG-only build leaves absent (0).
    assert ours[0] == theirs[0]
    assert ours[1] == END and theirs[1] & ARC_MASK == len(ours)
    assert ours[2:] == theirs[2 : len(ours)]


def test_layout_conventions(twl06):
    nodes = nodes_of(twl06)
    assert nodes[0] >> 24 == 0 and nodes[0] & END and nodes[0] & ARC_MASK == 2
    assert nodes[1] >> 24 == 0 and nodes[1] & END
    # every sibling list: tiles strictly ascending, last flagged, arcs in range
    starts = {nodes[0] & ARC_MASK} | {n & ARC_MASK for n in nodes[2:] if n & ARC_MASK}
    for start in starts:
        i, prev = start, 0
        while True:
            tile = nodes[i] >> 24
            assert prev < tile <= 26
            prev = tile
            if nodes[i] & END:
                break
            i += 1


def test_build_is_deterministic(twl06, twl06_words):
    shuffled = list(twl06_words)
    random.Random(7).shuffle(shuffled)
    again = Lexicon.build([w.upper() for w in shuffled] + twl06_words[:100], ENGLISH)
    assert again.to_bytes() == twl06.to_bytes()
    assert again.report.duplicates == 100


def test_contains_len_iter(twl06):
    assert len(twl06) == 178_691
    for word in ("AA", "qi", "Zyzzyvas", "CWM", "OXYPHENBUTAZONE"):
        assert twl06.contains(word) and word in twl06
    for word in ("", "Q", "AAA", "ZYZZYVASS", "QIS2", "ЖУК", "OXYPHENBUTAZONES"):
        assert not twl06.contains(word)
    assert 5 not in twl06
    assert twl06.max_word_length == 15


def test_small_lexicon_round_trip(tmp_path):
    lex = Lexicon.build(SMALL, ENGLISH)
    assert list(lex) == sorted(SMALL)
    path = tmp_path / "small.kwg"
    lex.save(path)
    opened = Lexicon.open(path, ENGLISH)
    assert list(opened) == sorted(SMALL) and len(opened) == len(SMALL)
    assert opened.to_bytes() == path.read_bytes()
    opened.close()


def test_empty_lexicon():
    lex = Lexicon.build([], ENGLISH)
    assert len(lex) == 0 and list(lex) == [] and not lex.contains("A")


def test_rejected_words_are_reported():
    with pytest.warns(LexiconWarning, match="2 rejected"):
        lex = Lexicon.build(["CAT", "CAFÉ", "DOG", "R2D2", "cat"], ENGLISH)
    assert list(lex) == ["CAT", "DOG"]
    r = lex.report
    assert (r.kept, r.rejected, r.duplicates) == (2, 2, 1)
    assert r.examples[0] == (2, "CAFÉ", "'É' is not in the alphabet")
    assert r.examples[1][0] == 4
    with pytest.raises(LexiconError, match="2 words rejected"):
        Lexicon.build(["CAT", "CAFÉ", "DOG", "R2D2"], ENGLISH, strict=True)


def test_erudit_folds_yo(erudit, russian):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lex = Lexicon.build(["ёж", "ЕЛЬ", "Ёлка"], erudit)
    assert list(lex) == ["ЕЖ", "ЕЛКА", "ЕЛЬ"]
    assert lex.contains("ёж") and lex.contains("ЕЖ")
    ru = Lexicon.build(["ёж", "ЕЛЬ"], russian)
    assert list(ru) == ["ЕЛЬ", "ЁЖ"]  # Ё sorts after Е in the alphabet


# ----------------------------------------------------------------- bad files
def test_missing_and_empty_files(tmp_path):
    with pytest.raises(LexiconError, match="cannot open"):
        Lexicon.open(tmp_path / "nope.kwg", ENGLISH)
    (tmp_path / "empty.kwg").write_bytes(b"")
    with pytest.raises(LexiconError, match="empty"):
        Lexicon.open(tmp_path / "empty.kwg", ENGLISH)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda b: b[:-2], "not a multiple of 4"),
        (lambda b: b[:-4], "points to node|does not end its sibling list"),
        (lambda b: b + b"\x00\x00\x00\x01", "does not end its sibling list"),
        (lambda b: b[:4], "at least two nodes"),
        (lambda b: b"PK\x03\x04" + b[4:], "points to node"),
        (lambda b: b"\x00" * 4 + b"\xff" * 4, "points to node"),
    ],
)
def test_truncated_or_foreign_files_are_refused(tmp_path, mutate, message):
    data = mutate(Lexicon.build(SMALL, ENGLISH).to_bytes())
    path = tmp_path / "bad.kwg"
    path.write_bytes(data)
    with pytest.raises(LexiconError, match=message):
        Lexicon.open(path, ENGLISH)


def test_text_file_is_refused(tmp_path):
    path = tmp_path / "words.kwg"
    path.write_text("AA\nAAH\nAB\nABA\n")
    with pytest.raises(LexiconError, match="not a usable KWG"):
        Lexicon.open(path, ENGLISH)


def test_tiles_outside_the_alphabet(russian, english):
    ru = Lexicon.build(["ЯМА", "ЯР"], russian)
    with pytest.raises(LexiconError, match="outside the alphabet of 26 letters"):
        Lexicon.from_bytes(ru.to_bytes(), english)


def test_cycle_is_refused():
    nodes = nodes_of(Lexicon.build(["AB"], ENGLISH))
    # root list at 2: A -> list at 3: B (accepts). Point B back at the root list.
    nodes[3] = (nodes[3] & ~ARC_MASK) | 2
    with pytest.raises(LexiconError, match="cycle"):
        Lexicon.from_bytes(pack(nodes), ENGLISH)


def test_exponential_graph_is_refused():
    # 40 levels of two letters each pointing at the next level: 2**40 words.
    nodes = [END | 2, END]
    for level in range(40):
        nxt = 2 + 2 * (level + 1) if level < 39 else 0
        nodes.append((1 << 24) | ACCEPTS | nxt)
        nodes.append((2 << 24) | ACCEPTS | END | nxt)
    with pytest.raises(LexiconError, match="implausible word count"):
        Lexicon.from_bytes(pack(nodes), ENGLISH)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 2**32 - 1)), max_size=6))
def test_fuzz_mutated_kwg_is_refused_or_consistent(edits):
    nodes = nodes_of(Lexicon.build(SMALL, ENGLISH))
    for index, value in edits:
        if index < len(nodes):
            nodes[index] = value
    try:
        lex = Lexicon.from_bytes(pack(nodes), ENGLISH)
    except LexiconError:
        return
    words = list(lex)
    assert len(words) == len(lex)
    for w in words[:50]:
        assert lex.contains(w)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_random_bytes(data):
    try:
        lex = Lexicon.from_bytes(data, ENGLISH)
    except LexiconError:
        return
    assert len(list(lex)) == len(lex)


@settings(max_examples=100, deadline=None)
@given(st.sets(st.text(alphabet="ABCDEZ", min_size=1, max_size=8), max_size=60))
def test_build_property_words_in_equal_words_out(words):
    lex = Lexicon.build(words, ENGLISH)
    assert list(lex) == sorted(words)
    for w in words:
        assert lex.contains(w)
        assert not lex.contains(w + "Q")


def test_reads_the_shared_kwg_file_readonly(magpie_twl06):
    assert magpie_twl06.node_count == data_path("kwg", "TWL06.kwg").stat().st_size // 4
    with pytest.raises(TypeError):
        magpie_twl06.buffer[0] = 1


def test_a_name_given_to_lexicon_open_points_to_open_lexicon():
    """Lexicon.open takes a file; a bare name says where names are opened (the engine knows
    nothing of where lexica are installed)."""
    from anchor.dictionaries import open_lexicon

    rules = Ruleset.load("english")
    with pytest.raises(LexiconError, match=r"anchor\.dictionaries\.open_lexicon\('english'"):
        Lexicon.open("english", rules)
    assert len(open_lexicon("english", rules)) > 100_000
