"""Rulesets: alphabet, tiles, board geometry and premiums, loaded from TOML data files.

The built-ins (`english`, `russian`, `erudit`) are files in `engine/rulesets/`; a user's
own file loads through the same code and gets the same checks.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from . import _movegen
from .errors import RulesetError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

BLANK = "?"
# The generator's limits, defined once in _movegen.c: cross-sets are 64-bit masks (bit 0
# unused), fixed buffers hold boards up to 21x21, scores rank as exact 32-bit floats.
MAX_LETTERS = _movegen.MAX_LETTERS
MAX_SIDE = _movegen.MAX_SIDE
MAX_RACK = _movegen.MAX_RACK
MAX_TILE_VALUE = _movegen.MAX_TILE_VALUE
MAX_TILES = _movegen.MAX_TILES
MAX_BINGO = _movegen.MAX_BINGO
PREMIUMS = {  # grid character -> (letter multiplier, word multiplier)
    ".": (1, 1),
    "d": (2, 1),
    "t": (3, 1),
    "q": (4, 1),
    "D": (1, 2),
    "T": (1, 3),
    "Q": (1, 4),
}
_FIELDS = {
    "name",
    "title",
    "rows",
    "cols",
    "rack_size",
    "bingo_bonus",
    "centre",
    "total_tiles",
    "tiles",
    "premiums",
    "fold",
    "end",
    "exchange_min_bag",
}
MAX_NAME = 64  # a ruleset's name: GCG pragmas and self-play's file names carry it
_END_FIELDS = {"going_out", "stuck_loses_own", "scoreless_turns", "scoreless_loses_own"}
MAX_GOING_OUT = 10  # times the other rack's value


@dataclass(frozen=True, slots=True)
class EndRules:
    """How a game ends once the bag is empty, and what the tiles left on racks count.

    going_out: the other rack's value, times this, goes to the side that plays its last
    tile (2: NASPA and WESPA; 1: the box rules; 0: nothing). stuck_loses_own: the side left
    holding tiles then loses their value as well (the box rules). scoreless_turns: how
    many scoreless turns in a row (passes, exchanges) end the game. scoreless_loses_own:
    at such an end each side loses the value of its own tiles. A ruleset file without an
    [end] table gets these defaults, the tournament rules of English Scrabble.
    """

    going_out: int = 2
    stuck_loses_own: bool = False
    scoreless_turns: int = 6
    scoreless_loses_own: bool = True

    def out_bonus(self, other_points: int) -> int:
        """The spread the side going out gains from the other rack's value."""
        return (self.going_out + (1 if self.stuck_loses_own else 0)) * other_points


