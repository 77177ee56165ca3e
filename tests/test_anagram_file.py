"""The bingo words as a file beside the lexicon (`NAME.kwg.anagrams`, anagram_file.c):
written by Lexicon.save and `anchor lexicon install`, mapped by Lexicon.open, used by the
generator only when it holds exactly the set the generator builds, copied beside a
worker's snapshot, and set aside with a warning saying what to do when it is anything
else (a stale cache must not stop a worker)."""

from __future__ import annotations

import re
import shutil
import struct
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anchor.dictionaries import lexica
from anchor.engine import Lexicon, LexiconError, LexiconInfo, Ruleset, Solver, parse_cgp
from anchor.engine.lexicon import LexiconWarning, anagram_path

from .conftest import ROOT, data_path

BENCH = [
    ln
    for ln in data_path("bench", "positions.cgp").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
SMALL = ["CAB", "CABS", "AB", "ABA", "BA", "ABSCESS", "CABBAGES", "ABACUSES"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory, twl06) -> Path:
    """TWL06 as `anchor lexicon install` leaves it."""
    path = tmp_path_factory.mktemp("installed") / "twl06.kwg"
    twl06.save(path)
    return path


def plays(solver: Solver, cgp: str, **kw) -> list[tuple[str, int]]:
    position = parse_cgp(solver.rules, cgp)
    moves = solver.generate_moves(position.board, position.racks[0], **kw)
    return [(m.notation, m.score) for m in moves]


def test_save_writes_the_bingo_words_and_open_maps_them(saved, english, tmp_path):
    assert anagram_path(saved).stat().st_size > 1 << 20
    header = anagram_path(saved).read_bytes()[:96]
    assert struct.unpack_from("=I", header, 8)[0] == 5  # the format with the shorter words
    assert struct.unpack_from("=Q", header, 56)[0] == 1 << 15  # its 2^21 bits, as 64-bit words
    assert 20 <= struct.unpack_from("=I", header, 84)[0] <= 26  # the short-of keys' bits (log2)
    mapped = Solver(Lexicon.open(saved, english), english)
    assert mapped._generator.anagram_source == "file"
    assert mapped._generator.anagram_trusted  # written for this KWG: taken, nothing built
    assert mapped._generator.letter_runs and mapped._generator.run_reach  # the file's tables
    assert mapped._generator.short_words_source == "file"  # not built at every start
    flags = struct.unpack_from("=I", header, 80)[0]
    assert flags & 14 == 14  # the shorter words, the letter runs and the reach follow the set
    bare = tmp_path / "bare.kwg"
    shutil.copyfile(saved, bare)
    built = Solver(Lexicon.open(bare, english), english)
    assert built._generator.anagram_source == "built"
    assert built._generator.short_words_source == "built"
    # the same bytes built in the process as in the file, the short-of keys among them
    assert built._generator.anagram_file() == anagram_path(saved).read_bytes()
    leaves = data_path("kwg", "TWL06.klv2")
    for cgp in BENCH[:6]:  # the same plays, ranked the same, from either set
        for kw in (
            {},
            {"rank": "equity", "leaves": leaves},
            {"rank": "equity", "leaves": leaves, "limit": 1},
        ):
            assert plays(mapped, cgp, **kw) == plays(built, cgp, **kw)


def without_shorter_words(data: bytes) -> bytes:
    """The file as it was written before it held the shorter words (no flag 8, no
    section), its digest made right."""
    end = set_end(data)
    at = (end + 7) & ~7
    slots, _keys, words, tiles, bits = struct.unpack_from("=QQQQI", data, at)
    size = 40 + ((1 << (bits - 6)) * 8 if bits else 0) + slots * 12 + words * 9 + tiles
    old = bytearray(data[:end] + data[at + size :])
    struct.pack_into("=I", old, 8, 4)  # its version
    struct.pack_into("=I", old, 80, struct.unpack_from("=I", data, 80)[0] & ~8)
    return with_digest(bytes(old))


def test_a_file_without_the_shorter_words_is_still_taken(saved, twl06, english, tmp_path):
    """Files written before the shorter words were kept: trusted as before, the shorter
    words built at start, the same plays."""
    path = tmp_path / "twl06.kwg"
    shutil.copyfile(saved, path)
    anagram_path(path).write_bytes(without_shorter_words(anagram_path(saved).read_bytes()))
    solver = Solver(Lexicon.open(path, english), english)
    assert solver._generator.anagram_trusted
    assert solver.shorter_words == "built"
    (problem,) = lexica.bingo_word_problems(Lexicon.open(path, english), english)  # verify's
    assert "written before the file held the shorter words" in problem
    assert f"anchor lexicon index {path}" in problem
    leaves = data_path("kwg", "TWL06.klv2")
    for cgp in BENCH:  # VS_ED and MANY_MOVES hold blanks: their plays are laid from words
        kw = {"rank": "equity", "leaves": leaves, "limit": 1}
        assert plays(solver, cgp, **kw) == plays(Solver(twl06, english), cgp, **kw)


def test_a_bingo_word_file_of_another_lexicon_is_set_aside_with_what_to_do(
    saved, default_english, english, tmp_path
):
    """A KWG replaced by hand (`mv new.kwg english.kwg`) beside its old bingo words: like
    any stale cache, the file is not used, the worker works on, and it is told why."""
    path = tmp_path / "english.kwg"
    default_english.save(path)
    shutil.copyfile(anagram_path(saved), anagram_path(path))
    lexicon = Lexicon.open(path, english)
    with pytest.warns(LexiconWarning) as said:
        solver = Solver(lexicon, english)
    text = str(said[0].message)
    assert str(anagram_path(path)) in text and "built from another lexicon" in text
    assert f"anchor lexicon index {path}" in text and "delete it" in text
    assert solver._generator.anagram_source == "built"
    assert plays(solver, BENCH[4]) == plays(Solver(default_english, english), BENCH[4])
    assert any("built from another lexicon" in p for p in lexica.verify(path))


def short_of_end(data: bytes) -> int:
    """Where a file's word keys and short-of keys end (and its slots begin)."""
    word_keys = struct.unpack_from("=Q", data, 56)[0]
    bits = struct.unpack_from("=I", data, 84)[0]
    return 96 + word_keys * 8 + (1 << (bits - 6) if bits else 0) * 8


def set_end(data: bytes) -> int:
    """Where a file's set ends (its word keys, short-of keys, slots, chains and tiles): the
    letter-run tables follow."""
    slots, _keys, words, tiles, _word_keys = struct.unpack_from("=QQQQQ", data, 24)
    return short_of_end(data) + slots * 12 + words * 9 + tiles


def damaged(data: bytes) -> list[tuple[str, bytes, str]]:
    """(what, bytes, what the refusal says) for a good file `data`."""
    header = bytearray(data)
    header[8:12] = struct.pack("=I", 2)  # the format before the digests
    counts = bytearray(data)
    counts[40:48] = struct.pack("=Q", 1 << 40)
    flipped = bytearray(data)
    flipped[set_end(data) - 1] ^= 0x40  # the last word's last letter
    filter_bit = bytearray(data)  # a bit of the word-key filter, right after the header
    filter_bit[96 + 4321] ^= 0x10
    short_bit = bytearray(data)  # a bit of the short-of keys, just before the slots
    short_bit[short_of_end(data) - 77] ^= 0x04
    bits_absurd = bytearray(data)  # the short-of filter's size in bits, out of range
    bits_absurd[84:88] = struct.pack("=I", 5)
    bits_other = bytearray(data)  # in range, but not this file's
    bits_other[84:88] = struct.pack("=I", struct.unpack_from("=I", data, 84)[0] + 1)
    return [
        ("cut short", data[:-9], "not the length its header gives"),
        ("grown", data + bytes(8), "cut short, grown, or its header damaged"),
        ("only a header's worth", data[:20], "shorter than its header"),
        ("another format", b"ANCHKWG?" + data[8:], "not an Anchor bingo-word file"),
        ("another version", bytes(header), "a format this version"),
        ("absurd counts", bytes(counts), "not the length its header gives"),
        # written for this KWG (its digest in the header), holding other words
        ("one letter changed", bytes(flipped), "it names this lexicon, but its words are not"),
        (
            "a bit of the word-key filter changed",
            bytes(filter_bit),
            "it names this lexicon, but its words are not",
        ),
        (
            "a bit of the short-of keys changed",
            bytes(short_bit),
            "it names this lexicon, but its words are not",
        ),
        ("a short-of size out of range", bytes(bits_absurd), "filter's size is out of range"),
        ("another short-of size", bytes(bits_other), "or its header damaged"),
    ]


def test_a_damaged_bingo_word_file_is_set_aside_naming_it(english, tmp_path):
    path = tmp_path / "small.kwg"
    Lexicon.build(SMALL, english).save(path)
    good = anagram_path(path).read_bytes()
    for what, data, message in damaged(good):
        anagram_path(path).write_bytes(data)
        with pytest.warns(LexiconWarning, match=message) as said:
            solver = Solver(Lexicon.open(path, english), english)
        assert str(anagram_path(path)) in str(said[0].message), what
        assert solver._generator.anagram_source == "built"
    anagram_path(path).write_bytes(b"")
    with pytest.warns(LexiconWarning, match="cannot be mapped .*empty"):
        assert Lexicon.open(path, english).anagrams is None
    anagram_path(path).unlink()
    anagram_path(path).mkdir()
    with pytest.warns(LexiconWarning, match="is a directory"):
        lexicon = Lexicon.open(path, english)
    assert Solver(lexicon, english)._generator.anagram_source == "built"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_bingo_word_files_are_used_exactly_or_set_aside(english, tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "small.kwg"
    built = Lexicon.build(SMALL, english)
    built.save(path)
    good = anagram_path(path).read_bytes()
    bad = bytearray(good)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(bad) - 1))
        bad[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        bad = bad[: data.draw(st.integers(0, len(bad)))]
    anagram_path(path).write_bytes(bytes(bad))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiconWarning)
        solver = Solver(Lexicon.open(path, english), english)
    # taken by its digests only when intact; used only when its set is the set itself (its
    # digests, the GADDAG's flag and the letter-run tables after the set may differ:
    # the set is then compared, the tables built); else set aside, the generator's own used
    end = set_end(good)
    shorter = (end + 7) & ~7  # the shorter words' header (flag 8), which sizes the file too
    tables = len(bad) >= 84 and bad[80] & 14 == good[80] & 14  # what follows the set
    same_tables = (
        len(bad) == len(good)
        and bad[:64] == good[:64]
        and tables
        and bad[84:88] == good[84:88]  # the short-of filter's size
        and bad[96:end] == good[96:end]
        and bad[shorter : shorter + 40] == good[shorter : shorter + 40]
    )
    assert solver._generator.anagram_trusted == (bytes(bad) == good)
    assert (solver._generator.anagram_source == "file") == same_tables
    assert plays(solver, BENCH[3]) == plays(Solver(built, english), BENCH[3])


