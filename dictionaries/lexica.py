"""Where lexica live and how a name finds one: `english` -> a folder's english.kwg.

Search order, first match wins:
  1. $ANCHOR_LEXICON_DIR (when set; also where `anchor lexicon install` writes)
  2. ./dictionaries/build (a source checkout, where `make` builds them)
  3. the per-user data folder, e.g. ~/.local/share/anchor/lexica (platformdirs)
  4. the dictionaries/build folder of the source tree of an editable install
Downloads are cached in the per-user cache folder ($ANCHOR_CACHE_DIR overrides).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from anchor.engine import AnchorError, Lexicon, LexiconError, LexiconInfo, Ruleset, Solver
from anchor.engine.lexicon import LexiconWarning, anagram_path
from anchor.engine.lexicon_info import sha256_file, sidecar_path

from .recipes import RECIPES, RecipeError, default_names

DEFAULT_LEXICON = {"english": "english", "russian": "russian", "erudit": "erudit"}
APP = "anchor"
# Where `make` builds lexica in the source tree of an editable install.
SOURCE_TREE_BUILD = Path(__file__).resolve().parents[1] / "dictionaries" / "build"


def user_lexicon_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "lexica"


def install_dir() -> Path:
    """Where `anchor lexicon install` writes unless told otherwise."""
    env = os.environ.get("ANCHOR_LEXICON_DIR")
    return Path(env) if env else user_lexicon_dir()


def cache_dir() -> Path:
    env = os.environ.get("ANCHOR_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP)) / "downloads"


def search_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("ANCHOR_LEXICON_DIR"):
        dirs.append(Path(os.environ["ANCHOR_LEXICON_DIR"]))
    dirs.append(Path.cwd() / "dictionaries" / "build")
    dirs.append(user_lexicon_dir())
    dirs.append(SOURCE_TREE_BUILD)
    unique: list[Path] = []
    for folder in dirs:
        if folder.resolve() not in [u.resolve() for u in unique]:
            unique.append(folder)
    return unique


def is_path(name_or_path: str) -> bool:
    return Path(name_or_path).suffix == ".kwg" or os.sep in name_or_path or "/" in name_or_path


def lexicon_path(name_or_path: str, dirs: list[Path] | None = None) -> Path:
    """The file a lexicon name or path stands for, a name looked up in `dirs` (default: the
    search folders); LexiconError when there is none."""
    candidate = Path(name_or_path)
    if is_path(name_or_path):
        if candidate.is_file():
            return candidate
        if candidate.is_dir():
            raise LexiconError(f"lexicon {name_or_path} is a folder; give a .kwg file")
        if candidate.exists():
            raise LexiconError(f"lexicon {name_or_path} is not a regular file; give a .kwg file")
        raise LexiconError(f"lexicon file {name_or_path} does not exist")
    dirs = search_dirs() if dirs is None else dirs
    for folder in dirs:
        path = folder / f"{name_or_path}.kwg"
        if path.is_file():
            return path
    looked = ", ".join(str(d) for d in dirs)
    hint = (
        f"run `anchor lexicon install {name_or_path}`"
        if name_or_path in RECIPES
        else f"build one with `anchor build-lexicon` (known recipes: {', '.join(RECIPES)})"
    )
    raise LexiconError(
        f"no lexicon named {name_or_path!r} (looked for {name_or_path}.kwg in {looked}); "
        f"{hint}, or pass a .kwg path"
    )


def lexicon_ruleset(name_or_path: str | None) -> str | None:
    """The ruleset a lexicon's sidecar names; None for a bare KWG or no lexicon."""
    if not name_or_path:
        return None
    try:
        info = LexiconInfo.read(lexicon_path(name_or_path))
    except LexiconError:
        return None
    return info.ruleset if info else None


def open_lexicon(name_or_path: str | None, rules: Ruleset) -> Lexicon:
    """Open a lexicon by name or path; None means the ruleset's default lexicon."""
    name = name_or_path or DEFAULT_LEXICON.get(rules.name, rules.name)
    return Lexicon.open(lexicon_path(name), rules)