@dataclass(frozen=True, slots=True, eq=False)
class Ruleset:
    """One game's rules. Tiles are numbered 1..N in `alphabet` order; 0 is the blank."""

    name: str
    title: str
    alphabet: tuple[str, ...]
    values: Mapping[str, int]
    counts: Mapping[str, int]
    blanks: int
    rack_size: int
    bingo_bonus: int
    rows: int
    cols: int
    premiums: tuple[str, ...]
    centre: tuple[int, int]
    fold: Mapping[str, str]
    source: str
    letter_index: Mapping[str, int]  # uppercase letter -> tile number 1..N
    tile_values: tuple[int, ...]  # value by tile number; [0] is the blank's 0
    end: EndRules = EndRules()
    exchange_min_bag: int = 7  # tiles the bag must hold for an exchange (the pass: always)

    # ----------------------------------------------------------------- loading
    @classmethod
    def load(cls, name_or_path: str | Path) -> Ruleset:
        """Load a built-in ruleset by name or a ruleset file by path."""
        text_name = str(name_or_path)
        if isinstance(name_or_path, Path) or text_name.endswith(".toml") or "/" in text_name:
            path = Path(name_or_path)
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise RulesetError(f"cannot read ruleset file {path}: {exc.strerror}") from None
            return cls.from_toml(data, source=str(path))
        key = text_name.lower()
        if key not in builtin_names():
            raise RulesetError(
                f"unknown ruleset {text_name!r}: built-ins are {', '.join(builtin_names())}, "
                "or give the path of a .toml ruleset file"
            )
        data = resources.files("anchor.engine.rulesets").joinpath(f"{key}.toml").read_bytes()
        return cls.from_toml(data, source=f"built-in {key}")

    @classmethod
    def from_toml(cls, data: bytes | str, source: str = "<string>") -> Ruleset:
        """Parse and check a ruleset written in TOML (see engine/rulesets/english.toml)."""
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RulesetError(f"{source}: not UTF-8 text ({exc.reason})") from None
        try:
            raw = tomllib.loads(data)
        except tomllib.TOMLDecodeError as exc:
            raise RulesetError(f"{source}: not valid TOML: {exc}") from None
        return _parse(raw, source)

    # ------------------------------------------------------------ derived data
    @property
    def size(self) -> int:
        """Number of letters (tiles 1..size)."""
        return len(self.alphabet)

    @property
    def total_tiles(self) -> int:
        return sum(self.counts.values()) + self.blanks

    def index(self, letter: str) -> int:
        """Tile number (1..N) of an uppercase letter; raises KeyError when not a letter."""
        return self.letter_index[letter]

    def letter(self, tile: int) -> str:
        """Letter of a tile number 1..N."""
        return self.alphabet[tile - 1]

    def value(self, tile: int) -> int:
        """Points of tile number 1..N (a blank scores 0 and is never passed here)."""
        return self.tile_values[tile]

    def can_exchange(self, bag: int) -> bool:
        """Whether a player may exchange with `bag` tiles in the bag (never more tiles than
        it holds: see max_exchange)."""
        return bag >= self.exchange_min_bag

    def max_exchange(self, bag: int) -> int:
        """The most tiles one exchange may put back with `bag` tiles in the bag (0: none)."""
        return min(self.rack_size, bag) if self.can_exchange(bag) else 0

    def tile_of(self, ch: str) -> int | None:
        """The tile number (1..N) of one letter written in either case, folded as the
        ruleset folds it (Эрудит: Ё is Е); None for anything else, including characters
        whose uppercase only looks like a letter of the alphabet (ı, ſ)."""
        upper = ch.upper()
        if ch != upper and upper.lower() != ch:
            return None
        tile = self.letter_index.get(upper)
        if tile is None and self.fold:
            tile = self.letter_index.get(self.fold.get(upper, ""))
        return tile

    def fold_letters(self, text: str) -> str:
        """`text` with each letter the ruleset folds replaced by its tile's letter, case kept
        (Эрудит: Ё -> Е, ё -> е), as the lexicon builder folds words."""
        if not self.fold:
            return text
        out = []
        for ch in text:
            upper = ch.upper()
            folded = self.fold.get(upper)
            out.append(ch if folded is None else folded if ch == upper else folded.lower())
        return "".join(out)

    def multipliers(self, row: int, col: int) -> tuple[int, int]:
        """(letter multiplier, word multiplier) of a square."""
        return PREMIUMS[self.premiums[row][col]]

    def premium_grids(self) -> tuple[bytes, bytes]:
        """Letter and word multipliers of every square, row by row (the generator's input)."""
        squares = [PREMIUMS[ch] for row in self.premiums for ch in row]
        return bytes(lm for lm, _ in squares), bytes(wm for _, wm in squares)

    def generator_args(self) -> tuple:
        """The arguments after the lexicon of _movegen.Generator (and of check_rules)."""
        letter_mult, word_mult = self.premium_grids()
        return (
            self.rows,
            self.cols,
            self.tile_values,
            letter_mult,
            word_mult,
            self.centre[0],
            self.centre[1],
            self.rack_size,
            self.bingo_bonus,
        )

    def transposed(self) -> Ruleset:
        """The same rules on the board mirrored across its main diagonal."""
        if (
            self.rows == self.cols
            and all(
                self.premiums[r][c] == self.premiums[c][r]
                for r in range(self.rows)
                for c in range(self.cols)
            )
            and self.centre[0] == self.centre[1]
        ):
            return self
        grid = tuple(
            "".join(self.premiums[r][c] for r in range(self.rows)) for c in range(self.cols)
        )
        return replace(
            self, rows=self.cols, cols=self.rows, premiums=grid, centre=self.centre[::-1]
        )

    def __repr__(self) -> str:
        return f"Ruleset({self.name!r}, {self.rows}x{self.cols}, {self.size} letters)"

    def __hash__(self) -> int:
        return hash((self.name, self.alphabet, self.premiums))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Ruleset):
            return NotImplemented
        return (  # read-only mappings compare by their contents, without copies
            self.name == other.name
            and self.alphabet == other.alphabet
            and self.values == other.values
            and self.counts == other.counts
            and self.premiums == other.premiums
            and (self.blanks, self.rack_size, self.bingo_bonus, self.centre, self.end)
            == (other.blanks, other.rack_size, other.bingo_bonus, other.centre, other.end)
            and self.exchange_min_bag == other.exchange_min_bag
        )


def builtin_names() -> tuple[str, ...]:
    """Names of the bundled rulesets."""
    files = resources.files("anchor.engine.rulesets").iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".toml")))