def test_a_file_for_another_rack_size_is_left_to_the_rulesets_it_serves(english, tmp_path):
    path = tmp_path / "small.kwg"
    Lexicon.build(SMALL, english).save(path)
    toml = (ROOT / "engine" / "rulesets" / "english.toml").read_text()
    eight = Ruleset.from_toml(toml.replace("rack_size = 7", "rack_size = 8"), "eight.toml")
    solver = Solver(Lexicon.open(path, english), eight)
    assert solver._generator.anagram_source == "built"
    assert Solver(Lexicon.open(path, english), english)._generator.anagram_source == "file"
    assert lexica.bingo_word_problems(Lexicon.open(path, english), english) == []
    # the other way round: the lexicon's own ruleset is told its starts build the set
    (problem,) = lexica.bingo_word_problems(Lexicon.open(path, english), eight)
    assert "written for another rack size" in problem and "process builds its own" in problem


def test_a_worker_maps_a_snapshot_of_the_file_beside_its_lexicon(
    saved, english, tmp_path, monkeypatch
):
    from anchor.worker import snapshot
    from anchor.worker.main import _snapshot_lexicon

    folder = tmp_path / "snaps"
    monkeypatch.setenv("ANCHOR_SNAPSHOT_DIR", str(folder))
    kwg = _snapshot_lexicon(str(saved))
    copy = anagram_path(kwg)
    assert kwg.parent == copy.parent == folder
    assert copy.read_bytes() == anagram_path(saved).read_bytes()
    lexicon = Lexicon.open(kwg, english)
    assert Solver(lexicon, english)._generator.anagram_source == "file"
    del lexicon
    assert snapshot.release(copy) and snapshot.release(kwg)
    assert sorted(folder.iterdir()) == []
    (folder / ("0" * 64 + ".kwg.anagrams")).write_bytes(b"left by a killed worker")
    assert [p.name for p in snapshot.prune(folder)] == ["0" * 64 + ".kwg.anagrams"]


