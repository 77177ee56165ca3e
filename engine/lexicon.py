"""Lexicon: a word list as a KWG file (the DAWG format of wolges, MAGPIE and Macondo).

Layout: little-endian uint32 nodes; bits 0-21 arc index (first child), bit 22 last
sibling, bit 23 accepts, bits 24-31 tile. Node 0's arc is the DAWG root, node 1's the
GADDAG root (0 when absent). Files are memory-mapped read-only and never copied, so
worker processes on one machine share one copy in the page cache.

Beside `NAME.kwg`, `Lexicon.save` writes `NAME.kwg.json` (what the words are:
lexicon_info.py) and `NAME.kwg.anagrams` (the words of a rack's length and more by their
letters, which the move generator's bounds use; layout in anagram_file.c). `open` maps
the second when it is there, and the generator uses it only when it holds exactly what
the generator would build from the KWG: every process mapping it shares one copy.
"""

from __future__ import annotations

import mmap
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import _movegen
from .errors import LexiconError
from .files import open_regular, write_atomically
from .lexicon_info import LexiconInfo, sha256_hex
from .rules import Ruleset

ARC_MASK = 0x3FFFFF
END = 0x400000
ACCEPTS = 0x800000


def sibling(nodes, start: int, tile: int) -> int:
    """The index of the node for `tile` in the sibling list at `start`, or -1."""
    i = start
    while True:
        node = nodes[i]
        if node >> 24 == tile:
            return i
        if node & END:
            return -1
        i += 1


MAX_EXAMPLES = 10


def anagram_path(kwg: str | os.PathLike) -> Path:
    """Where the bingo words of the KWG at `kwg` are kept: `NAME.kwg.anagrams`."""
    path = Path(kwg)
    return path.with_name(path.name + ".anagrams")


