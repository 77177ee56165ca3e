"""Shared fixtures: real rulesets, real word lists and lexica from ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

from anchor.engine import Lexicon, Ruleset

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT_KWG = ROOT / "dictionaries" / "build" / "english.kwg"


def data_path(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"test data {path} is missing: ../shared/data must sit beside the project")
    return path


@pytest.fixture(scope="session")
def english() -> Ruleset:
    return Ruleset.load("english")


@pytest.fixture(scope="session")
def russian() -> Ruleset:
    return Ruleset.load("russian")


@pytest.fixture(scope="session")
def erudit() -> Ruleset:
    return Ruleset.load("erudit")


@pytest.fixture(scope="session")
def twl06_words() -> list[str]:
    return data_path("wordlists", "twl06.txt").read_text().split()


@pytest.fixture(scope="session")
def twl06(twl06_words, english) -> Lexicon:
    return Lexicon.build(twl06_words, english)


@pytest.fixture(scope="session")
def magpie_twl06(english) -> Lexicon:
    return Lexicon.open(data_path("kwg", "TWL06.kwg"), english)


@pytest.fixture(scope="session")
def default_english(english) -> Lexicon:
    if not DEFAULT_KWG.exists():
        pytest.fail(f"{DEFAULT_KWG} is missing: `make test` builds it (anchor lexicon install)")
    return Lexicon.open(DEFAULT_KWG, english)