def test_a_worker_with_a_stale_file_starts_and_logs_it_by_the_users_path(
    saved, default_english, tmp_path, monkeypatch, caplog
):
    from anchor.worker import snapshot
    from anchor.worker.main import open_lexica, parse_lexicon_spec

    monkeypatch.setenv("ANCHOR_SNAPSHOT_DIR", str(tmp_path / "snaps"))
    path = tmp_path / "english.kwg"
    default_english.save(path)
    shutil.copyfile(anagram_path(saved), anagram_path(path))
    with caplog.at_level("WARNING", logger="anchor.worker"):
        registry = open_lexica([parse_lexicon_spec(f"mine={path}")])
    said = [r.getMessage() for r in caplog.records if r.name == "anchor.worker"]
    assert said and said[0].startswith(f"{anagram_path(path)}: built from another lexicon")
    assert "anchor-lexica" not in said[0] and "snaps" not in said[0]
    solver = registry.solver("english", "mine")
    assert solver._generator.anagram_source == "built"
    del registry, solver
    snapshot.release_all()


def test_a_huge_bingo_word_file_is_not_copied_into_a_workers_memory(
    english, tmp_path, monkeypatch, caplog
):
    """Snapshots live in memory (/dev/shm): a stray file of any size must not fill it."""
    from anchor.worker import snapshot
    from anchor.worker.main import _snapshot_lexicon

    folder = tmp_path / "snaps"
    monkeypatch.setenv("ANCHOR_SNAPSHOT_DIR", str(folder))
    path = tmp_path / "small.kwg"
    Lexicon.build(SMALL, english).save(path)
    with open(anagram_path(path), "r+b") as fh:
        fh.truncate(64 << 20)  # sparse: no disk, but a 64 MiB copy
    with caplog.at_level("WARNING", logger="anchor.worker"):
        kwg = _snapshot_lexicon(str(path))
    assert [p.name for p in folder.iterdir()] == [kwg.name]
    said = [r.getMessage() for r in caplog.records if r.name == "anchor.worker"]
    assert said and said[0].startswith(f"{anagram_path(path)}: 67,108,864 bytes")
    assert snapshot.release(kwg)


