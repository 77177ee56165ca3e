"""Finding lexicon files by name: `english` -> dictionaries/build/english.kwg.

Search order: $ANCHOR_LEXICON_DIR, ./dictionaries/build, then the dictionaries/build
folder of the source tree this package was installed from.
"""

from __future__ import annotations

import os
from pathlib import Path

from anchor.engine import Lexicon, LexiconError, Ruleset

DEFAULT_LEXICON = {"english": "english", "russian": "russian", "erudit": "erudit"}


def search_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("ANCHOR_LEXICON_DIR"):
        dirs.append(Path(os.environ["ANCHOR_LEXICON_DIR"]))
    dirs.append(Path.cwd() / "dictionaries" / "build")
    dirs.append(Path(__file__).resolve().parents[1] / "dictionaries" / "build")
    unique: list[Path] = []
    for folder in dirs:
        if folder.resolve() not in [u.resolve() for u in unique]:
            unique.append(folder)
    return unique


def lexicon_path(name_or_path: str) -> Path:
    """The file a lexicon name or path stands for; LexiconError when there is none."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".kwg" or os.sep in name_or_path:
        if candidate.is_file():
            return candidate
        raise LexiconError(f"lexicon file {name_or_path} does not exist")
    for folder in search_dirs():
        path = folder / f"{name_or_path}.kwg"
        if path.is_file():
            return path
    looked = ", ".join(str(d) for d in search_dirs())
    raise LexiconError(
        f"no lexicon named {name_or_path!r} (looked for {name_or_path}.kwg in {looked}); "
        f"run `make dictionaries` or pass a .kwg path"
    )


def open_lexicon(name_or_path: str | None, rules: Ruleset) -> Lexicon:
    """Open a lexicon by name or path; None means the ruleset's default lexicon."""
    name = name_or_path or DEFAULT_LEXICON.get(rules.name, rules.name)
    return Lexicon.open(lexicon_path(name), rules)