# ------------------------------------------------------------------ validation
def _require(raw: dict, key: str, kind: type, source: str):
    if key not in raw:
        raise RulesetError(f"{source}: field {key!r} is missing")
    value = raw[key]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise RulesetError(
            f"{source}: field {key!r} must be {kind.__name__}, not {type(value).__name__}"
        )
    return value


def _parse(raw: dict, source: str) -> Ruleset:
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise RulesetError(f"{source}: unknown field(s) {', '.join(unknown)}")
    name = _require(raw, "name", str, source).strip()
    if not name:
        raise RulesetError(f"{source}: field 'name' is empty")
    if len(name) > MAX_NAME or not name.isprintable():  # it goes into GCG lines and file names
        raise RulesetError(
            f"{source}: field 'name' must be one line of at most {MAX_NAME} printable "
            f"characters, not {name[:40]!r}{'...' if len(name) > 40 else ''}"
        )
    title = raw.get("title", name)
    rows = _require(raw, "rows", int, source)
    cols = _require(raw, "cols", int, source)
    for key, side in (("rows", rows), ("cols", cols)):
        if not 2 <= side <= MAX_SIDE:
            raise RulesetError(f"{source}: field {key!r} is {side}; it must be 2..{MAX_SIDE}")
    rack_size = _require(raw, "rack_size", int, source)
    if not 1 <= rack_size <= MAX_RACK:
        raise RulesetError(f"{source}: field 'rack_size' is {rack_size}; it must be 1..{MAX_RACK}")
    bingo = _require(raw, "bingo_bonus", int, source)
    if not 0 <= bingo <= MAX_BINGO:
        raise RulesetError(f"{source}: field 'bingo_bonus' is {bingo}; it must be 0..{MAX_BINGO}")

    alphabet, counts, values, blanks = _parse_tiles(_require(raw, "tiles", str, source), source)
    total = _require(raw, "total_tiles", int, source)
    counted = sum(counts.values()) + blanks
    if counted != total:
        raise RulesetError(
            f"{source}: tile counts sum to {counted} ({counted - blanks} letters + {blanks} "
            f"blanks) but 'total_tiles' says {total}"
        )
    if counted > MAX_TILES:
        raise RulesetError(f"{source}: {counted} tiles; a set may have at most {MAX_TILES:,}")
    if counted < rack_size:
        raise RulesetError(f"{source}: {counted} tiles cannot fill a rack of {rack_size}")

    premiums = _parse_premiums(_require(raw, "premiums", str, source), rows, cols, source)
    centre = _parse_centre(_require(raw, "centre", str, source), rows, cols, source)

    fold_raw = raw.get("fold", {})
    if not isinstance(fold_raw, dict):
        raise RulesetError(f"{source}: [fold] must be a table of letter = letter")
    fold: dict[str, str] = {}
    for src, dst in fold_raw.items():
        if not isinstance(dst, str) or len(src) != 1 or len(dst) != 1:
            raise RulesetError(f"{source}: [fold] entry {src!r} must map one letter to one letter")
        src_u, dst_u = src.upper(), dst.upper()
        if dst_u not in counts:
            raise RulesetError(f"{source}: [fold] maps {src!r} to {dst!r}, which has no tile")
        if src_u in counts:
            raise RulesetError(f"{source}: [fold] maps {src!r}, which has a tile of its own")
        fold[src_u] = dst_u

    end = _parse_end(raw.get("end", {}), source)
    exchange_min_bag = raw.get("exchange_min_bag", rack_size)
    if type(exchange_min_bag) is not int or not 1 <= exchange_min_bag <= counted:
        raise RulesetError(
            f"{source}: field 'exchange_min_bag' is {exchange_min_bag!r}; it must be a whole "
            f"number 1..{counted} (the tiles the bag must hold for an exchange)"
        )

    rules = Ruleset(
        name=name,
        title=str(title),
        alphabet=alphabet,
        values=MappingProxyType(values),
        counts=MappingProxyType(counts),
        blanks=blanks,
        rack_size=rack_size,
        bingo_bonus=bingo,
        rows=rows,
        cols=cols,
        premiums=premiums,
        centre=centre,
        fold=MappingProxyType(fold),
        source=source,
        letter_index=MappingProxyType({ch: i + 1 for i, ch in enumerate(alphabet)}),
        tile_values=(0, *(values[ch] for ch in alphabet)),
        end=end,
        exchange_min_bag=exchange_min_bag,
    )
    try:
        _movegen.check_rules(*rules.generator_args())
    except ValueError as exc:  # e.g. values whose plays could reach 2^24 points
        raise RulesetError(f"{source}: {exc}") from None
    return rules