# An independent reading of the file's digests (anagram_file.c, digest64): eight bytes a
# step, native order (the file's), the tail zero-padded.
MASK = (1 << 64) - 1


def digest64(data: bytes, seed: int = 0x9E3779B97F4A7C15) -> int:
    h = seed ^ len(data)
    full = len(data) - len(data) % 8
    for (w,) in struct.iter_unpack("=Q", data[:full]):
        h = ((h ^ w) * 0xBF58476D1CE4E5B9) & MASK
        h ^= h >> 31
    tail = int.from_bytes(data[full:] + bytes(8 - len(data) + full), "little")
    h = ((h ^ tail) * 0x94D049BB133111EB) & MASK
    return h ^ (h >> 29)


def with_digest(data: bytes) -> bytes:
    """`data` with its file digest (offset 72) made right for what it now holds."""
    head = bytearray(data[:96])
    head[72:80] = bytes(8)
    digest = digest64(data[96:], seed=digest64(bytes(head)))
    head[72:80] = struct.pack("=Q", digest)
    return bytes(head) + data[96:]


def test_the_digests_are_of_the_kwg_and_of_the_file(saved, english, tmp_path):
    data = anagram_path(saved).read_bytes()
    kwg_digest, file_digest = struct.unpack_from("=QQ", data, 64)
    assert kwg_digest == digest64(saved.read_bytes())
    assert with_digest(data) == data and file_digest != 0
    assert struct.unpack_from("=I", data, 80)[0] & 1 == 0  # a DAWG alone: no GADDAG to cover
    magpie = tmp_path / "TWL06.kwg"  # MAGPIE's file: the DAWG and a GADDAG covering it
    shutil.copyfile(data_path("kwg", "TWL06.kwg"), magpie)
    Lexicon.open(magpie, english).write_anagrams(magpie)
    assert struct.unpack_from("=I", anagram_path(magpie).read_bytes(), 80)[0] & 1 == 1
    solver = Solver(Lexicon.open(magpie, english), english)
    assert solver._generator.anagram_trusted and solver._generator.gaddag