@dataclass(frozen=True, slots=True)
class Installed:
    """A lexicon file found in one of the search folders."""

    name: str
    path: Path
    info: LexiconInfo | None


def installed(dirs: list[Path] | None = None) -> Iterator[Installed]:
    """Every NAME.kwg in `dirs` (default: the search folders), the one a name resolves to
    first."""
    seen: set[str] = set()
    for folder in search_dirs() if dirs is None else dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.kwg")):
            if path.stem in seen:
                continue
            seen.add(path.stem)
            try:
                info = LexiconInfo.read(path)
            except LexiconError:
                info = None
            yield Installed(path.stem, path, info)


def install(
    names: list[str] | None,
    folder: Path | None = None,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> list[Path]:
    """Fetch and build pinned lexica into `folder` (default: install_dir()); a name
    already there and intact is skipped unless `force`."""
    folder = folder or install_dir()
    names = names or default_names()
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        raise RecipeError(f"no recipe named {', '.join(unknown)}; known: {', '.join(RECIPES)}")
    built = []
    for name in names:
        recipe = RECIPES[name]
        path = folder / f"{name}.kwg"
        problems = (
            ["forced"]
            if force or not path.is_file()
            else verify(path, recipe.kwg_sha256, bingo_words=False)
        )
        if problems and not force and path.is_file() and restore_sidecar(path, recipe):
            say(f"{name}: wrote its sidecar {sidecar_path(path)} (the KWG is the recipe's)")
            problems = verify(path, recipe.kwg_sha256, bingo_words=False)
        if not problems:
            say(f"{name}: already installed at {path}")
            rules = Ruleset.load(recipe.ruleset)
            with warnings.catch_warnings():  # a bingo-word file set aside: written anew here
                warnings.simplefilter("ignore", LexiconWarning)
                lexicon = Lexicon.open(path, rules)
            with closing(lexicon):
                # missing (installed by an Anchor that did not write it), unreadable,
                # stale or written for another KWG: only that file is written anew
                stale = anagram_path(path).exists() and bingo_word_problems(lexicon, rules)
                if stale or not anagram_path(path).exists():
                    try:
                        written = lexicon.write_anagrams(path)
                    except LexiconError as exc:
                        if not stale or not all(OLDER_FILE in p for p in stale):
                            raise
                        say(f"{name}: {exc}; the older file still serves (starts build more)")
                        written = None
                    if written:
                        done = "rewrote" if stale else "wrote"
                        say(f"{name}: {done} its bingo words to {anagram_path(path)}")
        else:
            recipe.build(folder, cache_dir(), say)
        built.append(path)
    return built


def restore_sidecar(path: Path, recipe) -> bool:
    """Write the sidecar (NAME.kwg.json) of an installed KWG that verify refused when the
    KWG is the recipe's byte for byte (the sidecar is then what is wrong): nothing need be
    fetched or built for it. False when the KWG is not the pinned one."""
    if not recipe.kwg_sha256 or sha256_file(path) != recipe.kwg_sha256:
        return False
    rules = Ruleset.load(recipe.ruleset)
    try:
        sidecar_path(path).unlink(missing_ok=True)  # replaced: Lexicon.open must not read it
    except OSError as exc:
        raise LexiconError(f"cannot replace {sidecar_path(path)}: {exc.strerror}") from None
    with warnings.catch_warnings():  # the bingo-word file is install's next step
        warnings.simplefilter("ignore", LexiconWarning)
        lexicon = Lexicon.open(path, rules)
    with closing(lexicon):
        words = len(lexicon)
    info = LexiconInfo(
        ruleset=rules.name,
        alphabet="".join(rules.alphabet),
        words=words,
        sha256=recipe.kwg_sha256,
        source=recipe.source,
        licence=recipe.licence,
    )
    try:
        info.write(path)
    except OSError as exc:
        raise LexiconError(f"cannot write {sidecar_path(path)}: {exc.strerror}") from None
    return True


# a bingo-word file an older Anchor wrote: it serves, more slowly (install rewrites it when
# it can, and goes on when it cannot)
OLDER_FILE = "written before the file held the shorter words"


def bingo_word_problems(lexicon: Lexicon, rules: Ruleset) -> list[str]:
    """What is wrong with the bingo-word file beside the lexicon's KWG (none: no file)."""
    target = anagram_path(lexicon.path) if lexicon.path is not None else None
    if lexicon.anagrams is None:
        if target is not None and target.is_dir():  # index cannot write over a folder
            return [
                f"{target}: a folder where the bingo-word file belongs; remove it, then "
                f"`anchor lexicon index {lexicon.path}` writes the file"
            ]
        if target is not None and (target.exists() or target.is_symlink()):
            return [
                f"{target}: not a bingo-word file this process can read (empty, a folder, "
                f"or unreadable); `anchor lexicon index {lexicon.path}` writes it anew"
            ]
        return []
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", LexiconWarning)
        solver = Solver(lexicon, rules)
    problems = [str(w.message) for w in said if issubclass(w.category, LexiconWarning)]
    if solver.bingo_words == "trusted" and solver.shorter_words == "built":
        problems.append(
            f"{target}: {OLDER_FILE}, so each process builds them as it starts (5 ms for "
            f"TWL06); `anchor lexicon index {lexicon.path}` writes it anew"
        )
    if solver.bingo_words == "built" and not problems:  # set aside without a word: the
        problems.append(  # file of a ruleset with another rack size (it serves that one)
            f"{target}: written for another rack size (another ruleset's), so every "
            f"{rules.name} process builds its own bingo words as it starts (0.2 s for TWL06); "
            f"`anchor lexicon index {lexicon.path}` writes one for {rules.name}"
        )
    if solver.bingo_words == "compared" and not problems:  # (a damaged one is warned of)
        problems.append(
            f"{target}: written for another KWG file of the same words (or its digests "
            "damaged), so each process builds the bingo words again to check it as it "
            f"starts (0.2 s for TWL06); `anchor lexicon index {lexicon.path}` writes it anew"
        )
    return problems


def verify(path: Path, pinned: str | None = None, bingo_words: bool = True) -> list[str]:
    """What is wrong with an installed lexicon: its bytes against its sidecar (and the
    recipe's pin), its structure against its ruleset, and (with `bingo_words`) its
    bingo-word file against its words. Empty when it is intact."""
    try:
        info = LexiconInfo.read(path)
    except LexiconError as exc:
        return [str(exc)]
    if info is None:
        return [
            f"{path} has no sidecar ({path.name}.json), so there is nothing to check it "
            "against: `anchor lexicon install` builds the pinned lexica with theirs, "
            "`anchor build-lexicon` one of your own"
        ]
    problems = []
    digest = sha256_file(path)
    if digest != info.sha256:
        problems.append(f"{path}: sha256 {digest[:16]}… is not the sidecar's {info.sha256[:16]}…")
    if pinned and digest != pinned:
        problems.append(
            f"{path}: sha256 {digest[:16]}… is not the recipe's pin {pinned[:16]}… (built by "
            f"an older Anchor? `anchor lexicon install {path.stem}` builds it anew)"
        )
    try:
        rules = Ruleset.load(info.ruleset)
        with warnings.catch_warnings():  # a bingo-word file set aside: bingo_word_problems says so
            warnings.simplefilter("ignore", LexiconWarning)
            lexicon = Lexicon.open(path, rules)
        if len(lexicon) != info.words:
            problems.append(f"{path}: {len(lexicon)} words, the sidecar says {info.words}")
        if bingo_words:
            problems += bingo_word_problems(lexicon, rules)
        lexicon.close()
    except AnchorError as exc:
        problems.append(str(exc))
    return problems
