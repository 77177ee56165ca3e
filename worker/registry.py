"""Lexica, leave values and rulesets by name, each opened once per process: what a worker
serves (only the names it was started with) and what embedded mode finds like the CLI."""

from __future__ import annotations

import os
from pathlib import Path

from anchor.client import protocol as p
from anchor.dictionaries.lexica import DEFAULT_LEXICON, lexicon_path, search_dirs
from anchor.engine import AnchorError, Lexicon, Ruleset, Solver
from anchor.engine.leaves import Leaves
from anchor.engine.rules import builtin_names


class LexiconRegistry:
    """Solvers by (ruleset, lexicon name), each lexicon opened (mmapped) once.

    `paths` maps lexicon names to files; with `search=True` (embedded mode) other names
    are looked up like the CLI does and rulesets may be files. A worker passes only the
    lexica it was started with and serves built-in rulesets only. `rulesets` names the
    ruleset each lexicon was built for: a request under a ruleset with another alphabet
    is refused (a file's sidecar does the same when it is opened by path).
    """

    def __init__(
        self,
        paths: dict[str, str] | None = None,
        search: bool = False,
        leave_paths: dict[str, str] | None = None,
        rulesets: dict[str, str] | None = None,
    ):
        self.paths = dict(paths or {})
        self.built_for = dict(rulesets or {})
        self.leave_paths = dict(leave_paths or {})
        self.search = search
        self._rules: dict[str, Ruleset] = {}
        self._solvers: dict[tuple[str, str], Solver] = {}
        self._leaves: dict[tuple[str, str], Leaves] = {}

    def leaves(self, ruleset: str, lexicon: str | None, name: str | None) -> Leaves:
        """Leave values by name (default: the lexicon's name); `NAME` and `NAME.klv2` are
        one name. Searching like the CLI (embedded mode), a path to a file works too; a
        worker serves only the names it was started with and never opens a path a
        request names."""
        rules = self.rules(ruleset)
        if not name and lexicon and lexicon.endswith(".kwg"):  # a file: NAME.klv2 beside it
            name = lexicon[: -len(".kwg")] + ".klv2"
        name = name or lexicon or DEFAULT_LEXICON.get(rules.name, rules.name)
        key = (ruleset, name)
        if key not in self._leaves:
            path = self._leaves_path(name)
            try:
                self._leaves[key] = Leaves.open(path, rules)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_LEAVES, str(exc)) from None
        return self._leaves[key]

    def _leaves_path(self, name: str) -> str:
        is_path = "/" in name or os.sep in name
        stem = name[: -len(".klv2")] if name.endswith(".klv2") else name
        if self.search:
            if is_path:
                if not Path(name).is_file():
                    raise p.ProtocolError(
                        p.UNKNOWN_LEAVES, f"leave values file {name} does not exist"
                    )
                return name
            if stem in self.leave_paths:
                return self.leave_paths[stem]
            for folder in [Path.cwd(), *search_dirs()]:
                if (folder / f"{stem}.klv2").is_file():
                    return str(folder / f"{stem}.klv2")
            looked = ", ".join(str(d) for d in search_dirs())
            raise p.ProtocolError(
                p.UNKNOWN_LEAVES,
                f"no leave values named {stem!r} (looked for {stem}.klv2 here and in "
                f"{looked}); give a .klv2 file",
            )
        if stem in self.leave_paths and not is_path:
            return self.leave_paths[stem]
        known = ", ".join(sorted(self.leave_paths)) or "none"
        if is_path:
            message = (
                f"this service serves leave values by name, not file paths ({name!r}); "
                f"it has: {known}"
            )
        else:
            message = f"no leave values named {stem!r} here; this service has: {known}"
        raise p.ProtocolError(p.UNKNOWN_LEAVES, message)

    def rules(self, name: str) -> Ruleset:
        if name not in self._rules:
            if name not in builtin_names() and not (self.search and Path(name).suffix == ".toml"):
                raise p.ProtocolError(
                    p.UNKNOWN_RULESET,
                    f"unknown ruleset {name!r}; this service plays {', '.join(builtin_names())}",
                )
            try:
                self._rules[name] = Ruleset.load(name)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_RULESET, str(exc)) from None
        return self._rules[name]

    def served(self, name: str) -> str | None:
        """The lexicon name this registry serves for `name`, matched case-insensitively
        (CGP's `lex NWL20;` finds a lexicon served as nwl20); None if it serves none."""
        if name in self.paths:
            return name
        folded = [n for n in self.paths if n.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else (name if self.search else None)

    def solver(self, ruleset: str, lexicon: str | None) -> Solver:
        rules = self.rules(ruleset)
        name = lexicon or DEFAULT_LEXICON.get(rules.name, rules.name)
        key = (ruleset, name)
        if key not in self._solvers:
            path = self.paths.get(name)
            if path is None and self.search:
                try:
                    path = str(lexicon_path(name))
                except AnchorError as exc:
                    raise p.ProtocolError(p.UNKNOWN_LEXICON, str(exc)) from None
            if path is None:
                known = ", ".join(sorted(self.paths)) or "none"
                raise p.ProtocolError(
                    p.UNKNOWN_LEXICON, f"no lexicon named {name!r} here; this service has: {known}"
                )
            built_for = self.built_for.get(name)
            if built_for and self.rules(built_for).alphabet != rules.alphabet:
                raise p.ProtocolError(
                    p.UNKNOWN_LEXICON,
                    f"lexicon {name!r} holds {built_for} words; it cannot serve the "
                    f"{rules.name} ruleset (another alphabet)",
                )
            try:
                self._solvers[key] = Solver(Lexicon.open(path, rules), rules)
            except AnchorError as exc:
                raise p.ProtocolError(p.UNKNOWN_LEXICON, str(exc)) from None
        return self._solvers[key]

    def preload(self, pairs: list[tuple[str, str]]) -> list[Solver]:
        """Open (ruleset, lexicon) pairs now, before any job: a bad file fails start-up."""
        return [self.solver(ruleset, name) for ruleset, name in pairs]