def unsound(data: bytes) -> list[tuple[str, bytes]]:
    """Files whose digests are right for what they hold but whose tables are not sound:
    what a stranger who can write the lexicon folder could make. Each must be compared
    with a built set (and refused), never followed into a loop or out of bounds."""
    slots, keys, words, tiles, _word_keys = struct.unpack_from("=QQQQQ", data, 24)
    at_slots = short_of_end(data)
    at_head = at_slots + slots * 8
    at_next = at_head + slots * 4
    at_start = at_next + words * 4
    at_length = at_start + words * 4
    at_tiles = at_length + words

    def put(fmt: str, offset: int, value: int) -> bytes:
        out = bytearray(data)
        struct.pack_into(fmt, out, offset, value)
        return with_digest(bytes(out))

    used = next(i for i in range(slots) if struct.unpack_from("=Q", data, at_slots + 8 * i)[0])
    return [
        ("a chain that loops", put("=I", at_next + 4 * 5, 6)),  # word 5 (1-based 6) to itself
        ("a chain head past the words", put("=I", at_head + 4 * used, words + 1)),
        ("a word past the tiles", put("=I", at_start + 4 * (words - 1), tiles)),
        ("a word too long for a board", put("=B", at_length, 200)),
        ("a letter not of the alphabet", put("=B", at_tiles, 60)),
        # the tiles are checked eight at a time: a 0, one past Z, one above 127, the last
        ("a blank among the letters", put("=B", at_tiles + 1001, 0)),
        ("a letter one past Z", put("=B", at_tiles + 2003, 27)),
        ("a byte above 127", put("=B", at_tiles + 77, 0xC1)),
        ("the last letter past Z", put("=B", at_tiles + tiles - 1, 27)),
        ("a key count the slots do not hold", put("=Q", 32, keys + 1)),
    ]


def test_a_file_with_right_digests_but_unsound_tables_is_compared_not_trusted(
    saved, twl06, english, tmp_path
):
    data = anagram_path(saved).read_bytes()
    path = tmp_path / "twl06.kwg"
    shutil.copyfile(saved, path)
    want = plays(Solver(twl06, english), BENCH[4])
    for what, bad in unsound(data):
        anagram_path(path).write_bytes(bad)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", LexiconWarning)
            solver = Solver(Lexicon.open(path, english), english)
        assert not solver._generator.anagram_trusted, what
        assert solver._generator.anagram_source == "built", what
        assert any(
            "it names this lexicon, but its words are not" in str(w.message) for w in said
        ), what
        assert plays(solver, BENCH[4]) == want, what
    # a reach table (it ends the file) capping a run at more letters than a board holds:
    # not trusted, so the tables are built; the set, equal to the built one, is shared
    capped = bytearray(data)
    capped[-1] = 200
    anagram_path(path).write_bytes(with_digest(bytes(capped)))
    with pytest.warns(LexiconWarning, match="damaged .it names this lexicon, but its digest"):
        solver = Solver(Lexicon.open(path, english), english)  # each start is told
    assert not solver._generator.anagram_trusted
    assert solver._generator.anagram_source == "file" and solver._generator.run_reach
    assert plays(solver, BENCH[4]) == want
    # the shorter words unsound (a chain that loops, a word as long as a rack), the rest
    # sound: not trusted; the set, equal to the built one, is shared, the shorter words built
    at = (set_end(data) + 7) & ~7
    slots, _keys, words, _tiles, bits = struct.unpack_from("=QQQQI", data, at)
    at_next = at + 40 + ((1 << (bits - 6)) * 8 if bits else 0) + slots * 12
    at_length = at_next + words * 8
    for what, offset, value in (("loop", at_next + 4 * 5, 6), ("long", at_length + 3, 7)):
        bad = bytearray(data)
        struct.pack_into("=I" if what == "loop" else "=B", bad, offset, value)
        anagram_path(path).write_bytes(with_digest(bytes(bad)))
        with pytest.warns(LexiconWarning, match="damaged .it names this lexicon, but its digest"):
            solver = Solver(Lexicon.open(path, english), english)
        assert not solver._generator.anagram_trusted, what
        assert solver._generator.anagram_source == "file", what
        assert solver._generator.short_words_source == "built", what
        assert plays(solver, BENCH[4]) == want, what
    for offset, fmt, value in ((80, "=I", 16), (84, "=I", 1), (88, "=Q", 1), (8, "=I", 2)):
        later = bytearray(data)  # a later format's (flags, sizes, a field now 0, version 7)
        struct.pack_into(fmt, later, offset, struct.unpack_from(fmt, data, offset)[0] | value)
        anagram_path(path).write_bytes(with_digest(bytes(later)))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", LexiconWarning)
            solver = Solver(Lexicon.open(path, english), english)
        assert not any("damaged (it names" in str(w.message) for w in said), offset
        if offset in (80, 88):  # a later flag or field: the set, equal to the built one, shared
            assert solver._generator.anagram_source == "file", offset
        assert not solver._generator.anagram_trusted, offset  # not this version's to read
        assert plays(solver, BENCH[4]) == want