class LexiconWarning(UserWarning):
    """Words were left out of a lexicon build (see the build report)."""


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What a build kept and left out."""

    kept: int
    duplicates: int
    rejected: int
    examples: tuple[tuple[int, str, str], ...]  # (1-based position, word, reason)
    nodes: int
    bytes: int

    def summary(self) -> str:
        text = f"{self.kept} words, {self.nodes} nodes, {self.bytes} bytes"
        if self.duplicates:
            text += f"; {self.duplicates} duplicates ignored"
        if self.rejected:
            shown = ", ".join(f"{w!r} (#{i}: {why})" for i, w, why in self.examples)
            text += f"; {self.rejected} rejected, e.g. {shown}"
        return text


class Lexicon:
    """A read-only word graph over a KWG buffer (a mapped file or built bytes)."""

    __slots__ = (
        "rules",
        "path",
        "_mmap",
        "_buffer",
        "_nodes",
        "_words",
        "_max_len",
        "report",
        "info",
        "anagrams",
        "anagram_path",
        "_anagram_mmap",
    )

    def __init__(
        self,
        buffer,
        rules: Ruleset,
        path: str | None = None,
        mapping=None,
        report: BuildReport | None = None,
        info: LexiconInfo | None = None,
    ):
        self.rules = rules
        self.info = info
        self.anagrams = None  # the mapped NAME.kwg.anagrams, when `open` found one
        self.anagram_path: str | None = None
        self._anagram_mmap = None
        self.path = path
        self._mmap = mapping
        self._buffer = buffer
        try:
            words, max_len, _visited, _n = _movegen.kwg_check(buffer, rules.size)
        except ValueError as exc:
            where = path or "lexicon buffer"
            raise LexiconError(
                f"{where} is not a usable KWG file for the {rules.name} alphabet "
                f"({rules.size} letters): {exc}"
            ) from None
        mv = memoryview(buffer)
        if sys.byteorder == "little" and mv.nbytes % 4 == 0:
            self._nodes = mv.cast("B").cast("I")
        else:  # pragma: no cover - big-endian hosts read through a converted copy
            import array

            arr = array.array("I", bytes(mv))
            arr.byteswap()
            self._nodes = memoryview(arr)
        self._words = words
        self._max_len = max_len
        self.report = report

    # ------------------------------------------------------------------ I/O
    @classmethod
    def open(cls, path: str | os.PathLike, rules: Ruleset) -> Lexicon:
        """Map a KWG file read-only (no copy) and check it before use.

        The mapping shares the file's pages: replace a lexicon a process has open by
        writing a new file and renaming it over the old one, never by rewriting it in
        place (a truncated mapping kills the process with SIGBUS). A long-running worker
        maps a private snapshot instead (worker/snapshot.py)."""
        path = os.fspath(path)
        if not os.path.exists(path) and os.sep not in path and not path.endswith(".kwg"):
            raise LexiconError(
                f"no file {path!r}: Lexicon.open takes a .kwg path; to open an installed "
                f"lexicon by name, use anchor.dictionaries.open_lexicon({path!r}, rules)"
            )
        info = LexiconInfo.read(path)
        if info is not None:
            info.check_alphabet(path, rules.name, "".join(rules.alphabet))
        with open_regular(path, "lexicon", LexiconError) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                raise LexiconError(f"{path} is empty, not a KWG file")
            try:
                mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except OSError as exc:
                raise LexiconError(f"cannot map lexicon {path}: {exc.strerror}") from None
        lexicon = cls(mapping, rules, path=path, mapping=mapping, info=info)
        lexicon._map_anagrams(anagram_path(path))
        return lexicon

    def _map_anagrams(self, path: Path) -> None:
        """Map the bingo-word file `path` when there is one (checked by the generator). It
        is a cache: one that cannot be read is set aside with a LexiconWarning, never an
        error (the generator then builds its own)."""
        if not (path.exists() or path.is_symlink()):
            return
        try:
            with open_regular(path, "bingo-word file", LexiconError) as fh:
                mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (LexiconError, OSError, ValueError) as exc:  # ValueError: an empty file
            why = getattr(exc, "strerror", None) or str(exc)
            fix = (
                f"remove that folder, then `anchor lexicon index {self.path}` writes the file"
                if path.is_dir()  # index cannot write over a folder
                else f"`anchor lexicon index {self.path}` writes it anew, or delete it"
            )
            warnings.warn(
                f"{path}: cannot be mapped ({why}), so it is not used (each process builds "
                f"its own: more memory); {fix}",
                LexiconWarning,
                stacklevel=3,
            )
            return
        self.anagrams, self.anagram_path, self._anagram_mmap = mapping, str(path), mapping

    @classmethod
    def from_bytes(cls, data: bytes, rules: Ruleset) -> Lexicon:
        return cls(bytes(data), rules)

    def save(self, path: str | os.PathLike, source: str = "", licence: str = "") -> LexiconInfo:
        """Write the KWG bytes, their sidecar (lexicon_info.py) and their bingo words
        (`NAME.kwg.anagrams`, for this lexicon's ruleset's rack size), each atomically: a
        reader never sees half a file. Returns what the sidecar says."""
        path = Path(path)
        data = self.to_bytes()
        info = LexiconInfo(
            ruleset=self.rules.name,
            alphabet="".join(self.rules.alphabet),
            words=len(self),
            sha256=sha256_hex(data),
            source=source,
            licence=licence,
        )
        write_atomically(path, data)
        self.write_anagrams(path)
        info.write(path)
        return info

    def write_anagrams(self, kwg: str | os.PathLike) -> Path | None:
        """Write this lexicon's bingo words beside the KWG file `kwg` (which must hold this
        lexicon), atomically; None, and no file, for a graph too large to have them."""
        target = anagram_path(kwg)
        generator = None
        try:
            generator = _movegen.Generator(self.buffer, *self.rules.generator_args())
            data = generator.anagram_file()
        except ValueError:  # the generator goes without them, so can the file
            data = None
        finally:
            del generator  # it holds this lexicon's buffer: close() must find it free
        try:
            if data is None:
                target.unlink(missing_ok=True)  # one from an earlier build
                return None
            write_atomically(target, data)
        except OSError as exc:
            raise LexiconError(
                f"cannot write {target}: {exc.strerror or exc}"
                + (" (a folder is in the way: move it)" if target.is_dir() else "")
            ) from None
        return target

    def to_bytes(self) -> bytes:
        return bytes(memoryview(self._buffer))

    def close(self) -> None:
        """Release the mapping (only when no generator call is using it)."""
        if self._mmap is not None:
            self._nodes.release()
            self._mmap.close()
            self._mmap = None
        if self._anagram_mmap is not None:
            self.anagrams = None
            self._anagram_mmap.close()
            self._anagram_mmap = None

    @property
    def buffer(self):
        """The raw KWG buffer, as the C move generator reads it."""
        return self._buffer

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    @property
    def max_word_length(self) -> int:
        return self._max_len

    # --------------------------------------------------------------- lookup
    def contains(self, word: str) -> bool:
        """True when `word` (any case) is in the lexicon."""
        index = self.rules.letter_index
        fold = self.rules.fold
        nodes = self._nodes
        arc = nodes[0] & ARC_MASK
        accepted = False
        if not word:
            return False
        for ch in word:
            upper = ch.upper()
            tile = index.get(fold.get(upper, upper))
            if tile is None or arc == 0:
                return False
            i = sibling(nodes, arc, tile)
            if i < 0:
                return False
            node = nodes[i]
            accepted = bool(node & ACCEPTS)
            arc = node & ARC_MASK
        return accepted

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.contains(word)

    def __len__(self) -> int:
        return self._words

    def __iter__(self) -> Iterator[str]:
        """Words in alphabet order (the ruleset's tile order)."""
        nodes = self._nodes
        alphabet = self.rules.alphabet
        root = nodes[0] & ARC_MASK
        if not root:
            return
        prefix: list[str] = []
        stack = [(root, 0)]  # (node index, depth); siblings wait under children
        while stack:
            i, depth = stack.pop()
            node = nodes[i]
            if not node & END:
                stack.append((i + 1, depth))
            del prefix[depth:]
            prefix.append(alphabet[(node >> 24) - 1])
            if node & ACCEPTS:
                yield "".join(prefix)
            child = node & ARC_MASK
            if child:
                stack.append((child, depth + 1))

    def __repr__(self) -> str:
        where = self.path or "memory"
        return f"Lexicon({where!r}, {self.rules.name}, {len(self)} words, {self.node_count} nodes)"

    # -------------------------------------------------------------- building
    @classmethod
    def build(
        cls, words: Iterable[str], rules: Ruleset, strict: bool = False, gaddag: bool = False
    ) -> Lexicon:
        """Build a minimal DAWG from any iterable of words (any case); with `gaddag`, a
        minimal GADDAG of them too, which lets the generator pick left parts at anchors
        before board tiles (TWL06: 127 k nodes without, 830 k with, byte-identical to
        MAGPIE's TWL06.kwg; about 6 s more to build).

        The same words give byte-identical files. Words with characters outside the
        alphabet are left out and reported (`lexicon.report`, and a LexiconWarning);
        with strict=True they raise LexiconError instead.
        """
        encoded, report_base = _encode_words(words, rules)
        if report_base["rejected"] and strict:
            shown = ", ".join(f"{w!r} (#{i}: {why})" for i, w, why in report_base["examples"])
            raise LexiconError(f"{report_base['rejected']} words rejected, e.g. {shown}")
        data = _build_kwg(encoded, gaddag)
        report = BuildReport(
            kept=len(encoded),
            duplicates=report_base["duplicates"],
            rejected=report_base["rejected"],
            examples=tuple(report_base["examples"]),
            nodes=len(data) // 4,
            bytes=len(data),
        )
        if report.rejected:
            warnings.warn(
                f"lexicon build for {rules.name}: {report.summary()}", LexiconWarning, stacklevel=2
            )
        return cls(data, rules, report=report)


def _encode_words(words: Iterable[str], rules: Ruleset) -> tuple[list[bytes], dict]:
    index = rules.letter_index
    fold = rules.fold
    seen: set[bytes] = set()
    rejected = duplicates = 0
    examples: list[tuple[int, str, str]] = []
    if isinstance(words, str):
        raise LexiconError("words must be an iterable of words, not one string")
    for position, raw in enumerate(words, 1):
        if not isinstance(raw, str):
            reason = f"not text ({type(raw).__name__})"
            word = repr(raw)
        else:
            word = raw.strip()
            reason = ""
            if not word:
                continue
            tiles = bytearray()
            for ch in word.upper():
                ch = fold.get(ch, ch)
                tile = index.get(ch)
                if tile is None:
                    reason = f"{ch!r} is not in the alphabet"
                    break
                tiles.append(tile)
            if not reason and len(tiles) > 255:
                reason = "longer than 255 letters"
            if not reason:
                key = bytes(tiles)
                if key in seen:
                    duplicates += 1
                else:
                    seen.add(key)
                continue
        rejected += 1
        if len(examples) < MAX_EXAMPLES:
            examples.append((position, word, reason))
    return sorted(seen), {"rejected": rejected, "duplicates": duplicates, "examples": examples}


def gaddag_strings(words: list[bytes]) -> list[bytes]:
    """The GADDAG's paths of `words` (tiles), sorted: for each word, each proper prefix
    reversed, the separator (tile 0), and the rest of the word; and the whole word reversed.
    A path begins a word where it accepts or its list holds the separator (the form MAGPIE's
    and wolges' files use; the generator checks at load that it covers the DAWG)."""
    out = []
    for word in words:
        rev = word[::-1]
        out.append(rev)
        for i in range(1, len(word)):
            out.append(rev[len(word) - i :] + b"\x00" + word[i:])
    out.sort()
    return out


def _build_kwg(words: list[bytes], gaddag: bool = False) -> bytes:
    """Incremental minimal DAWG construction over sorted words (Daciuk et al. 2000),
    then layout as KWG sibling lists in depth-first pre-order from the root; with
    `gaddag`, a minimal GADDAG of the same words too (node 1), sharing the register, so a
    list both graphs have is stored once, after the DAWG's."""
    register: dict[tuple, int] = {}
    states: list[tuple] = []  # id -> (accepts, ((tile, child_id), ...))

    def minimal(strings: list[bytes]) -> tuple:
        """The root's edges of the minimal automaton of sorted `strings`."""
        # the unregistered path of the previous string: [accepts, [(tile, child_id)...]]
        path: list[list] = [[False, []]]
        prev = b""

        def freeze(depth: int) -> None:
            # register path states deeper than `depth`, deepest first
            while len(path) - 1 > depth:
                accepts, edges = path.pop()
                sig = (accepts, tuple(edges))
                sid = register.get(sig)
                if sid is None:
                    sid = len(states)
                    register[sig] = sid
                    states.append(sig)
                parent_edges = path[-1][1]
                parent_edges[-1] = (parent_edges[-1][0], sid)

        for word in strings:
            common = 0
            limit = min(len(word), len(prev))
            while common < limit and word[common] == prev[common]:
                common += 1
            freeze(common)
            for tile in word[common:]:
                path[-1][1].append((tile, -1))
                path.append([False, []])
            path[-1][0] = True
            prev = word
        freeze(0)
        return tuple(path[0][1])

    roots = [minimal(words)]
    if gaddag and words:
        roots.append(minimal(gaddag_strings(words)))

    # Layout: one sibling list per distinct edge tuple, in depth-first pre-order from
    # the root (a list, then its first child's subtree, then the next child's...). This
    # is the order MAGPIE's TWL06.kwg uses: our build of TWL06 matches its DAWG part.
    list_index: dict[tuple, int] = {}
    order: list[tuple] = []
    next_free = 2
    for root_edges in roots:
        if not root_edges or root_edges in list_index:
            continue
        list_index[root_edges] = next_free
        next_free += len(root_edges)
        order.append(root_edges)
        stack = [iter(root_edges)]
        while stack:
            edge = next(stack[-1], None)
            if edge is None:
                stack.pop()
                continue
            child_edges = states[edge[1]][1]
            if child_edges and child_edges not in list_index:
                list_index[child_edges] = next_free
                next_free += len(child_edges)
                order.append(child_edges)
                stack.append(iter(child_edges))
    total = next_free
    if total > ARC_MASK + 1:
        raise LexiconError(f"the word list needs {total} nodes; a KWG can address {ARC_MASK + 1}")
    out = [END, END]  # node 0: the DAWG's root list; node 1: the GADDAG's (none: 0)
    for k, root_edges in enumerate(roots):
        if root_edges:
            out[k] = END | list_index[root_edges]
    for edges in order:
        last = len(edges) - 1
        for k, (tile, child) in enumerate(edges):
            accepts, child_edges = states[child]
            node = tile << 24
            if accepts:
                node |= ACCEPTS
            if k == last:
                node |= END
            if child_edges:
                node |= list_index[child_edges]
            out.append(node)
    import array

    arr = array.array("I", out)
    if sys.byteorder != "little":  # pragma: no cover
        arr.byteswap()
    return arr.tobytes()