def _parse_end(raw: object, source: str) -> EndRules:
    """The [end] table: every field optional (EndRules' defaults), each checked."""
    if not isinstance(raw, dict):
        raise RulesetError(f"{source}: [end] must be a table (going_out = 2, ...)")
    unknown = sorted(set(raw) - _END_FIELDS)
    if unknown:
        raise RulesetError(
            f"{source}: unknown field(s) in [end]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_END_FIELDS))})"
        )
    default = EndRules()
    values = {}
    for key, low, high in (("going_out", 0, MAX_GOING_OUT), ("scoreless_turns", 1, 100)):
        value = raw.get(key, getattr(default, key))
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise RulesetError(
                f"{source}: [end] {key} is {value!r}; it must be a whole number {low}..{high}"
            )
        values[key] = value
    for key in ("stuck_loses_own", "scoreless_loses_own"):
        value = raw.get(key, getattr(default, key))
        if not isinstance(value, bool):
            raise RulesetError(f"{source}: [end] {key} is {value!r}; it must be true or false")
        values[key] = value
    return EndRules(**values)


def _parse_tiles(text: str, source: str) -> tuple[tuple[str, ...], dict, dict, int]:
    alphabet: list[str] = []
    counts: dict[str, int] = {}
    values: dict[str, int] = {}
    blanks = None
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        where = f"{source}: 'tiles' line {lineno} ({line!r})"
        if len(parts) != 3:
            raise RulesetError(f"{where}: expected 'LETTER COUNT VALUE'")
        letter, count_s, value_s = parts
        try:
            count, value = int(count_s), int(value_s)
        except ValueError:
            raise RulesetError(f"{where}: count and value must be whole numbers") from None
        if count < 0 or value < 0:
            raise RulesetError(f"{where}: count and value must not be negative")
        if value > MAX_TILE_VALUE:
            raise RulesetError(f"{where}: {value} points; a tile may be worth 0..{MAX_TILE_VALUE}")
        if letter == BLANK:
            if blanks is not None:
                raise RulesetError(f"{where}: the blank '?' is listed twice")
            if value != 0:
                raise RulesetError(f"{where}: a blank scores 0, not {value}")
            blanks = count
            continue
        if len(letter) != 1 or not letter.isalpha():
            raise RulesetError(f"{where}: {letter!r} is not a single letter")
        if letter != letter.upper() or letter.lower() == letter:
            raise RulesetError(
                f"{where}: {letter!r} must be an uppercase letter with a lowercase form "
                "(lowercase marks a blank)"
            )
        if letter in counts:
            raise RulesetError(f"{where}: letter {letter!r} is listed twice")
        alphabet.append(letter)
        counts[letter] = count
        values[letter] = value
    if not alphabet:
        raise RulesetError(f"{source}: 'tiles' lists no letters")
    if len(alphabet) > MAX_LETTERS:
        raise RulesetError(
            f"{source}: {len(alphabet)} letters; at most {MAX_LETTERS} are supported"
        )
    return tuple(alphabet), counts, values, blanks or 0


def _parse_premiums(text: str, rows: int, cols: int, source: str) -> tuple[str, ...]:
    grid = [line.strip() for line in text.splitlines() if line.strip()]
    if len(grid) != rows:
        raise RulesetError(f"{source}: 'premiums' has {len(grid)} rows but 'rows' is {rows}")
    for r, line in enumerate(grid, 1):
        if len(line) != cols:
            raise RulesetError(
                f"{source}: 'premiums' row {r} has {len(line)} squares but 'cols' is {cols}"
            )
        bad = sorted(set(line) - set(PREMIUMS))
        if bad:
            raise RulesetError(
                f"{source}: 'premiums' row {r} has unknown square(s) {''.join(bad)!r}; "
                f"use {' '.join(PREMIUMS)}"
            )
    return tuple(grid)


def _parse_centre(text: str, rows: int, cols: int, source: str) -> tuple[int, int]:
    t = text.strip().upper()
    digits = "".join(ch for ch in t if ch in "0123456789")
    letters = "".join(ch for ch in t if ch.isalpha())
    if not digits or len(letters) != 1 or t not in (digits + letters, letters + digits):
        raise RulesetError(f"{source}: 'centre' {text!r} is not a square like '8H'")
    row, col = int(digits) - 1, ord(letters) - ord("A")
    if not (0 <= row < rows and 0 <= col < cols):
        raise RulesetError(f"{source}: 'centre' {text!r} is off the {rows}x{cols} board")
    return row, col