def test_a_file_for_the_same_words_in_another_kwg_is_compared_then_shared(saved, english, tmp_path):
    """MAGPIE's TWL06.kwg holds the words of `saved` (a DAWG alone) and a GADDAG: the file
    written for `saved` is not trusted for it, but it holds exactly the set this KWG
    builds, so it is shared after the comparison."""
    magpie = tmp_path / "TWL06.kwg"  # the same words, with a GADDAG
    shutil.copyfile(data_path("kwg", "TWL06.kwg"), magpie)
    shutil.copyfile(anagram_path(saved), anagram_path(magpie))
    solver = Solver(Lexicon.open(magpie, english), english)
    assert not solver._generator.anagram_trusted
    assert solver._generator.anagram_source == "file"
    assert solver._generator.anagram_problem is None
    stamped = bytearray(anagram_path(saved).read_bytes())  # a digest of another KWG, too
    struct.pack_into("=Q", stamped, 64, 1)
    anagram_path(magpie).write_bytes(with_digest(bytes(stamped)))
    solver = Solver(Lexicon.open(magpie, english), english)
    assert not solver._generator.anagram_trusted
    assert solver._generator.anagram_source == "file"


class Unbuilt:
    """A recipe that must not build: it stands for `twl06`, already installed."""

    def __init__(self, recipe):
        self.kwg_sha256, self.ruleset = recipe.kwg_sha256, recipe.ruleset
        self.source, self.licence = recipe.source, recipe.licence

    def build(self, *args):
        raise AssertionError("the lexicon was built again")


@pytest.fixture
def installed(magpie_twl06, tmp_path, monkeypatch) -> Path:
    """twl06 as `anchor lexicon install` leaves it (the recipe's pinned bytes), in a folder
    of its own; the recipe may not build it again."""
    folder = tmp_path / "lexica"
    folder.mkdir()
    path = folder / "twl06.kwg"
    magpie_twl06.save(path)
    monkeypatch.setitem(lexica.RECIPES, "twl06", Unbuilt(lexica.RECIPES["twl06"]))
    return path


def test_install_over_an_empty_or_foreign_bingo_word_file_writes_it_anew(installed, saved):
    """An empty file (a crash while it was written) and one written for another KWG of the
    same words (each process then builds the set to check it) are reported by verify and
    written anew by install."""
    fresh = anagram_path(installed).read_bytes()
    for bad, what in ((b"", "can read"), (anagram_path(saved).read_bytes(), "another KWG")):
        anagram_path(installed).write_bytes(bad)
        problems = lexica.verify(installed)
        assert len(problems) == 1 and what in problems[0], problems
        said: list[str] = []
        lexica.install(["twl06"], folder=installed.parent, say=said.append)
        assert said[-1] == f"twl06: rewrote its bingo words to {anagram_path(installed)}"
        assert anagram_path(installed).read_bytes() == fresh
        assert lexica.verify(installed) == []
        assert not list(installed.parent.glob("*.tmp"))


def test_install_writes_a_missing_or_damaged_sidecar_of_the_pinned_kwg(installed):
    """The KWG is the recipe's byte for byte: only its NAME.kwg.json is written again."""
    sidecar = installed.with_name(installed.name + ".json")
    recipe = lexica.RECIPES["twl06"]
    english = sidecar.read_text()
    damages = [
        sidecar.unlink,
        lambda: sidecar.write_text("{not json"),
        lambda: sidecar.write_text(english.replace('"english"', '"russian"')),
        lambda: sidecar.write_text(re.sub(r'"words": \d+', '"words": 5', english)),
    ]
    for damage in damages:
        damage()
        if damage is damages[2]:  # verify and open name the contradiction, not the KWG's words
            (problem,) = lexica.verify(installed)
            assert problem.startswith(f"{sidecar}: names the russian ruleset"), problem
            assert "but gives the alphabet ABC" in problem and "holds russian words" not in problem
            with pytest.raises(LexiconError, match="names the russian ruleset, whose alphabet"):
                Lexicon.open(installed, Ruleset.load("russian"))
        said: list[str] = []
        lexica.install(["twl06"], folder=installed.parent, say=said.append)
        assert said[:2] == [
            f"twl06: wrote its sidecar {sidecar} (the KWG is the recipe's)",
            f"twl06: already installed at {installed}",
        ]
        info = LexiconInfo.read(installed)
        assert (info.ruleset, info.sha256) == ("english", recipe.kwg_sha256)
        assert info.source == recipe.source
        assert info.words == len(Lexicon.open(installed, Ruleset.load("english")))
        assert lexica.verify(installed, recipe.kwg_sha256) == []


def test_install_builds_a_damaged_kwg_whose_sidecar_claims_the_pin(installed):
    """The sidecar says the pinned digest but the KWG is cut short: it is built again."""
    installed.write_bytes(installed.read_bytes()[:-4096])
    with pytest.raises(AssertionError, match="built again"):
        lexica.install(["twl06"], folder=installed.parent, say=lambda _: None)


def test_install_that_cannot_write_the_bingo_word_file_says_why(installed):
    """A folder where the file goes: a clear error, and the lexicon left as it was."""
    anagram_path(installed).unlink()
    anagram_path(installed).mkdir()
    kwg = installed.read_bytes()
    (problem,) = lexica.verify(installed)  # a hint that works: not `index` with the folder there
    assert problem.startswith(f"{anagram_path(installed)}: a folder") and "remove it" in problem
    with pytest.raises(LexiconError, match="a folder is in the way"):
        lexica.install(["twl06"], folder=installed.parent, say=lambda _: None)
    assert installed.read_bytes() == kwg and anagram_path(installed).is_dir()
    assert not list(installed.parent.glob("*.tmp"))


def test_install_over_a_stale_bingo_word_file_writes_only_that_file(installed):
    """An installed lexicon whose bingo-word file an older Anchor wrote is not built
    again: `anchor lexicon install` writes the file anew."""
    path = installed
    fresh = anagram_path(path).read_bytes()
    stale = bytearray(fresh)
    struct.pack_into("=I", stale, 84, 0)  # no short-of keys: as a format-3 file had
    anagram_path(path).write_bytes(bytes(stale))
    said: list[str] = []
    assert lexica.install(["twl06"], folder=path.parent, say=said.append) == [path]
    assert said == [
        f"twl06: already installed at {path}",
        f"twl06: rewrote its bingo words to {anagram_path(path)}",
    ]
    assert anagram_path(path).read_bytes() == fresh
    assert lexica.verify(path, lexica.RECIPES["twl06"].kwg_sha256) == []
    said.clear()
    lexica.install(["twl06"], folder=path.parent, say=said.append)
    assert said == [f"twl06: already installed at {path}"]


def test_install_over_a_file_without_the_shorter_words_writes_it_anew(installed, monkeypatch):
    fresh = anagram_path(installed).read_bytes()
    older = without_shorter_words(fresh)
    anagram_path(installed).write_bytes(older)
    said: list[str] = []
    lexica.install(["twl06"], folder=installed.parent, say=said.append)
    assert said[-1] == f"twl06: rewrote its bingo words to {anagram_path(installed)}"
    assert anagram_path(installed).read_bytes() == fresh and lexica.verify(installed) == []
    # where it cannot be written (a read-only folder), the older file still serves: said,
    # not an error (it is only slower)
    anagram_path(installed).write_bytes(older)

    def refuse(self, kwg):
        raise LexiconError(f"cannot write {anagram_path(kwg)}: Read-only file system")

    monkeypatch.setattr(Lexicon, "write_anagrams", refuse)
    said.clear()
    lexica.install(["twl06"], folder=installed.parent, say=said.append)
    assert said[-1].startswith("twl06: cannot write") and "the older file still serves" in said[-1]
    assert anagram_path(installed).read_bytes() == older
